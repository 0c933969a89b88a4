"""Sources added twice to a collection before 0003 made a location unique (a check-then-insert
race) are merged: the oldest source of each location keeps the documents of its duplicates (their
links move to it), then the duplicates go."""

from django.db import migrations


def merge_duplicates(apps, schema_editor):
    Source = apps.get_model("sources", "Source")
    SourceDocument = apps.get_model("sources", "SourceDocument")
    keeper_of = {}
    for source in Source.objects.order_by("pk").only("pk", "collection_id", "kind", "url", "path"):
        location = (source.collection_id, source.kind, source.url, source.path)
        keeper = keeper_of.setdefault(location, source.pk)
        if keeper == source.pk:
            continue
        kept_keys = set(SourceDocument.objects.filter(source_id=keeper).values_list("key", flat=True))
        # A key both have stays the keeper's; the duplicate's link to it goes (its document stays).
        SourceDocument.objects.filter(source_id=source.pk).exclude(key__in=kept_keys).update(source_id=keeper)
        Source.objects.filter(pk=source.pk).delete()


class Migration(migrations.Migration):
    # Apart from 0003's constraint: Postgres refuses to alter a table with deletes' deferred checks pending.

    dependencies = [
        ("sources", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(merge_duplicates, migrations.RunPython.noop),
    ]
