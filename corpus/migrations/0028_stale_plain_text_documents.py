"""Documents that plain text's new rules read differently are marked out of date and queued, as 0023
did, so a worker rebuilds them in the background; the old chunks stay searchable until the new ones
are swapped in. Other documents are not touched (why TEXT_VERSION is not bumped: see 0019). Marked:

- plain text in which headings are now found by layout (corpus.ingest.parse.layout: titles standing
  alone or underlined), or whose title changes (its title line; else the name it was given);
- .txt files read as reStructuredText for their underlined titles alone, without markup only reST
  writes (corpus.ingest.parse.markup.looks_like_rst): plain text now, read with its other headings;
- any document whose text kept nroff overstrikes (backspaces), now read as plain characters
  (corpus.ingest.parse.text.strip_overstrike);
- any document titled by its stored file's name where that is not the name it was given (Django's
  suffix, "setup_4wEfB12", after a changed file was stored beside the old one): titles now come from
  the source (corpus.ingest.parse.base.name_title).

Documents refused as binary data whose stored file holds backspaces (Debian's READMEs in nroff bold)
are queued again: they now read as text.
"""

from pathlib import PurePosixPath

from django.db import migrations

from corpus.ingest.parse.base import name_title
from corpus.ingest.parse.layout import layout_headings, layout_title
from corpus.ingest.parse.markup import looks_like_rst
from corpus.ingest.parse.text import BINARY_MESSAGE
from corpus.migrations._stale import files_matching, queue_rebuild

TEXT = "text/plain"
RST = "text/x-rst"


def _stale_plain_text(document) -> bool:
    headings = layout_headings(document.text)
    return bool(headings) or (layout_title(document.text, headings) or name_title(document.source)) != document.title


def mark_stale(apps, schema_editor):
    Document = apps.get_model("corpus", "Document")
    stale = set(Document.objects.filter(text__contains="\x08").values_list("pk", flat=True))
    for document in Document.objects.filter(media_type=TEXT).only("pk", "source", "title", "text").iterator():
        if _stale_plain_text(document):
            stale.add(document.pk)
    for document in Document.objects.filter(media_type=RST).only("pk", "file", "text").iterator():
        if PurePosixPath(document.file.name or "").suffix.lower() in (".txt", ".text") \
                and not looks_like_rst(document.text):
            stale.add(document.pk)
    for pk, source, title, file in Document.objects.exclude(file="").values_list("pk", "source", "title", "file") \
            .iterator():
        stored = PurePosixPath(PurePosixPath(file).name).stem
        if title == stored and stored != name_title(source):
            stale.add(pk)
    refused = files_matching(Document.objects.filter(status="failed", error=BINARY_MESSAGE).only("pk", "file"),
                             lambda _d, handle: b"\x08" in handle.read())
    queue_rebuild(Document, stale, only_filed=True)
    if refused:
        Document.objects.filter(pk__in=refused).update(status="queued", error="", built_signature="",
                                                       progress_done=0, progress_total=0)


class Migration(migrations.Migration):
    dependencies = [("corpus", "0027_stale_table_documents")]

    operations = [migrations.RunPython(mark_stale, migrations.RunPython.noop, elidable=True)]
