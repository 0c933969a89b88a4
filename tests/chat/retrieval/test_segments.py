import math

import pytest

from chat.retrieval.candidates import Candidate
from chat.retrieval.rse import PRESETS, RsePreset
from chat.retrieval.segments import RankedQuery, extract_segments
from corpus.models import Chunk
from tests.chat.factories import make_collection, make_document

pytestmark = pytest.mark.django_db

PIECES = [f"Paragraph {i:02d} of the guide, about topic {i:02d}. " for i in range(60)]  # all one length


def _candidate(chunk: Chunk, *, vector_rank=None, keyword_rank=None) -> Candidate:
    document = chunk.document
    return Candidate(chunk_id=chunk.id, document_id=document.id, collection_id=document.collection_id,
                     chunk_index=chunk.chunk_index, text=chunk.text, start=chunk.start, end=chunk.end, page=chunk.page,
                     title=document.title, source=document.source, vector_rank=vector_rank,
                     keyword_rank=keyword_rank, similarity=None, bm25=None)


@pytest.fixture
def guide():
    collection = make_collection("guides")
    return collection, make_document(collection, "guide.md", PIECES)


def _ranked(guide, *, vector_rank_of_answer):
    """Chunk 45 (the answer, relevance 0.9) in 21st place of the fused order, after twenty
    irrelevant chunks."""
    collection, document = guide
    chunks = {c.chunk_index: c for c in Chunk.objects.filter(document=document)}
    filler = [_candidate(chunks[i], keyword_rank=i // 2 + 1) for i in range(0, 40, 2)]
    answer = _candidate(chunks[45], vector_rank=vector_rank_of_answer)
    candidates = filler + [answer]
    relevance = {c.chunk_id: 0.0 for c in filler} | {answer.chunk_id: 0.9}
    return collection, document, RankedQuery(candidates, relevance)


def test_a_chunk_one_side_ranks_first_keeps_its_value_though_fusion_ranked_it_low(guide):
    collection, document, ranked = _ranked(guide, vector_rank_of_answer=1)
    segments = extract_segments([ranked], preset=PRESETS["balanced"], eligible_collections={collection.id})
    assert [(s.document_id, s.start, s.end) for s in segments] == [(document.id, 45, 46)]
    assert segments[0].text == PIECES[45]
    # 0.9 x exp(0 / 30) - 0.18 (its value at rank 0 rather than the fused place 20)
    assert segments[0].score == pytest.approx(0.72)


def test_a_chunk_ranked_low_everywhere_decays_by_its_fused_place(guide):
    collection, _, ranked = _ranked(guide, vector_rank_of_answer=30)
    # 0.9 x exp(-20 / 30) - 0.18 = 0.28, under the preset's minimum segment value 0.5
    assert extract_segments([ranked], preset=PRESETS["balanced"], eligible_collections={collection.id}) == []


def _two_hits_around_a_gap(gap_piece_length: int):
    """Chunks 0 and 4 answer (relevance 0.9, ranks 1 and 2); chunks 1-3 between them are not hits."""
    hit = "x" * 299 + " "
    gap = "y" * (gap_piece_length - 1) + " "
    collection = make_collection(f"gap{gap_piece_length}")
    document = make_document(collection, "gap.md", [hit, gap, gap, gap, hit])
    chunks = {c.chunk_index: c for c in Chunk.objects.filter(document=document)}
    candidates = [_candidate(chunks[0], vector_rank=1), _candidate(chunks[4], vector_rank=2)]
    ranked = RankedQuery(candidates, {c.chunk_id: 0.9 for c in candidates})
    return collection, document, ranked


# Low minimum value, so that both choices below are segments: the question is only which.
LENIENT = RsePreset(max_length=15, overall_max_length=30, minimum_value=0.1, irrelevant_chunk_penalty=0.18,
                    decay_rate=30)


def test_short_chunks_between_two_hits_are_worth_crossing():
    # Reference length (2 x 300 + 3 x 100) / 5 = 180: hits 0.72 and 0.69 (x 300/180), the gap
    # 3 x -0.18 (x 100/180): one segment is worth 2.05, the first hit alone 1.20.
    collection, document, ranked = _two_hits_around_a_gap(100)
    segments = extract_segments([ranked], preset=LENIENT, eligible_collections={collection.id})
    assert [(s.start, s.end) for s in segments] == [(0, 5)]
    assert segments[0].text == document.text
    assert segments[0].score == pytest.approx((0.72 + 0.9 * math.exp(-1 / 30) - 0.18) * 300 / 180 - 0.54 * 100 / 180)


def test_long_chunks_between_two_hits_split_them_into_two_segments():
    # Reference 480: crossing the 1,800-character gap is worth 0.21, less than either hit alone.
    collection, document, ranked = _two_hits_around_a_gap(600)
    segments = extract_segments([ranked], preset=LENIENT, eligible_collections={collection.id})
    assert [(s.start, s.end) for s in segments] == [(0, 1), (4, 5)]
    assert [s.char_start for s in segments] == [0, 300 + 1800]
    assert segments[0].score == pytest.approx(0.72 * 300 / 480)


def test_a_document_re_chunked_since_the_search_gives_no_segment_rather_than_other_text():
    collection, document, ranked = _two_hits_around_a_gap(100)
    old = list(Chunk.objects.filter(document=document).order_by("chunk_index"))
    Chunk.objects.filter(document=document).delete()
    Chunk.objects.bulk_create([Chunk(document=document, chunk_index=c.chunk_index, text=c.text.upper(), start=c.start,
                                     end=c.end) for c in old])
    assert extract_segments([ranked], preset=LENIENT, eligible_collections={collection.id}) == []


def _cluster(guide, *, far_hit_rank=None):
    """Hits 10-20 around the best chunk 15, relevance falling 0.05 a chunk away from it and ranked
    by that distance; with `far_hit_rank`, chunk 50 (relevance 0.9) too, at that place."""
    collection, document = guide
    chunks = {c.chunk_index: c for c in Chunk.objects.filter(document=document)}
    order = sorted(range(10, 21), key=lambda i: (abs(i - 15), i))
    if far_hit_rank is not None:
        order.insert(far_hit_rank, 50)
    candidates = [_candidate(chunks[i], vector_rank=rank) for rank, i in enumerate(order, start=1)]
    relevance = {c.chunk_id: 0.9 if c.chunk_index == 50 else 0.9 - 0.05 * abs(c.chunk_index - 15)
                 for c in candidates}
    return collection, RankedQuery(candidates, relevance)


def test_a_budget_trims_a_segment_around_its_best_chunk(guide):
    collection, ranked = _cluster(guide)
    balanced = PRESETS["balanced"]
    [whole] = extract_segments([ranked], preset=balanced, eligible_collections={collection.id})
    assert (whole.start, whole.end) == (10, 21)
    piece = len(PIECES[0])
    [fitted] = extract_segments([ranked], preset=balanced, eligible_collections={collection.id}, max_chars=3 * piece)
    assert (fitted.start, fitted.end) == (14, 17)
    assert fitted.text == "".join(PIECES[14:17])
    # Its score is what is left of the segment's value: the three chunks' values.
    assert fitted.score == pytest.approx(sum((0.9 - 0.05 * abs(i - 15)) * math.exp(-rank / 30) - 0.18
                                             for i, rank in ((15, 0), (14, 1), (16, 2))))


def test_a_budget_keeps_a_later_segment_a_long_first_one_would_crowd_out(guide):
    collection, ranked = _cluster(guide, far_hit_rank=1)
    balanced = PRESETS["balanced"]
    piece = len(PIECES[0])
    whole = extract_segments([ranked], preset=balanced, eligible_collections={collection.id})
    assert [(s.start, s.end) for s in whole] == [(10, 21), (50, 51)]
    # Cut at five chunks, the whole context would be the first segment's first five chunks. Told
    # the budget, RSE keeps the far hit and the four best chunks of the cluster (chunk 17, ranked
    # after 13, goes before it).
    fitted = extract_segments([ranked], preset=balanced, eligible_collections={collection.id}, max_chars=5 * piece)
    assert [(s.start, s.end) for s in fitted] == [(13, 17), (50, 51)]
    assert sum(len(s.text) for s in fitted) == 5 * piece


def test_a_budget_rse_leaves_room_in_is_filled_with_the_top_hits_it_left_out(guide):
    # Chunk 45 is worth a segment; chunks 30, 46 and 5, ranked 2-4 but of low relevance, are not.
    collection, document = guide
    chunks = {c.chunk_index: c for c in Chunk.objects.filter(document=document)}
    candidates = [_candidate(chunks[i], vector_rank=rank) for rank, i in enumerate((45, 30, 46, 5), start=1)]
    relevance = {c.chunk_id: 0.9 if c.chunk_index == 45 else 0.1 for c in candidates}
    ranked = RankedQuery(candidates, relevance)
    balanced, piece = PRESETS["balanced"], len(PIECES[0])
    plain = extract_segments([ranked], preset=balanced, eligible_collections={collection.id})
    assert [(s.start, s.end) for s in plain] == [(45, 46)]
    # Given room for three chunks: the best two left out, best first. Chunk 46 adjoins the
    # segment and joins it; chunk 5 does not fit.
    filled = extract_segments([ranked], preset=balanced, eligible_collections={collection.id}, max_chars=3 * piece,
                              fill_with=candidates)
    assert [(s.start, s.end) for s in filled] == [(45, 47), (30, 31)]
    assert [s.text for s in filled] == [PIECES[45] + PIECES[46], PIECES[30]]
    assert filled[0].score == pytest.approx(plain[0].score + 0.1 * math.exp(-2 / 30) - 0.18)
    # Nothing to fill with, or no room: as before.
    assert extract_segments([ranked], preset=balanced, eligible_collections={collection.id},
                            max_chars=3 * piece) == plain
    assert extract_segments([ranked], preset=balanced, eligible_collections={collection.id}, max_chars=piece,
                            fill_with=candidates) == plain


def test_filling_a_budget_skips_collections_rse_does_not_segment(guide):
    collection, document = guide
    other = make_collection("sliding-notes")
    note = make_document(other, "note.md", ["A note in a collection of overlapping chunks. "])
    chunks = {c.chunk_index: c for c in Chunk.objects.filter(document=document)}
    candidates = [_candidate(chunks[45], vector_rank=1), _candidate(Chunk.objects.get(document=note), vector_rank=2)]
    ranked = RankedQuery(candidates, {candidates[0].chunk_id: 0.9, candidates[1].chunk_id: 0.9})
    filled = extract_segments([ranked], preset=PRESETS["balanced"], eligible_collections={collection.id},
                              max_chars=10_000, fill_with=candidates)
    assert [(s.document_id, s.start, s.end) for s in filled] == [(document.id, 45, 46)]


def test_a_top_hit_rse_left_out_competes_with_the_segments_ends_for_the_budget(guide):
    # Chunks 10-14 make a segment (relevance 0.6, fused places 0-4, chunk 12 first); chunk 40
    # (relevance 0.68, place 5) is worth 0.68 x exp(-5 / 30) - 0.18 = 0.396: something, but less
    # than a segment's minimum of 0.5, so RSE leaves it out.
    collection, document = guide
    chunks = {c.chunk_index: c for c in Chunk.objects.filter(document=document)}
    order = (12, 11, 13, 10, 14, 40)
    candidates = [_candidate(chunks[i], vector_rank=rank) for rank, i in enumerate(order, start=1)]
    relevance = {c.chunk_id: 0.68 if c.chunk_index == 40 else 0.6 for c in candidates}
    ranked = RankedQuery(candidates, relevance)
    balanced, piece = PRESETS["balanced"], len(PIECES[0])
    assert [(s.start, s.end) for s in extract_segments([ranked], preset=balanced,
                                                       eligible_collections={collection.id})] == [(10, 15)]
    # Room for five chunks: chunk 14 (worth 0.6 x exp(-4 / 30) - 0.18 = 0.345) gives way to chunk 40.
    fitted = extract_segments([ranked], preset=balanced, eligible_collections={collection.id}, max_chars=5 * piece,
                              fill_with=candidates)
    assert [(s.start, s.end) for s in fitted] == [(10, 14), (40, 41)]
    assert fitted[1].score == pytest.approx(0.68 * math.exp(-5 / 30) - 0.18)
    assert sum(len(s.text) for s in fitted) == 5 * piece
