import pytest

from chat.retrieval.relevance import (
    Calibration,
    beta_cdf_relevance,
    blended_relevance,
    keyword_relevance,
    sigmoid,
    similarity_relevance,
)


def test_similarity_relevance_is_monotonic_and_centred():
    cal = Calibration(similarity_center=0.4, similarity_width=0.1, keyword_weight=0.3)
    assert similarity_relevance(0.4, cal) == pytest.approx(0.5)
    assert similarity_relevance(0.1, cal) < similarity_relevance(0.3, cal) < similarity_relevance(0.7, cal)
    assert 0.0 < similarity_relevance(-1.0, cal) < 0.01 and 0.99 < similarity_relevance(1.0, cal) < 1.0
    assert similarity_relevance(None, cal) == 0.0


def test_keyword_relevance_is_share_of_idf_capped_at_one():
    assert keyword_relevance(2.0, 4.0) == pytest.approx(0.5)
    assert keyword_relevance(9.0, 4.0) == 1.0
    assert keyword_relevance(None, 4.0) == 0.0 and keyword_relevance(1.0, 0.0) == 0.0


def test_blend_weights_both_sources():
    cal = Calibration(similarity_center=0.4, similarity_width=0.1, keyword_weight=0.25)
    assert blended_relevance(0.4, 2.0, 4.0, cal) == pytest.approx(0.75 * 0.5 + 0.25 * 0.5)


def test_beta_cdf_spreads_probabilities_symmetrically():
    assert beta_cdf_relevance(0.5) == pytest.approx(0.5)
    assert beta_cdf_relevance(0.0) == 0.0 and beta_cdf_relevance(1.0) == 1.0
    # a=b=0.4 pulls values near the ends toward the middle.
    assert 0.1 < beta_cdf_relevance(0.02) < 0.2
    assert beta_cdf_relevance(0.9) == pytest.approx(1 - beta_cdf_relevance(0.1))


def test_relative_factor_halves_relevance_at_the_margin_below_the_best_match():
    cal = Calibration(similarity_center=0.4, similarity_width=0.1, similarity_margin=0.15,
                      similarity_margin_width=0.05)
    absolute = similarity_relevance(0.6, cal)
    assert similarity_relevance(0.6, cal, best_similarity=0.75) == pytest.approx(absolute * 0.5)
    # The best match itself keeps nearly all of its absolute value; a chunk far below it keeps little.
    assert similarity_relevance(0.75, cal, best_similarity=0.75) == pytest.approx(
        similarity_relevance(0.75, cal) * sigmoid(3.0))
    assert similarity_relevance(0.45, cal, best_similarity=0.75) < 0.05 * similarity_relevance(0.45, cal)
    # A poor best match stays poor: the absolute curve still applies.
    assert similarity_relevance(0.1, cal, best_similarity=0.1) < 0.1
    # Margin 0 turns the relative factor off.
    off = Calibration(similarity_center=0.4, similarity_width=0.1, similarity_margin=0.0)
    assert similarity_relevance(0.6, off, best_similarity=0.9) == pytest.approx(similarity_relevance(0.6, off))


def test_blend_passes_the_best_similarity_to_the_semantic_part():
    cal = Calibration(similarity_center=0.4, similarity_width=0.1, keyword_weight=0.25, similarity_margin=0.15,
                      similarity_margin_width=0.05)
    assert blended_relevance(0.6, 2.0, 4.0, cal, best_similarity=0.75) == pytest.approx(
        0.75 * similarity_relevance(0.6, cal) * 0.5 + 0.25 * 0.5)
