import pytest

from chat.retrieval.fusion import convex_scores, fuse_convex, fuse_rrf, round_robin, rrf_scores


def test_rrf_scores_are_sums_of_reciprocal_ranks():
    scores = rrf_scores([["a", "b", "c"], ["c", "a"]], k=60)
    assert scores["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert scores["b"] == pytest.approx(1 / 62)
    assert scores["c"] == pytest.approx(1 / 63 + 1 / 61)


def test_fuse_rrf_orders_by_score_and_weights_each_side():
    # Weighted: the second list counts double, so its first item wins.
    fused = fuse_rrf([["a", "b"], ["b", "c"]], weights=[1.0, 2.0], k=60)
    assert [item for item, _ in fused] == ["b", "c", "a"]
    assert fused[0][1] == pytest.approx(1 / 62 + 2 / 61)


def test_fuse_rrf_breaks_ties_by_tie_break_then_item():
    # a and b each have rank 1 on one side: equal scores.
    assert [i for i, _ in fuse_rrf([["a"], ["b"]], tie_break={"b": 0.9, "a": 0.1})] == ["b", "a"]
    assert [i for i, _ in fuse_rrf([["b"], ["a"]])] == ["a", "b"]


def test_fuse_rrf_rejects_mismatched_weights_and_bad_k():
    with pytest.raises(ValueError):
        fuse_rrf([["a"], ["b"]], weights=[1.0])
    with pytest.raises(ValueError):
        fuse_rrf([["a"]], k=0)


def test_zero_weight_side_does_not_contribute():
    fused = dict(fuse_rrf([["a"], ["b"]], weights=[1.0, 0.0]))
    assert fused["b"] == 0.0 and fused["a"] == pytest.approx(1 / 61)


def test_round_robin_gives_each_list_its_first_item_first():
    merged = round_robin([["a", "b", "c"], ["c", "d"]], k=60)
    assert [i for i, _ in merged][:2] == ["a", "c"]
    assert [i for i, _ in merged] == ["a", "c", "b", "d"]
    assert dict(merged)["c"] == pytest.approx(1 / 61)


def test_convex_scores_are_weighted_min_max_normalised_scores():
    similarity = {"a": 0.80, "b": 0.60, "c": 0.40}
    bm25 = {"a": 0.0, "b": 6.0, "c": 3.0}
    scores = convex_scores([similarity, bm25], weights=[1.0, 1.0])
    # a: 0.5 x 1 + 0.5 x 0; b: 0.5 x 0.5 + 0.5 x 1; c: 0.5 x 0 + 0.5 x 0.5
    assert scores == pytest.approx({"a": 0.5, "b": 0.75, "c": 0.25})
    weighted = convex_scores([similarity, bm25], weights=[3.0, 1.0])  # 0.75 / 0.25
    assert weighted == pytest.approx({"a": 0.75, "b": 0.625, "c": 0.125})


def test_convex_keeps_a_clear_first_place_that_rrf_buries():
    # "lone" is far closer to the query than anything else but has no query word; the others sit
    # on both sides. RRF with 60 candidates a side ranks any chunk on both lists above a first
    # place on one; the convex combination keeps the margin.
    others = [f"c{i}" for i in range(11)]
    similarity = {"lone": 0.90, **{c: 0.50 - i * 0.01 for i, c in enumerate(others)}}
    bm25 = {"lone": 0.0, **{c: 5.0 - i * 0.45 for i, c in enumerate(others)}}
    by_vector = sorted(similarity, key=lambda c: -similarity[c])
    by_keyword = [c for c in sorted(bm25, key=lambda c: -bm25[c]) if bm25[c] > 0] + [f"x{i}" for i in range(49)]
    rrf = [i for i, _ in fuse_rrf([by_vector, by_keyword])]
    assert rrf.index("lone") == 11  # after all eleven chunks that both sides found
    convex = fuse_convex([similarity, bm25])
    # c_i scores 0.5 x (0.2 - 0.02 i) + 0.5 x (1 - 0.09 i); lone 0.5 x 1 + 0.5 x 0
    assert [i for i, _ in convex][:3] == ["c0", "c1", "lone"]
    assert dict(convex)["lone"] == pytest.approx(0.5)


def test_convex_side_with_equal_scores_keeps_the_order_and_missing_items_count_as_minimum():
    # A tied side cannot order: it adds the same to every item (its full weight when positive).
    scores = convex_scores([{"a": 0.9, "b": 0.5}, {"a": 2.0, "b": 2.0}])
    assert scores == pytest.approx({"a": 1.0, "b": 0.5})
    no_term = convex_scores([{"a": 0.9, "b": 0.5}, {"a": 0.0, "b": 0.0}])
    assert no_term == pytest.approx({"a": 0.5, "b": 0.0})
    partial = convex_scores([{"a": 0.9, "b": 0.5}, {"b": 4.0, "c": 2.0}])
    assert partial["a"] == pytest.approx(0.5 * 1.0 + 0.5 * 0.0)
    assert partial["c"] == pytest.approx(0.5 * 0.0 + 0.5 * 0.0)  # b's, the side's minimum
    assert partial["b"] == pytest.approx(0.5 * 0.0 + 0.5 * 1.0)


def test_convex_lone_candidate_scores_as_the_best_not_as_worthless():
    # One candidate: min-max has nothing to compare it with; it is each side's best.
    assert convex_scores([{"a": 0.42}, {"a": 3.1}], weights=[0.7, 0.3]) == pytest.approx({"a": 1.0})
    # ...found by meaning only (no query term): the vector side's share.
    assert convex_scores([{"a": 0.42}, {"a": 0.0}], weights=[0.7, 0.3]) == pytest.approx({"a": 0.7})


def test_convex_ties_go_to_tie_break_and_bad_weights_are_refused():
    assert [i for i, _ in fuse_convex([{"a": 1.0, "b": 0.0}, {"a": 0.0, "b": 1.0}], tie_break={"b": 0.9})] == ["b", "a"]
    with pytest.raises(ValueError):
        convex_scores([{"a": 1.0}], weights=[1.0, 1.0])
    with pytest.raises(ValueError):
        convex_scores([{"a": 1.0}, {"a": 2.0}], weights=[0.0, 0.0])
    with pytest.raises(ValueError):
        convex_scores([{"a": 1.0}, {"a": 2.0}], weights=[-1.0, 2.0])
