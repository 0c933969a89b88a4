"""What the reader reads: the text of a candidate, as training and the answer both build it.

A sentence that points back ("This is the default.", "It is ignored when ...") is not understood
alone: it is read, and quoted, together with the sentence before it. A table row is read as each
cell after its column's header.
"""

from __future__ import annotations

import re

# A sentence starting with one of these refers to what the sentence before it said.
POINTS_BACK = re.compile(r"^(This|That|These|Those|It|Its|They|Their|Them|Such|Both|Either|Neither|Otherwise|"
                         r"Here|Then|Also|However|Instead|Likewise|Similarly|In this case|In that case|"
                         r"For this reason|As a result|If so|If not)\b")
MAX_CHARS = 600  # of a candidate's text: the reader reads 128 tokens at most


def points_back(sentence: str) -> bool:
    return bool(POINTS_BACK.match(sentence.lstrip("*_`\"'“ ")))


def candidate_text(heading: str, text: str, *, before: str = "") -> str:
    """The reader's input for one candidate: `text` under its `heading`, after `before` (the
    sentence it points back to, when it does)."""
    body = f"{before} {text}" if before else text
    body = body[:MAX_CHARS]
    return f"{heading}: {body}" if heading else body


def row_text(header: list[str], cells: list[str]) -> str:
    """A table row as the reader reads it: "Item: Rotavator; Location: Shed 2; Quantity: 1"."""
    pairs = []
    for i, cell in enumerate(cells):
        name = header[i].strip() if i < len(header) and header[i].strip() else f"Column {i + 1}"
        if cell.strip():
            pairs.append(f"{name}: {cell.strip()}")
    return "; ".join(pairs)
