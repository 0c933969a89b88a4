"""Chunkers: the invariants of every strategy (property-based), and each strategy's own behaviour."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corpus.ingest.chunk import STRATEGIES, ChunkingConfig, Span, chunk_text, heading_paths
from corpus.ingest.parse import Heading
from corpus.ingest.tokens import count_tokens, tokenize
from tests.corpus.text_strategies import documents, simple_documents

NON_OVERLAPPING = [s for s in STRATEGIES if s != "sliding"]
SEMANTIC = ["semantic", "semantic_percentile", "maxmin"]


def fake_embed(texts: list[str]) -> np.ndarray:
    """Deterministic bag-of-words vectors: texts sharing words are similar."""
    vectors = np.zeros((len(texts), 64), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in text.lower().split():
            vectors[row, hashlib.md5(word.encode()).digest()[0] % 64] += 1.0
        vectors[row, 63] += 0.01
    return vectors


def one_word(text: str) -> bool:
    """True when `text` holds a single tokenizer word (the one thing a chunk may not split)."""
    return len(set(tokenize(text).words.tolist())) == 1


def assert_partition(text: str, spans: list[Span], size: int) -> None:
    """In order, non-empty, non-overlapping, exact cover, within size, no whitespace-only chunk."""
    assert "".join(text[s.start:s.end] for s in spans) == text
    assert [s.start for s in spans[1:]] == [s.end for s in spans[:-1]]
    if text:
        assert spans[0].start == 0 and spans[-1].end == len(text)
    for span in spans:
        chunk = text[span.start:span.end]
        assert span.end > span.start
        tokens = count_tokens(chunk)
        assert tokens <= size or one_word(chunk), (tokens, chunk)
        if len(spans) > 1:
            assert tokens > 0, repr(chunk)


def headings_for(text: str, picks: list[tuple[int, int]]) -> list[Heading]:
    """Headings at some line starts of `text`; picks are (line number, level)."""
    line_starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    return [Heading(line_starts[n % len(line_starts)], level, f"H{n}") for n, level in picks]


# --- invariants, property-based ---

@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=documents, size=st.integers(4, 40), strategy=st.sampled_from(NON_OVERLAPPING),
       threshold=st.floats(0.0, 1.0), picks=st.lists(st.tuples(st.integers(0, 50), st.integers(1, 4)), max_size=6))
def test_non_overlapping_strategies_partition_the_text(text, size, strategy, threshold, picks):
    config = ChunkingConfig(strategy, size, threshold=threshold)
    spans = chunk_text(text, config, headings=headings_for(text, picks), embed=fake_embed)
    assert_partition(text, spans, size)


@settings(max_examples=60, deadline=None)
@given(text=documents, size=st.integers(4, 40), data=st.data())
def test_sliding_windows_cover_the_text_in_order_and_overlap(text, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    spans = chunk_text(text, ChunkingConfig("sliding", size, overlap=overlap))
    if not text:
        assert spans == []
        return
    assert spans[0].start == 0 and spans[-1].end == len(text)
    for previous, following in zip(spans, spans[1:], strict=False):
        assert previous.start < following.start <= previous.end  # progress, and no gap
        if overlap:  # a window holding one long word cannot overlap the next
            assert following.start < previous.end or one_word(text[previous.start:previous.end])
        else:
            assert following.start == previous.end
    for span in spans:
        chunk = text[span.start:span.end]
        assert count_tokens(chunk) <= size or one_word(chunk)


@settings(max_examples=40, deadline=None)
@given(text=simple_documents, size=st.integers(2, 30), data=st.data())
def test_sliding_overlap_is_exact_on_one_token_words(text, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    spans = chunk_text(text, ChunkingConfig("sliding", size, overlap=overlap))
    total = count_tokens(text)
    for previous, following in zip(spans, spans[1:], strict=False):
        assert count_tokens(text[previous.start:previous.end]) == size
        assert count_tokens(text[following.start:previous.end]) == overlap
    assert count_tokens(text[spans[-1].start:]) <= size
    assert sum(count_tokens(text[s.start:s.end]) for s in spans) - overlap * (len(spans) - 1) == total


@settings(max_examples=40, deadline=None)
@given(text=simple_documents, size=st.integers(2, 30))
def test_fixed_chunks_are_full_windows_on_one_token_words(text, size):
    spans = chunk_text(text, ChunkingConfig("fixed", size))
    counts = [count_tokens(text[s.start:s.end]) for s in spans]
    assert all(c == size for c in counts[:-1]) and 0 < counts[-1] <= size


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_empty_text_has_no_chunks(strategy):
    assert chunk_text("", ChunkingConfig(strategy, 16), embed=fake_embed) == []


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_whitespace_only_text_is_one_chunk(strategy):
    assert chunk_text(" \n\n\t ", ChunkingConfig(strategy, 16), embed=fake_embed) == [Span(0, 5)]


@pytest.mark.parametrize("strategy", NON_OVERLAPPING)
def test_a_word_longer_than_size_is_kept_whole(strategy):
    text = "tiny words then supercalifragilisticexpialidocious and more words after it"
    spans = chunk_text(text, ChunkingConfig(strategy, 3), embed=fake_embed)
    assert_partition(text, spans, 3)
    assert "supercalifragilisticexpialidocious" in [text[s.start:s.end].strip() for s in spans]


def test_config_is_validated():
    with pytest.raises(ValueError, match="Unknown chunking strategy 'bogus'"):
        ChunkingConfig("bogus", 100)
    with pytest.raises(ValueError, match="overlap"):
        ChunkingConfig("sliding", 100, overlap=100)
    with pytest.raises(ValueError, match="at least 1 token"):
        ChunkingConfig("fixed", 0)


# --- each strategy's behaviour ---

def test_fixed_cuts_at_whitespace_not_inside_words():
    # one two three chunk ##ing four five: a 4-token window would end inside "chunking".
    text = "one two three chunking four five"
    spans = chunk_text(text, ChunkingConfig("fixed", 4))
    assert [text[s.start:s.end] for s in spans] == ["one two three ", "chunking four five"]


PARAGRAPHS = ("First paragraph has one sentence here.\n\n"
              "Second paragraph. It has two sentences in it.\n\n"
              "Third paragraph is short.")


def test_recursive_prefers_paragraph_breaks():
    spans = chunk_text(PARAGRAPHS, ChunkingConfig("recursive", 12))
    assert [PARAGRAPHS[s.start:s.end] for s in spans] == [
        "First paragraph has one sentence here.\n\n",
        "Second paragraph. It has two sentences in it.\n\n",
        "Third paragraph is short."]


def test_recursive_merges_small_paragraphs_up_to_size():
    spans = chunk_text(PARAGRAPHS, ChunkingConfig("recursive", 18))  # paragraphs: 7, 10 and 5 tokens
    assert [PARAGRAPHS[s.start:s.end] for s in spans] == [
        "First paragraph has one sentence here.\n\nSecond paragraph. It has two sentences in it.\n\n",
        "Third paragraph is short."]


def test_recursive_falls_back_to_sentences():
    spans = chunk_text(PARAGRAPHS, ChunkingConfig("recursive", 8))
    assert [PARAGRAPHS[s.start:s.end] for s in spans] == [
        "First paragraph has one sentence here.\n\n", "Second paragraph. ", "It has two sentences in it.\n\n",
        "Third paragraph is short."]


def test_recursive_falls_back_to_words():
    spans = chunk_text(PARAGRAPHS, ChunkingConfig("recursive", 5))
    assert_partition(PARAGRAPHS, spans, 5)
    assert PARAGRAPHS[spans[0].start:spans[0].end] == "First paragraph has one sentence "


MARKDOWN_DOC = """# Guide

