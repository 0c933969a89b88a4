"""Source.sync_round: where an unfinished sync round stands (a crawl's frontier, or the listed items
and how many of them were synced), so the next run goes on from there."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("sources", "0004_source_paused"),
    ]

    operations = [
        migrations.AddField(
            model_name="source",
            name="sync_round",
            field=models.JSONField(
                blank=True, default=dict,
                help_text="An unfinished sync round: the crawl so far, or the items listed and how many were "
                          "synced (empty: the next sync starts a new round)."),
        ),
    ]
