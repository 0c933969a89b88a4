"""What the "stale" data migrations share (Django's loader skips modules whose name starts with "_"):
marking documents out of date so that they are built again."""

import re

READY = "ready"
_STYLE_ID = re.compile(rb'w:styleId="([^"]+)"')
_PARAGRAPH_STYLE = re.compile(rb'<w:pStyle w:val="([^"]+)"')


def queue_rebuild(Document, pks, *, only_filed: bool = False) -> None:
    """Mark the documents `pks` out of date (their next ingest or sync rebuilds them) and queue those
    ready, so a worker rebuilds them in the background while their old chunks stay searchable; with
    `only_filed`, only those with a stored file to rebuild from are queued."""
    if not pks:
        return
    marked = Document.objects.filter(pk__in=pks)
    marked.update(built_signature="")
    ready = marked.filter(status=READY)
    if only_filed:
        ready = ready.exclude(file="")
    ready.update(status="queued", progress_done=0, progress_total=0)


def files_matching(documents, test) -> set:
    """The pks of `documents` (a queryset) whose stored file passes `test(document, handle)`, the file
    open for reading in binary; a document without a file, or whose file is gone or damaged, is left
    out (nothing to rebuild from)."""
    import zipfile

    matching = set()
    for document in documents.exclude(file="").iterator():
        try:
            with document.file.open("rb") as handle:
                if test(document, handle):
                    matching.add(document.pk)
        except (OSError, KeyError, zipfile.BadZipFile):
            continue
    return matching


def docx_uses_style(archive, test) -> bool:
    """Whether a paragraph of the Word document `archive` (a zipfile.ZipFile) is in a paragraph style
    whose definition in word/styles.xml (the bytes of its <w:style> element) passes `test`."""
    body = archive.read("word/document.xml")
    try:
        styles = archive.read("word/styles.xml")
    except KeyError:
        return False
    matching = set()
    for style in styles.split(b"<w:style ")[1:]:
        style_id = _STYLE_ID.search(style)
        if style_id and test(style):
            matching.add(style_id.group(1))
    return bool(matching & set(_PARAGRAPH_STYLE.findall(body)))
