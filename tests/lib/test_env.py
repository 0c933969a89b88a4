import pytest
from django.core.exceptions import ImproperlyConfigured

from lib.env import env_bool, env_float, env_int, env_list, env_url


@pytest.mark.parametrize(("raw", "expected"), [("1", True), ("true", True), ("Yes", True), ("on", True),
                                                ("0", False), ("false", False), ("no", False), ("", False)])
def test_env_bool_reads_common_spellings(raw, expected):
    assert env_bool("DEBUG", not expected, environ={"DEBUG": raw}) is expected


def test_env_bool_default_when_unset():
    assert env_bool("DEBUG", True, environ={}) is True


def test_env_bool_rejects_garbage():
    with pytest.raises(ImproperlyConfigured, match="DEBUG must be a boolean"):
        env_bool("DEBUG", False, environ={"DEBUG": "maybe"})


def test_env_int_parses_and_bounds():
    assert env_int("PORT", 1, environ={"PORT": " 8080 "}) == 8080
    with pytest.raises(ImproperlyConfigured, match="must be an integer"):
        env_int("PORT", 1, environ={"PORT": "80a"})
    with pytest.raises(ImproperlyConfigured, match="at most 65535"):
        env_int("PORT", 1, maximum=65535, environ={"PORT": "70000"})
    with pytest.raises(ImproperlyConfigured, match="at least 1"):
        env_int("PORT", 1, minimum=1, environ={"PORT": "0"})


def test_env_float_rejects_non_numbers():
    assert env_float("T", 1.0, environ={"T": "2.5"}) == 2.5
    with pytest.raises(ImproperlyConfigured, match="must be a number"):
        env_float("T", 1.0, environ={"T": "fast"})


def test_env_list_splits_and_trims():
    assert env_list("ALLOWED_HOSTS", ["x"], environ={"ALLOWED_HOSTS": "a.com, b.com,,"}) == ["a.com", "b.com"]
    assert env_list("ALLOWED_HOSTS", ["x"], environ={}) == ["x"]


def test_env_url_checks_scheme_and_host():
    url = "postgres://u:p@db:5432/ragweb"
    assert env_url("DATABASE_URL", "", schemes=("postgres",), environ={"DATABASE_URL": url}) == url
    with pytest.raises(ImproperlyConfigured, match="must be a URL starting with one of postgres://"):
        env_url("DATABASE_URL", "", schemes=("postgres",), environ={"DATABASE_URL": "mysql://db/x"})
    with pytest.raises(ImproperlyConfigured, match="has no host"):
        env_url("DATABASE_URL", "", schemes=("postgres",), environ={"DATABASE_URL": "postgres:///x"})
