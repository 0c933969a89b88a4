import pytest

from chat.retrieval.rse import PRESETS, RsePreset, SegmentRange, choose_segments
from chat.retrieval.segment_text import fetch_texts, read_segments
from chat.retrieval.types import Candidate, DocumentRef, RankedQuery
from corpus.models import Chunk
from tests.chat.factories import make_collection, make_document

pytestmark = pytest.mark.django_db

PIECES = [f"Paragraph {i:02d} of the guide, about topic {i:02d}. " for i in range(60)]  # all one length


def _candidate(chunk: Chunk, *, vector_rank=None, text=None) -> Candidate:
    document = chunk.document
    return Candidate(chunk_id=chunk.id, document_id=document.id, collection_id=document.collection_id,
                     chunk_index=chunk.chunk_index, text=text, start=chunk.start, end=chunk.end, page=chunk.page,
                     title=document.title, source=document.source, vector_rank=vector_rank, keyword_rank=None,
                     similarity=None, bm25=None)


@pytest.fixture
def guide():
    collection = make_collection("guides")
    document = make_document(collection, "guide.md", PIECES)
    return collection, document, {c.chunk_index: c for c in Chunk.objects.filter(document=document)}


def _segments(queries, collection, preset=PRESETS["balanced"], **kwargs):
    chosen = choose_segments(queries, preset=preset, eligible_collections={collection.id}, **kwargs)
    return read_segments(chosen, queries)


LENIENT = RsePreset(max_length=15, overall_max_length=30, minimum_value=0.1, irrelevant_chunk_penalty=0.18,
                    decay_rate=30)


def _two_hits_around_a_gap(gap_piece_length: int):
    """Chunks 0 and 4 answer; chunks 1-3 between them are not hits."""
    hit = "x" * 299 + " "
    gap = "y" * (gap_piece_length - 1) + " "
    collection = make_collection(f"gap{gap_piece_length}")
    document = make_document(collection, "gap.md", [hit, gap, gap, gap, hit])
    chunks = {c.chunk_index: c for c in Chunk.objects.filter(document=document)}
    candidates = [_candidate(chunks[0], vector_rank=1), _candidate(chunks[4], vector_rank=2)]
    return collection, document, RankedQuery(candidates, {c.chunk_id: 0.9 for c in candidates})


def test_a_segment_is_its_documents_text_across_the_chunks_between_its_hits():
    collection, document, ranked = _two_hits_around_a_gap(100)
    [segment] = _segments([ranked], collection, LENIENT)
    assert segment.document == DocumentRef(document.id, "gap.md", "gap.md")
    assert (segment.start, segment.end, segment.char_start, segment.char_end) == (0, 5, 0, len(document.text))
    assert segment.text == document.text
    assert segment.score == choose_segments([ranked], preset=LENIENT, eligible_collections={collection.id})[0].score


def test_segments_of_one_document_have_their_own_text_and_offsets():
    collection, document, ranked = _two_hits_around_a_gap(600)
    segments = _segments([ranked], collection, LENIENT)
    assert [(s.start, s.end) for s in segments] == [(0, 1), (4, 5)]
    assert [s.char_start for s in segments] == [0, 300 + 1800]
    assert [s.text for s in segments] == [document.text[s.char_start:s.char_end] for s in segments]


def test_a_document_re_chunked_since_the_search_gives_no_segment_rather_than_other_text():
    collection, document, ranked = _two_hits_around_a_gap(100)
    old = list(Chunk.objects.filter(document=document).order_by("chunk_index"))
    Chunk.objects.filter(document=document).delete()
    Chunk.objects.bulk_create([Chunk(document=document, chunk_index=c.chunk_index, text=c.text.upper(), start=c.start,
                                     end=c.end) for c in old])
    assert _segments([ranked], collection, LENIENT) == []


def test_the_returned_chunks_text_comes_in_the_segments_query(guide, django_assert_num_queries):
    collection, document, chunks = guide
    hits = [_candidate(chunks[i], vector_rank=rank) for rank, i in enumerate((14, 15, 16, 40), start=1)]
    ranked = RankedQuery(hits, {c.chunk_id: 0.9 for c in hits})
    chosen = [SegmentRange(document.id, 14, 17, 2.0)]
    with django_assert_num_queries(1):
        [segment] = read_segments(chosen, [ranked], texts_for=hits)
    assert segment.text == "".join(PIECES[14:17])
    assert [c.text for c in hits] == [PIECES[14], PIECES[15], PIECES[16], PIECES[40]]


def test_fetch_texts_fills_what_is_missing_and_leaves_a_deleted_chunk_without(guide, django_assert_num_queries):
    collection, document, chunks = guide
    known = _candidate(chunks[1], text="kept as it is")
    missing = [_candidate(chunks[2]), _candidate(chunks[3])]
    chunks[3].delete()
    with django_assert_num_queries(1):
        fetch_texts([known, *missing])
    assert [known.text, missing[0].text, missing[1].text] == ["kept as it is", PIECES[2], None]
    with django_assert_num_queries(0):
        fetch_texts([known])
