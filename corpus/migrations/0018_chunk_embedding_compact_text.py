"""Chunk.embedding is written in a shorter text form (corpus/vectors.py): state only, the column is the same."""

import corpus.vectors
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('corpus', '0017_bm25_postings_at_merge'),
    ]

    operations = [
        migrations.AlterField(
            model_name='chunk',
            name='embedding',
            field=corpus.vectors.CompactVectorField(blank=True, dimensions=384, null=True),
        ),
    ]
