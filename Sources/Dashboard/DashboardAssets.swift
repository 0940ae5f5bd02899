import Crypto
import Foundation
import StageKit

/// The page and its assets, compiled into the binary: the dashboard fetches nothing from the internet (no CDN, no
/// framework), so it works on a machine without access to it.
enum DashboardAssets {
    /// How often the page reads the API again, in milliseconds.
    static let refreshMilliseconds = 1000

    /// The page with its style, its script and the status it first draws inline: one request shows the counts.
    /// `csrf` is the signed-in session's token, which the script sends with every action; `mayRead` false: the
    /// page shows only its sign-in form.
    static func page(status: JSONValue, csrf: String?, mayRead: Bool) -> String {
        // JSON inside the page's HTML: a "<" (only ever inside a string) written as an escape cannot end the
        // element early.
        let embedded = status.serialized().replacingOccurrences(of: "<", with: "\\u003c")
        return """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="csrf-token" content="\(csrf ?? "")">
            <title>pipeline dashboard</title>
            <link rel="icon" href="data:,">
            <style>
            \(style)
            </style>
            </head>
            <body>
            <header>
              <h1><a href="#/">media-pipeline</a></h1>
              <span id="source"></span>
              <span id="live" title="last update">…</span>
              <form id="login" method="post" action="/login" hidden>
                <input type="password" name="token" placeholder="token" autocomplete="current-password">
                <button type="submit">Sign in</button>
                <span id="login-result" role="alert"></span>
              </form>
              <span id="mode"></span>
              <button id="logout" type="button" hidden>Sign out</button>
            </header>
            <main data-may-read="\(mayRead)">
              <section id="overview"><div id="summary"></div><div id="lists"></div></section>
              <section id="item" hidden></section>
            </main>
            <script type="application/json" id="initial-status">\(embedded)</script>
            <script>
            \(script)
            </script>
            </body>
            </html>
            """
    }

    /// What the page may load and run: its own inline script (by its digest) and style, requests to its own
    /// origin, no frames around it. A hostile file name that escaped the page's escaping still could not run.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'sha256-\(scriptDigest)'; style-src 'unsafe-inline'; img-src 'self' data:; "
        + "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    /// The base64 SHA-256 of the inline script, as the policy names it.
    static let scriptDigest = Data(SHA256.hash(data: Data("\n\(script)\n".utf8))).base64EncodedString()

