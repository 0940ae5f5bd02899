extension DashboardAssets {
    /// The item finder's script: a search box and filters over a page of items, ordered by a column's header. The
    /// filters live in the page's address (`?q=…&status=…`), so a reload or a shared link shows the same list; the
    /// controls are part of the page itself, never redrawn by an update, so what is being typed stays.
    static let finderScript = """
        const finderKeys = ["q", "status", "error", "stage", "worker", "sort"];
        const findPageSize = \(findPageSize);
        function readFinder() {
          const given = new URLSearchParams(location.search);
          const found = { offset: Math.max(0, parseInt(given.get("offset") || "0", 10) || 0) };
          for (const key of finderKeys) found[key] = given.get(key) || "";
          return found;
        }
        let finder = readFinder(), found = null, foundFor = null, foundError = null, filters = null, filtersFor = null;
        const finderQuery = () => finderKeys.filter((key) => finder[key])
          .map((key) => key + "=" + encodeURIComponent(finder[key]))
          .concat(finder.offset ? ["offset=" + finder.offset] : []).join("&");
        // A select's options: "any", then `values`, and the value the address asks for even when the ledger holds
        // none of it any more. Redrawn only when they change, so an open select is left alone.
        function fillChoices(key, values, any) {
          const select = $("find-" + key);
          const wanted = [""].concat(values);
          if (finder[key] && !wanted.includes(finder[key])) wanted.push(finder[key]);
          if (JSON.stringify([...select.options].map((o) => o.value)) !== JSON.stringify(wanted)) {
            select.replaceChildren(...wanted.map((value) => new Option(value ? plain(value) : any, value)));
          }
          select.value = finder[key];
        }
        function changeFinder(change) {
          Object.assign(finder, { offset: 0 }, change);
          const query = finderQuery();
          history.replaceState(null, "", location.pathname + (query ? "?" + query : "") + location.hash);
          refresh(lastStatus ?? undefined);
        }
        let typing = null;
        $("find").addEventListener("submit", (event) => event.preventDefault());
        $("find-q").value = finder.q;
        $("find-q").addEventListener("input", () => {
          clearTimeout(typing);
          typing = setTimeout(() => changeFinder({ q: $("find-q").value }), 250);
        });
        for (const key of ["status", "error", "stage", "worker"]) {
          $("find-" + key).addEventListener("change", (event) => changeFinder({ [key]: event.target.value }));
        }
        $("found-previous").onclick = () => changeFinder({ offset: Math.max(0, finder.offset - findPageSize) });
        $("found-next").onclick = () => changeFinder({ offset: finder.offset + findPageSize });
        $("found").addEventListener("click", (event) => {
          const header = event.target.closest("th[data-sort]");
          if (header) changeFinder({ sort: header.dataset.sort === "updated" ? "" : header.dataset.sort });
        });

        // Reads the filters' choices when the lists are read again, and the page of items when they are or the
        // filters change; draws them.
        async function findItems(status) {
          if (filtersFor !== listsFor) { filters = await get("/api/filters"); filtersFor = listsFor; }
          fillChoices("status", filters.statuses, "any status");
          fillChoices("error", filters.errorKinds, "any error");
          fillChoices("stage", filters.stages, "any stage");
          fillChoices("worker", (status.workers || []).map((w) => w.id), "any worker");
          $("find-worker").hidden = !status.workers;
          const query = finderQuery(), wanted = listsFor + "|" + query;
          if (wanted !== foundFor) {
            try { found = await get("/api/items?" + (query ? query + "&" : "") + "limit=" + findPageSize); foundError = null; }
            catch (error) { found = null; foundError = error.message; }
            foundFor = wanted;
            // A page past the end (a shared link to a list that shrank) goes back to the first page.
            if (found && finder.offset > 0 && finder.offset >= found.total) { changeFinder({ offset: 0 }); return; }
          }
          const order = finder.sort || "updated";
          const header = (key, label) => `<th data-sort="${key}" class="sortable"` +
            `${order === key ? ' aria-sort="' + (key === "name" ? "ascending" : "descending") + '"' : ""}>${label}</th>`;
          const rows = (found?.items || []).map((i) => `<tr data-key="${i.id}" class="found"><td class="path">` +
            `<a href="#/item/${i.id}">${text(i.relativePath)}</a></td><td>${text(i.workflow)}</td>` +
            `<td><span class="status ${text(i.status)}">${text(i.status)}</span></td><td>${text(i.stage ?? "")}</td>` +
            `<td>${text(i.errorKind ?? "")}</td><td>${new Date(i.updatedAt).toLocaleString()}</td></tr>`).join("");
          patch($("found"), foundError ? `<p class="message" id="found-error">${text(foundError)}</p>` : rows
            ? `<table><tr>${header("name", "Name")}<th>Workflow</th><th>Status</th><th>Stage</th><th>Error</th>` +
              `${header("updated", "Updated")}</tr>${rows}</table>` : `<p class="empty">no item matches</p>`);
          $("found-extent").textContent = found ? "(" + extent(found) + ")" : "";
          $("found-previous").disabled = !found || finder.offset <= 0;
          $("found-next").disabled = !found || finder.offset + found.items.length >= found.total;
        }
        """

    /// The items a page of the finder holds.
    static let findPageSize = 100

    /// The finder's controls, drawn once with the page.
    static let finderMarkup = """
        <div class="card" id="finder">
          <h2>Items <span class="extent" id="found-extent"></span></h2>
          <form id="find" role="search">
            <input id="find-q" type="search" placeholder="name contains…" aria-label="name contains" autocomplete="off">
            <select id="find-status" aria-label="status"><option value="">any status</option></select>
            <select id="find-error" aria-label="error kind"><option value="">any error</option></select>
            <select id="find-stage" aria-label="stage"><option value="">any stage</option></select>
            <select id="find-worker" aria-label="worker" hidden><option value="">any worker</option></select>
          </form>
          <div id="found"></div>
          <p class="pages"><button id="found-previous" type="button" disabled>Previous</button>
            <button id="found-next" type="button" disabled>Next</button></p>
        </div>
        """
}
