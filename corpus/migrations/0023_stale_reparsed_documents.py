"""Documents whose text the parsers of issue 39 read differently are marked out of date and queued,
so a worker rebuilds them in the background (a worker that starts enqueues every queued document:
corpus.tasks.requeue_stalled_documents), with its progress on the document as for any build; the old
chunks stay searchable until the new ones are swapped in. The others are not touched (why
TEXT_VERSION is not bumped: see 0019). Marked:

- PDFs whose stored text shows text drawn twice (corpus.ingest.parse.pdf_overdrawn.overdrawn: fake
  bold, shadowed headings), now read once;
- images read by OCR whose text holds words run together that are now split
  (corpus.ingest.parse.words); scanned pages inside PDFs are not told apart from the text layer, so
  those PDFs wait for their next re-ingest;
- HTML documents whose file holds a definition list (<dt>): each entry is now a paragraph;
- spreadsheets and CSV files: their chunk cuts stay out of a table's header and rows
  (corpus.ingest.chunk_tables);
- plain text with a word `man` hyphenated across lines (U+2010 at a line's end), now whole again
  (corpus.ingest.parse.text.rejoin_hyphenated).
"""

import re

from django.db import migrations

from corpus.ingest.parse.pdf_overdrawn import overdrawn
from corpus.ingest.parse.words import split_joined_words

IMAGES = ("image/png", "image/jpeg", "image/tiff")
TABLES = ("text/csv", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
_DEFINITION_TERM = re.compile(rb"<dt[\s>]", re.IGNORECASE)
READY = "ready"


def mark_stale(apps, schema_editor):
    Document = apps.get_model("corpus", "Document")
    stale = set(Document.objects.filter(media_type__in=TABLES).values_list("pk", flat=True))
    stale |= set(Document.objects.filter(media_type="text/plain", text__contains="\u2010\n")
                 .values_list("pk", flat=True))
    for pk, media_type, text in (Document.objects.filter(media_type__in=("application/pdf", *IMAGES))
                                 .values_list("pk", "media_type", "text").iterator()):
        if (overdrawn(text) if media_type == "application/pdf" else split_joined_words(text) != text):
            stale.add(pk)
    for document in Document.objects.filter(media_type="text/html").exclude(file="").only("pk", "file").iterator():
        try:
            with document.file.open("rb") as handle:
                if _DEFINITION_TERM.search(handle.read()):
                    stale.add(document.pk)
        except OSError:
            continue  # the file is gone: nothing to rebuild from
    if not stale:
        return
    marked = Document.objects.filter(pk__in=stale)
    marked.update(built_signature="")
    marked.filter(status=READY).exclude(file="").update(status="queued", progress_done=0, progress_total=0)


class Migration(migrations.Migration):
    dependencies = [("corpus", "0022_share_invitations")]

    operations = [migrations.RunPython(mark_stale, migrations.RunPython.noop, elidable=True)]
