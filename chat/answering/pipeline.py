"""The answer pipeline shared by the chat page, POST /api/ask/ and `manage.py ask`:

    hybrid search + RSE of the question as asked and, in a conversation, in context (rewritten by
    the LLM, or with the previous question's key words: always for a question that points back,
    else only when clearly more confident and the sources found hold the question's own words)
    → "not found" unless a chunk is relevant enough and the sources hold enough of what the
    question names → numbered sources (for an extractive answer, in the order it cites them) →
    LLM answer citing [n] (streamed or not) → grounding pass  |  extractive answer (no LLM)
    → the sources the answer cites

Failures a person should see (nothing to search, nothing relevant found, LLM down or slow) are
raised as AnswerError with a readable message; callers show it in the conversation.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

from django.conf import settings

from chat.answering import reading
from chat.answering.citations import CONTEXT_CHARS, build_citations, cited_numbers, numbered_by_answer, relevance_map
from chat.answering.extractive import Hit, Quotes, candidates, question_coverage, render_quotes, select_quotes
from chat.answering.grounding import UNSUPPORTED_NOTE, ground
from chat.answering.prompts import answer_messages
from chat.answering.rewrite import refers_back, rewrite_query
from chat.answering.support import pin_pages
from chat.retrieval import SearchError, search
from chat.retrieval.filters import NO_FILTERS, SearchFilters
from corpus import llm

logger = logging.getLogger(__name__)

ANSWER_MAX_TOKENS = 800
SEARCH_K = 10
# An answer is "not found" unless a retrieved chunk is at least this relevant (calibrated, 0-1): at 0.6 the
# development set's off-topic questions abstain 0.97 and no answerable question falls below it
# (docs/evaluation.md, "Answers", "Not found"). 0 never abstains.
ANSWER_MIN_RELEVANCE = 0.6
# ... and unless the sources hold at least this share of the question's words, each weighted by its rarity
# (question_coverage): sources near the subject that never name what is asked do not answer it
# (docs/evaluation.md, "After the work on the answers"). 0 never abstains.
ANSWER_MIN_COVERAGE = 0.35


UNSUPPORTED_ANSWER = ("The language model's answer is not supported by the sources, so it is not shown. "
                      "What the sources say:")


class AnswerError(Exception):
    """A failure to show the user as is (str(exc) is the message)."""


class LLMFailed(AnswerError):
    """The language model was unreachable, slow or failing (an upstream failure, HTTP 502 in the API)."""


class NotFound(AnswerError):
    """Nothing retrieved is relevant enough to answer from: the answer is "not found"."""


@dataclass
class Prepared:
    """What an answer is built from, kept with the assistant message."""

    question: str
    query: str
    mode: str  # "llm" | "extractive"
    llm: llm.LLMConfig | None = None  # the LLM that answers (mode "llm"), chosen once per answer
    citations: list[dict] = field(default_factory=list)
    relevance: dict[str, dict[str, float]] = field(default_factory=dict)
    top_relevance: float | None = None  # of the most relevant retrieved chunk
    hits: tuple[Hit, ...] = ()  # the retrieved chunks (where they are, how relevant)
    quotes: Quotes | None = None  # the sentences the extractive answer quotes (None for LLM answers)


@dataclass(frozen=True)
class Answer:
    """A finished answer: its text and the sources it cites (numbered as in the prompt)."""

    text: str
    citations: list[dict]
    raw_text: str  # as written by the LLM or the extractive step, before the grounding pass
    partly_unsupported: bool = False
    declined: bool = False  # the LLM only said the sources do not hold the answer
    # How likely the reader found it that the best quote answers the question (0-1; extractive
    # answers chosen by the reader only, else None).
    confidence: float | None = None


class IncompleteStream(Exception):
    pass


def llm_error_message(exc: BaseException) -> str:
    """A sentence for the user about an LLM failure (details go to the log)."""
    if isinstance(exc, IncompleteStream):
        return str(exc)
    # Here, not at the top: `openai` loads with the first LLM client (corpus.llm), so a process that
    # answers without an LLM never holds it; an LLM failure means it is loaded already.
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return f"The language model did not answer in time (timeout {settings.LLM_TIMEOUT:g} s)."
    if isinstance(exc, openai.APIConnectionError):
        return ("The language model could not be reached; check its address (LLM_BASE_URL, or the admin's LLM "
                "settings) and that the server is running.")
    if isinstance(exc, openai.AuthenticationError):
        return "The language model refused the API key (LLM_API_KEY, or the admin's LLM settings)."
    if isinstance(exc, openai.APIStatusError):
        return f"The language model answered with an error (HTTP {exc.status_code})."
    return "The language model failed while answering."


def prepare(*, question: str, collections, history: Sequence[tuple[str, str]] = (),
            rse: str | None = "balanced", filters: SearchFilters = NO_FILTERS) -> Prepared:
    """Rewrite (with an LLM and history), search `collections` (only the documents passing
    `filters`, chat.retrieval.filters) and number the sources.

    `collections` must already be limited to what the user may read.
    """
    question = (question or "").strip()
    if not question:
        raise AnswerError("Please type a question.")
    if not collections.exists():
        raise AnswerError("There is no collection you may read yet, so there is nothing to search.")
    config = llm.current()
    mode = "llm" if config.configured else "extractive"
    query, result = _search_in_conversation(question, history, collections, rse, filters)
    citations = build_citations(result)
    scope = searched_scope(collections)
    if filters:  # "not found" says it looked only where the filters let it
        scope = f"{scope} (only {filters.described()})"
    if not citations:
        raise NotFound(f"No passage in {scope} matches this question. "
                       "Try other words, or check that the documents have finished processing.")
    # Retrieval calibrates a table's chunks low (a row holds few of a question's words): below the
    # usual bar, a question is still read when the best candidate is a table row and the reader
    # finds it answers (chat.answering.reading.ROW_MIN_RELEVANCE).
    on_probation = not _relevant(result)
    if on_probation and (mode != "extractive" or reading.current() == reading.HEURISTIC
                         or (top_relevance(result) or 0.0) < reading.ROW_MIN_RELEVANCE):
        raise NotFound(not_found_message(scope))
    hits = retrieved_hits(result)
    if mode == "extractive":
        # The sentences are chosen for the question as asked: the words a conversation lent the query
        # found the right sources, and would only pull the quotes back towards the earlier turn's subject.
        quotes = select_quotes(question, citations, hits=hits, searched=query,
                               query_vector=question_vector(result, question))
        if on_probation and not (quotes.read and quotes.answers):
            raise NotFound(not_found_message(scope))
        coverage = quotes.coverage
        # Numbered as the answer cites them, so its sources are listed from 1 whichever it quotes.
        citations, numbers = numbered_by_answer(citations, [s.n for s in quotes.sentences])
        quotes = quotes.renumbered(numbers)
        for n, text in quotes.leads:  # the sentence a citation's page and passage link open at
            citations[n - 1]["lead"] = text
    else:
        # The LLM writes the answer: no sentence needs scoring (embedding) unless it proves unsupported.
        quotes, coverage = None, question_coverage(query, citations, candidates(citations, hits))
    if quotes is not None and quotes.read:
        # The reader read the question with each candidate: it decides whether any answers it.
        if not quotes.answers:
            raise NotFound(not_found_message(scope))
    elif coverage < ANSWER_MIN_COVERAGE:
        # The sources are near the subject but hold little of what the question names.
        raise NotFound(not_found_message(scope))
    return Prepared(question=question, query=query, mode=mode, citations=citations,
                    relevance=relevance_map(result), top_relevance=top_relevance(result), hits=hits,
                    quotes=quotes, llm=config if config.configured else None)


def searched_scope(collections) -> str:
    """What was searched, for the "not found" message: the collection's name, or how many."""
    names = list(collections.order_by("name").values_list("name", flat=True)[:2])
    if len(names) == 1:
        return f"the collection “{names[0]}”"
    return f"your {collections.count()} collections"


