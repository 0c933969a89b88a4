"""HTML documents holding a list (<li>) are marked out of date, now that a list item reads as one ("- " or
"3. ", corpus.ingest.parse.htmltext._list_marker): the answer then reads it as an item, and a sentence that
introduces the list brings it. Those with a stored file are queued, as 0023 did, so a worker rebuilds them in
the background; one without a file (a page a source fetches) is rebuilt at its source's next sync. Other
documents are not touched (why TEXT_VERSION is not bumped: see 0019)."""

import re

from django.db import migrations

from corpus.migrations._stale import files_matching, queue_rebuild

HTML = "text/html"
_LIST_ITEM = re.compile(rb"<li[\s>/]", re.IGNORECASE)


def mark_stale(apps, schema_editor):
    Document = apps.get_model("corpus", "Document")
    pages = Document.objects.filter(media_type=HTML).only("pk", "file")
    pages.filter(file="").update(built_signature="")
    queue_rebuild(Document, files_matching(pages, lambda _d, handle: _LIST_ITEM.search(handle.read())))


class Migration(migrations.Migration):
    dependencies = [("corpus", "0031_stale_markdown_documents")]

    operations = [migrations.RunPython(mark_stale, migrations.RunPython.noop, elidable=True)]
