/* <form data-submit-once>: one submission at a time. A double click on "Sign in" sent the
   e-mailed code twice; the second answer was "Invalid Authentication" (the code is single
   use) while the first had signed in. The first submit disables the form's buttons; any
   later submit of the same form is cancelled. (The server also serializes submissions.) */
document.addEventListener("submit", function (event) {
  "use strict";
  var form = event.target;
  if (!form.hasAttribute || !form.hasAttribute("data-submit-once") || event.defaultPrevented) {
    return;
  }
  if (form.getAttribute("data-submitting") === "yes") {
    event.preventDefault();
    return;
  }
  form.setAttribute("data-submitting", "yes");
  var buttons = form.querySelectorAll("button[type=submit], input[type=submit]");
  for (var i = 0; i < buttons.length; i += 1) {
    buttons[i].disabled = true;
    buttons[i].setAttribute("aria-busy", "true");
  }
});
/* Back/forward cache: a page restored from it must be usable again. */
window.addEventListener("pageshow", function (event) {
  "use strict";
  if (!event.persisted) { return; }
  var forms = document.querySelectorAll("form[data-submit-once][data-submitting]");
  for (var i = 0; i < forms.length; i += 1) {
    forms[i].removeAttribute("data-submitting");
    var buttons = forms[i].querySelectorAll("button[type=submit], input[type=submit]");
    for (var j = 0; j < buttons.length; j += 1) { buttons[j].disabled = false; }
  }
});
