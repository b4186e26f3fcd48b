/* mkdocs-toolcatalog: client-side filters for the catalog index.
   No library, no network: rows carry data-* attributes, the form's state lives in the URL query. */
(function () {
  "use strict";
  var FACETS = ["status", "safety", "format", "kind"];

  function setup(root) {
    if (!root || root.getAttribute("data-tc-ready")) return;
    root.setAttribute("data-tc-ready", "1");
    var form = root.querySelector("form.tc-filters");
    var rows = Array.prototype.slice.call(root.querySelectorAll("table.tc-catalog tbody tr"));
    var shown = root.querySelector("[data-tc-shown]");
    var empty = root.querySelector("[data-tc-empty]");
    if (!form) return;

    function state() {
      var s = { q: form.elements.q.value.trim().toLowerCase() };
      FACETS.forEach(function (f) { s[f] = form.elements[f].value; });
      return s;
    }

    function apply(updateUrl) {
      var s = state();
      var visible = 0;
      rows.forEach(function (row) {
        var ok = FACETS.every(function (f) { return !s[f] || row.getAttribute("data-" + f) === s[f]; });
        if (ok && s.q) ok = (row.getAttribute("data-text") || "").indexOf(s.q) !== -1;
        row.hidden = !ok;
        if (ok) visible += 1;
      });
      if (shown) shown.textContent = visible === rows.length ? "Showing all " + rows.length + " tools." : "Showing " + visible + " of " + rows.length + " tools.";
      if (empty) empty.hidden = visible !== 0;
      Array.prototype.forEach.call(root.querySelectorAll("button[data-tc-status]"), function (button) {
        button.setAttribute("aria-pressed", s.status === button.getAttribute("data-tc-status") ? "true" : "false");
      });
      if (updateUrl) {
        var params = new URLSearchParams(window.location.search);
        ["q"].concat(FACETS).forEach(function (f) {
          var value = f === "q" ? form.elements.q.value.trim() : s[f];
          if (value) params.set(f, value); else params.delete(f);
        });
        var query = params.toString();
        history.replaceState(history.state, "", window.location.pathname + (query ? "?" + query : "") + window.location.hash);
      }
    }

    // The coverage column sorts the rows: lowest first, then (clicked again) highest first; tools
    // without a score (-1) sort before every score. ?sort=coverage or ?sort=-coverage keeps it.
    var sortButton = root.querySelector("button[data-tc-sort]");
    var body = root.querySelector("table.tc-catalog tbody");
    var sortKey = "";

    function sortRows(key, updateUrl) {
      sortKey = key;
      var desc = key.charAt(0) === "-";
      var ordered = rows.slice().sort(function (a, b) {
        var order = Number(a.getAttribute("data-order")) - Number(b.getAttribute("data-order"));
        if (!key) return order;
        var diff = Number(a.getAttribute("data-coverage")) - Number(b.getAttribute("data-coverage"));
        return (desc ? -diff : diff) || order;
      });
      ordered.forEach(function (row) { body.appendChild(row); });
      if (sortButton) sortButton.parentNode.setAttribute("aria-sort", !key ? "none" : desc ? "descending" : "ascending");
      if (updateUrl) {
        var params = new URLSearchParams(window.location.search);
        if (key) params.set("sort", key); else params.delete("sort");
        var query = params.toString();
        history.replaceState(history.state, "", window.location.pathname + (query ? "?" + query : "") + window.location.hash);
      }
    }

    if (sortButton && body) {
      sortButton.addEventListener("click", function () { sortRows(sortKey === "coverage" ? "-coverage" : "coverage", true); });
    }

    function restore() {
      var params = new URLSearchParams(window.location.search);
      var wanted = params.get("sort") || "";
      if (body && (wanted === "coverage" || wanted === "-coverage")) sortRows(wanted, false);
      form.elements.q.value = params.get("q") || "";
      FACETS.forEach(function (f) {
        var value = params.get(f) || "";
        var select = form.elements[f];
        var known = Array.prototype.some.call(select.options, function (o) { return o.value === value; });
        select.value = known ? value : "";
      });
      apply(false);
    }

    // The counts above the filters are buttons: one shows only the tools of its status (again: all).
    Array.prototype.forEach.call(root.querySelectorAll("button[data-tc-status]"), function (button) {
      button.addEventListener("click", function () {
        var status = button.getAttribute("data-tc-status");
        form.elements.status.value = form.elements.status.value === status ? "" : status;
        apply(true);
      });
    });
    Array.prototype.forEach.call(root.querySelectorAll("[data-tc-clear]"), function (button) {
      button.addEventListener("click", function () { form.reset(); });
    });
    form.addEventListener("input", function () { apply(true); });
    form.addEventListener("change", function () { apply(true); });
    form.addEventListener("reset", function () { setTimeout(function () { apply(true); }, 0); });
    restore();
  }

  // A copy button on each reproduction command (without JS the command is plain, selectable text).
  function copyButtons() {
    Array.prototype.forEach.call(document.querySelectorAll(".toolcatalog pre.tc-copy"), function (pre) {
      if (pre.querySelector(".tc-copy-button") || !navigator.clipboard) return;
      var button = document.createElement("button");
      button.type = "button";
      button.className = "tc-copy-button";
      button.textContent = "Copy";
      button.setAttribute("aria-label", "Copy the command");
      button.addEventListener("click", function () {
        navigator.clipboard.writeText(pre.querySelector("code").textContent).then(function () {
          button.textContent = "Copied";
        }, function () { button.textContent = "Select and copy"; });
      });
      pre.appendChild(button);
    });
  }

  // A link to a schema row folded into a <details> (deep nesting) opens the fold first.
  function unfold() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    var target = id && document.getElementById(id);
    for (var node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") node.open = true;
    }
    if (target && target.closest && target.closest("details")) target.scrollIntoView();
  }
  window.addEventListener("hashchange", unfold);

  function init() { setup(document.querySelector("[data-toolcatalog-index]")); copyButtons(); unfold(); }

  // Material's instant navigation swaps pages without reloading: it announces each page on document$.
  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(init);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
