"""Parsing stays within bounded memory: zip bombs, PDF stream bombs, markup floods and over-long text
are refused with a message instead of taking the worker's memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from corpus.ingest.parse import ParseError, limits, parse_document
from reliability import bombs

ROOT = Path(__file__).resolve().parents[3]
FILES = ROOT / "tests" / "fixtures" / "files"

# Runs parse_document on a file in a fresh process whose address space is capped (so a parser that
# inflates a bomb fails with MemoryError instead of swapping), and reports its peak RSS.
_MEASURE = textwrap.dedent("""
    import json, resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, (3 * 1024 ** 3, 3 * 1024 ** 3))
    import django
    django.setup()
    from corpus.ingest.parse import ParseError, parse_document
    data = open(sys.argv[1], "rb").read()
    started = time.monotonic()
    try:
        document = parse_document(data, filename=sys.argv[2])
        outcome = "parsed %d characters" % len(document.text)
    except ParseError as exc:
        outcome = str(exc)
    except MemoryError:
        outcome = "MemoryError"
    # VmHWM, not ru_maxrss: ru_maxrss survives exec, so it would report the forking pytest's own size.
    peak = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith("VmHWM:"))
    print(json.dumps({"outcome": outcome, "seconds": time.monotonic() - started, "peak": peak}))
""")


def parse_in_subprocess(tmp_path: Path, data: bytes, filename: str, **env: str) -> dict:
    path = tmp_path / filename
    path.write_bytes(data)
    del data
    result = subprocess.run([sys.executable, "-c", _MEASURE, str(path), filename], cwd=ROOT, capture_output=True,
                            text=True, timeout=300,
                            env={**os.environ, "DJANGO_SETTINGS_MODULE": "ragweb.settings", **env})
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def parse_error(data: bytes, filename: str) -> str:
    with pytest.raises(ParseError) as caught:
        parse_document(data, filename=filename)
    return str(caught.value)


@pytest.fixture(scope="module")
def docx_bomb() -> bytes:
    return bombs.docx_bomb(1_100_000_000)


@pytest.mark.slow
def test_a_docx_inflating_to_a_gigabyte_fails_fast_with_bounded_memory(tmp_path, docx_bomb):
    assert len(docx_bomb) < 4 * 1024 * 1024  # a small upload...
    result = parse_in_subprocess(tmp_path, docx_bomb, "report.docx")

    assert result["outcome"] == ("The Word file unpacks to more than 100 MB, over the limit (a compressed "
                                 "'zip bomb', or a document too large to index); it was not read.")
    assert result["seconds"] < 30, result  # 0.05 s on a quiet machine
    assert result["peak"] < 400 * 1024 * 1024, result  # parsing the fixture alone peaks near 100 MB


def test_a_docx_whose_headers_understate_a_part_is_refused(settings, monkeypatch):
    monkeypatch.setattr(limits, "MAX_DECOMPRESSED_BYTES", 10_000_000)
    data = bombs.docx_lying_sizes(50_000_000)  # declares 1 KB, inflates to 50 MB

    assert parse_error(data, "report.docx") == (
        "The Word file is damaged or is not a .docx document and could not be read.")


def test_a_docx_inflating_past_the_limit_is_refused_even_if_under_it_declared(settings, monkeypatch):
    monkeypatch.setattr(limits, "MAX_DECOMPRESSED_BYTES", 2_000_000)
    data = bombs.docx_bomb(3_000_000)

    assert "The Word file unpacks to more than 1.9 MB, over the limit" in parse_error(data, "report.docx")


def test_a_docx_with_too_many_elements_is_refused(settings, monkeypatch):
    monkeypatch.setattr(limits, "MAX_MARKUP_ELEMENTS", 50_000)
    assert parse_document(bombs.docx_many_paragraphs(1_000), filename="report.docx").text

    assert parse_error(bombs.docx_many_paragraphs(60_000), filename="report.docx") == (
        "The Word file has more than 50,000 markup elements, over the limit; split it into smaller files.")


def test_html_with_too_many_elements_is_refused(settings, monkeypatch):
    monkeypatch.setattr(limits, "MAX_MARKUP_ELEMENTS", 1_000)
    page = b"<html><body>" + b"<p>x</p>" * 600 + b"</body></html>"

    assert parse_error(page, "page.html") == (
        "The HTML page has more than 1,000 markup elements, over the limit; split it into smaller files.")


def test_html_nested_100k_deep_is_parsed_safely():
    depth = 100_000
    page = b"<html><body><p>Shallow text.</p>" + b"<div>" * depth + b"deep" + b"</div>" * depth + b"</body></html>"

    assert parse_document(page, filename="deep.html").text.startswith("Shallow text.")


def test_a_pdf_stream_inflating_past_the_limit_is_refused(settings, monkeypatch):
    monkeypatch.setattr(limits, "MAX_DECOMPRESSED_BYTES", 1_000_000)

    assert parse_error(bombs.pdf_bomb(5_000_000), "bomb.pdf") == (
        "The PDF unpacks to more than 976.6 KB, over the limit (a compressed 'zip bomb', or a document too large "
        "to index); it was not read.")


@pytest.mark.slow
def test_a_pdf_keeps_one_decoded_page_at_a_time(tmp_path):
    # Eight pages of 60 MB each, under the per-stream limit: pypdf alone would keep all 480 MB.
    data = bombs.pdf_bomb(60_000_000, pages=8)
    result = parse_in_subprocess(tmp_path, data, "pages.pdf")

    assert result["outcome"].startswith("The PDF has no extractable text")
    assert result["peak"] < 300 * 1024 * 1024, result


def test_text_over_the_character_limit_is_refused(settings, monkeypatch):
    monkeypatch.setattr(limits, "MAX_DOCUMENT_CHARS", 1_000)
    assert parse_document(b"word " * 200, filename="notes.txt").text

    assert parse_error(b"word " * 201, "notes.txt") == (
        "The document's text is longer than 1,000 characters, over the limit; split it into smaller files.")


def test_pdf_and_docx_text_stop_at_the_character_limit(settings, monkeypatch):
    monkeypatch.setattr(limits, "MAX_DOCUMENT_CHARS", 40)
    pdf = bombs.pdf_text("Twenty-five characters...", pages=3)

    assert parse_error(pdf, "pages.pdf").startswith("The document's text is longer than 40 characters")
    assert parse_error((FILES / "report.docx").read_bytes(), "report.docx").startswith(
        "The document's text is longer than 40 characters")


def test_a_script_inside_a_heading_or_pre_is_not_text():
    page = (b'<html><body><h1>Garden <script>alert("h1")</script>notes</h1>'
            b'<pre>code <script>alert("pre")</script><span hidden>secret</span>here</pre></body></html>')

    document = parse_document(page, filename="page.html")

    assert "alert" not in document.text and "secret" not in document.text
    assert document.text.startswith("Garden notes")
    assert [h.title for h in document.headings] == ["Garden notes"]
