"""The passage view: the supporting sentence highlighted inside the cited segment, its PDF page,
Markdown kept intact, and a deleted document's page."""

import json
import re

import pytest
from django.urls import reverse

from chat.models import Message
from chat.passages import Highlight, highlighted_document
from chat.services import conversation_start
from corpus.models import Document
from tests.chat.chat_corpus import PAGES, make_collection, make_document, paged_text


def test_plain_text_shows_page_breaks_and_the_sentence_inside_the_segment():
    text, pages = paged_text(PAGES)
    document = Document(text=text, pages=pages, media_type="application/pdf", source="report.pdf")
    start = text.index("The lamp")
    highlight = Highlight(segment=(0, len(text)), support=((start, start + 46),))
    html = str(highlighted_document(document, highlight))
    assert '<mark class="passage segment">' in html
    assert '<mark class="passage support" id="passage">The lamp was converted to electricity in 1921.</mark>' in html
    assert [int(n) for n in re.findall(r'id="page-(\d+)"', html)] == [2, 3, 4]
    assert html.index('id="page-3"') < html.index('id="passage"') < html.index('id="page-4"')
    assert document.page_at(highlight.focus) == 3


def test_markdown_lists_stay_lists_around_the_highlight():
    text = "# Steps\n\nDo these things:\n\n- Install the package with pip.\n- Run the migrations once.\n\nDone.\n"
    document = Document(text=text, media_type="text/markdown", source="steps.md")
    start = text.index("Run the")
    highlight = Highlight(segment=(text.index("Do these"), text.index("Done.")),
                          support=((text.index("- Run"), start + len("Run the migrations once.")),))
    html = str(highlighted_document(document, highlight))
    assert "<li>Install the package with pip.</li>" in html
    assert '<li><mark class="passage support" id="passage">Run the migrations once.</mark></li>' in html
    assert '<div class="passage segment">' in html and "zqmk" not in html


def test_a_segment_that_cuts_a_code_block_shows_code_as_code_and_prose_as_prose():
    # A code block longer than a chunk is cut between its lines (corpus.ingest.chunk_fences): the segment
    # starts inside it, and the part before the segment ends inside it.
    text = ("## Targets\n\n```text\nMain thread   Worker thread\n\nResult:\n- logger.level is the first gate.\n```\n\n"
            "Summary:\n\n- If a target level is missing, it defaults to info.\n")
    document = Document(text=text, media_type="text/markdown", source="transports.md")
    sentence = "If a target level is missing, it defaults to info."
    highlight = Highlight(segment=(text.index("Result:"), len(text)),
                          support=((text.index("- If"), text.index(sentence) + len(sentence)),))
    html = str(highlighted_document(document, highlight))
    assert "<pre><code>Main thread   Worker thread\n</code></pre>" in html
    assert "<pre><code>Result:\n- logger.level is the first gate.\n</code></pre>" in html
    assert "<p>Summary:</p>" in html
    assert f'<li><mark class="passage support" id="passage">{sentence}</mark></li>' in html


@pytest.mark.django_db
def test_a_citation_lands_on_the_supporting_sentence_of_its_pdf_page(client, user):
    text, pages = paged_text(PAGES)
    collection = make_collection("reports", owner=user)
    parts = [text[a:b] for a, b in zip(pages, [*pages[1:], len(text)], strict=True)]
    document = make_document(collection, source="report.pdf", title="Lighthouse report", parts=parts,
                             media_type="application/pdf", pages=pages)
    message = Message.objects.create(
        conversation=conversation_start(user=user), role="assistant", content="It was converted in 1921 [1].",
        citations=[{"n": 1, "document": {"id": document.pk, "title": document.title, "source": document.source},
                    "start": 0, "end": 4, "char_start": 0, "char_end": len(text), "text": text, "page": 1}])
    client.force_login(user)
    html = client.get(reverse("chat:passage", args=[message.pk, 1])).content.decode()
    assert '<span class="page">page 3</span>' in html
    mark = re.search(r'<mark class="passage support" id="passage">(.*?)</mark>', html)
    assert mark.group(1) == "The lamp was converted to electricity in 1921."


