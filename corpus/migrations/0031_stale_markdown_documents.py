"""Markdown documents that the parser now reads differently are marked out of date and queued, as
0027 did: a reference link whose definition is in the file is written inline (`[Worker
Thread][worker-thread]` -> `[Worker Thread](https://...)`, parse.markdown_inline), and a heading is
titled without inline markup ("`asObject` (Boolean)" -> "asObject (Boolean)"), so heading paths read
as text. Marked: those whose text holds such a link, or a chunk whose heading path holds a backtick,
an asterisk, an underscore or a bracket. Other documents are not touched (why TEXT_VERSION is not
bumped: see 0019)."""

from django.db import migrations
from django.db.models import Q

from corpus.ingest.parse.markdown_inline import inline_references
from corpus.migrations._stale import queue_rebuild

MARKDOWN = "text/markdown"


def mark_stale(apps, schema_editor):
    Document = apps.get_model("corpus", "Document")
    Chunk = apps.get_model("corpus", "Chunk")
    markdown = Document.objects.filter(media_type=MARKDOWN)
    stale = set(Chunk.objects.filter(document__in=markdown).filter(
        Q(heading_path__contains="`") | Q(heading_path__contains="*") | Q(heading_path__contains="_")
        | Q(heading_path__contains="[")).values_list("document_id", flat=True).distinct())
    for document in markdown.filter(text__contains="]:").exclude(pk__in=stale).only("pk", "text").iterator():
        if inline_references(document.text) != document.text:
            stale.add(document.pk)
    queue_rebuild(Document, stale)


class Migration(migrations.Migration):
    dependencies = [("corpus", "0030_stale_fenced_documents")]

    operations = [migrations.RunPython(mark_stale, migrations.RunPython.noop, elidable=True)]
