"""Context for each chunk, stored beside its text (Chunk.context) and used for embedding and
keyword indexing, never mixed into the text itself.

- header (default): "document title > heading > sub-heading".
- contextual: Anthropic-style contextual retrieval, one LLM call per chunk with the document in
  the prompt; the header stays in front of the LLM's sentence.
- autocontext: dsRAG-style, one LLM call per document for a title and a one-sentence summary,
  which head every chunk together with its heading path.

Without an LLM, the LLM modes fall back to the header (and log it); an LLM error on one chunk
falls back to the header for that chunk only.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from corpus import llm
from corpus.models import Collection

logger = logging.getLogger(__name__)

Mode = Collection.Contextualization

# The prompt of Anthropic's "Contextual Retrieval" (seed 000), word for word.
CONTEXTUAL_PROMPT = (
    "<document>\n{document}\n</document>\n"
    "Here is the chunk we want to situate within the whole document\n"
    "<chunk>\n{chunk}\n</chunk>\n"
    "Please give a short succinct context to situate this chunk within the overall document for the purposes of "
    "improving search retrieval of the chunk. Answer only with the succinct context and nothing else."
)
AUTOCONTEXT_PROMPT = (
    "<document>\n{document}\n</document>\n"
    "Write a descriptive title for this document on the first line, and on the second line one sentence "
    "summarising what the document is about. Answer with exactly these two lines and nothing else."
)
# Keeps prompts within small local models' context windows; the start of a document carries its gist.
MAX_DOCUMENT_CHARS = 24_000
CONTEXT_MAX_TOKENS = 120
AUTOCONTEXT_MAX_TOKENS = 120


@dataclass(frozen=True)
class ContextResult:
    contexts: list[str]  # one per chunk, in order
    summary: str = ""  # AutoContext summary for Document.summary ("" otherwise)
    llm_title: str = ""  # AutoContext title ("" otherwise)


def chunk_header(title: str, heading_path: list[str]) -> str:
    """ "Title > Heading > Sub-heading", without repeating a heading equal to the title."""
    parts = [title.strip()] if title.strip() else []
    for heading in heading_path:
        heading = heading.strip()
        if heading and (not parts or heading != parts[-1]):
            parts.append(heading)
    return " > ".join(parts)


def contextualize(*, mode: str, title: str, text: str, chunk_texts: list[str],
                  heading_paths: list[list[str]]) -> ContextResult:
    """Contexts for the chunks of one document under collection setting `mode`."""
    headers = [chunk_header(title, path) for path in heading_paths]
    if mode == Mode.NONE:
        return ContextResult(contexts=[""] * len(chunk_texts))
    if mode in (Mode.CONTEXTUAL, Mode.AUTOCONTEXT) and not llm.llm_configured():
        logger.info("no LLM configured: %r contextualization falls back to contextual chunk headers", mode)
        return ContextResult(contexts=headers)
    if mode == Mode.CONTEXTUAL:
        return ContextResult(contexts=_contextual(text, chunk_texts, headers))
    if mode == Mode.AUTOCONTEXT:
        return _autocontext(title, text, heading_paths, headers)
    return ContextResult(contexts=headers)


def _document_for_prompt(text: str) -> str:
    return text if len(text) <= MAX_DOCUMENT_CHARS else text[:MAX_DOCUMENT_CHARS] + "\n[...]"


def _contextual(text: str, chunk_texts: list[str], headers: list[str]) -> list[str]:
    document = _document_for_prompt(text)
    contexts = []
    for chunk, header in zip(chunk_texts, headers, strict=True):
        prompt = CONTEXTUAL_PROMPT.format(document=document, chunk=chunk)
        try:
            answer = llm.complete([{"role": "user", "content": prompt}], max_tokens=CONTEXT_MAX_TOKENS)
        except llm.llm_errors() as exc:
            # The client already retried transient errors; one chunk without LLM context beats a failed document.
            logger.warning("LLM context failed for a chunk (%s); using the header", exc)
            answer = ""
        contexts.append("\n".join(part for part in (header, answer) if part))
    return contexts


def _autocontext(title: str, text: str, heading_paths: list[list[str]], headers: list[str]) -> ContextResult:
    try:
        answer = llm.complete([{"role": "user", "content": AUTOCONTEXT_PROMPT.format(
            document=_document_for_prompt(text))}], max_tokens=AUTOCONTEXT_MAX_TOKENS)
    except llm.llm_errors() as exc:
        logger.warning("LLM AutoContext failed (%s); using contextual chunk headers", exc)
        return ContextResult(contexts=headers)
    lines = [line.strip().strip("#*\"' ") for line in answer.splitlines() if line.strip()]
    llm_title = lines[0] if lines else ""
    summary = " ".join(lines[1:])
    if not llm_title:
        return ContextResult(contexts=headers)
    contexts = []
    for path in heading_paths:
        section = chunk_header("", path)
        contexts.append("\n".join(part for part in (
            f"Document: {llm_title}", summary, f"Section: {section}" if section else "") if part))
    return ContextResult(contexts=contexts, summary=summary, llm_title=llm_title)
