import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chat.retrieval.rse import (
    PRESETS,
    RsePreset,
    adjust_for_length,
    best_segments,
    choose_segments,
    chunk_value,
    fit_to_budget,
)
from chat.retrieval.types import Candidate, RankedQuery


def test_seed_example_gives_segment_two_to_three():
    values = [[[-0.2, -0.2, 0.4, 0.8, -0.1]]]
    [segment] = best_segments(values, max_length=20, overall_max_length=30, minimum_value=0.7)
    assert (segment.document, segment.start, segment.end) == (0, 2, 4)
    assert segment.score == pytest.approx(1.2)


def test_irrelevant_chunk_between_relevant_ones_is_included():
    values = [[[0.5, -0.1, 0.6, -0.2, -0.2]]]
    [segment] = best_segments(values, max_length=10, overall_max_length=10, minimum_value=0.1)
    assert (segment.start, segment.end) == (0, 3)
    assert segment.score == pytest.approx(1.0)


def test_segments_never_cross_documents():
    # Concatenated, [0.5, 0.5] + [0.5, 0.5] would be one segment worth 2.0; split by documents
    # it is two segments of 1.0, best first then the other.
    values = [[[-0.2, 0.5, 0.5], [0.5, 0.6, -0.2]]]
    segments = best_segments(values, max_length=10, overall_max_length=10, minimum_value=0.1)
    assert [(s.document, s.start, s.end) for s in segments] == [(1, 0, 2), (0, 1, 3)]
    assert [s.score for s in segments] == pytest.approx([1.1, 1.0])


def test_max_length_and_overall_budget_are_respected():
    values = [[[0.3] * 6]]
    segments = best_segments(values, max_length=2, overall_max_length=5, minimum_value=0.1)
    # Three picks of at most 2 chunks; the third must fit the remaining budget of 1 chunk.
    assert [(s.start, s.end) for s in segments] == [(0, 2), (2, 4), (4, 5)]
    assert sum(s.end - s.start for s in segments) == 5


def test_minimum_value_stops_weak_segments():
    values = [[[0.9, -0.2, -0.2, 0.3]]]
    segments = best_segments(values, max_length=5, overall_max_length=10, minimum_value=0.5)
    assert [(s.start, s.end) for s in segments] == [(0, 1)]


def test_several_queries_take_turns():
    # Query 0 loves document 0, query 1 loves document 1; round-robin gives each its best early.
    values = [
        [[0.9, 0.9], [0.2, -0.2]],
        [[-0.2, -0.2], [0.8, -0.2]],
    ]
    segments = best_segments(values, max_length=5, overall_max_length=10, minimum_value=0.5)
    assert [(s.query, s.document, s.start, s.end) for s in segments] == [(0, 0, 0, 2), (1, 1, 0, 1)]


def test_chunk_value_decays_with_rank_and_subtracts_penalty():
    assert chunk_value(0.8, 0, penalty=0.2, decay_rate=30) == pytest.approx(0.6)
    assert chunk_value(0.8, 30, penalty=0.2, decay_rate=30) == pytest.approx(0.8 * math.exp(-1) - 0.2)
    assert chunk_value(0.9, None, penalty=0.18, decay_rate=30) == pytest.approx(-0.18)


def test_length_adjustment_scales_values():
    assert adjust_for_length([0.5, -0.2], [1400, 350], 700) == pytest.approx([1.0, -0.1])
    with pytest.raises(ValueError):
        adjust_for_length([0.1], [10], 0)


def test_presets_match_design():
    p = PRESETS["balanced"]
    assert (p.max_length, p.overall_max_length, p.minimum_value, p.irrelevant_chunk_penalty, p.decay_rate) == (
        15, 30, 0.5, 0.18, 30)
    p = PRESETS["find_all"]
    assert (p.max_length, p.overall_max_length, p.minimum_value, p.irrelevant_chunk_penalty, p.decay_rate) == (
        40, 200, 0.4, 0.18, 200)
    p = PRESETS["precision"]
    assert (p.minimum_value, p.irrelevant_chunk_penalty) == (0.7, 0.2)


