// The console's one script: a copy button beside a secret shown once. Without JavaScript the
// button stays hidden and the secret is selected by hand.
(function () {
  "use strict";
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    var source = document.getElementById(button.dataset.copy);
    if (!source || !navigator.clipboard) { return; }
    button.hidden = false;
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(source.textContent).then(function () {
        button.textContent = button.dataset.copied;
      });
    });
  });
})();