def not_found_message(scope: str) -> str:
    return f"Nothing in {scope} answers this question."


# In a conversation a question that stands on its own is searched as asked and in context
# (rewrite_query); the search in context is kept only when retrieval is clearly more confident in
# it: its best chunk's calibrated relevance at least this much higher. The previous subject's words
# make any search about that subject look somewhat more confident, a new subject's included (the
# demo's "What does RSE do?" after two questions on ingestion: 0.82 as asked, 0.90 with their words),
# while a follow-up that names nothing of its subject gains more ("Can I register one with a
# decorator?" after custom template filters: 0.68 as asked, 0.85 in context).
CONTEXT_GAIN = 0.1


def _search_in_conversation(question: str, history: Sequence[tuple[str, str]], collections, rse: str | None,
                            filters: SearchFilters = NO_FILTERS):
    """(query, result). A question that points back into the conversation ("What presets does it
    have?", "And in templates?") is searched in context; one that stands on its own is searched as
    asked and in context, the context kept only when retrieval is clearly more confident in it and
    its sources hold the question's own words (a new subject stays itself, and an off-topic one is
    "not found" as in a new conversation; "Could a different duration be chosen?" finds its subject)."""
    in_context = rewrite_query(question, history) if history else question
    if in_context == question:
        return question, _search(question, collections, rse, filters)
    context = _search(in_context, collections, rse, filters)
    if refers_back(question):
        return in_context, context
    alone = _search(question, collections, rse, filters)
    if (top_relevance(context) or 0.0) >= (top_relevance(alone) or 0.0) + CONTEXT_GAIN \
            and _holds_own_words(question, context):
        return in_context, context
    return question, alone


