/* Action buttons: <form data-confirm="question"> asks first. Confirming sets the form's
   hidden "confirmed" field, so the server runs the action at once; without JavaScript the
   server shows a confirmation page instead. */
document.addEventListener("submit", function (event) {
  "use strict";
  var form = event.target;
  var question = form.getAttribute && form.getAttribute("data-confirm");
  if (!question) { return; }
  if (!window.confirm(question)) {
    event.preventDefault();
    return;
  }
  var flag = form.querySelector("input[name=confirmed]");
  if (flag) { flag.value = "yes"; }
});
