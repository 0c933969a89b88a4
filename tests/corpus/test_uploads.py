from corpus.uploads import size_text, upload_error


def test_size_text_keeps_small_limits_readable():
    assert [size_text(n) for n in (0, 999, 1000, 12_345, 50_000_000)] == [
        "0 bytes", "999 bytes", "1.0 KB", "12.3 KB", "50.0 MB"]


def test_upload_error_names_the_file_for_each_rule(settings):
    settings.MAX_UPLOAD_BYTES = 10
    assert upload_error("notes.xyz", 5).startswith("notes.xyz: this file type is not supported")
    assert upload_error("empty.md", 0) == "empty.md: the file is empty."
    assert upload_error("big.md", 11) == "big.md: the file is 11 bytes; the limit is 10 bytes."
    assert upload_error("fine.md", 10) is None