## Install

Run the installer. It takes a minute.

## Configure

The settings file holds every option. Each option has a default value that works for most people.

Databases need a URL. Caches need a location. Queues need a broker and a result backend to run.

Logging is configured last, with handlers for files and the console.

## Use

Start it.
"""


def markdown_headings() -> list[Heading]:
    from corpus.ingest.parse.markup import markdown_headings as find

    return find(MARKDOWN_DOC)[0]


def test_markdown_chunks_follow_sections_and_split_long_ones():
    spans = chunk_text(MARKDOWN_DOC, ChunkingConfig("markdown", 30), headings=markdown_headings())
    chunks = [MARKDOWN_DOC[s.start:s.end] for s in spans]
    assert_partition(MARKDOWN_DOC, spans, 30)
    # "# Guide" has nothing under it before "## Install": it joins the next section.
    assert chunks[0] == "# Guide\n\n## Install\n\nRun the installer. It takes a minute.\n\n"
    assert chunks[1].startswith("## Configure\n\n")
    assert chunks[-1] == "## Use\n\nStart it.\n"
    configure = [c for c in chunks if "option" in c or "Databases" in c or "Logging" in c]
    assert len(configure) >= 2  # the long section was split inside
    assert all("##" not in c for c in chunks[2:-1])  # no chunk mixes the end of one section with the next


def test_markdown_without_headings_behaves_as_recursive():
    config = ChunkingConfig("markdown", 12)
    assert chunk_text(PARAGRAPHS, config) == chunk_text(PARAGRAPHS, ChunkingConfig("recursive", 12))


def test_markdown_does_not_join_a_section_tail_to_the_next_section():
    text = "# A\n\n" + "word " * 40 + "\n\n# B\n\nend\n"
    headings = [Heading(0, 1, "A"), Heading(text.index("# B"), 1, "B")]
    spans = chunk_text(text, ChunkingConfig("markdown", 16), headings=headings)
    assert text.index("# B") in [s.start for s in spans]


def test_markdown_keeps_a_heading_with_the_text_under_it():
    text = "Usage\n=====\n\n" + " ".join(["The cat sat on the mat."] * 12) + "\n"
    spans = chunk_text(text, ChunkingConfig("markdown", 40), headings=[Heading(0, 1, "Usage")])
    assert_partition(text, spans, 40)
    assert text[spans[0].start:spans[0].end].startswith("Usage\n=====\n\nThe cat sat")
    # Without headings the recursive chunker leaves the heading block on its own.
    recursive = chunk_text(text, ChunkingConfig("recursive", 40))
    assert text[recursive[0].start:recursive[0].end] == "Usage\n=====\n\n"


def test_a_tiny_section_joined_to_the_next_takes_that_sections_heading_path():
    # As in pino's transports.md: a "###" with one sentence, then a "####" holding the text.
    text = ("### How level filtering works\n\nIn two places.\n\n#### A) Single target\n\n"
            + "The logger level decides what is emitted. " * 6 + "\n\n#### B) Targets\n\n"
            + "Each target has its own level gate. " * 6 + "\n")
    from corpus.ingest.parse.markup import markdown_headings as find

    headings = find(text)[0]
    spans = chunk_text(text, ChunkingConfig("markdown", 100), headings=headings)
    assert text[spans[0].start:spans[0].end].startswith("### How level filtering works\n\nIn two places.\n\n#### A)")
    paths = heading_paths(headings, [span.heading_at for span in spans])
    assert paths[0] == ["How level filtering works", "A) Single target"]
    assert paths[-1] == ["How level filtering works", "B) Targets"]
    assert heading_paths(headings, [spans[0].start]) == [["How level filtering works"]]  # what it was given before


FENCED = ("## Levels\n\nPino filters in two places.\n\n```text\nMain thread        Worker thread\n"
          "logger.debug()     transport target\n\nResult:\n- logger.level decides what is emitted.\n"
          "- transport.level is not used in this path.\n```\n\nSummary:\n\n"
          "- Single target: only logger.level filters messages.\n"
          "- Multiple targets: logger.level first, then each target level.\n")


@pytest.mark.parametrize("strategy", ["recursive", "markdown", "semantic", "maxmin"])
def test_no_cut_falls_inside_a_code_fence_that_fits_in_a_chunk(strategy):
    from corpus.ingest.chunk_fences import fence_blocks
    from corpus.ingest.parse.markup import markdown_headings as find

    fence = fence_blocks(FENCED)[0]
    size = count_tokens(FENCED[fence.start:fence.end]) + 2
    spans = chunk_text(FENCED, ChunkingConfig(strategy, size), headings=find(FENCED)[0], embed=fake_embed)
    assert_partition(FENCED, spans, size)
    assert len(spans) > 1
    assert not [s.start for s in spans if fence.start < s.start < fence.end]


def test_a_fence_longer_than_a_chunk_is_cut_between_lines_and_each_piece_is_code_again():
    from corpus.ingest.chunk_fences import fence_blocks, refenced

    size = 24
    spans = chunk_text(FENCED, ChunkingConfig("recursive", size))
    fence = fence_blocks(FENCED)[0]
    inside = [s for s in spans if fence.start < s.start < fence.end]
    assert inside and all(FENCED[s.start - 1] == "\n" for s in inside)  # between lines
    pieces = [refenced(FENCED, s.start, s.end) for s in spans]
    assert "".join(FENCED[s.start:s.end] for s in spans) == FENCED  # the chunks themselves are unchanged
    for piece in pieces:
        blocks = fence_blocks(piece)
        assert all(b.end <= len(piece) and piece[b.start:b.end].rstrip().endswith("```") for b in blocks)
    summary = next(p for p in pieces if "Summary:" in p)
    assert not any(b.start < summary.index("Summary:") < b.end for b in fence_blocks(summary))  # prose, not code


def test_refenced_reopens_and_closes_a_cut_fence():
    from corpus.ingest.chunk_fences import refenced

    cut = FENCED.index("Result:")
    assert refenced(FENCED, 0, cut).endswith("logger.debug()     transport target\n```\n")
    assert refenced(FENCED, cut, len(FENCED)).startswith("```text\nResult:\n")
    assert refenced(FENCED, 0, len(FENCED)) == FENCED
    unclosed = "Text.\n\n~~~\ncode\n\nmore code"
    assert refenced(unclosed, unclosed.index("more"), len(unclosed)) == "~~~\nmore code"


def test_recursive_balances_a_tiny_last_chunk():
    text = " ".join(["cat"] * 49)  # 49 one-token words: greedy filling would give 48 + 1
    spans = chunk_text(text, ChunkingConfig("recursive", 48))
    counts = [count_tokens(text[s.start:s.end]) for s in spans]
    assert sorted(counts) == [24, 25]
    assert_partition(text, spans, 48)


TOPICS = ("Cats purr and cats nap. Cats chase mice. Cats purr again. "
          "Rockets launch into orbit. Rockets burn fuel. Rockets reach orbit fast.")


@pytest.mark.parametrize("strategy,threshold", [("semantic", 0.3), ("semantic_percentile", 0.8), ("maxmin", 0.2)])
def test_semantic_strategies_break_where_the_topic_changes(strategy, threshold):
    spans = chunk_text(TOPICS, ChunkingConfig(strategy, 60, threshold=threshold), embed=fake_embed)
    assert_partition(TOPICS, spans, 60)
    assert TOPICS.index("Rockets") in [s.start for s in spans]


def test_semantic_threshold_zero_keeps_similar_text_together_within_size():
    text = "Cats purr. Cats nap. Cats purr. Cats nap."
    spans = chunk_text(text, ChunkingConfig("semantic", 60, threshold=0.0), embed=fake_embed)
    assert spans == [Span(0, len(text))]


def test_semantic_enforces_size():
    text = " ".join(["Cats purr and nap all day long."] * 30)
    spans = chunk_text(text, ChunkingConfig("semantic", 20, threshold=0.0), embed=fake_embed)
    assert len(spans) > 1
    assert_partition(text, spans, 20)


@pytest.mark.parametrize("strategy", SEMANTIC)
def test_semantic_chunks_reach_a_minimum_size_even_when_nothing_is_similar(strategy):
    text = " ".join(f"Word{i} here." for i in range(40))  # every sentence has its own words

    def orthogonal(texts):
        return np.eye(len(texts), dtype=np.float32)

    spans = chunk_text(text, ChunkingConfig(strategy, 80, threshold=0.9), embed=orthogonal)
    counts = [count_tokens(text[s.start:s.end]) for s in spans]
    assert len(counts) > 1 and all(c >= 80 // 8 for c in counts[:-1]), counts
    assert_partition(text, spans, 80)


def test_semantic_with_the_real_model():
    from corpus.ingest.embed import embed_texts

    text = ("The recipe needs flour, butter and sugar. Bake the cake for forty minutes in a hot oven. "
            "Let the cake cool before slicing it.\n\n"
            "The database stores rows in tables. An index speeds up queries on a column. "
            "Transactions keep the rows consistent.")
    spans = chunk_text(text, ChunkingConfig("semantic", 100, threshold=0.2), embed=embed_texts)
    assert_partition(text, spans, 100)
    assert text.index("The database") in [s.start for s in spans]


# --- heading paths ---

def _enclosing(headings, offset):
    # The definition, one offset at a time: walk the headings in order, keeping the open ones.
    stack = []
    for heading in sorted(headings, key=lambda h: h.start):
        if heading.start > offset:
            break
        while stack and stack[-1].level >= heading.level:
            stack.pop()
        stack.append(heading)
    return [heading.title for heading in stack]


def test_heading_paths_at_offsets():
    headings = [Heading(0, 1, "Guide"), Heading(10, 2, "Install"), Heading(20, 3, "Linux"),
                Heading(30, 2, "Use"), Heading(40, 1, "Appendix")]
    assert heading_paths(headings, [45, 0, 25, 30]) == [["Appendix"], ["Guide"], ["Guide", "Install", "Linux"],
                                                        ["Guide", "Use"]]
    assert heading_paths([], [5]) == [[]]
    assert heading_paths([Heading(10, 1, "Late")], [5]) == [[]]


@given(levels=st.lists(st.integers(0, 4), max_size=12), offsets=st.lists(st.integers(0, 130), max_size=12))
def test_heading_paths_agree_with_the_definition(levels, offsets):
    headings = [Heading(10 * i + 3, level, f"H{i}") for i, level in enumerate(levels)]
    assert heading_paths(headings, offsets) == [_enclosing(headings, o) for o in offsets]


# --- a long document (speed is measured by scripts, not asserted here) ---

def test_long_document_partitions_for_every_fast_strategy():
    paragraph = ("Django's ORM maps models to tables; querysets are lazy. Each field type validates input, "
                 "e.g. EmailField checks addresses.\n")
    sections = [f"Section {i}\n{'=' * (8 + len(str(i)))}\n\n" + paragraph * 14 + "\n" for i in range(150)]
    text = "".join(sections)
    assert len(text) > 250_000
    from corpus.ingest.parse.markup import rst_headings

    headings = rst_headings(text)
    assert len(headings) == 150
    for strategy in ("fixed", "recursive", "markdown"):
        spans = chunk_text(text, ChunkingConfig(strategy, 200), headings=headings)
        assert "".join(text[s.start:s.end] for s in spans) == text
        assert max(s.end - s.start for s in spans) < 2000
    markdown_starts = {s.start for s in chunk_text(text, ChunkingConfig("markdown", 200), headings=headings)}
    assert {h.start for h in headings} <= markdown_starts


@pytest.mark.parametrize(("text", "size", "overlap"), [("#supercalifragilistice.g.", 4, 3),
                                                       ("==supercalifragilistic", 5, 4)])
def test_sliding_window_cut_before_a_long_word_keeps_every_character(text, size, overlap):
    """Found by hypothesis: a window shorter than the overlap made the next one start near the end."""
    spans = chunk_text(text, ChunkingConfig("sliding", size, overlap=overlap))
    assert spans[0].start == 0 and spans[-1].end == len(text)
    for previous, following in zip(spans, spans[1:], strict=False):
        assert previous.start < following.start <= previous.end


# --- the character bound and the chunk ceiling ---

def _inside_a_word(index, offset: int) -> bool:
    """Whether `offset` falls inside a word of the text's own tokenisation (only the character
    bound cuts there, where its window holds no word start or whitespace)."""
    i = int(np.searchsorted(index.starts, offset, side="right")) - 1
    if i < 0:
        return False
    return offset < index.ends[i] or (i + 1 < len(index) and index.starts[i + 1] == offset
                                      and index.words[i + 1] == index.words[i])


def assert_char_bounded_partition(text: str, spans: list[Span], size: int, max_chars: int) -> None:
    """In order, exact cover, at most max_chars each, within size; a chunk without tokens only where
    whitespace runs longer than the bound (or the whole text is whitespace). Size is counted as the
    chunker counts it, in the text's own tokenisation: a piece of a word cut by the character bound
    may tokenise into more tokens on its own ("ere.g." of "...tokenizere.g.")."""
    assert "".join(text[s.start:s.end] for s in spans) == text
    assert [s.start for s in spans[1:]] == [s.end for s in spans[:-1]]
    index = tokenize(text)
    for span in spans:
        chunk = text[span.start:span.end]
        assert 0 < len(chunk) <= max_chars, (len(chunk), chunk)
        if _inside_a_word(index, span.start) or _inside_a_word(index, span.end):
            assert index.count(span.start, span.end) <= size or len(set(index.words[
                index.first_token_at(span.start):index.first_token_at(span.end)].tolist())) <= 1
        else:
            assert count_tokens(chunk) <= size or one_word(chunk)


def test_a_word_cut_by_the_character_bound_is_counted_in_the_texts_tokens():
    """Found by hypothesis: "🙂tokenizere" is one token of the text; cut at 8 characters, its rest
    "ere.g." is 5 tokens alone but 3 of the text's."""
    text = "🙂tokenizere.g."
    spans = chunk_text(text, ChunkingConfig("fixed", 4, max_chars=8), embed=fake_embed)
    assert [text[s.start:s.end] for s in spans] == ["🙂tokeniz", "ere.g."]
    assert count_tokens("ere.g.") == 5
    assert_char_bounded_partition(text, spans, 4, 8)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=documents, size=st.integers(4, 40), max_chars=st.integers(8, 120), strategy=st.sampled_from(STRATEGIES))
