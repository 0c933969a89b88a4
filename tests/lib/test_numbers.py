"""lib.numbers.parse_int: the one way to read an integer someone sent."""

import pytest

from lib.numbers import BIGINT_MAX, parse_int
from tests.ragweb.test_settings import load


@pytest.mark.parametrize("text, expected", [
    ("0", 0), ("7", 7), ("0042", 42), (str(BIGINT_MAX), BIGINT_MAX),
    ("²", None), ("①", None), ("١٢", None), ("1_000", None), (" 7", None), ("-1", None), ("+1", None),
    ("", None), (None, None), ("1.0", None), (str(BIGINT_MAX + 1), None), ("9" * 5000, None),
])
def test_only_ascii_digits_within_a_bigint_are_numbers(text, expected):
    assert parse_int(text) == expected


def test_bounds_are_kept():
    assert parse_int("0", minimum=1) is None
    assert parse_int("5", maximum=4) is None
    assert parse_int("4", minimum=1, maximum=4) == 4


def test_a_throttle_rate_with_a_unicode_digit_fails_loudly(tmp_path):
    out = load(tmp_path, API_THROTTLE="²/min")

    assert out.returncode != 0
    assert "ImproperlyConfigured" in out.stderr and "API_THROTTLE must look like 60/min" in out.stderr
    assert "ValueError" not in out.stderr
