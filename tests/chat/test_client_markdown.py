"""chat.client_markdown: the answer's Markdown for /v1 clients stays inert however a CommonMark
renderer that passes raw HTML through (markdown-it, html=True) reads it, keeps what the chat page
shows (text, [n], https links, code), and streams to the same text token by token."""

import random

import pytest
from bs4 import BeautifulSoup
from markdown_it import MarkdownIt

from chat.client_markdown import client_markdown, client_markdown_stream
from tests.chat.test_markdown import HOSTILE

RENDERER = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
LIVE_TAGS = {"script", "iframe", "img", "object", "embed", "style", "svg", "math", "meta", "base", "form",
             "input", "noscript", "template", "textarea", "video", "audio", "link"}
TRICKS = [
    "<scr<b>ipt>alert(1)</script>",
    "[x](jav&#x61;script:alert(1)) [y](JAVASCRIPT:alert(1)) [z](<javascript:alert(1)>)",
    "[ref]: javascript:alert(1)\n\n[click][ref]\n\n> [q]: javascript:alert(2)\n\n[c][q]",
    "<javascript:alert(1)> <https://ok.example>",
    "- a\n  ```\n  x\n\nparagraph <img src=x onerror=alert(2)>\n```",
    "```\na\n```x\n```\n<img src=x onerror=alert(1)>\n```\n",
    "<b>```</b>\ntext\n```\n<img src=x onerror=alert(1)>\n```",
    "`a\n<div onmouseover=alert(1)>`",
    "``<img src=x onerror=alert(1)>`",
    "<img src=x alt='`' onerror=alert(1)>`",
    "![a [b] c](https://evil.example/p.png) ![1](https://evil.example/p.png) ![1][r]\n\n[r]: https://evil.example/p",
    "~~~\nfine\n~~~~\n<img src=x onerror=alert(1)>",
    "<div\nonmouseover=alert(1)>x</div>",
    "`<script>`alert(1)`</script>`",
]


def assert_inert(markdown: str) -> None:
    soup = BeautifulSoup(RENDERER.render(markdown), "html.parser")
    for tag in soup.find_all(True):
        assert tag.name not in LIVE_TAGS, (markdown, str(tag)[:200])
        for name, value in tag.attrs.items():
            assert not name.lower().startswith("on") and name.lower() != "style", (markdown, str(tag)[:200])
            if name in ("href", "src"):
                assert value.startswith(("https:", "http:", "mailto:", "/", "#")) or ":" not in value, (markdown, value)


@pytest.mark.parametrize("payload", HOSTILE + TRICKS)
def test_hostile_markdown_is_inert_when_a_client_renders_it(payload):
    assert_inert(client_markdown(f"Tomatoes need water [1]. {payload} And sun [2].\n\n{payload}"))


def test_what_the_chat_shows_is_kept():
    text = ("The timeout is <b>thirty</b> seconds [1]. See [the guide](https://example.com/guide) and "
            "[the FAQ](/faq), put `{% csrf_token %}` inside `<form>`; a < b.\n\n"
            "```html\n<form method=\"post\">{% csrf_token %}</form>\n```\n\nGreat![2]")

    assert client_markdown(text) == text.replace("<b>thirty</b>", "thirty")


def test_scripts_go_with_their_content_and_links_stop_being_links():
    text = 'Water daily [1].<script>alert("x")</script> [click](javascript:alert(1)) ![p](https://e.example/p)'

    assert client_markdown(text) == "Water daily [1]. [click] (javascript:alert(1)) !\\[p](https://e.example/p)"


def test_streaming_gives_the_same_text_token_by_token():
    text = ("Plain words first, then <scr" "ipt>x</script> markup [1].\n\nA [link](javascript:z) and "
            "`<div>`, see ![x](https://e.example/p) ![2]\n\n```\n<b>\n\n</b>\n```\nThe end [2]:")
    rng = random.Random(3)
    for _ in range(100):
        cuts = sorted(rng.sample(range(1, len(text)), k=rng.randint(1, 20)))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        assert "".join(client_markdown_stream(pieces)) == client_markdown(text)
    for sample in (text, "Look ![a](https://e.example/p) there", "a ]: b ~~~ c"):
        for size in range(1, 6):
            pieces = [sample[i:i + size] for i in range(0, len(sample), size)]
            assert "".join(client_markdown_stream(pieces)) == client_markdown(sample), (sample, size)
    words = "The timeout is thirty seconds by default [1].".split(" ")
    streamed = list(client_markdown_stream(w + " " for w in words))
    assert streamed[:6] == ["The ", "timeout ", "is ", "thirty ", "seconds ", "by "]
    assert "".join(streamed) == " ".join(words) + " "


def test_angle_bracketed_text_is_shown_as_written_by_a_client():
    from tests.fidelity import FILES

    paragraph = next(p for p in (FILES / "notes.md").read_text().split("\n\n") if p.startswith("A shelf mark"))
    shown = BeautifulSoup(RENDERER.render(client_markdown(paragraph)), "html.parser").get_text()
    assert "written as <implementations-keywords> after" in " ".join(shown.split())
    assert "written as <implementations-keywords> after" in " ".join(
        "".join(client_markdown_stream(paragraph[i:i + 7] for i in range(0, len(paragraph), 7)))
        .replace("&lt;", "<").split())
