// The documents page's small behaviours, as listeners rather than inline handlers (the
// Content-Security-Policy runs no inline script). Delegated from the document, so rows that htmx
// swaps in keep them: a filter that submits when changed, and a confirmation before a delete.
(function () {
  document.addEventListener("change", function (event) {
    var select = event.target.closest && event.target.closest("select[data-submit-on-change]");
    if (select && select.form) select.form.submit();
  });
  document.addEventListener("submit", function (event) {
    var form = event.target.closest && event.target.closest("form[data-confirm]");
    if (form && !window.confirm(form.dataset.confirm)) event.preventDefault();
  });
})();
