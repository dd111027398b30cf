// skg audit report: sortable and filterable tables. No dependencies, no network.
"use strict";
(function () {
  var errors = [];
  var box = document.getElementById("js-errors");
  function report(msg) {
    errors.push(msg);
    document.documentElement.dataset.errors = String(errors.length);
    if (box) {
      box.hidden = false;
      var p = document.createElement("p");
      p.textContent = msg;
      box.appendChild(p);
    }
  }
  window.addEventListener("error", function (e) { report("error: " + e.message); });
  window.addEventListener("unhandledrejection", function (e) { report("rejection: " + e.reason); });

  function cellValue(row, i) {
    var c = row.cells[i];
    if (!c) return "";
    return c.dataset.v !== undefined ? c.dataset.v : c.textContent.trim();
  }

  function sortTable(table, col, th) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var asc = th.getAttribute("aria-sort") !== "ascending";
    var numeric = rows.every(function (r) {
      var v = cellValue(r, col);
      return v === "" || v === "–" || !isNaN(parseFloat(v));
    });
    rows.sort(function (a, b) {
      var x = cellValue(a, col), y = cellValue(b, col);
      var d;
      if (numeric) {
        var fx = parseFloat(x), fy = parseFloat(y);
        fx = isNaN(fx) ? -Infinity : fx;
        fy = isNaN(fy) ? -Infinity : fy;
        d = fx - fy;
      } else {
        d = x.localeCompare(y);
      }
      return asc ? d : -d;
    });
    var frag = document.createDocumentFragment();
    rows.forEach(function (r) { frag.appendChild(r); });
    body.appendChild(frag);
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
  }

  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    if (!table.tHead || !table.tBodies.length) return;
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      th.tabIndex = 0;
      th.title = "sort";
      th.addEventListener("click", function () { sortTable(table, i, th); });
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") sortTable(table, i, th); });
    });
  });

  Array.prototype.forEach.call(document.querySelectorAll("input[data-filter]"), function (input) {
    var table = document.getElementById(input.dataset.filter);
    if (!table) { report("filter for a missing table: " + input.dataset.filter); return; }
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    var texts = null;
    var count = document.querySelector("[data-count-for='" + input.dataset.filter + "']");
    var timer = 0;
    function apply() {
      if (texts === null) texts = rows.map(function (r) { return r.textContent.toLowerCase(); });
      var terms = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      var shown = 0;
      rows.forEach(function (r, i) {
        var ok = terms.every(function (t) { return texts[i].indexOf(t) >= 0; });
        r.hidden = !ok;
        if (ok) shown++;
      });
      if (count) count.textContent = terms.length ? shown + " of " + rows.length + " shown" : "";
    }
    input.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(apply, 120);
    });
  });

  document.documentElement.dataset.readyMs = String(Math.round(performance.now()));
  document.documentElement.dataset.ready = "1";
})();
