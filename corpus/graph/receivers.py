"""Queue a graph merge (corpus.graph.merge) once a document is published."""

from __future__ import annotations

from django.dispatch import receiver

from corpus.signals import document_published


@receiver(document_published, dispatch_uid="corpus_graph_merge")
def merge_published(*, document_id: int, **kwargs) -> None:
    from corpus.tasks import graph_merge_task

    graph_merge_task.delay()  # at the task's priority, MERGE_PRIORITY
