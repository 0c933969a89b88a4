"""A collection holds a location once: source_unique_location (0002 merged earlier duplicates)."""

from django.db import migrations, models
from django.db.models.functions import MD5


class Migration(migrations.Migration):

    dependencies = [
        ("sources", "0002_source_merge_duplicates"),
    ]

    operations = [
        migrations.AddConstraint(
            model_name="source",
            constraint=models.UniqueConstraint(models.F("collection"), models.F("kind"), MD5("url"), MD5("path"),
                                               name="source_unique_location"),
        ),
    ]