def test_every_strategy_bounds_chunk_characters(text, size, max_chars, strategy):
    config = ChunkingConfig(strategy, size, max_chars=max_chars)
    spans = chunk_text(text, config, embed=fake_embed)
    if strategy == "sliding":
        assert all(0 < s.end - s.start <= max_chars for s in spans)
        assert not text or (spans[0].start == 0 and spans[-1].end == len(text))
    else:
        assert_char_bounded_partition(text, spans, size, max_chars)


@pytest.mark.parametrize("strategy", ["fixed", "recursive", "markdown", "semantic"])
def test_a_long_line_without_spaces_becomes_many_bounded_chunks(strategy):
    text = "Intro line.\n" + "x" * 2_000_000 + "\nOutro line."
    config = ChunkingConfig(strategy, 200)
    assert config.char_limit == 3200

    spans = chunk_text(text, config, embed=fake_embed)

    assert len(spans) >= 2_000_000 // 3200
    assert max(s.end - s.start for s in spans) <= 3200
    assert "".join(text[s.start:s.end] for s in spans) == text


def test_the_bound_cuts_at_whitespace_or_a_word_start_when_it_can():
    text = "alpha " * 30 + "b" * 100 + "," + "c" * 100
    spans = chunk_text(text, ChunkingConfig("fixed", 200, max_chars=100))

    pieces = [text[s.start:s.end] for s in spans]
    assert pieces[0].endswith("alpha ") and pieces[1].startswith("alpha")
    assert all(len(p) <= 100 for p in pieces) and "".join(pieces) == text
    assert ",c" not in "".join(p for p in pieces if p.startswith("b"))  # cut at the word "," or after it


