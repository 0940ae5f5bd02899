import Crypto
import Foundation
import StageKit

/// The page and its assets, compiled into the binary: the dashboard fetches nothing from the internet (no CDN, no
/// framework), so it works on a machine without access to it.
enum DashboardAssets {
    /// How often the page reads the status while its stream of updates is down, in milliseconds.
    static let refreshMilliseconds = 1000
    /// How long the page waits for a read before it gives up on it, in milliseconds.
    static let readTimeoutMilliseconds = 10000
    /// Seconds without a report after which a stage's progress says so instead of its rate and ETA.
    static let silentSeconds = 30

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
            \(historyStyle)
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
              <section id="overview"><div id="summary"></div><div id="lists"></div>
            \(finderMarkup)
            \(runsMarkup)
              </section>
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
        .progress { font-size: 12px; white-space: nowrap; } .progress .bar { height: 4px; margin: 2px 0 4px; }
        #find { display: flex; gap: 8px; flex-wrap: wrap; margin-bottom: 10px; } #find input { flex: 1; min-width: 200px; }
        #find input, #find select { font: inherit; padding: 4px 8px; border: 1px solid #bbb; border-radius: 5px; }
        th.sortable { cursor: pointer; text-decoration: underline dotted; }
        th[aria-sort="ascending"]::after { content: " ▴"; } th[aria-sort="descending"]::after { content: " ▾"; }
        pre { background: #f3f4f6; padding: 8px; border-radius: 5px; overflow: auto; font-size: 12px; }
        """
}
