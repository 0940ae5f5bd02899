extension DashboardAssets {
    /// The workers' part of the page's script: a worker's state in words (a silent worker is stopped since its
    /// lease ran out), the Drain and Stop buttons on a live worker's row where the server takes actions, and an
    /// item's takeovers.
    static let workersScript = """
        // The server says whether it is live; a live worker asked to drain or stop shows as draining or stopping.
        const workerLive = (w) => w.live === true;
        const workerState = (w) => !workerLive(w) ? "stopped"
          : w.request === "stop" ? "stopping" : w.request === "drain" ? "draining" : "live";
        // Drain and Stop while it works; a draining worker can still be stopped; a stopping one is on its way out.
        function workerButtons(w, status) {
          if (!canAct(status)) return "";
          const shown = workerState(w);
          const offered = shown === "live" ? ["drain", "stop"] : shown === "draining" ? ["stop"] : [];
          return offered.map((r) => `<button type="button" class="worker-request" data-worker="${html(w.id)}" ` +
            `data-request="${r}">${r === "drain" ? "Drain" : "Stop"}</button>`).join(" ");
        }
        function bindWorkerButtons() {
          for (const button of document.querySelectorAll("button[data-worker]")) {
            button.onclick = async () => {
              button.disabled = true;
              const response = await post(`/api/workers/${encodeURIComponent(button.dataset.worker)}/` +
                button.dataset.request);
              if (!response.ok) $("live").textContent = response.status + ": " + plain(response.body.error || "refused");
              refresh();
            };
          }
        }
        // The takeover limit's count: counted takeovers since the item's last progress, when there were any.
        const takeoversLine = (item) => !(item.takeovers > 0) ? ""
          : `<p id="item-takeovers">taken over ${item.takeovers} time(s) since its last progress</p>`;
        """
}
