"""The list markers of a Word document's numbered paragraphs, as Markdown writes them ("- ", "2. ").

A paragraph is a list item when it has w:numPr, of its own or through its paragraph style (and its
style's bases): "List Bullet" and "List Number" are numbered so. Its w:numId names a w:num of
numbering.xml, which names an abstract numbering whose w:lvl for the paragraph's w:ilvl gives the
format: "bullet" is "- ", a letter format "c. ", any other number format "3. " (numbers counted per
w:num and level, a level's count restarting after an item of a level above it, from w:start or a
w:lvlOverride's w:startOverride). A blank bullet (pandoc's continuation paragraphs of an item) and
the format "none" give no marker. Each level is indented four spaces: enough for Markdown to nest
it under a "- " or "10. " above. Word's own "List Bullet 2".."List Number 9" styles number at level
0 of lists of their own and are indented by their style: the N of the name gives their level.
"""

from __future__ import annotations

import re

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_VAL = f"{_W}val"
INDENT = "    "
MAX_LEVEL = 8  # w:ilvl runs 0-8
_LIST_STYLE = re.compile(r"List (?:Bullet|Number) ([2-9])")
_LETTERS = {"lowerLetter": "abcdefghijklmnopqrstuvwxyz", "upperLetter": "ABCDEFGHIJKLMNOPQRSTUVWXYZ"}


class Numbering:
    """Markers for a document's paragraphs, in document order (the counts advance as it is read)."""

    def __init__(self, numbering_element) -> None:
        self._nums: dict[str, object] = {}
        self._abstracts: dict[str, object] = {}
        if numbering_element is not None:
            self._abstracts = {a.get(f"{_W}abstractNumId"): a for a in numbering_element.iter(f"{_W}abstractNum")}
            self._nums = {n.get(f"{_W}numId"): n for n in numbering_element.iter(f"{_W}num")}
        self._levels: dict[tuple[str, int], tuple[str, str, int]] = {}  # (numId, ilvl) -> _read_level()
        self._counts: dict[str, list[int | None]] = {}

    @classmethod
    def of(cls, document) -> Numbering:
        from docx.opc.constants import RELATIONSHIP_TYPE as RT

        try:
            return cls(document.part.part_related_by(RT.NUMBERING).element)
        except KeyError:  # no numbering part: numbered paragraphs are bullets
            return cls(None)

    def marker(self, paragraph) -> str:
        """The paragraph's marker with its indentation ("" when it is no list item)."""
        found = _numbering_of(paragraph)
        if found is None:
            return ""
        num_id, level = found
        kind, text, start = self._level(num_id, level)
        counts = self._counts.setdefault(num_id, [None] * (MAX_LEVEL + 1))
        number = start if counts[level] is None else counts[level] + 1
        counts[level] = number
        for deeper in range(level + 1, MAX_LEVEL + 1):
            counts[deeper] = None
        if kind == "none" or (kind == "bullet" and not text.strip()):
            return ""
        if kind == "bullet":
            sign = "-"
        elif kind in _LETTERS and 1 <= number <= 26:
            sign = _LETTERS[kind][number - 1] + "."
        else:
            sign = f"{number}."
        return INDENT * level + sign + " "

    def _level(self, num_id: str, level: int) -> tuple[str, str, int]:
        """(numFmt, lvlText, start) of a list level; a bullet when numbering.xml does not say."""
        key = (num_id, level)
        if key not in self._levels:
            self._levels[key] = self._read_level(num_id, level)
        return self._levels[key]

    def _read_level(self, num_id: str, level: int) -> tuple[str, str, int]:
        num = self._nums.get(num_id)
        if num is None:
            return "bullet", "-", 1
        start = None
        definition = None
        for override in num.iter(f"{_W}lvlOverride"):
            if _int(override.get(f"{_W}ilvl")) == level:
                start = _int(_val(override.find(f"{_W}startOverride")))
                definition = override.find(f"{_W}lvl")
        if definition is None:
            abstract = self._abstracts.get(_val(num.find(f"{_W}abstractNumId")))
            if abstract is not None:
                definition = next((lvl for lvl in abstract.iter(f"{_W}lvl")
                                   if (_int(lvl.get(f"{_W}ilvl")) or 0) == level), None)
        if definition is None:
            return "bullet", "-", start or 1
        kind = _val(definition.find(f"{_W}numFmt")) or "decimal"
        text = _val(definition.find(f"{_W}lvlText"))
        if start is None:
            start = _int(_val(definition.find(f"{_W}start")))
        return kind, "-" if text is None else text, 1 if start is None else start


def _numbering_of(paragraph) -> tuple[str, int] | None:
    """(numId, level) of a numbered paragraph, from its own w:numPr, else its style's (or a base
    style's); None when it is not numbered (no numId, or numId 0, which switches numbering off)."""
    num_id, level = _num_pr(paragraph._p.pPr)
    from_style = False
    style = paragraph.style if num_id is None else None
    seen = 0
    while num_id is None and style is not None and seen < 10:  # base styles could loop
        style_id, style_level = _num_pr(style.element.pPr)
        if style_id is not None:
            num_id, from_style = style_id, True
            level = level if level is not None else style_level
        style, seen = style.base_style, seen + 1
    if num_id is None or num_id == "0":
        return None
    if level is None and from_style:
        match = _LIST_STYLE.fullmatch(paragraph.style.name or "")
        level = int(match.group(1)) - 1 if match else 0
    return num_id, max(0, min(MAX_LEVEL, level or 0))


def _num_pr(ppr) -> tuple[str | None, int | None]:
    numbering = ppr.find(f"{_W}numPr") if ppr is not None else None
    if numbering is None:
        return None, None
    return _val(numbering.find(f"{_W}numId")), _int(_val(numbering.find(f"{_W}ilvl")))


def _val(element) -> str | None:
    return element.get(_VAL) if element is not None else None


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
