/* Live regions: an element with data-live="<url>" is refreshed from that URL (an HTML
   fragment) every ~10 s while the tab is visible. One request at a time per region, no
   polling in hidden tabs, and a slower pace after errors, so it never hammers the server. */
(function () {
  "use strict";
  var INTERVAL = 10000;
  var MAX_INTERVAL = 120000;

  function watch(region) {
    var delay = INTERVAL;
    var timer = null;
    var busy = false;
    var last = Date.now();

    function schedule() {
      clearTimeout(timer);
      timer = setTimeout(tick, delay);
    }

    function tick() {
      if (document.visibilityState !== "visible" || busy) { return; }
      busy = true;
      last = Date.now();
      fetch(region.getAttribute("data-live"), {
        credentials: "same-origin",
        headers: { "X-Requested-With": "live" },
        cache: "no-store"
      }).then(function (response) {
        if (!response.ok) { throw new Error(String(response.status)); }
        return response.text();
      }).then(function (html) {
        region.innerHTML = html;
        region.setAttribute("data-live-updated", new Date().toISOString());
        delay = INTERVAL;
      }).catch(function () {
        delay = Math.min(delay * 2, MAX_INTERVAL);
      }).then(function () {
        busy = false;
        schedule();
      });
    }

    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState !== "visible") { clearTimeout(timer); return; }
      // Back on the tab: refresh now if the numbers are stale, else on the usual beat.
      if (Date.now() - last >= INTERVAL) { tick(); } else { schedule(); }
    });
    schedule();
  }

  document.querySelectorAll("[data-live]").forEach(watch);
})();
