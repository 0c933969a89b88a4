"""Reading the XML parts of a ZIP container (OpenDocument, EPUB) without trusting them.

The container has been through archive.check_zip, so every part's size and element count are
bounded. What is left is what XML itself can do: a DTD can define entities that expand
exponentially ("billion laughs") or point at files and URLs. None of these formats needs a
DTD, so a part that declares one is refused, and the parser neither loads DTDs, resolves
entities nor touches the network.
"""

from __future__ import annotations

import zipfile

from lxml import etree

from corpus.ingest.parse.base import ParseError

_PARSER_OPTIONS = {"resolve_entities": False, "load_dtd": False, "no_network": True, "huge_tree": False,
                   "remove_comments": True, "remove_pis": True}


def read_part(archive: zipfile.ZipFile, name: str, damaged: str) -> bytes:
    """The bytes of the part `name`; ParseError(damaged) if it is missing or unreadable."""
    try:
        return archive.read(name)
    except KeyError:
        raise ParseError(damaged) from None


def parse_xml(data: bytes, *, what: str, damaged: str) -> etree._Element:
    """The root element of an XML part; ParseError(damaged) if it is not well-formed XML, a
    ParseError naming `what` ("The EPUB book") if it declares a DTD or entities."""
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        raise ParseError(f"{what} declares XML entities (a DTD), which no document of its kind needs; "
                         "it was not read.")
    try:
        return etree.fromstring(data, etree.XMLParser(**_PARSER_OPTIONS))
    except (etree.XMLSyntaxError, ValueError) as exc:
        raise ParseError(damaged) from exc
