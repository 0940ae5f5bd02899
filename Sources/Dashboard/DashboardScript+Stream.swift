extension DashboardAssets {
    /// How the page follows the server: the status stream (`/api/events`, with `?item=ID` on an item page, whose
    /// changes come as `item` events), and reading the status every second while the stream is down.
    static let streamScript = """
        // The status is pushed as it changes; while the stream is down (a proxy that cuts it, a server restarting)
        // the page reads it every second until the stream is back. `data-transport` says which.
        let polling = null;
        function poll(on) {
          if (on && !polling) polling = setInterval(() => refresh(), \(refreshMilliseconds));
          if (!on && polling) { clearInterval(polling); polling = null; }
          document.body.dataset.transport = on ? "polling" : "stream";
        }
        // The open stream, if any, and the item it follows (an item page's: its changes are pushed as `item`
        // events). A page out of sight (another tab, a minimised window) keeps none and reads nothing: it takes none
        // of the browser's few connections to the server, nor the server's streams.
        let stream = null, streamItem = null;
        const openItem = () => location.hash.match(/^#\\/item\\/(\\d+)/)?.[1] ?? null;
        function listen() {
          if (stream || document.hidden) return;
          streamItem = openItem();
          const mine = stream = new EventSource("/api/events" + (streamItem ? "?item=" + streamItem : ""));
          mine.addEventListener("open", () => poll(false));
          mine.addEventListener("status", (event) => refresh(JSON.parse(event.data)));
          mine.addEventListener("item", (event) => {
            if (String(JSON.parse(event.data).id) !== openItem()) return;
            itemChanges += 1;
            refresh(lastStatus ?? undefined);
          });
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
        """
}
