"""Word and OpenDocument documents holding a list are marked out of date and queued, as 0027 did:
their list paragraphs are now Markdown list items ("- ", "2. ", nested ones indented; parse.word_lists,
parse.odt), where they were bare paragraphs that read like a run of headings. A Word paragraph is a
list item by a w:numPr of its own or of its paragraph style; an OpenDocument one inside a text:list.
A worker rebuilds them in the background; the old chunks stay searchable until the new ones are
swapped in. Other documents are not touched (why TEXT_VERSION is not bumped: see 0019)."""

import re
import zipfile

from django.db import migrations

from corpus.migrations._stale import docx_uses_style, files_matching, queue_rebuild

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
ODT = "application/vnd.oasis.opendocument.text"
_NUMBERED = re.compile(rb"<w:numPr[\s>]")
_ODT_LIST = re.compile(rb"<text:list[\s>]")


def _holds_list(media_type: str, handle) -> bool:
    with zipfile.ZipFile(handle) as archive:
        if media_type == ODT:
            return bool(_ODT_LIST.search(archive.read("content.xml")))
        return (bool(_NUMBERED.search(archive.read("word/document.xml")))
                or docx_uses_style(archive, lambda style: _NUMBERED.search(style)))


def mark_stale(apps, schema_editor):
    Document = apps.get_model("corpus", "Document")
    documents = Document.objects.filter(media_type__in=(DOCX, ODT)).only("pk", "media_type", "file")
    queue_rebuild(Document, files_matching(documents, lambda d, handle: _holds_list(d.media_type, handle)))


class Migration(migrations.Migration):
    dependencies = [("corpus", "0028_stale_plain_text_documents")]

    operations = [migrations.RunPython(mark_stale, migrations.RunPython.noop, elidable=True)]
