"""Hash the plain keys of DRF's authtoken table into ApiToken, then drop that table.

Clients keep their keys (a key's hash finds its token); no plain key is left in the database. The
table is read with SQL because rest_framework.authtoken is no longer an installed app; a database
that never had it (a fresh install) has nothing to move.
"""

import hashlib

from django.db import migrations

TABLE = "authtoken_token"


def hash_plain_tokens(apps, schema_editor):
    connection = schema_editor.connection
    if TABLE not in connection.introspection.table_names():
        return
    ApiToken = apps.get_model("accounts", "ApiToken")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT key, user_id, created FROM {TABLE}")
        rows = cursor.fetchall()
    for key, user_id, created in rows:
        ApiToken.objects.get_or_create(
            key_hash=hashlib.sha256(key.encode()).hexdigest(),
            defaults={"user_id": user_id, "name": "API token", "prefix": key[:8], "created": created})
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE {TABLE}")
        cursor.execute("DELETE FROM django_migrations WHERE app = 'authtoken'")


class Migration(migrations.Migration):
    dependencies = [("accounts", "0001_initial")]

    operations = [migrations.RunPython(hash_plain_tokens, migrations.RunPython.noop)]
