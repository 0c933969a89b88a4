"""HTML and Word documents holding a table are marked out of date and queued, as 0023 did: a data
table of an HTML page (first row header cells) and a Word table of two rows and two columns or more
are now Markdown tables under their header, as spreadsheets' are (corpus.ingest.parse.htmltext,
corpus.ingest.parse.word), so a row question is answered with its row. A worker rebuilds them in the
background; the old chunks stay searchable until the new ones are swapped in. Other documents are not
touched (why TEXT_VERSION is not bumped: see 0019)."""

import re
import zipfile

from django.db import migrations

HTML = "text/html"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
_HEADER_CELL = re.compile(rb"<th[\s>]", re.IGNORECASE)
_WORD_TABLE = re.compile(rb"<w:tbl[\s>]")
READY = "ready"


def _holds_table(media_type: str, handle) -> bool:
    if media_type == HTML:
        return bool(_HEADER_CELL.search(handle.read()))
    with zipfile.ZipFile(handle) as archive:
        return bool(_WORD_TABLE.search(archive.read("word/document.xml")))


def mark_stale(apps, schema_editor):
    Document = apps.get_model("corpus", "Document")
    stale = set()
    for document in (Document.objects.filter(media_type__in=(HTML, DOCX)).exclude(file="")
                     .only("pk", "media_type", "file").iterator()):
        try:
            with document.file.open("rb") as handle:
                if _holds_table(document.media_type, handle):
                    stale.add(document.pk)
        except (OSError, KeyError, zipfile.BadZipFile):
            continue  # the file is gone or damaged: nothing to rebuild from
    if not stale:
        return
    marked = Document.objects.filter(pk__in=stale)
    marked.update(built_signature="")
    marked.filter(status=READY).update(status="queued", progress_done=0, progress_total=0)


class Migration(migrations.Migration):
    dependencies = [("corpus", "0026_chunk_column_model")]

    operations = [migrations.RunPython(mark_stale, migrations.RunPython.noop, elidable=True)]
