// Copying to the clipboard, for every page (loaded by base.html, before the pages' own scripts).
// ragweb.copyText(text) puts text on the clipboard, or throws. A button with data-copy="#id" copies
// that element's value (an input) or text; when the browser will not copy, it selects the text so
// the person can copy it by hand. Controls that only work with JS (class js-only: Copy) are shown
// once this script runs, on every page: it marks <html> with the class js.
(function () {
  "use strict";
  const ragweb = (window.ragweb = window.ragweb || {});
  document.documentElement.classList.add("js");

  ragweb.copyText = async function (text) {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return;
    }
    // Pages served over plain HTTP (not localhost) have no clipboard API: copy a selected textarea.
    const area = document.createElement("textarea");
    area.className = "visually-hidden";
    area.value = text;
    area.setAttribute("readonly", "");
    document.body.appendChild(area);
    area.select();
    const copied = document.execCommand("copy");
    area.remove();
    if (!copied) throw new Error("copy refused");
  };

  function selectText(node) {
    if (typeof node.select === "function") {
      node.focus();
      node.select();
      return;
    }
    const range = document.createRange();
    range.selectNodeContents(node);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }


  document.addEventListener("click", async function (event) {
    const button = event.target.closest("button[data-copy]");
    if (!button) return;
    const source = document.querySelector(button.dataset.copy);
    const status = button.dataset.copyStatus ? document.querySelector(button.dataset.copyStatus) : null;
    const text = "value" in source ? source.value : source.textContent.trim();
    try {
      await ragweb.copyText(text);
      button.textContent = "Copied";
      if (status) status.textContent = "Copied to the clipboard.";
    } catch (error) {
      selectText(source);
      if (status) status.textContent = "Could not copy: the text is selected, copy it with Ctrl+C (⌘C).";
    }
  });
})();
