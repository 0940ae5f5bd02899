extension DashboardAssets {
    /// The item view's history (`/api/items/:id/history`): each version, then per stage its attempts as rows, each
    /// with a bar on one time axis (when in the item's life it ran, and for how long), its error, and the end
    /// of what it logged in a `<pre>`, escaped as every other text of the page.
    static let historyScript = """
        function historyMarkup(history) {
          if (history.unreadable) return `<h3>History</h3><p class="empty">${text(history.unreadable)}</p>`;
          const rows = history.versions.flatMap((v) => v.stages.flatMap((s) => s.attempts));
          const moment = (value) => value ? Date.parse(value) : NaN;
          const times = rows.flatMap((a) => [moment(a.startedAt), moment(a.finishedAt)]).filter((t) => !isNaN(t));
          const first = Math.min(...times), span = Math.max(1000, Math.max(...times) - first);
          const bar = (a) => {
            const start = moment(a.startedAt);
            if (isNaN(start)) return "";
            const end = isNaN(moment(a.finishedAt)) ? start : moment(a.finishedAt);
            const left = (100 * (start - first) / span).toFixed(2);
            const width = Math.max(0.5, 100 * (end - start) / span).toFixed(2);
            return `<span class="span ${text(a.outcome)}" style="left:${left}%;width:${width}%"></span>`;
          };
          const took = (s) => s == null ? "—" : duration(s < 10 ? Math.round(s * 1000) / 1000 : Math.round(s));
          const when = (value) => value ? text(new Date(value).toLocaleString()) : "—";
          const attempt = (v, s, a) => {
            const key = `${v.version}-${text(s.id)}-${a.attempt}-${text(a.startedAt ?? "")}`;
            const detail = (a.error ? `<p class="message">${text(a.errorKind ?? "")}: ${text(a.error)}</p>` : "") +
              (a.log.length ? `<pre class="log">${text(a.log.join("\\n"))}</pre>` : "");
            return `<tr class="attempt" data-key="${key}"><td>${text(s.id)}</td><td>${a.attempt}</td>` +
              `<td><span class="status ${text(a.outcome)}">${text(a.outcome)}</span></td><td>${when(a.startedAt)}</td>` +
              `<td>${took(a.seconds)}</td><td>${text(a.worker ?? "")}</td><td class="lane">${bar(a)}</td></tr>` +
              (detail ? `<tr class="detail" data-key="${key}-detail"><td colspan="7">${detail}</td></tr>` : "");
          };
          const versions = history.versions.map((v) => `<div class="version" data-key="v${v.version}">` +
            `<h4>Version ${v.version}${v.current ? " (current)" : ""} · found ${when(v.createdAt)} · ` +
            `<span class="path">${text(v.path)}</span></h4>` +
            (v.stages.length ? `<table class="timeline"><tr><th>Stage</th><th>Attempt</th><th>Outcome</th>` +
              `<th>Started</th><th>Took</th><th>Worker</th><th>Timeline</th></tr>` +
              v.stages.map((s) => s.attempts.map((a) => attempt(v, s, a)).join("")).join("") + `</table>`
              : `<p class="empty">no stage of this version is kept</p>`) + `</div>`).join("");
          return `<h3>History</h3><div id="history">${versions}</div>`;
        }
        """

    /// The history's look: a lane per attempt row with its bar, coloured by how the attempt ended.
    static let historyStyle = """
        .timeline td.lane { position: relative; width: 30%; min-width: 120px; }
        .timeline .span { position: absolute; top: 8px; height: 8px; border-radius: 4px; background: var(--wait); }
        .timeline .span.succeeded { background: var(--ok); } .timeline .span.failed { background: var(--bad); }
        .timeline .span.running { background: var(--run); }
        .timeline tr.detail td { border-bottom: 1px solid var(--line); padding-top: 0; }
        .version h4 { margin: 12px 0 4px; font-size: 13px; } pre.log { max-height: 320px; white-space: pre-wrap; }
        """
}
