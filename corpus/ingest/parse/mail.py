"""EML (one email message): a header block (From, To, Cc, Date, Subject), the body, then each text
attachment as a section headed "Attachment: NAME"; other attachments are listed by name only.

The body is the text/plain part when there is one, else the text/html part read by the HTML
parser (htmltext.py). The standard library parses the message (policy.default: headers decoded,
content-transfer-encodings undone); a part's decoded content is never larger than the upload,
and the text is bounded by sections.Sections. The title is the Subject. The header fields are
not stored apart from the text: Document has no metadata field yet.
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
_MAX_ATTACHMENTS = 1_000


def parse_eml(data: bytes) -> tuple[str, list[Heading], str | None]:
    """(text, one level-1 heading per text attachment, the Subject or None)."""
    try:
        message = email.message_from_bytes(data, policy=policy.default)
        if not isinstance(message, EmailMessage) or not any(message.get(name) for name in _HEADERS):
            raise ParseError(NOT_EMAIL_MESSAGE)
        sections = Sections()
        header = [f"{name}: {_one_line(message.get(name))}" for name in _HEADERS if message.get(name)]
        sections.add("\n".join(header))
        body = message.get_body(preferencelist=("plain", "html"))
        if body is not None:
            _add_part(sections, body)
        others = []
        for index, part in enumerate(message.iter_attachments()):
            if index >= _MAX_ATTACHMENTS:
                raise ParseError(f"The email has more than {_MAX_ATTACHMENTS:,} attachments, over the limit.")
            name = _one_line(part.get_filename()) or f"attachment {index + 1}"
            if part.get_content_maintype() == "multipart":
                continue  # a container of parts (get_body has looked inside for the body), not a file
            if part.get_content_maintype() == "text":
                sections.add(f"Attachment: {name}", level=1)
                if not _add_part(sections, part):
                    sections.add("(empty)")
            else:
                others.append(f"{name} ({part.get_content_type()})")
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