@pytest.mark.django_db
def test_a_citation_of_a_deleted_document_says_so(client, user):
    collection = make_collection("reports", owner=user)
    document = make_document(collection, source="gone.md", title="Gone guide", parts=["Some text here.\n"])
    message = Message.objects.create(
        conversation=conversation_start(user=user), role="assistant", content="Some text [1].",
        citations=[{"n": 1, "document": {"id": document.pk, "title": "Gone guide", "source": "gone.md"},
                    "start": 0, "end": 1, "char_start": 0, "char_end": 15, "text": "Some text here.", "page": None}])
    document.delete()
    client.force_login(user)
    response = client.get(reverse("chat:passage", args=[message.pk, 1]))
    html = response.content.decode()
    assert response.status_code == 410
    assert "This document was deleted" in html and "Gone guide" in html and "Some text here." in html


@pytest.mark.django_db
def test_the_chat_says_when_nothing_answers(client, user, no_llm):
    make_document(make_collection("reports", owner=user), source="report.md", title="Lighthouse report",
                  parts=[page + "\n\n" for page in PAGES])
    client.force_login(user)
    response = client.post(reverse("chat:ask"), {"question": "Who won the football world cup in 1998?"},
                           HTTP_ACCEPT="text/event-stream")
    body = b"".join(response.streaming_content).decode()
    done = body[body.index("event: done"):]
    html = json.loads(done.split("data: ", 1)[1].split("\n", 1)[0])["html"]
    assert "Nothing in the collection “Reports” answers this question." in html
    assert "Extractive answer" not in done and "/sources/" not in done  # no unrelated passages cited


LINKED = ('Intro line.\n\nRead [the guide](http://x.test/g "Guide. The lamp was converted in 1921.") first, '
          "then the notes. The old lamp is kept in the museum.\n")


def _tags(html: str) -> list[str]:
    return re.findall(r"<[^>]*>", html)


def test_a_highlight_starting_inside_a_link_title_leaves_the_link_whole():
    document = Document(text=LINKED, media_type="text/markdown", source="lamp.md")
    # The sentence found for "The lamp was converted in 1921" starts inside the link's title.
    start = LINKED.index("The lamp was")
    end = LINKED.index("The old lamp") - 1
    html = str(highlighted_document(document, Highlight(segment=(0, len(LINKED)), support=((start, end),))))
    link = next(tag for tag in _tags(html) if tag.startswith("<a "))
    assert 'href="http://x.test/g"' in link and 'title="Guide. The lamp was converted in 1921."' in link
    assert "zqmk" not in html
    # Marks hold text only: the link's text (its title holds the sentence's start) and the
    # visible rest of the sentence, the first one the focus.
    assert re.findall(r"<mark[^>]*>(.*?)</mark>", html) == ["the guide", " first, then the notes."]
    assert '<mark class="passage support" id="passage">the guide</mark>' in html


def test_a_highlight_across_a_link_marks_each_piece_of_text():
    text = "Before.\n\nThe [lamp guide](http://x.test/g \"Title. More\") tells the story. After.\n"
    document = Document(text=text, media_type="text/markdown", source="lamp.md")
    start, end = text.index("The [lamp"), text.index(" After.")
    html = str(highlighted_document(document, Highlight(segment=(0, len(text)), support=((start, end),))))
    assert re.findall(r"<mark[^>]*>(.*?)</mark>", html) == ["The ", "lamp guide", " tells the story."]
    assert not any("<mark" in tag[1:] for tag in _tags(html))  # no mark inside a tag
    assert 'title="Title. More"' in html and html.count('id="passage"') == 1


def test_angle_bracketed_text_of_a_markdown_document_is_shown():
    from tests.fidelity import FILES

    text = (FILES / "notes.md").read_text()
    document = Document(text=text, media_type="text/markdown", source="notes.md")
    start = text.index("A shelf mark list")
    highlight = Highlight(segment=(0, len(text)), support=((start, start + 80),))
    html = str(highlighted_document(document, highlight))
    assert html.count("&lt;implementations-keywords&gt;") == 2  # the sentence and the code block
