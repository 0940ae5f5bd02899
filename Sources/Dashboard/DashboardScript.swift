extension DashboardAssets {
    /// The page's script: it draws the status it came with, then follows the status the server pushes
    /// (`/api/events`), changing only the parts of the page that changed; while the stream is down it reads the
    /// status every second instead.
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
        async function get(url) {
          // A read that hangs (a server cut off) gives up, so the next update is not queued behind it for ever.
          const r = await fetch(url, { cache: "no-store", signal: AbortSignal.timeout(\(readTimeoutMilliseconds)) });
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

        // Puts `markup` into `target` by changing only the nodes that differ, so an update leaves alone what it does
        // not change: a text selection, the scroll position, a focused button. Children with a `data-key` are
        // matched by it (a row stays the row of its item when rows above it come or go).
        function patch(target, markup) {
          const next = document.createElement(target.tagName);
          next.innerHTML = markup;
          morph(target, next);
        }
        function morph(from, to) {
          const wanted = [...to.childNodes];
          const keyed = new Map([...from.children].filter((n) => n.dataset.key).map((n) => [n.dataset.key, n]));
          wanted.forEach((fresh, i) => {
            let old = from.childNodes[i];
            const key = fresh.nodeType === 1 ? fresh.dataset.key : undefined;
            if (key !== undefined && old?.dataset?.key !== key) {
              const match = keyed.get(key);
              if (!match) { from.insertBefore(fresh, old ?? null); return; }
              from.insertBefore(match, old ?? null); old = match;
            }
            if (!old) { from.appendChild(fresh); return; }
            if (old.nodeType !== fresh.nodeType || old.nodeName !== fresh.nodeName) { from.replaceChild(fresh, old); return; }
            if (old.nodeType !== 1) { if (old.nodeValue !== fresh.nodeValue) old.nodeValue = fresh.nodeValue; return; }
            for (const { name } of [...old.attributes]) if (!fresh.hasAttribute(name)) old.removeAttribute(name);
            for (const { name, value } of [...fresh.attributes]) if (old.getAttribute(name) !== value) old.setAttribute(name, value);
            morph(old, fresh);
          });
          while (from.childNodes.length > wanted.length) from.removeChild(from.lastChild);
        }

        // Items done per minute as a line. Bare (a workflow's card), its points spread evenly; with `axes` (the run
        // history's `{from, to}`), each point at its time between `from` and `to`, on labelled axes (``chartAxes``).
        function chart(points, axes) {
          if (points.length < 2 && !axes) return "";
          const box = axes ? { w: 600, h: 190, left: 52, right: 14, top: 8, bottom: 36 }
            : { w: 600, h: 60, left: 0, right: 0, top: 4, bottom: 4 };
          const max = Math.max(axes ? 1 : 0, ...points.map((p) => p[1]));
          const t0 = axes ? Date.parse(axes.from) : 0, t1 = axes ? Math.max(Date.parse(axes.to), t0 + 6e4) : 1;
          const x = (p, i) => box.left + (box.w - box.left - box.right) *
            (axes ? (Date.parse(p[0]) - t0) / (t1 - t0) : i / (points.length - 1));
          const path = points.map((p, i) => (i ? "L" : "M") + x(p, i).toFixed(1) + "," +
            (box.top + (1 - p[1] / max) * (box.h - box.top - box.bottom)).toFixed(1)).join(" ");
          const line = `<path d="${path}" fill="none" stroke="#2e7d32" stroke-width="2"/>`;
          return axes ? `<svg class="chart axes" viewBox="0 0 ${box.w} ${box.h}" role="img">` +
            `${chartAxes(box, t0, t1, max)}${line}</svg>`
            : `<svg class="chart" viewBox="0 0 ${box.w} ${box.h}" preserveAspectRatio="none">${line}</svg>`;
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

        // A running stage's progress: how far (a percentage when the whole is known), its rate and its ETA.
        const amount = (n, unit) => unit === "bytes" ? bytes(n) : unit === "seconds" ? duration(Math.round(n)) : n + " items";
        const pace = (r, unit) => unit === "bytes" ? bytes(r) + "/s" : unit === "seconds" ? r.toFixed(1) + "× real time"
          : r.toFixed(1) + " items/s";
        // A stage's progress; its ETA counts down from the stage's last report, and a stage that has not reported
        // for a while says so instead of a rate and an ETA it no longer keeps.
        function progressLine(p) {
          const part = p.total ? Math.min(100, (100 * p.completed) / p.total) : null;
          const age = p.reportedAt ? Math.max(0, (serverNow() - new Date(p.reportedAt)) / 1000) : 0;
          const silent = age >= \(silentSeconds);
          return `<div class="progress" data-stage="${text(p.stage)}">${text(p.stage)}` +
            `${p.worker ? " on " + text(p.worker) : ""}: ` +
            (part === null ? amount(p.completed, p.unit) : `<span class="percent">${part.toFixed(1)} %</span>`) +
            (silent ? ` · <span class="silent">no report for ${duration(Math.round(age))}</span>`
              : (p.rate ? ` · ${pace(p.rate, p.unit)}` : "") +
                (p.etaSeconds != null ? ` · ETA ${duration(Math.max(0, Math.round(p.etaSeconds - age)))}` : "")) +
            `<div class="bar"><i class="running" style="width:${(part ?? 0).toFixed(2)}%"></i></div></div>`;
        }
        const progressOf = (progress, workflow, item) =>
          progress.filter((p) => p.workflow === workflow && p.item === item).map(progressLine).join("");

        function runningCard(list, progress) {
          const items = list.items;
          const rows = items.map((i) => `<tr data-key="${i.id}"><td class="path"><a href="#/item/${i.id}">${text(i.relativePath)}</a></td>` +
            `<td>${text(i.workflow)}</td><td>${new Date(i.updatedAt).toLocaleTimeString()}</td>` +
            `<td>${stagesCell(i.stages) || "first stage"}</td><td class="stage-progress">` +
            `${progressOf(progress, i.workflow, i.relativePath)}</td></tr>`).join("");
          return `<div class="card" id="running"><h2>Running <span class="extent">(${extent(list)})</span></h2>` + (rows ? `<table><tr><th>Item</th>` +
            `<th>Workflow</th><th>Since</th><th>Stages</th><th>Progress</th></tr>${rows}</table>` :
            `<p class="empty">nothing running</p>`) + `</div>`;
        }

        // The failures are read a page at a time; the buttons move between pages.
        const pageSize = 200;
        let failuresOffset = 0;

        function failuresCard(list, status) {
          const items = list.items;
          const groups = new Map();
          for (const i of items) { const key = (i.errorKind || "failed") + " in " + (i.stage || "?");
            if (!groups.has(key)) groups.set(key, []); groups.get(key).push(i); }
          const html = [...groups].map(([key, list]) => `<div class="group"><h4>${text(key)} (${list.length})</h4>` +
            `<table>${list.map((i) => `<tr class="failure" data-item="${i.id}" data-key="${i.id}"><td class="path">` +
            `<a href="#/item/${i.id}">${text(i.relativePath)}</a></td><td>${i.attempts ?? ""} attempt(s)</td>` +
            `<td class="message">${text(i.error)}</td></tr>`).join("")}</table></div>`).join("");
          const total = list.total ?? items.length;
          const pages = total > pageSize ? `<p class="pages"><button id="newer-failures" type="button"` +
            `${list.offset > 0 ? "" : " disabled"}>Newer</button> <button id="older-failures" type="button"` +
            `${list.offset + items.length < total ? "" : " disabled"}>Older</button></p>` : "";
          return `<div class="card" id="failures"><h2>Failures <span class="extent" id="failures-extent">` +
            `(${extent(list)})</span></h2>` + retryAllControl(list, status) + (html || `<p class="empty">no failures</p>`) + pages + `</div>`;
        }

        function workersCard(workers, splits, status) {
          if (!workers) return "";
          const since = (w) => w.stoppedAt ? ` since ${new Date(w.stoppedAt).toLocaleTimeString()}` : "";
          const rows = workers.map((w) => `<tr class="worker ${text(w.state)} ${text(workerState(w))}" data-key="${text(w.id)}"><td>${text(w.id)}</td>` +
            `<td>${text(w.host)}</td><td><span class="status ${workerLive(w) ? "done" : ""}">` +
            `${text(workerState(w))}${since(w)}</span></td><td>${new Date(w.heartbeatAt).toLocaleTimeString()}</td><td>${w.holding}</td>` +
            `<td>${w.done}</td><td>${w.failed}</td><td>${w.tookOver ?? 0}</td><td>${workerButtons(w, status)}</td></tr>`).join("");
          const percent = (fraction) => `${Math.floor(fraction * 100)} %`;
          const split = (splits || []).map((s) => `<tr><td class="path">${text(s.path)}</td><td>${s.done} / ${s.units}` +
            ` units done, ${s.running} encoding, ${percent(s.progress)} encoded` +
            s.encoding.map((u) => `<br>unit ${u.unit}: ${percent(u.progress)} on ${text(u.worker)}`).join("") +
            `</td></tr>`).join("");
          const prune = canAct(status) && workers.some((w) => !workerLive(w))
            ? ` <button id="prune-workers" type="button">Remove stopped workers</button>` : "";
          return `<div class="card" id="workers"><h2>Workers${prune}</h2><table><tr><th>Worker</th><th>Host</th>` +
            `<th>State</th><th>Heartbeat</th><th>Holding</th><th>Done</th><th>Failed</th><th>Took over</th><th></th></tr>${rows}</table>` +
            (split ? `<h3>Split items</h3><table>${split}</table>` : "") + `</div>`;
        }

        // The lists last read, and what they were read for: they are read again when the counts change, a page is
        // turned, or ten seconds went by, not at each update of the progress.
        let lists = null, listsFor = null;

        // The counts come first and are drawn as soon as they arrive; the lists, which take longer to read, are
        // asked for only then (asked together, they would slow the counts down) and drawn into their own element.
        async function overview(status) {
          header(status);
          patch($("summary"), (status.workflows.length ? status.workflows.map(workflowCard).join("")
            : `<div class="card"><p class="empty">no runs yet</p></div>`) + workersCard(status.workers, status.splits, status));
          if ($("prune-workers")) $("prune-workers").onclick = async () => { await post("/api/workers/prune"); refresh(); };
          bindWorkerButtons();
          shown("ready");
          // The running stages are in the key: an item that starts while another ends leaves the counts as they were.
          const wanted = JSON.stringify([status.workflows.map((w) => w.counts),
            (status.progress || []).map((p) => [p.workflow, p.item, p.stage])]) + failuresOffset + Math.floor(Date.now() / 1e4);
          if (wanted !== listsFor) {
            lists = await Promise.all([get("/api/items?status=running&limit=200"),
              get(`/api/items?status=failed&limit=${pageSize}&offset=${failuresOffset}`)]);
            listsFor = wanted;
          }
          const [running, failed] = lists;
          // Fewer failures than the page started at (retried, forgotten): back to the first page.
          if (failuresOffset > 0 && failuresOffset >= (failed.total ?? 0)) { failuresOffset = 0; listsFor = null; return overview(status); }
          patch($("lists"), runningCard(running, status.progress || []) + failuresCard(failed, status));
          bindRetryAll();
          const turn = (step) => () => { failuresOffset = Math.max(0, failuresOffset + step); refresh(); };
          if ($("newer-failures")) $("newer-failures").onclick = turn(-pageSize);
          if ($("older-failures")) $("older-failures").onclick = turn(pageSize);
          await findItems(status);
          await runHistory();
          shown("listed");
        }

        // Marks the page (for scripts that drive a browser) with when it first showed a part: `ready` for the
        // counts, `listed` for the running and failed items, each with its time since navigation in `…At`.
        function shown(part) {
          if (document.body.dataset[part]) return;
          document.body.dataset[part + "At"] = Math.round(performance.now());
          document.body.dataset[part] = "true";
        }

        // When the last status was read (the server's time, and this browser's when it came): while reads fail,
        // what the page shows is from then, and says so.
        let lastRead = null, lastReadHere = Date.now(), lastStatus = null;
        // The server's time now, as far as this page can tell.
        const serverNow = () => (lastRead ? lastRead.getTime() + Date.now() - lastReadHere : Date.now());

        function header(status) {
          $("source").textContent = plain(status.source);
          if (status !== lastStatus) { lastReadHere = Date.now(); lastStatus = status; }
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

        // The item last read, and what for: it is read again when its page is opened, the counts or the running
        // stages change, or ten seconds went by, not at each update of the progress.
        let shownItem = null, shownItemFor = null, shownHistory = null;

        async function itemPage(id, status) {
          const wanted = JSON.stringify([id, status.workflows.map((w) => w.counts),
            (status.progress || []).map((p) => [p.workflow, p.item, p.stage])]) + Math.floor(Date.now() / 1e4);
          if (wanted !== shownItemFor) {
            // The history is read on its own: when it cannot be (a role that may not read it), the item still shows.
            [shownItem, shownHistory] = await Promise.all([get("/api/items/" + id),
              get(`/api/items/${id}/history`).catch((e) => ({ unreadable: String(e.message || e) }))]);
            shownItemFor = wanted;
          }
          const item = shownItem;
          header(status);
          const progress = (status.progress || []).filter((p) => p.workflow === item.workflow && p.item === item.relativePath);
          const stages = (item.stages || []).map((s) => `<tr data-key="${text(s.id)}"><td>${text(s.id)}</td><td>${text(s.uses)}</td>` +
            `<td><span class="status ${text(s.status)}">${text(s.status)}</span>` +
            `${progress.filter((p) => p.stage === s.id).map(progressLine).join("")}</td><td>${s.attempts}</td>` +
            `<td class="message">${text(s.error ?? "")}</td><td><pre>${text(JSON.stringify(s.outputs, null, 1))}</pre></td></tr>`
            ).join("");
          const links = (item.links || []).map((l) => `<li><a href="${html(l)}" rel="noreferrer">${text(l)}</a></li>`).join("");
          const result = $("action-result");
          const kept = result ? [result.className, result.textContent] : ["", ""];
          patch($("item"), `<div class="card"><h2 class="path">${text(item.relativePath)}</h2>` +
            `<p><span class="status ${text(item.status)}" id="item-status">${text(item.status)}</span> ` +
            `version ${item.version} · ${bytes(item.size)} · ${text(item.workflow)} · <span class="path">${text(item.path)}</span></p>` +
            takeoversLine(item) + (item.error ? `<p class="message" id="item-error">${text(item.errorKind)}: ${text(item.error)}</p>` : "") +
            (canAct(status) ? `<p>` + (item.actions || []).map((a) => `<button id="${text(a)}" data-action="${text(a)}">` +
              `${a === "retry" ? "Retry" : "Cancel"}</button> `).join("") +
              `<span id="action-result" class="${kept[0]}">${text(kept[1])}</span></p>` : "") +
            `<h3>Stages</h3><table><tr><th>Stage</th><th>Uses</th><th>Status</th><th>Attempts</th><th>Error</th>` +
            `<th>Outputs</th></tr>${stages}</table>` + qualityMarkup(item.stages || []) + (links ? `<h3>Links</h3><ul>${links}</ul>` : "") +
            historyMarkup(shownHistory) + `</div>`);
          for (const button of document.querySelectorAll("button[data-action]")) {
            button.onclick = () => act(id, button.dataset.action);
          }
        }

        async function act(id, action) {
          const response = await post(`/api/items/${id}/${action}`);
          const result = $("action-result");
          result.className = response.ok ? "accepted" : "refused";
          const outcome = response.body.outcome ? ": " + response.body.outcome : "";
          result.textContent = response.ok ? action + " requested" + outcome
            : response.status + ": " + plain(response.body.error || "refused");
        }

        \(finderScript)

        \(runsScript)

        \(historyScript)

        \(qualityScript)

        \(workersScript)

        // Signing in and out go through the API, so a wrong token or a wait is said on the page.
        $("login").addEventListener("submit", async (event) => {
          event.preventDefault();
          const response = await post("/login", { token: $("login").querySelector("input").value });
          if (response.ok) { location.reload(); return; }
          $("login-result").textContent = response.body.error || ("sign-in refused: " + response.status);
        });
        $("logout").addEventListener("click", async () => { await post("/logout"); location.reload(); });

        // Draws the page for `known` status, or for the status read now.
        async function draw(known) {
          const match = location.hash.match(/^#\\/item\\/(\\d+)/);
          $("overview").hidden = !!match; $("item").hidden = !match;
          try {
            const status = known ?? await get("/api/status");
            if (match) { await itemPage(match[1], status); shown("ready"); } else await overview(status);
          } catch (error) { unreadable(error.message); }
        }
        // One drawing at a time; of the updates that come while one is drawn, only the latest is drawn next.
        let drawing = Promise.resolve(), next = null;
        function schedule(task) {
          const waiting = next !== null;
          next = task;
          if (!waiting) drawing = drawing.then(() => { const task = next; next = null; return task(); });
          return drawing;
        }
        const refresh = (known) => schedule(() => draw(known));

        function unreadable(message) {
          $("live").textContent = "cannot read: " + plain(message) +
            (lastRead ? ` · counts stale since ${lastRead.toLocaleTimeString()}` : "");
          if (lastRead) document.body.dataset.stale = lastRead.toLocaleTimeString();
        }

        // The status is pushed as it changes; while the stream is down (a proxy that cuts it, a server restarting)
        // the page reads it every second until the stream is back. `data-transport` says which.
        let polling = null;
        function poll(on) {
          if (on && !polling) polling = setInterval(() => refresh(), \(refreshMilliseconds));
          if (!on && polling) { clearInterval(polling); polling = null; }
          document.body.dataset.transport = on ? "polling" : "stream";
        }
        // The open stream, if any. A page out of sight (another tab, a minimised window) keeps none and reads
        // nothing: it takes none of the browser's few connections to the server, nor the server's streams.
        let stream = null;
        function listen() {
          if (stream || document.hidden) return;
          const mine = stream = new EventSource("/api/events");
          mine.addEventListener("open", () => poll(false));
          mine.addEventListener("status", (event) => refresh(JSON.parse(event.data)));
          mine.addEventListener("unreadable", (event) => {
            const message = JSON.parse(event.data).error;
            schedule(() => unreadable(message));
          });
          mine.addEventListener("error", () => {
            if (stream !== mine) return;
            poll(true);
            // Refused (signed out, too many streams) or not a stream: the browser gives up on it; the page tries
            // again later.
            if (mine.readyState === EventSource.CLOSED) { stream = null; setTimeout(listen, 5000); }
          });
        }
        function pause() {
          if (stream) { stream.close(); stream = null; }
          poll(false);
          document.body.dataset.transport = "paused";
        }

        window.addEventListener("hashchange", () => refresh());
        if (document.querySelector("main").dataset.mayRead === "true") {
          // The status the page came with is drawn at once.
          refresh(JSON.parse($("initial-status").textContent));
          poll(true);
          listen();
          document.addEventListener("visibilitychange", () => {
            if (document.hidden) { pause(); return; }
            refresh();
            poll(true);
            listen();
          });
          // A stage that stops reporting sends nothing new: its ETA counts down and it says so all the same.
          setInterval(() => { if (!document.hidden && lastStatus && !polling) refresh(lastStatus); }, \(silentSeconds) * 200);
        } else {
          signInNeeded();
          $("live").textContent = "sign in to see this batch";
        }
        """
}
