"""Synthetic tables for the reader's table-row questions ("Where is the rotavator kept?" answered by
the row "Item: Rotavator; Location: Shed 2; ..."). Made up here, so free of any licence: schemas
with question templates for each column, filled from small word lists.

A row is given to the reader as the answer gives it: each cell after its column's header
(reader.candidates.row_text). Unanswerable questions ask for a column the table lacks ("How much
does the rotavator cost?" of an inventory without prices) or a row it does not hold.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from reader import candidates

ITEMS = ("rotavator lawnmower hedge trimmer wheelbarrow ladder leaf blower chainsaw pressure washer drill "
         "projector whiteboard printer scanner laminator kettle microwave fridge toaster dehumidifier heater "
         "fan tent gazebo generator compressor welder sander jigsaw router spade rake hoe strimmer shredder "
         "cement mixer scaffold tower tarpaulin first aid kit fire extinguisher defibrillator megaphone "
         "camera tripod microphone speaker amplifier keyboard monitor laptop tablet router switch").split(" ")
PLACES = ["Shed 1", "Shed 2", "the garage", "the loft", "Room 4", "the basement", "the barn", "Locker B",
          "the cellar", "the workshop", "Store room", "Cabinet 3", "the office", "the van", "Bay 7", "the porch"]
FIRST = "Ada Bram Clio Dev Edda Finn Gita Hugo Ines Jonas Kira Liam Mara Nils Oona Pavel Rosa Sven Tara Umar".split()
LAST = "Okafor Lindqvist Moreau Tanaka Novak Silva Brennan Haddad Kowalski Varga Osei Laine Duarte Yilmaz".split()
TEAMS = ["Finance", "Support", "Platform", "Design", "Legal", "Sales", "Research", "Operations", "Payroll"]
EVENTS = ["board meeting", "summer fete", "quiz night", "annual audit", "open day", "hackathon", "plant sale",
          "safety drill", "book club", "AGM", "training day", "harvest supper", "charity run"]
VENUES = ["the village hall", "Room 12", "the canteen", "the library", "the park", "Hall B", "the chapel"]
MONTHS = "January February March April May June July August September October November December".split()
PACKAGES = "zlib openssl libpng curl sqlite expat libxml2 bzip2 pcre2 libffi ncurses readline gmp mpfr".split()
LICENCES = ["MIT", "BSD-3-Clause", "Apache-2.0", "GPL-2.0", "LGPL-2.1", "Zlib", "ISC", "MPL-2.0"]
HOSTS = "atlas boreas cygnus draco eris fornax grus hydra indus lyra mensa norma orion pavo".split()
SYSTEMS = ["Debian 12", "Ubuntu 24.04", "Alpine 3.20", "FreeBSD 14", "Rocky 9", "Windows Server 2022"]
PRODUCTS = ("oak desk, steel shelf, office chair, filing cabinet, standing mat, desk lamp, monitor arm, "
            "footrest, coat stand, bookcase, sofa, dining table, bar stool, bench").split(", ")
SUPPLIERS = ["Acme Ltd", "Nordwood", "Bright & Co", "Castell", "Holm Supplies", "Pixel Works", "Grainger Bros"]


def _name(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


@dataclass(frozen=True)
class Schema:
    title: str
    key: str  # the column naming a row
    columns: tuple[str, ...]  # key first
    # column -> question templates ({k}: the row's key); the key column's own: {v} another cell
    asks: dict[str, tuple[str, ...]]
    # questions for a column this table lacks
    lacking: tuple[str, ...]


SCHEMAS = [
    Schema("Equipment inventory", "Item", ("Item", "Location", "Quantity", "Condition"),
           {"Location": ("Where is the {k} kept?", "Where can I find the {k}?", "Which store holds the {k}?"),
            "Quantity": ("How many {k}s do we have?", "What quantity of {k} is there?"),
            "Condition": ("What condition is the {k} in?", "Is the {k} in good condition?")},
           ("How much did the {k} cost?", "Who bought the {k}?", "When was the {k} last serviced?")),
    Schema("Staff directory", "Name", ("Name", "Team", "Room", "Extension"),
           {"Team": ("Which team is {k} in?", "What team does {k} work for?"),
            "Room": ("Which room is {k} in?", "Where does {k} sit?"),
            "Extension": ("What is {k}'s phone extension?", "How do I call {k}?")},
           ("When did {k} join?", "What is {k}'s email address?", "Who is {k}'s manager?")),
    Schema("Events calendar", "Event", ("Event", "Date", "Venue", "Organiser"),
           {"Date": ("When is the {k}?", "What date is the {k} on?"),
            "Venue": ("Where is the {k} held?", "Where does the {k} take place?"),
            "Organiser": ("Who organises the {k}?", "Who is running the {k}?")},
           ("How much are tickets for the {k}?", "What time does the {k} start?")),
    Schema("Third-party packages", "Package", ("Package", "Version", "Licence", "Maintainer"),
           {"Version": ("Which version of {k} do we ship?", "What {k} version is used?"),
            "Licence": ("What licence is {k} under?", "Which licence does {k} use?"),
            "Maintainer": ("Who maintains {k}?", "Who looks after the {k} package?")},
           ("When was {k} last updated?", "Where is the source of {k} hosted?")),
    Schema("Servers", "Host", ("Host", "IP address", "Operating system", "Owner"),
           {"IP address": ("What is the IP address of {k}?", "Which address does {k} have?"),
            "Operating system": ("Which OS does {k} run?", "What operating system is on {k}?"),
            "Owner": ("Who owns {k}?", "Who is responsible for the {k} server?")},
           ("How much memory does {k} have?", "When does {k}'s warranty end?")),
    Schema("Price list", "Product", ("Product", "Price", "Weight", "Supplier"),
           {"Price": ("How much does the {k} cost?", "What is the price of the {k}?"),
            "Weight": ("How heavy is the {k}?", "What does the {k} weigh?"),
            "Supplier": ("Who supplies the {k}?", "Where do we buy the {k} from?")},
           ("What colour is the {k}?", "How long is the warranty on the {k}?")),
]


def _cells(schema: Schema, key: str, rng: random.Random) -> dict[str, str]:
    values = {
        "Location": lambda: rng.choice(PLACES), "Quantity": lambda: str(rng.randint(1, 40)),
        "Condition": lambda: rng.choice(["good", "worn", "needs repair", "new", "fair"]),
        "Team": lambda: rng.choice(TEAMS), "Room": lambda: f"{rng.randint(1, 4)}.{rng.randint(1, 30):02d}",
        "Extension": lambda: str(rng.randint(2000, 5999)),
        "Date": lambda: f"{rng.randint(1, 28)} {rng.choice(MONTHS)}", "Venue": lambda: rng.choice(VENUES),
        "Organiser": lambda: _name(rng),
        "Version": lambda: f"{rng.randint(0, 9)}.{rng.randint(0, 40)}.{rng.randint(0, 9)}",
        "Licence": lambda: rng.choice(LICENCES), "Maintainer": lambda: _name(rng),
        "IP address": lambda: f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
        "Operating system": lambda: rng.choice(SYSTEMS), "Owner": lambda: _name(rng),
        "Price": lambda: f"£{rng.randint(5, 900)}.{rng.choice(['00', '50', '99'])}",
        "Weight": lambda: f"{rng.randint(1, 60)} kg", "Supplier": lambda: rng.choice(SUPPLIERS),
    }
    return {schema.key: key, **{c: values[c]() for c in schema.columns[1:]}}


_KEYS = {"Item": ITEMS, "Event": EVENTS, "Package": PACKAGES, "Host": HOSTS, "Product": PRODUCTS}


def make_table(schema: Schema, rng: random.Random, rows: int = 8) -> list[dict[str, str]]:
    pool = list(_KEYS.get(schema.key, ()))
    keys = rng.sample(pool, min(rows, len(pool))) if pool else list({_name(rng) for _ in range(rows)})
    return [_cells(schema, key, rng) for key in keys]


def row_text(row: dict[str, str]) -> str:
    return candidates.row_text(list(row), list(row.values()))


@dataclass(frozen=True)
class TableQuestion:
    text: str
    heading: str
    rows: tuple[str, ...]  # row_text of every row
    answer: int  # index of the answering row, -1 when none answers


def table_questions(schema: Schema, rng: random.Random, count: int) -> list[TableQuestion]:
    """`count` questions on fresh tables of `schema`: about a cell of a row, a column the table
    lacks (unanswerable), or a row it does not hold (unanswerable)."""
    out = []
    for _ in range(count):
        table = make_table(schema, rng)
        rows = tuple(row_text(r) for r in table)
        heading = f"{schema.title} ({rng.choice(['Sheet1', 'sheet 2', 'CSV', 'Summary'])})"
        index = rng.randrange(len(table))
        key = table[index][schema.key]
        roll = rng.random()
        if roll < 0.7:
            column = rng.choice(list(schema.asks))
            out.append(TableQuestion(rng.choice(schema.asks[column]).format(k=key), heading, rows, index))
        elif roll < 0.85:
            out.append(TableQuestion(rng.choice(schema.lacking).format(k=key), heading, rows, -1))
        else:
            absent = _cells(schema, "", rng)
            missing = next((k for k in _KEYS.get(schema.key, [_name(rng)]) if k not in {r[schema.key] for r in table}),
                           None)
            if missing is None:
                continue
            del absent
            column = rng.choice(list(schema.asks))
            out.append(TableQuestion(rng.choice(schema.asks[column]).format(k=missing), heading, rows, -1))
    return out
