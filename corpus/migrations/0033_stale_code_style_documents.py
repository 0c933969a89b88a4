"""Word and OpenDocument documents holding a paragraph in a code style are marked out of date and
queued, as 0029 did: such paragraphs (pandoc's "Source Code", Word's "HTML Preformatted",
LibreOffice's "Preformatted Text", parse.sections.CODE_STYLES) are now one fenced code block a run,
where they were paragraphs quoted as sentences. An OpenDocument file counts when its content names a
code style (a paragraph's own, or the parent of an automatic style). A worker rebuilds them in the
background; the old chunks stay searchable until the new ones are swapped in. Other documents are not
touched."""

import re
import zipfile

from django.db import migrations

from corpus.migrations._stale import docx_uses_style, files_matching, queue_rebuild

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
ODT = "application/vnd.oasis.opendocument.text"
# The style names of parse.sections.CODE_STYLES, as styles.xml writes them (a copy: a migration keeps
# what it meant when it was written).
CODE_STYLES = (b"Source Code", b"HTML Preformatted", b"Preformatted Text", b"Code", b"Macro Text")
_STYLE_NAME = re.compile(rb'<w:name w:val="([^"]+)"')
# OpenDocument writes a style's name with its spaces as "_20_".
_ODT_CODE_NAMES = re.compile(rb'"(?:%s)"' % b"|".join(name.replace(b" ", b"_20_") for name in CODE_STYLES))


def _holds_code(media_type: str, handle) -> bool:
    with zipfile.ZipFile(handle) as archive:
        if media_type == ODT:
            return bool(_ODT_CODE_NAMES.search(archive.read("content.xml")))
        return docx_uses_style(archive, lambda style: (name := _STYLE_NAME.search(style)) is not None
                               and name.group(1) in CODE_STYLES)


def mark_stale(apps, schema_editor):
    Document = apps.get_model("corpus", "Document")
    documents = Document.objects.filter(media_type__in=(DOCX, ODT)).only("pk", "media_type", "file")
    queue_rebuild(Document, files_matching(documents, lambda d, handle: _holds_code(d.media_type, handle)))


class Migration(migrations.Migration):
    dependencies = [("corpus", "0032_stale_html_list_documents")]

    operations = [migrations.RunPython(mark_stale, migrations.RunPython.noop, elidable=True)]
