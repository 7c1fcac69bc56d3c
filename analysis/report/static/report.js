// VocalGrad report page: sortable tables and one player at a time. No network, no libraries.
(function () {
  "use strict";

  // The sort key of a cell: its data-v attribute (a number), else its text; null when empty.
  function cellKey(row, col) {
    var cell = row.cells[col];
    if (!cell) { return null; }
    var raw = cell.hasAttribute("data-v") ? cell.getAttribute("data-v") : cell.textContent.trim();
    if (raw === "" || raw === "\u2013") { return null; }
    var num = Number(raw);
    return isNaN(num) ? raw.toLowerCase() : num;
  }

  function compare(a, b, descending) {
    if (a === null && b === null) { return 0; }
    if (a === null) { return 1; }   // empty cells last, whatever the direction
    if (b === null) { return -1; }
    if (typeof a !== typeof b) { a = String(a); b = String(b); }
    var c = a < b ? -1 : (a > b ? 1 : 0);
    return descending ? -c : c;
  }

  function sortTable(button) {
    var th = button.closest("th");
    var table = th.closest("table");
    var col = Array.prototype.indexOf.call(th.parentNode.cells, th);
    var now = th.getAttribute("aria-sort");
    var descending;
    if (now === "descending") { descending = false; }
    else if (now === "ascending") { descending = true; }
    else { descending = th.getAttribute("data-type") === "num"; }  // numbers: largest first
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows).map(function (row, i) {
      return { row: row, key: cellKey(row, col), i: i };
    });
    rows.sort(function (x, y) { return compare(x.key, y.key, descending) || x.i - y.i; });
    rows.forEach(function (x) { body.appendChild(x.row); });
    Array.prototype.forEach.call(th.parentNode.cells, function (other) {
      if (other !== th) { other.removeAttribute("aria-sort"); }
    });
    th.setAttribute("aria-sort", descending ? "descending" : "ascending");
    var status = document.getElementById("sort-status");
    if (status) {
      status.textContent = "Sorted by " + button.textContent.trim() + ", " +
        (descending ? "descending" : "ascending") + ".";
    }
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("button.sort") : null;
    if (button) { sortTable(button); }
  });

  // One clip at a time: starting a player pauses the others.
  document.addEventListener("play", function (event) {
    Array.prototype.forEach.call(document.querySelectorAll("audio"), function (a) {
      if (a !== event.target) { a.pause(); }
    });
  }, true);
}());
