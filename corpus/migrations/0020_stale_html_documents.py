"""HTML documents built before navigation marked by class was dropped (corpus.ingest.parse.htmltext:
breadcrumbs, menus, texinfo's Next/Previous/Up panels) are marked out of date, so the next ingest or
sync of the same file, or the admin's "Re-ingest ... (if out of date)", builds them again without it.
Only HTML documents: the other formats parse as before (why TEXT_VERSION is not bumped: see 0019)."""

from django.db import migrations


def mark_stale(apps, schema_editor):
    Document = apps.get_model("corpus", "Document")
    Document.objects.filter(media_type="text/html").update(built_signature="")


class Migration(migrations.Migration):
    dependencies = [("corpus", "0019_stale_long_heading_documents")]

    operations = [migrations.RunPython(mark_stale, migrations.RunPython.noop, elidable=True)]
