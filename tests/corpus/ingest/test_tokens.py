"""The embedding model's tokenizer: counts, character spans, and counting between word-boundary cuts."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from corpus.ingest.tokens import count_tokens, get_tokenizer, token_spans, tokenize
from tests.corpus.text_strategies import documents


def test_count_tokens_counts_model_word_pieces_without_special_tokens():
    # The model's own tokenizer (transformers AutoTokenizer) splits this into these 18 pieces:
    # late chunk ##ing pools token em ##bed ##ding ##s ; rs ##e finds segments . unicode too !
    text = "Late chunking pools token embeddings; RSE finds segments. Ünïcödé too!"
    assert count_tokens(text) == 18
    assert count_tokens("") == 0
    assert count_tokens("   \n") == 0


def test_token_spans_are_character_offsets_of_each_token():
    text = "Hello, World  of chunks"
    spans = token_spans(text)
    assert [text[a:b] for a, b in spans] == ["Hello", ",", "World", "of", "chunks"]
    assert spans[0] == (0, 5)


def test_long_text_is_tokenised_in_pieces_exactly_like_one_pass():
    text = "\n".join(f"Line {i}: the tokenizer-counts words, e.g. naïve café {i * 7}." for i in range(2000))
    assert len(text) > 50_000
    whole = get_tokenizer().encode(text, add_special_tokens=False)
    assert token_spans(text) == whole.offsets
    assert count_tokens(text) == len(whole.ids)


def test_word_ranges_cover_each_word_once():
    index = tokenize("chunking is fun")
    assert index.word_starts.tolist() == [0, 9, 12]
    assert index.word_ends.tolist() == [8, 11, 15]
    assert index.is_word_first.tolist() == [True, False, True, True]  # "chunk", "##ing", "is", "fun"


def test_safe_cut_moves_a_cut_inside_a_word_to_its_start():
    index = tokenize("chunking is fun")
    assert index.safe_cut(4) == 0
    assert index.safe_cut(8) == 8
    assert index.safe_cut(10) == 9
    assert index.safe_cut(9) == 9


@settings(max_examples=150, deadline=None)
@given(documents, st.lists(st.integers(0, 600), max_size=6))
def test_counts_between_safe_cuts_equal_counts_of_the_substring(text, raw_cuts):
    index = tokenize(text)
    cuts = sorted({0, len(text), *(index.safe_cut(min(c, len(text))) for c in raw_cuts)})
    for a, b in zip(cuts, cuts[1:], strict=False):
        assert index.count(a, b) == count_tokens(text[a:b])


def test_a_long_line_is_tokenised_in_pieces_exactly_like_one_pass():
    text = "naïve,café-tokens(and)punctuation;" * 3_000  # 100,000 characters, no space or newline
    whole = get_tokenizer().encode(text, add_special_tokens=False)
    assert token_spans(text) == whole.offsets


def test_an_enormous_word_is_tokenised_in_bounded_pieces():
    text = "x" * 200_000  # one "word" to the tokenizer: [UNK] whole, or in pieces
    index = tokenize(text)
    lengths = (index.ends - index.starts).tolist()
    assert sum(lengths) == len(text) and max(lengths) <= 32_000
    assert index.is_word_first.all()  # every piece may start a chunk
