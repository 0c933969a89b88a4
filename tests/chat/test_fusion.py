import pytest

from chat.fusion import fuse, round_robin, rrf_scores


def test_rrf_scores_are_sums_of_reciprocal_ranks():
    scores = rrf_scores([["a", "b", "c"], ["c", "a"]], k=60)
    assert scores["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert scores["b"] == pytest.approx(1 / 62)
    assert scores["c"] == pytest.approx(1 / 63 + 1 / 61)


def test_fuse_orders_by_score_and_weights_each_side():
    # Weighted: the second list counts double, so its first item wins.
    fused = fuse([["a", "b"], ["b", "c"]], weights=[1.0, 2.0], k=60)
    assert [item for item, _ in fused] == ["b", "c", "a"]
    assert fused[0][1] == pytest.approx(1 / 62 + 2 / 61)


def test_fuse_breaks_ties_by_tie_break_then_item():
    # a and b each have rank 1 on one side: equal scores.
    assert [i for i, _ in fuse([["a"], ["b"]], tie_break={"b": 0.9, "a": 0.1})] == ["b", "a"]
    assert [i for i, _ in fuse([["b"], ["a"]])] == ["a", "b"]


def test_fuse_rejects_mismatched_weights_and_bad_k():
    with pytest.raises(ValueError):
        fuse([["a"], ["b"]], weights=[1.0])
    with pytest.raises(ValueError):
        fuse([["a"]], k=0)


def test_zero_weight_side_does_not_contribute():
    fused = dict(fuse([["a"], ["b"]], weights=[1.0, 0.0]))
    assert fused["b"] == 0.0 and fused["a"] == pytest.approx(1 / 61)


def test_round_robin_gives_each_list_its_first_item_first():
    merged = round_robin([["a", "b", "c"], ["c", "d"]], k=60)
    assert [i for i, _ in merged][:2] == ["a", "c"]
    assert [i for i, _ in merged] == ["a", "c", "b", "d"]
    assert dict(merged)["c"] == pytest.approx(1 / 61)
