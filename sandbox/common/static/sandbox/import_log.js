// A database page's imports: while an import started from the page (or already running)
// runs, ask the control API for its state every 1.5 s, and when it has ended show its
// status and newest log in the row. No reload; it stops by itself after two minutes.
(function () {
  "use strict";
  var EVERY_MS = 1500;
  var GIVE_UP_AFTER = 80;

  function show(row, answer) {
    var source = answer["import"];
    var log = answer.logs && answer.logs[0];
    row.querySelector(".import-status").textContent = source.status;
    if (!log) return;
    var cell = row.querySelector(".import-log");
    cell.textContent = log.time + (log.error_flag ? " error" : "") + ": " + log.message + " ";
    var link = document.createElement("a");
    link.href = window.location.pathname;
    link.textContent = "show the rows as imported";
    cell.appendChild(link);
  }

  function watch(row) {
    var tries = 0;
    function ask() {
      tries += 1;
      fetch(row.dataset.watchImport, { headers: { Accept: "application/json" } })
        .then(function (response) { return response.json(); })
        .then(function (answer) {
          if (answer["import"].running === "1") {
            row.querySelector(".import-status").textContent = "running";
            if (tries < GIVE_UP_AFTER) window.setTimeout(ask, EVERY_MS);
            return;
          }
          show(row, answer);
        })
        .catch(function () {
          if (tries < GIVE_UP_AFTER) window.setTimeout(ask, EVERY_MS);
        });
    }
    ask();
  }

  document.querySelectorAll("tr[data-watch-import]").forEach(watch);
})();
