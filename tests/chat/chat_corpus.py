"""Small corpora for the chat tests: Collection/Document/Chunk rows written directly, with real
embeddings, so retrieval runs for real against Postgres + pgvector."""

from __future__ import annotations

from corpus.ingest.embed import embed_texts
from corpus.models import Collection, Document

# Chunks of a Markdown guide; the answers to the test questions sit in chunks 2-3.
GUIDE = [
    "# Deployment guide\n\nThis guide explains how to deploy the service on one machine.\n\n",
    "## Installing\n\nInstall the package with pip and create a virtual environment first.\n\n",
    "## Request timeout\n\nThe request timeout is thirty seconds by default. "
    "Set REQUEST_TIMEOUT in the settings file to change it.\n\n",
    "## Retries\n\nFailed requests are retried twice with exponential backoff before giving up.\n\n",
    "## Logging\n\nLogs are written to standard output in JSON lines format.\n\n",
]

COOKING = [
    "Bread needs flour, water, salt and yeast. ",
    "Knead the dough for ten minutes until it is smooth and elastic. ",
    "Bake the loaf at two hundred and twenty degrees for thirty five minutes. ",
]


# A four-page PDF's text, one sentence pair a page: the pages that hold a sentence are known.
PAGES = [
    "The lighthouse report. The lighthouse stands on the northern cape of the island.",
    "Keepers lived in the cottage beside the tower. Supplies came by boat every month.",
    "The lamp was converted to electricity in 1921. The old oil lamp is now in the museum.",
    "Visitors may climb the tower in summer. Tickets are sold at the cottage.",
]


def paged_text(pages: list[str]) -> tuple[str, list[int]]:
    """The text of `pages` joined as the PDF parser joins them, and each page's start offset."""
    text, starts = "", []
    for page in pages:
        if text:
            text += "\n\n"
        starts.append(len(text))
        text += page
    return text, starts


def make_collection(slug: str, *, owner=None, public: bool = False, **fields) -> Collection:
    return Collection.objects.create(slug=slug, name=slug.replace("-", " ").title(), owner=owner,
                                     is_public=public, **fields)


def make_document(collection: Collection, *, source: str, parts: list[str], title: str = "",
                  media_type: str = "text/markdown", pages: list[int] | None = None) -> Document:
    """A ready document whose chunks are exactly `parts` (so they tile the text, as ingestion ensures)."""
    text = "".join(parts)
    document = Document.objects.create(collection=collection, source=source, title=title or source,
                                       media_type=media_type, text=text, pages=pages or [],
                                       status=Document.Status.READY)
    vectors = embed_texts(parts)
    offset = 0
    for index, (part, vector) in enumerate(zip(parts, vectors, strict=True)):
        document.chunks.create(chunk_index=index, text=part, start=offset, end=offset + len(part),
                               page=document.page_at(offset), context=title or source,
                               token_count=len(part.split()), embedding=vector.tolist())
        offset += len(part)
    return document
