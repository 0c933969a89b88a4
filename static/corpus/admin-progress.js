// The admin's document list: refresh the status, progress bar, chunk count and error of every
// document still being ingested, from one small JSON request per tick, until all are finished.
(function () {
  "use strict";
  var FINISHED = {ready: true, failed: true};
  var INTERVAL_MS = 1500;

  function busy() {
    return Array.prototype.filter.call(document.querySelectorAll(".doc-progress[data-document]"),
      function (cell) { return !FINISHED[cell.dataset.status]; });
  }

  function setText(selector, id, text) {
    document.querySelectorAll(selector + '[data-document="' + id + '"]').forEach(function (el) {
      el.textContent = text;
    });
  }

  function update(doc) {
    document.querySelectorAll('.doc-progress[data-document="' + doc.id + '"]').forEach(function (cell) {
      cell.dataset.status = doc.status;
      var status = cell.querySelector(".doc-status");
      status.textContent = doc.status_display;
      status.className = "doc-status status-" + doc.status;
      var bar = cell.querySelector("progress");
      var count = cell.querySelector(".doc-count");
      if (doc.progress_total) {
        if (!bar) { bar = document.createElement("progress"); cell.insertBefore(bar, count); }
        bar.max = doc.progress_total;
        bar.value = doc.progress_done;
        count.textContent = doc.progress_done + "/" + doc.progress_total;
      } else {
        if (FINISHED[doc.status] && bar) { bar.remove(); }
        if (bar && !FINISHED[doc.status]) { bar.removeAttribute("value"); }  // indeterminate: not counted yet
        count.textContent = "";
      }
    });
    setText(".doc-chunks", doc.id, String(doc.chunk_count));
    document.querySelectorAll('.doc-error[data-document="' + doc.id + '"]').forEach(function (el) {
      el.textContent = doc.error_short;
      el.title = doc.error;
    });
  }

  function tick() {
    var cells = busy();
    if (!cells.length) { return; }
    var ids = cells.map(function (cell) { return cell.dataset.document; });
    fetch(cells[0].dataset.url + "?ids=" + ids.join(","), {credentials: "same-origin", headers: {Accept: "application/json"}})
      .then(function (response) { return response.ok ? response.json() : {documents: []}; })
      .then(function (data) { data.documents.forEach(update); })
      .catch(function () { /* a missed tick; the next one tries again */ })
      .finally(function () { if (busy().length) { setTimeout(tick, INTERVAL_MS); } });
  }

  document.addEventListener("DOMContentLoaded", function () { setTimeout(tick, INTERVAL_MS); });
})();
