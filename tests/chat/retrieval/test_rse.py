import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chat.retrieval.rse import PRESETS, adjust_for_length, best_segments, chunk_value, fit_to_budget


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
