"""Filling the sentence-vector store ahead of answers, one document at a time.

An answer's sources are RSE segments: runs of consecutive chunks, so each starts where a chunk
starts, and the answer splits it into sentences on its own. A sentence's text as scored depends on
where its source starts (its heading is the nearest one inside the source, and a source that starts
mid-paragraph starts with a fragment), so the texts of a document are those of every window that
starts at one of its chunks and runs for an answer's budget (CONTEXT_CHARS, extended to the end of
a paragraph, by at most MAX_PARAGRAPH_RUN, so that no window ends inside a sentence): about 1.6
texts per sentence of the document (4.8 per chunk of the Django docs). What a window cut to the budget ends with,
or a parse that differs by chance, is embedded by the answer that meets it and stored then.

document_fill() makes the document's rows exactly its texts for the configured model: rows of
texts no longer in it (re-ingested) and of another model are removed, vectors already stored
(another document, an earlier fill) are reused, the rest embedded in batches.
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Sequence

import numpy as np
from django.conf import settings
from django.db import transaction

from chat.answering import sentence_vectors
from chat.answering.blocks import HEADING, parse_blocks
from chat.answering.citations import CONTEXT_CHARS
from chat.answering.extractive import source_texts
from chat.models import SentenceVector
from corpus.models import Chunk, Document

logger = logging.getLogger(__name__)

EMBED_BATCH = 256
# How far past its budget a window may run to reach the end of its paragraph. Unbounded, a document
# without a paragraph break (the hostile "one 5 MB line") made every one of its 1,563 windows run to
# the end of the text: 1,563 parses of up to 5 MB, for over 20 minutes of both pool processes while
# every document behind it waited. A window cut here ends in a fragment the answer that meets it embeds.
MAX_PARAGRAPH_RUN = CONTEXT_CHARS


def window_texts(text: str, starts: Sequence[int], *, window: int = CONTEXT_CHARS) -> list[str]:
    """The distinct texts (as scored) of the sentences of every source that starts at one of
    `starts` (offsets into `text`) and runs for up to `window` characters, in first-seen order.

    Past the first heading inside a source its sentences read as in the whole document, so each
    source is parsed only up to there, and the whole document once: a few parses of the text in
    all instead of one per chunk."""
    seen = dict.fromkeys(source_texts(text))
    headings = [block.start for block in parse_blocks(text) if block.kind == HEADING]
    for start in sorted(set(starts)):
        end = start + window
        if end < len(text):
            paragraph_end = text.find("\n\n", end, end + MAX_PARAGRAPH_RUN)  # not inside a sentence, if it can
            end = min(len(text), end + MAX_PARAGRAPH_RUN) if paragraph_end < 0 else paragraph_end
        following = bisect.bisect_right(headings, start)
        if following < len(headings):
            end = min(end, headings[following])
        for scored in source_texts(text[start:end]):
            seen.setdefault(scored, None)
    return list(seen)


def document_fill(document_id: int) -> int:
    """Store the vectors of the document's sentence texts for settings.EMBEDDING_MODEL, replacing
    its other rows. Returns the number of texts embedded (0 when all were stored already, or the
    document is gone or not ready). Safe to run twice and alongside answers that store misses."""
    document = Document.objects.filter(pk=document_id, status=Document.Status.READY).values(
        "text", "built_hash").first()
    if document is None:
        return 0
    starts = list(Chunk.objects.filter(document_id=document_id).order_by("chunk_index").values_list("start", flat=True))
    texts = window_texts(document["text"] or "", starts)
    model = settings.EMBEDDING_MODEL
    keys = [sentence_vectors.digest(t) for t in texts]
    found = sentence_vectors.stored(model, keys)
    missing = [(key, text) for key, text in zip(keys, texts, strict=True) if key not in found]
    for offset in range(0, len(missing), EMBED_BATCH):
        batch = missing[offset: offset + EMBED_BATCH]
        vectors = _embed([text for _, text in batch])
        found.update(zip([key for key, _ in batch], vectors, strict=True))
    with transaction.atomic():
        # Written only for the content read above: a document re-ingested meanwhile is filled again
        # after its own publish.
        locked = Document.objects.select_for_update().filter(pk=document_id, built_hash=document["built_hash"])
        if not locked.exists():
            return 0
        SentenceVector.objects.filter(document_id=document_id).exclude(model=model, digest__in=keys).delete()
        sentence_vectors.store(model, [(document_id, key, found[key]) for key in keys])
    logger.info("document %s: %s sentence texts, %s embedded", document_id, len(keys), len(missing))
    return len(missing)


def _embed(texts: list[str]) -> np.ndarray:
    from corpus.ingest.embed import embed_texts  # loads the model: only in processes that fill

    return np.asarray(embed_texts(texts), dtype=np.float32)
