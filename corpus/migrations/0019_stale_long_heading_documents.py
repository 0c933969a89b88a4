"""Documents built before the long-`#`-line rule (corpus.ingest.parse.base.reads_as_heading: a `#`
line of over 200 characters or of several sentences is text, not a heading) are marked out of date,
so the next ingest or sync of the same file, or the admin's "Re-ingest ... (if out of date)", builds
them again with the rule.

Only the documents whose stored heading paths hold such a "heading" are marked, not every document:
bumping TEXT_VERSION (part of every collection's pipeline signature) would have made every document of
every format out of date, and the next sync would rebuild them all (at a million chunks, about 13 hours of
embedding on the 2-core machine) for a rule that changes a few Markdown files. Postgres narrows the scan
to heading paths that are long or hold a sentence break; the rule itself decides in Python.
"""

from django.db import migrations
from django.db.models import Q
from django.db.models.functions import Length

from corpus.ingest.parse.base import reads_as_heading


def mark_stale(apps, schema_editor):
    Chunk = apps.get_model("corpus", "Chunk")
    Document = apps.get_model("corpus", "Document")
    candidates = (Chunk.objects.annotate(chars=Length("heading_path"))
                  .filter(Q(chars__gt=200) | Q(heading_path__regex=r"[.!?]"))
                  .values_list("document_id", "heading_path").distinct())
    stale = {document_id for document_id, path in candidates.iterator()
             if not all(reads_as_heading(title.strip()) for title in path.split(" > "))}
    if stale:
        Document.objects.filter(pk__in=stale).update(built_signature="")


class Migration(migrations.Migration):
    dependencies = [("corpus", "0018_chunk_embedding_compact_text")]

    operations = [migrations.RunPython(mark_stale, migrations.RunPython.noop, elidable=True)]
