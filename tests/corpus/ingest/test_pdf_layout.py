"""Running headers, footers and page numbers dropped from PDF page texts; headings set apart."""

from __future__ import annotations

from corpus.ingest.parse.pdf_layout import clean_pages

WORDS = "settings log file event failure request service start line trace".split()


def body(number: int) -> str:
    return (f"The service reads its {WORDS[number % 10]} when it starts and writes what it does to the log,\n"
            f"one {WORDS[(number + 3) % 10]} per event, so that a failure can be traced back to its cause.")



def page(number: int, text: str = "", *, header: str = "Relay Manual · Version 3.1     Chapter 2") -> str:
    footer = f"Relay 3.1               2024-05-0{number % 9 + 1}               Page {number} of 9"
    return f"{header}\n{text or body(number)}\n{footer}"


def test_lines_repeated_at_the_top_and_bottom_of_most_pages_are_dropped():
    pages = [page(n) for n in range(1, 10)]
    cleaned = clean_pages(pages)
    assert cleaned.pages == [body(n) for n in range(1, 10)]
    assert cleaned.running_lines == 18


def test_a_line_on_every_page_that_is_all_the_text_stays():
    # The hostile PDF of 2,000 pages of one line each ended "no extractable text": all of it read as a header.
    cleaned = clean_pages(["Page text about gardens."] * 2000)
    assert cleaned.pages == ["Page text about gardens."] * 2000 and cleaned.running_lines == 0
    # ... while the same line over pages with text of their own is still a running header.
    assert clean_pages([f"Page text about gardens.\n{body(n)}" for n in range(9)]).running_lines == 9


def test_a_short_last_page_loses_its_header_and_footer_too():
    pages = [page(n) for n in range(1, 9)] + [page(9, "The end.")]
    assert clean_pages(pages).pages[-1] == "The end."


def test_a_bare_page_number_and_alternating_headers_are_dropped():
    pages = [f"{'Relay Manual' if n % 2 else 'Chapter 2: Settings'}\n{body(n)}\n{n}" for n in range(1, 9)]
    assert clean_pages(pages).pages == [body(n) for n in range(1, 9)]


def test_a_short_chapters_header_is_known_by_its_page_numbers():
    pages = [f"Chapter 4: Logging {n + 20}\n{body(n)}" for n in range(2)] + [page(n) for n in range(3, 9)]
    assert clean_pages(pages).pages[:2] == [body(0), body(1)]


def test_a_number_inside_a_line_is_no_page_number():
    pages = [f"Section {n + 1} overview\n{body(n)}" for n in range(2)]
    assert clean_pages(pages).running_lines == 0


def test_text_that_only_looks_alike_stays():
    # Too few pages to tell a running header, and body lines repeated mid-page.
    pages = [f"Installing\n{body(n)}\nSee the notes." for n in range(2)]
    cleaned = clean_pages(pages)
    assert cleaned.running_lines == 0
    assert all(text.startswith("Installing\n\nThe service") and text.endswith("See the notes.")
               for text in cleaned.pages)
    middle = [f"On {WORDS[n]}\n{body(n)}\nSee the notes.\n{body(n + 1)}\n{body(n + 2)}\nThe {WORDS[n]} ends."
              for n in range(5)]
    cleaned = clean_pages(middle)
    assert cleaned.running_lines == 0 and all("\nSee the notes.\n" in text for text in cleaned.pages)


MANUAL_PAGE = """\
The SIZE constraints are allowed, but no check is done on them at all in this version of the library.
2.2 Naming
Consider this definition of a type that holds two values, written in the notation of the standard:
the first value is an integer and the second one a boolean, and both must be given.
It is not the last line
of its paragraph because the line above it is short.
• UTF8String
• VisibleString
-v, --verbose
Print every step to the terminal while the command runs, as well as to the log file it writes."""


def test_a_short_title_line_is_set_apart_from_its_paragraph():
    text = clean_pages([MANUAL_PAGE]).pages[0]
    assert "at all in this version of the library.\n\n2.2 Naming\n\nConsider this definition" in text
    assert "\n\n-v, --verbose\n\nPrint every step" in text


def test_wrapped_lines_and_list_items_are_not_headings():
    text = clean_pages([MANUAL_PAGE]).pages[0]
    # A wrapped line goes on the next line (lower case); a short last line follows a full one.
    assert "the notation of the standard:\nthe first value" in text
    assert "It is not the last line\nof its paragraph" in text
    assert "• UTF8String\n• VisibleString\n" in text
    assert clean_pages([MANUAL_PAGE]).headings == 2
