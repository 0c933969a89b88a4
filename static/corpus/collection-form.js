// A new collection's slug follows its name as you type (the way the server derives it when the
// slug is left empty: Django's slugify), until you edit the slug yourself.
(function () {
  function slugify(text) {
    return text.normalize("NFKD").replace(/[^\x00-\x7f]/g, "").replace(/[^\w\s-]/g, "")
      .toLowerCase().trim().replace(/[-\s]+/g, "-").replace(/^[-_]+|[-_]+$/g, "").slice(0, 100);
  }

  function connect(name) {
    var slug = document.getElementById(name.dataset.slugSource);
    if (!slug) return;
    var own = slug.value !== "" && slug.value !== slugify(name.value);
    slug.addEventListener("input", function () { own = slug.value !== ""; });
    name.addEventListener("input", function () { if (!own) slug.value = slugify(name.value); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-slug-source]").forEach(connect);
  });
})();
