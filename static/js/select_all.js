/* Bulk forms: the header's checkbox ticks every row of this page; the bar says how many
   are ticked, and its buttons wait until at least one is. Without JavaScript each row is
   ticked by hand and the server says when nothing was selected. */
(function () {
  "use strict";
  function update(form) {
    var boxes = form.querySelectorAll("tbody input[type=checkbox]");
    var ticked = form.querySelectorAll("tbody input[type=checkbox]:checked").length;
    var all = form.querySelector("[data-select-all]");
    if (all) {
      all.checked = boxes.length > 0 && ticked === boxes.length;
      all.indeterminate = ticked > 0 && ticked < boxes.length;
    }
    var count = form.querySelector("[data-selected-count]");
    if (count) {
      count.textContent = ticked ? ticked + " selected" : count.getAttribute("data-empty") || count.textContent;
    }
    form.querySelectorAll("[data-needs-selection]").forEach(function (button) {
      button.disabled = ticked === 0;
    });
  }
  document.querySelectorAll("form.bulk").forEach(function (form) {
    var count = form.querySelector("[data-selected-count]");
    if (count) { count.setAttribute("data-empty", count.textContent); }
    form.addEventListener("change", function (event) {
      var target = event.target;
      if (target.hasAttribute && target.hasAttribute("data-select-all")) {
        form.querySelectorAll("tbody input[type=checkbox]").forEach(function (box) {
          box.checked = target.checked;
        });
      }
      update(form);
    });
    update(form);
  });
}());