def test_a_whitespace_run_longer_than_the_bound_is_split_too():
    text = "word" + " " * 500 + "next"
    spans = chunk_text(text, ChunkingConfig("recursive", 50, max_chars=100))

    assert "".join(text[s.start:s.end] for s in spans) == text
    assert max(s.end - s.start for s in spans) <= 100


def test_real_prose_is_not_cut_by_the_default_bound():
    text = "\n\n".join(f"Paragraph {i}. " + "Tomatoes need sun and water every day. " * 12 for i in range(20))
    config = ChunkingConfig("recursive", 200)
    assert chunk_text(text, config) == chunk_text(text, ChunkingConfig("recursive", 200, max_chars=10**9))


def test_too_many_chunks_is_refused_with_a_message():
    text = "word " * 1_000
    assert len(chunk_text(text, ChunkingConfig("fixed", 16), max_chunks=100)) <= 100

    with pytest.raises(Exception) as caught:
        chunk_text(text, ChunkingConfig("fixed", 16), max_chunks=10)
    assert str(caught.value) == ("The document would make more than 10 chunks, the limit per document; "
                                 "split it into smaller files.")
    assert type(caught.value).__name__ == "TooManyChunks"


def test_a_fence_that_fits_only_without_its_heading_is_cut_rather_than_overflow_the_chunk():
    from corpus.ingest.chunk_fences import fence_blocks

    text = "## Example\n\n```js\n" + "const pino = require('pino')\n" * 6 + "```\n"
    fence = fence_blocks(text)[0]
    size = count_tokens(text[fence.start:fence.end]) + 1  # the fence fits, the heading beside it does not
    spans = chunk_text(text, ChunkingConfig("markdown", size), headings=[Heading(0, 2, "Example")])
    assert_partition(text, spans, size)
    assert text[spans[0].start:spans[0].end].startswith("## Example\n\n```js\nconst pino")


def test_a_rest_underline_of_tildes_opens_no_fence():
    from corpus.ingest.chunk_fences import fence_blocks

    rest = "Options\n~~~~~~~\n\nSome text.\n\nMore\n~~~~\n\nText.\n"
    assert fence_blocks(rest) == []
    markdown = "Text.\n\n~~~\ncode\n~~~\n\nAfter a line:\n~~~\nmore code\n~~~\n"
    assert [markdown[f.start:f.end] for f in fence_blocks(markdown)] == ["~~~\ncode\n~~~\n", "~~~\nmore code\n~~~\n"]
