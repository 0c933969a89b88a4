"""The chunk HNSW index inserts with ef_construction 64 again, in every database.

A migration of 2026-11-27 (corpus 0015_hnsw_ef_construction_32, 04:52-05:47 UTC on main) lowered the
option to 32 in place; its revert deleted the file instead of undoing it, so a database migrated
while it existed kept inserting with 32 (and a poorer graph: filtered iterative scans ran short of
their LIMIT) while the model state said 64. This sets the stored option to 64 wherever it is (a
no-op where it already is). `ALTER INDEX ... SET` changes only the option, read by later inserts:
the chunks inserted at 32 keep their links until `REINDEX INDEX CONCURRENTLY chunk_embedding_hnsw`.
Model state: unchanged (corpus 0001's index, m 16, ef_construction 64).
"""

from django.db import migrations

FORWARD = "ALTER INDEX chunk_embedding_hnsw SET (ef_construction = 64)"


class Migration(migrations.Migration):
    dependencies = [("corpus", "0014_reembed")]

    operations = [migrations.RunSQL(FORWARD, migrations.RunSQL.noop)]