def _holds_own_words(question: str, result) -> bool:
    """The sources `result` found hold enough of what `question` itself names (the coverage an
    answer needs, ANSWER_MIN_COVERAGE). The earlier subject's words make its sources look
    confident for any next question: a new subject ("How do I bake bread?" after questions on
    zebras) finds them in context, but they do not hold its words, so it is searched as asked."""
    citations = build_citations(result)
    return question_coverage(question, citations, candidates(citations)) >= ANSWER_MIN_COVERAGE


def _search(query: str, collections, rse: str | None, filters: SearchFilters = NO_FILTERS):
    try:
        # RSE is told the budget the sources are cut to, so a long first segment is trimmed
        # around its best chunks instead of crowding the other segments out, and the top chunks
        # the segments lack take part (chat.retrieval.rse._budgeted).
        return search(query=query, collections=collections, mode="hybrid", k=SEARCH_K, rse=rse,
                      max_chars=CONTEXT_CHARS, filters=filters)
    except SearchError as exc:
        raise AnswerError(str(exc)) from exc


def _relevant(result) -> bool:
    """Some retrieved chunk is relevant enough to answer from. Relevance is calibrated 0-1
    (chat.retrieval.relevance): a question whose best chunk is not clearly relevant is answered
    "not found", not from unrelated passages (ANSWER_MIN_RELEVANCE)."""
    top = top_relevance(result)
    return top is None or top >= ANSWER_MIN_RELEVANCE


def retrieved_hits(result) -> tuple[Hit, ...]:
    return tuple(Hit(document=c.document.id, start=c.start, end=c.end, relevance=c.relevance)
                 for c in result.chunks if getattr(c, "relevance", None) is not None)


def question_vector(result, question: str):
    """The question's vector with EMBEDDING_MODEL when the search embedded it so (it searched the
    question as asked, in a collection on that model), else None: the answer embeds it then."""
    vectors = result.query_vectors.get(settings.EMBEDDING_MODEL)
    return vectors[0] if vectors is not None and result.query == question else None


def top_relevance(result) -> float | None:
    """The calibrated relevance of the best retrieved chunk (None when the search gives none)."""
    values = [c.relevance for c in result.chunks if getattr(c, "relevance", None) is not None]
    return max(values) if values else None


def _llm_stream(messages: list[dict], *, max_tokens: int, config: llm.LLMConfig | None) -> Iterator[str]:
    """Text deltas of a streamed chat completion (the client's timeout applies between chunks)."""
    config = config or llm.current()
    stream = llm.get_client(config).chat.completions.create(
        model=config.model, messages=messages, max_tokens=max_tokens, temperature=0.2, stream=True)
    finished = False
    try:
        for chunk in stream:
            if not chunk.choices:
                continue
            choice = chunk.choices[0]
            if choice.delta and choice.delta.content:
                yield choice.delta.content
            finished = finished or choice.finish_reason is not None
    finally:
        stream.close()  # stopping early must drop the HTTP connection, not leave it to the GC
    if not finished:
        # The connection ended without a finish_reason: the server died mid-answer.
        raise IncompleteStream("The language model stopped before finishing its answer.")


def stream_answer(prepared: Prepared, history: Sequence[tuple[str, str]] = ()) -> Iterator[str]:
    """The answer text piece by piece: LLM tokens, or the extractive answer in one piece.

    Raises AnswerError if the LLM fails; pieces already yielded are the partial answer.
    """
    if prepared.mode == "extractive":
        yield _extractive(prepared)
        return
    messages = answer_messages(question=prepared.query, citations=prepared.citations, history=history)
    try:
        yield from _llm_stream(messages, max_tokens=ANSWER_MAX_TOKENS, config=prepared.llm)
    except Exception as exc:  # the openai client raises many types; the user gets one sentence
        logger.warning("LLM answer failed", exc_info=True)
        raise LLMFailed(llm_error_message(exc)) from exc


def _extractive(prepared: Prepared) -> str:
    quotes = prepared.quotes or select_quotes(prepared.question, prepared.citations, hits=prepared.hits,
                                              searched=prepared.query)
    return render_quotes(quotes, prepared.citations)