def _reference_best_segments(values, *, max_length, overall_max_length, minimum_value):
    """The greedy pick without caching: every document rescanned on every pick."""
    from chat.retrieval.rse import _EPSILON, SegmentChoice, _best_in_document

    prefixes = [[[sum(doc[:i]) for i in range(len(doc) + 1)] for doc in per_query] for per_query in values]
    taken = [[] for _ in values[0]]
    chosen, used, exhausted, query = [], 0, set(), 0
    while used < overall_max_length and len(exhausted) < len(values):
        while query in exhausted:
            query = (query + 1) % len(values)
        best = None
        for d in range(len(values[0])):
            found = _best_in_document(values[query][d], prefixes[query][d], taken[d], max_length,
                                      overall_max_length - used)
            if found is not None and (best is None or found[0] > best.score + _EPSILON):
                best = SegmentChoice(document=d, start=found[1], end=found[2], score=found[0], query=query)
        if best is None or best.score < minimum_value:
            exhausted.add(query)
        else:
            chosen.append(best)
            taken[best.document].append((best.start, best.end))
            used += best.end - best.start
        query = (query + 1) % len(values)
    return chosen


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 3).flatmap(lambda n_queries: st.lists(st.integers(0, 12), min_size=1, max_size=4).flatmap(
    lambda sizes: st.lists(st.tuples(*[st.lists(st.floats(-0.5, 1.0), min_size=n, max_size=n) for n in sizes]),
                           min_size=n_queries, max_size=n_queries))),
       st.integers(1, 6), st.integers(1, 20), st.floats(0.0, 1.5))
def test_best_segments_matches_the_uncached_greedy_pick(values, max_length, overall_max_length, minimum_value):
    values = [list(map(list, per_query)) for per_query in values]
    kwargs = {"max_length": max_length, "overall_max_length": overall_max_length, "minimum_value": minimum_value}
    assert best_segments(values, **kwargs) == _reference_best_segments(values, **kwargs)


def test_a_context_within_budget_is_left_whole():
    assert fit_to_budget([[0.5, -0.1, 0.4], [0.9]], [[100, 100, 100], [100]], 400) == [(0, 3), (0, 1)]


def test_segments_lose_their_least_valuable_ends_first():
    # 500 characters for 300: the 0.1 head goes, then the 0.2 tail of the second segment (the
    # 0.5 tail of the first is worth more); the first segment keeps its best chunk, 0.8.
    values = [[0.1, 0.8, 0.5], [0.9, 0.2]]
    lengths = [[100, 100, 100], [100, 100]]
    assert fit_to_budget(values, lengths, 300) == [(1, 3), (0, 1)]


def test_an_end_left_on_an_irrelevant_chunk_is_trimmed_too():
    # Trimming the 0.3 head leaves the segment starting on a -0.2 gap chunk: that goes as well.
    assert fit_to_budget([[0.3, -0.2, 0.9]], [[100, 100, 100]], 250) == [(2, 3)]


def test_a_segment_can_be_dropped_whole():
    first, second = fit_to_budget([[0.9], [0.1]], [[100], [100]], 150)
    assert first == (0, 1)
    assert second[0] == second[1]


def test_value_is_weighed_per_character():
    # 0.4 over 400 characters is worth less per character than 0.3 over 100.
    first, second = fit_to_budget([[0.4], [0.3]], [[400], [100]], 450)
    assert first[0] == first[1]
    assert second == (0, 1)


def test_fit_to_budget_rejects_mismatched_shapes_and_a_negative_budget():
    with pytest.raises(ValueError, match="same shape"):
        fit_to_budget([[0.1, 0.2]], [[100]], 100)
    with pytest.raises(ValueError, match="negative"):
        fit_to_budget([[0.1]], [[100]], -1)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.tuples(st.floats(-1, 1), st.integers(1, 500)), min_size=1, max_size=8), max_size=5),
       st.integers(0, 3000))
def test_fitted_segments_fit_and_stay_inside_their_segment(segments, budget):
    values = [[v for v, _ in seg] for seg in segments]
    lengths = [[n for _, n in seg] for seg in segments]
    spans = fit_to_budget(values, lengths, budget)
    assert len(spans) == len(segments)
    assert sum(sum(n[a:b]) for n, (a, b) in zip(lengths, spans, strict=True)) <= max(budget, 0)
    for v, (a, b) in zip(values, spans, strict=True):
        assert 0 <= a <= b <= len(v)
        assert a == b or (v[a] > 0 and v[b - 1] > 0)


# choose_segments: RSE over a search's ranked candidates, no database.

PIECE = 44  # characters of each chunk of the guide below