    static let style = """
        :root { --ok: #2e7d32; --bad: #c62828; --run: #1565c0; --wait: #6d6d6d; --line: #e3e3e3; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d1d1f;
               background: #f6f7f9; }
        header { display: flex; gap: 16px; align-items: center; padding: 10px 24px; background: #1d2330; color: #fff; }
        header h1 { font-size: 17px; margin: 0; } header a { color: inherit; text-decoration: none; }
        #source { opacity: .7; font-family: ui-monospace, monospace; font-size: 12px; flex: 1; }
        #live { font-size: 12px; opacity: .8; }
        #mode { font-size: 12px; padding: 2px 8px; border-radius: 10px; background: #38404f; }
        main { padding: 20px 24px; max-width: 1200px; }
        .card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 16px 20px;
                margin-bottom: 18px; }
        .card h2 { margin: 0 0 12px; font-size: 16px; } .card h3 { font-size: 14px; margin: 16px 0 6px; }
        .tiles { display: flex; gap: 10px; flex-wrap: wrap; }
        .tile { min-width: 92px; padding: 8px 12px; border-radius: 6px; background: #f3f4f6; }
        .tile b { display: block; font-size: 22px; } .tile span { font-size: 12px; color: #555; }
        .tile.done b { color: var(--ok); } .tile.failed b { color: var(--bad); } .tile.running b { color: var(--run); }
        .bar { height: 8px; border-radius: 4px; background: #eceff3; overflow: hidden; margin: 12px 0 6px;
               display: flex; }
        .bar i { display: block; height: 100%; } .bar .done { background: var(--ok); }
        .bar .failed { background: var(--bad); } .bar .running { background: var(--run); }
        .meta { color: #555; font-size: 12px; display: flex; gap: 18px; flex-wrap: wrap; }
        svg.chart { width: 100%; height: 60px; margin-top: 8px; }
        table { width: 100%; border-collapse: collapse; font-size: 13px; }
        th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
        th { font-weight: 600; color: #555; font-size: 12px; }
        .status { font-size: 12px; padding: 1px 7px; border-radius: 9px; background: #eee; white-space: nowrap; }
        .status.done, .status.succeeded { background: #e5f3e6; color: var(--ok); }
        .status.failed { background: #fbe7e7; color: var(--bad); }
        .status.running { background: #e4eefb; color: var(--run); }
        .group { margin-bottom: 12px; } .group h4 { margin: 6px 0; font-size: 13px; }
        .message { font-family: ui-monospace, monospace; font-size: 12px; color: var(--bad); white-space: pre-wrap; }
        .path { font-family: ui-monospace, monospace; font-size: 12px; }
        .empty { color: #777; font-style: italic; }
        button { font: inherit; padding: 4px 12px; border-radius: 5px; border: 1px solid #bbb; background: #fff;
                 cursor: pointer; }
        #action-result { margin-left: 12px; font-size: 13px; }
        #action-result.refused { color: var(--bad); } #action-result.accepted { color: var(--ok); }
        .extent { font-weight: normal; color: #555; font-size: 13px; } .pages { margin: 8px 0 0; }
        body[data-stale] #overview, body[data-stale] #item { opacity: .55; }
        pre { background: #f3f4f6; padding: 8px; border-radius: 5px; overflow: auto; font-size: 12px; }
        """