def finish(prepared: Prepared, text: str, *, complete: bool = True) -> Answer:
    """The answer as shown: an LLM's text after the grounding pass, and the sources it cites,
    each with the page of the sentence it is cited for (chat.answering.support.pin_pages). A
    `complete` LLM answer that no source supports is replaced by the sources' own sentences; a
    partial one (stopped, or the LLM failed) is kept as written."""
    answer = _grounded(prepared, text, complete=complete)
    confidence = prepared.quotes.confidence if prepared.mode == "extractive" and prepared.quotes else None
    return replace(answer, citations=pin_pages(answer.citations, answer.text),
                   confidence=None if confidence is None else round(confidence, 3))


def _grounded(prepared: Prepared, text: str, *, complete: bool) -> Answer:
    if prepared.mode == "extractive" or not text.strip():
        cited = set(cited_numbers(text))
        return Answer(text=text, raw_text=text, citations=[c for c in prepared.citations if c["n"] in cited])
    grounded = ground(text, {c["n"]: c["text"] for c in prepared.citations})
    if complete and not grounded.cited and grounded.unsupported and not grounded.declined:
        # Nothing the model wrote is supported by the sources: say so, and quote what they do say
        # rather than show an uncited paragraph.
        quotes = prepared.quotes or select_quotes(prepared.query, prepared.citations, hits=prepared.hits)
        if quotes.sentences:
            shown = f"*{UNSUPPORTED_ANSWER}*\n\n{render_quotes(quotes, prepared.citations)}"
            quoted = set(cited_numbers(shown))
            return Answer(text=shown, raw_text=text, partly_unsupported=True,
                          citations=[c for c in prepared.citations if c["n"] in quoted])
    cited = set(grounded.cited)
    return Answer(text=grounded.text, raw_text=text, partly_unsupported=grounded.partly_unsupported,
                  declined=grounded.declined, citations=[c for c in prepared.citations if c["n"] in cited])


class GroundedStream:
    """An LLM answer's text as the grounding pass leaves it, while it streams: for a client that
    cannot take text back once sent (/v1), unlike the chat page, which replaces the streamed text
    with the finished answer.

    The pass reads an answer a line at a time, and a line's result never depends on the lines after
    it (chat.answering.grounding.ground), so each complete line goes out grounded as it arrives.
    Nothing goes out until some line cites a source: an answer no source supports is replaced by
    the sources' own sentences when it ends (finish). Together, add()'s pieces and then rest() of
    the finished answer give exactly the finished answer's text. An extractive answer is quoted
    from the sources, already grounded: its pieces go out as they come."""

    def __init__(self, prepared: Prepared) -> None:
        self._sources = {c["n"]: c["text"] for c in prepared.citations}
        self._extractive = prepared.mode == "extractive"
        self._raw = ""
        self.sent = ""

    def add(self, piece: str) -> str:
        """The grounded text that `piece` completes ("" while its line is still being written)."""
        self._raw += piece
        if self._extractive:
            return self._send(self._raw)
        if "\n" not in piece:
            return ""
        grounded = ground(self._raw[:self._raw.rfind("\n")], self._sources)
        if not grounded.cited:
            return ""
        text = grounded.text.removesuffix("\n\n" + UNSUPPORTED_NOTE) if grounded.partly_unsupported \
            else grounded.text
        return self._send(text)

    def rest(self, finished: str) -> str:
        """What is left to send of the `finished` answer's text (finish(...).text)."""
        if not finished.startswith(self.sent):  # never expected: the lines sent are grounded as in finish()
            logger.warning("streamed answer is not a prefix of the finished one; the rest is not sent")
            return ""
        return self._send(finished)

    def _send(self, text: str) -> str:
        if not text.startswith(self.sent) or len(text) <= len(self.sent):
            return ""
        new, self.sent = text[len(self.sent):], text
        return new


def answer_question(*, question: str, collections, history: Sequence[tuple[str, str]] = (),
                    rse: str | None = "balanced", filters: SearchFilters = NO_FILTERS) -> tuple[Prepared, Answer]:
    """The whole pipeline, not streamed: what the chat stores for `question` (the evaluation's entry)."""
    prepared = prepare(question=question, collections=collections, history=history, rse=rse, filters=filters)
    return prepared, finish(prepared, complete_answer(prepared, history))


def complete_answer(prepared: Prepared, history: Sequence[tuple[str, str]] = ()) -> str:
    """The whole answer at once (a non-streamed LLM call)."""
    if prepared.mode == "extractive":
        return _extractive(prepared)
    messages = answer_messages(question=prepared.query, citations=prepared.citations, history=history)
    try:
        return llm.complete(messages, max_tokens=ANSWER_MAX_TOKENS, temperature=0.2, config=prepared.llm)
    except Exception as exc:  # see stream_answer
        logger.warning("LLM answer failed", exc_info=True)
        raise LLMFailed(llm_error_message(exc)) from exc