def _hit(index: int, *, vector_rank=None, keyword_rank=None, document_id=1, collection_id=1, start=None,
         end=None) -> Candidate:
    start = index * PIECE if start is None else start
    return Candidate(chunk_id=document_id * 1000 + index, document_id=document_id, collection_id=collection_id,
                     chunk_index=index, text=None, start=start, end=start + PIECE if end is None else end, page=None,
                     title="guide.md", source="guide.md", vector_rank=vector_rank, keyword_rank=keyword_rank,
                     similarity=None, bm25=None)


def _ranges(queries, preset=PRESETS["balanced"], **kwargs):
    return [(r.start, r.end) for r in choose_segments(queries, preset=preset, eligible_collections={1}, **kwargs)]


def _fused_low(*, vector_rank_of_answer):
    """Chunk 45 (the answer, relevance 0.9) in 21st place of the fused order, after twenty
    irrelevant chunks."""
    filler = [_hit(i, keyword_rank=i // 2 + 1) for i in range(0, 40, 2)]
    answer = _hit(45, vector_rank=vector_rank_of_answer)
    return RankedQuery(filler + [answer], {c.chunk_id: 0.0 for c in filler} | {answer.chunk_id: 0.9})


def test_a_chunk_one_side_ranks_first_keeps_its_value_though_fusion_ranked_it_low():
    [chosen] = choose_segments([_fused_low(vector_rank_of_answer=1)], preset=PRESETS["balanced"],
                               eligible_collections={1})
    assert (chosen.document_id, chosen.start, chosen.end) == (1, 45, 46)
    # 0.9 x exp(0 / 30) - 0.18 (its value at rank 0 rather than the fused place 20)
    assert chosen.score == pytest.approx(0.72)


def test_a_chunk_ranked_low_everywhere_decays_by_its_fused_place():
    # 0.9 x exp(-20 / 30) - 0.18 = 0.28, under the preset's minimum segment value 0.5
    assert _ranges([_fused_low(vector_rank_of_answer=30)]) == []


def _two_hits_around_a_gap(gap_piece_length: int) -> RankedQuery:
    """Chunks 0 and 4 (300 characters each) answer (relevance 0.9, ranks 1 and 2); the three
    chunks between them are not hits."""
    far = 300 + 3 * gap_piece_length
    hits = [_hit(0, vector_rank=1, start=0, end=300), _hit(4, vector_rank=2, start=far, end=far + 300)]
    return RankedQuery(hits, {c.chunk_id: 0.9 for c in hits})


# Low minimum value, so that both choices below are segments: the question is only which.
LENIENT = RsePreset(max_length=15, overall_max_length=30, minimum_value=0.1, irrelevant_chunk_penalty=0.18,
                    decay_rate=30)


def test_short_chunks_between_two_hits_are_worth_crossing():
    # Reference length (2 x 300 + 3 x 100) / 5 = 180: hits 0.72 and 0.69 (x 300/180), the gap
    # 3 x -0.18 (x 100/180): one segment is worth 2.05, the first hit alone 1.20.
    [chosen] = choose_segments([_two_hits_around_a_gap(100)], preset=LENIENT, eligible_collections={1})
    assert (chosen.start, chosen.end) == (0, 5)
    assert chosen.score == pytest.approx((0.72 + 0.9 * math.exp(-1 / 30) - 0.18) * 300 / 180 - 0.54 * 100 / 180)


def test_long_chunks_between_two_hits_split_them_into_two_segments():
    # Reference 480: crossing the 1,800-character gap is worth 0.21, less than either hit alone.
    chosen = choose_segments([_two_hits_around_a_gap(600)], preset=LENIENT, eligible_collections={1})
    assert [(r.start, r.end) for r in chosen] == [(0, 1), (4, 5)]
    assert chosen[0].score == pytest.approx(0.72 * 300 / 480)


def _cluster(*, far_hit_rank=None):
    """Hits 10-20 around the best chunk 15, relevance falling 0.05 a chunk away from it and ranked
    by that distance; with `far_hit_rank`, chunk 50 (relevance 0.9) too, at that place."""
    order = sorted(range(10, 21), key=lambda i: (abs(i - 15), i))
    if far_hit_rank is not None:
        order.insert(far_hit_rank, 50)
    hits = [_hit(i, vector_rank=rank) for rank, i in enumerate(order, start=1)]
    return RankedQuery(hits, {c.chunk_id: 0.9 if c.chunk_index == 50 else 0.9 - 0.05 * abs(c.chunk_index - 15)
                              for c in hits})


def test_a_budget_trims_a_segment_around_its_best_chunk():
    ranked = _cluster()
    assert _ranges([ranked]) == [(10, 21)]
    [fitted] = choose_segments([ranked], preset=PRESETS["balanced"], eligible_collections={1}, max_chars=3 * PIECE)
    assert (fitted.start, fitted.end) == (14, 17)
    # Its score is what is left of the segment's value: the three chunks' values.
    assert fitted.score == pytest.approx(sum((0.9 - 0.05 * abs(i - 15)) * math.exp(-rank / 30) - 0.18
                                             for i, rank in ((15, 0), (14, 1), (16, 2))))


def test_a_budget_keeps_a_later_segment_a_long_first_one_would_crowd_out():
    ranked = _cluster(far_hit_rank=1)
    assert _ranges([ranked]) == [(10, 21), (50, 51)]
    # Cut at five chunks, the whole context would be the first segment's first five chunks. Told
    # the budget, RSE keeps the far hit and the four best chunks of the cluster (chunk 17, ranked
    # after 13, goes before it).
    assert _ranges([ranked], max_chars=5 * PIECE) == [(13, 17), (50, 51)]


def test_a_budget_rse_leaves_room_in_is_filled_with_the_top_hits_it_left_out():
    # Chunk 45 is worth a segment; chunks 30, 46 and 5, ranked 2-4 but of low relevance, are not.
    hits = [_hit(i, vector_rank=rank) for rank, i in enumerate((45, 30, 46, 5), start=1)]
    ranked = RankedQuery(hits, {c.chunk_id: 0.9 if c.chunk_index == 45 else 0.1 for c in hits})
    [plain] = choose_segments([ranked], preset=PRESETS["balanced"], eligible_collections={1})
    assert (plain.start, plain.end) == (45, 46)
    # Given room for three chunks: the best two left out, best first. Chunk 46 adjoins the
    # segment and joins it; chunk 5 does not fit.
    filled = choose_segments([ranked], preset=PRESETS["balanced"], eligible_collections={1}, max_chars=3 * PIECE,
                             fill_with=hits)
    assert [(r.start, r.end) for r in filled] == [(45, 47), (30, 31)]
    assert filled[0].score == pytest.approx(plain.score + 0.1 * math.exp(-2 / 30) - 0.18)
    # Nothing to fill with, or no room: as before.
    assert _ranges([ranked], max_chars=3 * PIECE) == [(45, 46)]
    assert _ranges([ranked], max_chars=PIECE, fill_with=hits) == [(45, 46)]


def test_filling_a_budget_skips_collections_rse_does_not_segment():
    hits = [_hit(45, vector_rank=1), _hit(0, vector_rank=2, document_id=2, collection_id=2)]
    ranked = RankedQuery(hits, {c.chunk_id: 0.9 for c in hits})
    filled = choose_segments([ranked], preset=PRESETS["balanced"], eligible_collections={1}, max_chars=10_000,
                             fill_with=hits)
    assert [(r.document_id, r.start, r.end) for r in filled] == [(1, 45, 46)]


def test_a_top_hit_rse_left_out_competes_with_the_segments_ends_for_the_budget():
    # Chunks 10-14 make a segment (relevance 0.6, fused places 0-4, chunk 12 first); chunk 40
    # (relevance 0.68, place 5) is worth 0.68 x exp(-5 / 30) - 0.18 = 0.396: something, but less
    # than a segment's minimum of 0.5, so RSE leaves it out.
    hits = [_hit(i, vector_rank=rank) for rank, i in enumerate((12, 11, 13, 10, 14, 40), start=1)]
    ranked = RankedQuery(hits, {c.chunk_id: 0.68 if c.chunk_index == 40 else 0.6 for c in hits})
    assert _ranges([ranked]) == [(10, 15)]
    # Room for five chunks: chunk 14 (worth 0.6 x exp(-4 / 30) - 0.18 = 0.345) gives way to chunk 40.
    fitted = choose_segments([ranked], preset=PRESETS["balanced"], eligible_collections={1}, max_chars=5 * PIECE,
                             fill_with=hits)
    assert [(r.start, r.end) for r in fitted] == [(10, 14), (40, 41)]
    assert fitted[1].score == pytest.approx(0.68 * math.exp(-5 / 30) - 0.18)