    static let script = """
        "use strict";
        const names = ["queued", "running", "done", "failed", "skipped", "cancelled", "interrupted"];
        const $ = (id) => document.getElementById(id);
        // Characters that reorder or hide text (a right-to-left override makes "clip\\u202Egpj.exe" read as
        // "clipexe.jpg") are shown as their escapes, so a name reads as what it is.
        const reordering = /[\\u061C\\u200B-\\u200F\\u202A-\\u202E\\u2066-\\u2069\\uFEFF]/g;
        const plain = (value) => String(value ?? "").replace(reordering,
          (c) => "\\\\u" + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0"));
        const html = (value) => String(value ?? "").replace(/[&<>"']/g,
          (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
        const text = (value) => html(plain(value));
        const bytes = (n) => { const u = ["B", "KiB", "MiB", "GiB", "TiB"]; let i = 0;
          while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; } return n.toFixed(i ? 1 : 0) + " " + u[i]; };
        const duration = (s) => s == null ? "—" : s < 90 ? s + " s" : s < 5400 ? Math.round(s / 60) + " min"
          : (s / 3600).toFixed(1) + " h";
        const csrf = document.querySelector('meta[name="csrf-token"]').content;
        async function get(url) { const r = await fetch(url, { cache: "no-store" });
          if (r.status === 401) { signInNeeded(); }
          if (!r.ok) { const body = await r.json().catch(() => ({}));
            throw new Error(body.error || url + ": " + r.status); } return r.json(); }
        async function post(url, body) {
          const headers = { "X-CSRF-Token": csrf };
          if (body !== undefined) headers["Content-Type"] = "application/json";
          const r = await fetch(url, { method: "POST", credentials: "same-origin", headers,
            body: body === undefined ? undefined : JSON.stringify(body) });
          return { ok: r.ok, status: r.status, body: await r.json().catch(() => ({})) };
        }
        function signInNeeded() { $("login").hidden = false; $("logout").hidden = true;
          $("mode").textContent = "signed out"; }

        function chart(points) {
          if (points.length < 2) return "";
          const max = Math.max(...points.map((p) => p[1]));
          const w = 600, h = 60, step = w / (points.length - 1);
          const path = points.map((p, i) => (i ? "L" : "M") + (i * step).toFixed(1) + "," +
            (h - 4 - (p[1] / max) * (h - 8)).toFixed(1)).join(" ");
          return `<svg class="chart" viewBox="0 0 ${w} ${h}" preserveAspectRatio="none">` +
            `<path d="${path}" fill="none" stroke="#2e7d32" stroke-width="2"/></svg>`;
        }

        function workflowCard(w) {
          const c = w.counts, total = Math.max(1, w.total);
          const tiles = names.map((n) => `<div class="tile ${n}"><b data-count="${text(w.name)}:${n}">${c[n] ?? 0}</b>` +
            `<span>${n}</span></div>`).join("");
          const bar = ["done", "failed", "running"].map((n) =>
            `<i class="${n}" style="width:${(100 * (c[n] ?? 0) / total).toFixed(2)}%"></i>`).join("");
          return `<div class="card workflow" data-workflow="${text(w.name)}"><h2>${text(w.name)}</h2>` +
            `<div class="tiles">${tiles}</div><div class="bar">${bar}</div>` +
            `<div class="meta"><span>${w.itemsPerMinute} items/min</span><span>ETA ${duration(w.etaSeconds)}</span>` +
            `<span>${bytes(w.bytesDone)} done</span></div>${chart(w.doneByMinute)}</div>`;
        }

        function stagesCell(stages) {
          return (stages || []).map((s) => `<span class="status ${text(s.status)}">${text(s.id)}: ${text(s.status)}` +
            (s.attempts > 1 ? ` (${s.attempts})` : "") + `</span>`).join(" ");
        }

        // How much of a list a card shows: "12" when it shows all, "1–200 of 260" when the list is longer.
        function extent(list) {
          const total = list.total ?? list.items.length;
          if (list.items.length >= total && !list.offset) return String(total);
          return `${list.offset + 1}–${list.offset + list.items.length} of ${total}`;
        }

        function runningCard(list) {
          const items = list.items;
          const rows = items.map((i) => `<tr><td class="path"><a href="#/item/${i.id}">${text(i.relativePath)}</a></td>` +
            `<td>${text(i.workflow)}</td><td>${new Date(i.updatedAt).toLocaleTimeString()}</td>` +
            `<td>${stagesCell(i.stages) || "first stage"}</td></tr>`).join("");
          return `<div class="card" id="running"><h2>Running <span class="extent">(${extent(list)})</span></h2>` + (rows ? `<table><tr><th>Item</th>` +
            `<th>Workflow</th><th>Since</th><th>Stages</th></tr>${rows}</table>` :
            `<p class="empty">nothing running</p>`) + `</div>`;
        }

        // The failures are read a page at a time; the buttons move between pages.
        const pageSize = 200;
        let failuresOffset = 0;

        function failuresCard(list) {
          const items = list.items;
          const groups = new Map();
          for (const i of items) { const key = (i.errorKind || "failed") + " in " + (i.stage || "?");
            if (!groups.has(key)) groups.set(key, []); groups.get(key).push(i); }
          const html = [...groups].map(([key, list]) => `<div class="group"><h4>${text(key)} (${list.length})</h4>` +
            `<table>${list.map((i) => `<tr class="failure" data-item="${i.id}"><td class="path">` +
            `<a href="#/item/${i.id}">${text(i.relativePath)}</a></td><td>${i.attempts ?? ""} attempt(s)</td>` +
            `<td class="message">${text(i.error)}</td></tr>`).join("")}</table></div>`).join("");
          const total = list.total ?? items.length;
          const pages = total > pageSize ? `<p class="pages"><button id="newer-failures" type="button"` +
            `${list.offset > 0 ? "" : " disabled"}>Newer</button> <button id="older-failures" type="button"` +
            `${list.offset + items.length < total ? "" : " disabled"}>Older</button></p>` : "";
          return `<div class="card" id="failures"><h2>Failures <span class="extent" id="failures-extent">` +
            `(${extent(list)})</span></h2>` + (html || `<p class="empty">no failures</p>`) + pages + `</div>`;
        }

        function workersCard(workers, splits, status) {
          if (!workers) return "";
          const since = (w) => w.stoppedAt ? ` since ${new Date(w.stoppedAt).toLocaleTimeString()}` : "";
          const rows = workers.map((w) => `<tr class="worker ${text(w.state)}"><td>${text(w.id)}</td>` +
            `<td>${text(w.host)}</td><td><span class="status ${w.state === "live" ? "done" : ""}">` +
            `${w.state === "live" ? "live" : "stopped"}${since(w)}</span></td><td>${new Date(w.heartbeatAt).toLocaleTimeString()}</td><td>${w.holding}</td>` +
            `<td>${w.done}</td><td>${w.failed}</td></tr>`).join("");
          const percent = (fraction) => `${Math.floor(fraction * 100)} %`;
          const split = (splits || []).map((s) => `<tr><td class="path">${text(s.path)}</td><td>${s.done} / ${s.units}` +
            ` units done, ${s.running} encoding, ${percent(s.progress)} encoded` +
            s.encoding.map((u) => `<br>unit ${u.unit}: ${percent(u.progress)} on ${text(u.worker)}`).join("") +
            `</td></tr>`).join("");
          const prune = canAct(status) && workers.some((w) => w.state !== "live")
            ? ` <button id="prune-workers" type="button">Remove stopped workers</button>` : "";
          return `<div class="card" id="workers"><h2>Workers${prune}</h2><table><tr><th>Worker</th><th>Host</th>` +
            `<th>State</th><th>Heartbeat</th><th>Holding</th><th>Done</th><th>Failed</th></tr>${rows}</table>` +
            (split ? `<h3>Split items</h3><table>${split}</table>` : "") + `</div>`;
        }

        // The counts come first and are drawn as soon as they arrive; the lists, which take longer to read, are
        // asked for only then (asked together, they would slow the counts down) and drawn into their own element,
        // so a refresh replaces each part without a blank moment.
        async function overview(known) {
          const status = known ?? await get("/api/status");
          const lists = Promise.all([get("/api/items?status=running&limit=200"),
            get(`/api/items?status=failed&limit=${pageSize}&offset=${failuresOffset}`)]);
          header(status);
          $("summary").innerHTML = (status.workflows.length ? status.workflows.map(workflowCard).join("")
            : `<div class="card"><p class="empty">no runs yet</p></div>`) + workersCard(status.workers, status.splits, status);
          if ($("prune-workers")) $("prune-workers").onclick = async () => { await post("/api/workers/prune"); refresh(); };
          shown("ready");
          const [running, failed] = await lists;
          // Fewer failures than the page started at (retried, forgotten): back to the first page.
          if (failuresOffset > 0 && failuresOffset >= (failed.total ?? 0)) { failuresOffset = 0; return overview(status); }
          $("lists").innerHTML = runningCard(running) + failuresCard(failed);
          const turn = (step) => () => { failuresOffset = Math.max(0, failuresOffset + step); refresh(); };
          if ($("newer-failures")) $("newer-failures").onclick = turn(-pageSize);
          if ($("older-failures")) $("older-failures").onclick = turn(pageSize);
          shown("listed");
        }

        // Marks the page (for scripts that drive a browser) with when it first showed a part: `ready` for the
        // counts, `listed` for the running and failed items, each with its time since navigation in `…At`.
        function shown(part) {
          if (document.body.dataset[part]) return;
          document.body.dataset[part + "At"] = Math.round(performance.now());
          document.body.dataset[part] = "true";
        }

        // When the last status was read: while reads fail, what the page shows is from then, and says so.
        let lastRead = null;

        function header(status) {
          $("source").textContent = plain(status.source);
          lastRead = new Date(status.time);
          $("live").textContent = "updated " + lastRead.toLocaleTimeString();
          delete document.body.dataset.stale;
          $("mode").textContent = status.readOnly ? "read-only" : status.signedIn ? "signed in" : "signed out";
          $("login").hidden = status.readOnly || status.signedIn;
          $("logout").hidden = !status.signedIn || !csrf;
          document.body.dataset.canAct = String(canAct(status));
        }
        // Actions are offered only where the server takes them: a token, and this browser signed in.
        const canAct = (status) => !status.readOnly && status.signedIn && !!csrf;

        async function itemPage(id) {
          const [status, item] = await Promise.all([get("/api/status"), get("/api/items/" + id)]);
          header(status);
          const stages = (item.stages || []).map((s) => `<tr><td>${text(s.id)}</td><td>${text(s.uses)}</td>` +
            `<td><span class="status ${text(s.status)}">${text(s.status)}</span></td><td>${s.attempts}</td>` +
            `<td class="message">${text(s.error ?? "")}</td><td><pre>${text(JSON.stringify(s.outputs, null, 1))}</pre></td></tr>`
            ).join("");
          const links = (item.links || []).map((l) => `<li><a href="${html(l)}" rel="noreferrer">${text(l)}</a></li>`).join("");
          const result = $("action-result");
          const kept = result ? [result.className, result.textContent] : ["", ""];
          $("item").innerHTML = `<div class="card"><h2 class="path">${text(item.relativePath)}</h2>` +
            `<p><span class="status ${text(item.status)}" id="item-status">${text(item.status)}</span> ` +
            `version ${item.version} · ${bytes(item.size)} · ${text(item.workflow)} · <span class="path">${text(item.path)}</span></p>` +
            (item.error ? `<p class="message" id="item-error">${text(item.errorKind)}: ${text(item.error)}</p>` : "") +
            (canAct(status) ? `<p>` + (item.actions || []).map((a) => `<button id="${text(a)}" data-action="${text(a)}">` +
              `${a === "retry" ? "Retry" : "Cancel"}</button> `).join("") +
              `<span id="action-result" class="${kept[0]}">${text(kept[1])}</span></p>` : "") +
            `<h3>Stages</h3><table><tr><th>Stage</th><th>Uses</th><th>Status</th><th>Attempts</th><th>Error</th>` +
            `<th>Outputs</th></tr>${stages}</table>` + (links ? `<h3>Links</h3><ul>${links}</ul>` : "") + `</div>`;
          for (const button of document.querySelectorAll("button[data-action]")) {
            button.onclick = () => act(id, button.dataset.action);
          }
        }

        async function act(id, action) {
          const response = await post(`/api/items/${id}/${action}`);
          const result = $("action-result");
          result.className = response.ok ? "accepted" : "refused";
          result.textContent = response.ok ? action + " requested"
            : response.status + ": " + plain(response.body.error || "refused");
        }

        // Signing in and out go through the API, so a wrong token or a wait is said on the page.
        $("login").addEventListener("submit", async (event) => {
          event.preventDefault();
          const response = await post("/login", { token: $("login").querySelector("input").value });
          if (response.ok) { location.reload(); return; }
          $("login-result").textContent = response.body.error || ("sign-in refused: " + response.status);
        });
        $("logout").addEventListener("click", async () => { await post("/logout"); location.reload(); });

        // The status the page came with: drawn at once on the first refresh, then read from the API.
        let initialStatus = JSON.parse($("initial-status").textContent);

        async function refresh() {
          const known = initialStatus;
          initialStatus = null;
          const match = location.hash.match(/^#\\/item\\/(\\d+)/);
          $("overview").hidden = !!match; $("item").hidden = !match;
          try { if (match) { await itemPage(match[1]); shown("ready"); } else await overview(known); }
          catch (error) {
            $("live").textContent = "cannot read: " + plain(error.message) +
              (lastRead ? ` · counts stale since ${lastRead.toLocaleTimeString()}` : "");
            if (lastRead) document.body.dataset.stale = lastRead.toLocaleTimeString();
          }
        }

        window.addEventListener("hashchange", refresh);
        if (document.querySelector("main").dataset.mayRead === "true") {
          refresh();
          setInterval(refresh, \(refreshMilliseconds));
        } else {
          signInNeeded();
          $("live").textContent = "sign in to see this batch";
        }
        """
}
