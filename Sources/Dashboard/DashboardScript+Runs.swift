extension DashboardAssets {
    /// The run history's script: a page of past runs (a shared batch: submissions) with their counts, bytes and
    /// outcome, the chart of items done per minute over their span with labelled axes, and the retry of every
    /// failed item.
    static let runsScript = """
        // The labelled axes of a chart (``chart``'s `axes`): times along x, items per minute along y, each with
        // tick labels and its unit. `box` is the chart's size and margins, `t0`–`t1` its time span, `max` its top.
        function chartAxes(box, t0, t1, max) {
          const { w, h, left, right, top, bottom } = box, span = t1 - t0;
          // Minutes apart, ticks are told apart by their seconds; days apart, by their date.
          const clock = span < 6e5 ? { hour: "2-digit", minute: "2-digit", second: "2-digit" }
            : { hour: "2-digit", minute: "2-digit" };
          const label = (t) => span > 864e5 ? new Date(t).toLocaleDateString([], { month: "short", day: "numeric" }) +
            " " + new Date(t).toLocaleTimeString([], clock) : new Date(t).toLocaleTimeString([], clock);
          const px = (t) => left + ((t - t0) / span) * (w - left - right);
          const py = (v) => top + (1 - v / max) * (h - top - bottom);
          const anchor = ["start", "middle", "middle", "middle", "end"];
          return `<line class="axis" x1="${left}" y1="${h - bottom}" x2="${w - right}" y2="${h - bottom}"/>` +
            `<line class="axis" x1="${left}" y1="${top}" x2="${left}" y2="${h - bottom}"/>` +
            [0, 1, 2, 3, 4].map((k) => t0 + (span * k) / 4).map((t, k) => `<text class="tick x" ` +
              `x="${px(t).toFixed(1)}" y="${h - bottom + 13}" text-anchor="${anchor[k]}">${text(label(t))}</text>`).join("") +
            [0, max / 2, max].map((v) => `<text class="tick y" x="${left - 5}" y="${(py(v) + 4).toFixed(1)}" ` +
              `text-anchor="end">${+v.toFixed(1)}</text>`).join("") +
            `<text class="axis-title x" x="${(left + w - right) / 2}" y="${h - 3}" text-anchor="middle">time</text>` +
            `<text class="axis-title y" transform="translate(12 ${(top + h - bottom) / 2}) rotate(-90)" ` +
            `text-anchor="middle">items / min</text>`;
        }

        // The run history is read a page at a time, again when the lists are (the counts changed, ten seconds went
        // by) or a page is turned.
        const runsPageSize = \(runsPageSize);
        let runsOffset = 0, runsRead = null, runsFor = null;
        // A submission's already queued, waiting and refused items show only when there are some.
        const runCounts = [["queued", "queued"], ["alreadyQueued", "already queued"], ["waiting", "waiting"],
          ["done", "done"], ["reused", "reused"], ["skipped", "skipped"], ["failed", "failed"], ["refused", "refused"]];
        const shownWhenSome = ["alreadyQueued", "waiting", "refused"];

        async function runHistory() {
          const wanted = listsFor + "|" + runsOffset;
          if (wanted !== runsFor) { runsRead = await get(`/api/runs?limit=${runsPageSize}&offset=${runsOffset}`); runsFor = wanted; }
          const list = runsRead;
          const when = (t) => t ? new Date(t).toLocaleString() : "—";
          const outcome = { "finished": "done", "failed items": "failed", "running": "running" };
          const rows = list.runs.map((r) => `<tr class="run" data-key="${r.id}" data-outcome="${text(r.outcome)}">` +
            `<td>${text(r.workflow)}</td><td>${when(r.startedAt)}</td><td>${when(r.finishedAt)}</td>` +
            `<td>${duration(r.seconds == null ? null : Math.round(r.seconds))}</td><td class="counts">` +
            runCounts.filter(([k]) => r.counts[k] != null && (r.counts[k] > 0 || !shownWhenSome.includes(k)))
              .map(([k, label]) => `<span data-count="${k}">${r.counts[k]} ${label}</span>`)
              .join(", ") + `</td><td>${bytes(r.bytes)}</td><td><span class="status ${outcome[r.outcome] ?? ""}">` +
            `${text(r.outcome)}</span></td></tr>`).join("");
          const t = list.throughput;
          patch($("runs"), rows ? `<table><tr><th>Workflow</th><th>Started</th><th>Finished</th><th>Took</th>` +
            `<th>Counts</th><th>Bytes</th><th>Outcome</th></tr>${rows}</table>` +
            (t ? `<h3>Items done per minute` + (t.bucketMinutes > 1 ? ` (averaged over ${t.bucketMinutes} min)` : "") +
              `</h3>` + chart(t.points, t) : "") : `<p class="empty">no runs yet</p>`);
          $("runs-extent").textContent = "(" + extent({ items: list.runs, total: list.total, offset: list.offset }) + ")";
          $("runs-newer").disabled = runsOffset <= 0;
          $("runs-older").disabled = runsOffset + list.runs.length >= list.total;
        }
        $("runs-newer").onclick = () => { runsOffset = Math.max(0, runsOffset - runsPageSize); refresh(); };
        $("runs-older").onclick = () => { runsOffset += runsPageSize; refresh(); };

        // Every failed item at once (the button is there only where the server takes it, from this caller): a shared
        // batch queues them again; a state folder's run again at once under a watch holding the folder, else at its
        // next run, and the answer says which. Without the button, a state folder's card says what becomes of them.
        let retryAllResult = "";
        function retryAllControl(list, status) {
          const total = list.total ?? list.items.length;
          const button = total && canAct(status) && (list.actions || []).includes("retry")
            ? `<button id="retry-all" type="button">Retry all ${total} failed</button> ` : "";
          if (total && !button && !status.workers) return `<p class="note" id="retry-note">These run again at ` +
            `the next <code>pipeline run</code> of their workflow, each from the stage that failed ` +
            `(<code>--failed</code>: only them); a <code>pipeline watch</code> holding the folder takes a failed ` +
            `file up again once the file changes or its retry is asked for here.</p>`;
          const result = retryAllResult ? `<span id="retry-all-result">${text(retryAllResult)}</span>` : "";
          return button || result ? `<p>${button}${result}</p>` : "";
        }
        function bindRetryAll() {
          if (!$("retry-all")) return;
          $("retry-all").onclick = async () => {
            const response = await post("/api/items/retry");
            const body = response.body;
            retryAllResult = !response.ok ? response.status + ": " + plain(body.error || "refused")
              : !body.outcome ? `queued ${body.queued} of ${body.failed}`
              : body.queued ? `${body.queued} of ${body.failed}: ${body.outcome}` : body.outcome;
            listsFor = null;
            refresh();
          };
        }
        """

    /// The runs a page of the history holds.
    static let runsPageSize = 20

    /// The run history's card, drawn once with the page; its table is drawn into `#runs`.
    static let runsMarkup = """
        <div class="card" id="run-history">
          <h2>Runs <span class="extent" id="runs-extent"></span></h2>
          <div id="runs"></div>
          <p class="pages"><button id="runs-newer" type="button" disabled>Newer</button>
            <button id="runs-older" type="button" disabled>Older</button></p>
          <style>
            svg.chart.axes { height: auto; max-height: 220px; }
            svg.chart .axis { stroke: #999; } svg.chart text { font-size: 11px; fill: #555; }
            svg.chart .axis-title { font-size: 12px; fill: #333; } .note { color: #555; font-size: 13px; }
          </style>
        </div>
        """
}
