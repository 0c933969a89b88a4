"""Static files under a running server. WhiteNoise reads the files' list and sizes at start; with
DEBUG (WhiteNoise's autorefresh follows it) it looks again on each request, so a file edited under a
running `make run` is served whole. Without DEBUG it is served with the size read at start, cut short:
README ("DEBUG") says to restart, or to run with DEBUG=1 while editing static files."""

from django.http import HttpResponse
from django.test import RequestFactory
from whitenoise.middleware import WhiteNoiseMiddleware


def _get(middleware, path: str) -> tuple[int, bytes]:
    """(Content-Length, body): an HTTP client reads only Content-Length bytes of the body."""
    response = middleware(RequestFactory().get(path))
    return int(response["Content-Length"]), b"".join(response.streaming_content)


def _middleware():
    return WhiteNoiseMiddleware(lambda request: HttpResponse("not static", status=404))


def test_with_debug_a_static_file_edited_under_the_server_is_served_whole(settings, tmp_path):
    settings.DEBUG = True
    settings.STATICFILES_DIRS = [tmp_path]
    (tmp_path / "site.css").write_text("a{}")
    middleware = _middleware()
    assert _get(middleware, "/static/site.css") == (3, b"a{}")
    (tmp_path / "site.css").write_text("a{color:red}")
    assert _get(middleware, "/static/site.css") == (12, b"a{color:red}")


def test_without_debug_the_size_read_at_start_is_kept_as_the_readme_says(settings, tmp_path):
    settings.DEBUG = False
    settings.STATICFILES_DIRS = [tmp_path]
    (tmp_path / "site.css").write_text("a{}")
    middleware = _middleware()
    (tmp_path / "site.css").write_text("a{color:red}")
    length, _ = _get(middleware, "/static/site.css")
    assert length == 3  # of 12 bytes: why README asks for a restart, or DEBUG=1
