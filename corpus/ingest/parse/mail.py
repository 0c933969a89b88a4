"""EML (one email message): a header block (From, To, Cc, Date, Subject), the body, then each text
attachment as a section headed "Attachment: NAME"; other attachments are listed by name only.

Of a multipart/alternative body the text/plain version is read when there is one, else the
text/html one through the HTML parser (htmltext.py). The standard library parses the message
(policy.default: headers decoded, content-transfer-encodings undone); a part's decoded content
is never larger than the upload, and the text is bounded by sections.Sections. The title is the
Subject. The header fields are not stored apart from the text: Document has no metadata field yet.
"""

from __future__ import annotations

import email
from email import policy
from email.message import EmailMessage

from corpus.ingest.parse.base import Heading, ParseError
from corpus.ingest.parse.htmltext import parse_html
from corpus.ingest.parse.sections import Sections
from corpus.ingest.parse.text import decode_text

DAMAGED_MESSAGE = "The email is damaged and could not be read."
NOT_EMAIL_MESSAGE = "The file is not an email message (.eml): it has no From, To, Cc, Date or Subject header."
_HEADERS = ("From", "To", "Cc", "Date", "Subject")
_MAX_PARTS = 1_000
_READ_SUBTYPES = frozenset({"plain", "html", "markdown", "csv", "x-rst", "rst", "calendar", "enriched"})


def parse_eml(data: bytes) -> tuple[str, list[Heading], str | None]:
    """(text, one level-1 heading per text attachment, the Subject or None)."""
    try:
        message = email.message_from_bytes(data, policy=policy.default)
        if not isinstance(message, EmailMessage) or not any(message.get(name) for name in _HEADERS):
            raise ParseError(NOT_EMAIL_MESSAGE)
        sections = Sections()
        header = [f"{name}: {_one_line(message.get(name))}" for name in _HEADERS if message.get(name)]
        sections.add("\n".join(header))
        others = []
        for index, part in enumerate(_leaves(message)):
            if index >= _MAX_PARTS:
                raise ParseError(f"The email has more than {_MAX_PARTS:,} parts, over the limit.")
            name = _one_line(part.get_filename())
            attached = bool(name) or part.get_content_disposition() == "attachment"
            if part.get_content_maintype() != "text" or part.get_content_subtype() not in _READ_SUBTYPES:
                if attached or part.get_content_maintype() == "message":
                    others.append(f"{name or f'part {index + 1}'} ({part.get_content_type()})")
                continue
            if attached:
                sections.add(f"Attachment: {name or f'part {index + 1}'}", level=1)
                if not _add_part(sections, part):
                    sections.add("(empty)")
            else:
                _add_part(sections, part)  # the body, or more of it (a footer after an attachment, say)
        if others:
            sections.add("Other attachments (not read): " + ", ".join(others))
        subject = _one_line(message.get("Subject"))
    except ParseError:
        raise
    except RecursionError:
        raise ParseError("The email's parts are nested too deeply to read.") from None
    except Exception as exc:  # noqa: BLE001 - the email package signals malformed input with many exception types
        raise ParseError(DAMAGED_MESSAGE) from exc
    return sections.text(), sections.headings, subject or None


def _leaves(part: EmailMessage):
    """The parts a reader sees, in order: of a multipart/alternative only the plain-text version
    (else the HTML one, else the first); every part of other multiparts; a forwarded message
    (message/rfc822) as one part."""
    if not part.is_multipart() or part.get_content_maintype() == "message":
        yield part
        return
    children = list(part.iter_parts())
    if part.get_content_subtype() == "alternative" and children:
        types = [child.get_content_type() for child in children]
        chosen = next((children[types.index(t)] for t in ("text/plain", "text/html") if t in types), children[0])
        yield from _leaves(chosen)
        return
    for child in children:
        yield from _leaves(child)


def _add_part(sections: Sections, part: EmailMessage) -> bool:
    """Add a text part's content (HTML as its visible text); returns whether any text was added."""
    if part.get_content_subtype() == "html":
        # The bytes, not get_content(): the HTML parser honours the page's own meta charset.
        payload = part.get_payload(decode=True) or b""
        if not payload.strip():
            return False
        text, headings, _ = parse_html(payload)
        return sections.extend(text, headings)
    try:
        content = part.get_content()
    except LookupError:  # an unknown charset: judge the bytes like any text file
        content = decode_text(part.get_payload(decode=True) or b"")
    return sections.add(content)


def _one_line(value: object) -> str:
    return " ".join(str(value or "").split())
