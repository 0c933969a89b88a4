"""Queue a graph merge (corpus.graph.merge) once a document is published."""

from __future__ import annotations

from django.dispatch import receiver

from corpus.signals import document_published

# After the documents waiting to be built (priority 0: they are not searchable at all yet), before
# the sentence-vector fills (chat.receivers, 9): the tail is searchable already, exactly, and only
# costs the searches a little more until merged (kombu's Redis priority steps are 0, 3, 6, 9).
MERGE_PRIORITY = 6


@receiver(document_published, dispatch_uid="corpus_graph_merge")
def merge_published(*, document_id: int, **kwargs) -> None:
    from corpus.tasks import graph_merge_task

    graph_merge_task.apply_async(priority=MERGE_PRIORITY)
