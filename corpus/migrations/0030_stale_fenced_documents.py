"""Documents with a chunk that starts inside a fenced code block are marked out of date and queued,
as 0027 did: the chunkers no longer cut inside a code block that fits in a chunk
(corpus.ingest.chunk, corpus.ingest.chunk_fences), where such a cut left one chunk opening a block it
never closed and the next reading its prose as code. Collections of fixed or sliding windows are not
touched (those strategies cut by tokens alone), nor are other documents (why TEXT_VERSION is not
bumped: see 0019)."""

from django.db import migrations
from django.db.models import Q

from corpus.ingest.chunk_fences import fence_at, fence_blocks
from corpus.migrations._stale import queue_rebuild


def mark_stale(apps, schema_editor):
    Document = apps.get_model("corpus", "Document")
    Chunk = apps.get_model("corpus", "Chunk")
    stale = set()
    candidates = (Document.objects.filter(Q(text__contains="```") | Q(text__contains="~~~"))
                  .exclude(collection__chunker__in=("fixed", "sliding")).only("pk", "text"))
    for document in candidates.iterator():
        fences = fence_blocks(document.text)
        if not fences:
            continue
        fence_starts = [fence.start for fence in fences]
        starts = Chunk.objects.filter(document_id=document.pk).values_list("start", flat=True)
        if any(fence_at(fences, start, fence_starts) for start in starts):
            stale.add(document.pk)
    queue_rebuild(Document, stale)


class Migration(migrations.Migration):
    dependencies = [("corpus", "0029_stale_list_documents")]

    operations = [migrations.RunPython(mark_stale, migrations.RunPython.noop, elidable=True)]
