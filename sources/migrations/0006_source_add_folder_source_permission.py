"""The permission "Can add server folder sources" (sources.add_folder_source), which replaces the
setting SOURCES_FOLDERS_ANYONE: staff add folder sources, and whoever the admin gives it to."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("sources", "0005_source_sync_round"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="source",
            options={"ordering": ["collection", "pk"],
                     "permissions": [("add_folder_source", "Can add server folder sources")]},
        ),
    ]
