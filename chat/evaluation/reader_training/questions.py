"""Questions made by rules from a document's units, each with the unit that answers it.

The rules are chosen for precision, not breadth: a question is made only where the unit's form says
what it answers ("timeout: How long to wait ..." answers "What does the timeout parameter of send
do?"; "To disable retries, pass ..." answers "How do I disable retries?"). The answer's siblings
(other units of the same section and document) are the near-topic negatives: on the subject, not
answering. Questions about a term the document does not define ("What does the `backoff` parameter
of send do?" where send has none) make near-topic unanswerable questions: every unit is a negative.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from chat.evaluation.reader_training.corpus import Doc


@dataclass(frozen=True)
class Question:
    text: str
    section: int  # index of the section holding the answer, -1 when nothing answers
    unit: int  # index of the answering unit in that section, -1 when nothing answers
    key: str  # words whose presence in another unit makes it a possible answer too ("" for none)


_IMPERATIVE = re.compile(
    r"^(Return|Returns|Compute|Computes|Calculate|Create|Creates|Build|Builds|Get|Gets|Set|Sets|Convert|Converts|"
    r"Load|Loads|Save|Saves|Read|Reads|Write|Writes|Parse|Parses|Check|Checks|Test|Tests|Find|Finds|Generate|"
    r"Generates|Draw|Draws|Remove|Removes|Add|Adds|Apply|Applies|Make|Makes|Open|Opens|Close|Closes|Send|Sends|"
    r"Encode|Encodes|Decode|Decodes|Format|Formats|Estimate|Estimates|Evaluate|Evaluates|Solve|Solves|"
    r"Determine|Determines|Register|Registers|Update|Updates|Validate|Validates|Copy|Copies|Split|Splits|"
    r"Join|Joins|Sort|Sorts|Fit|Fits|Transform|Transforms|Plot|Plots|Print|Prints|Construct|Constructs|"
    r"Initialize|Initializes|Initialise|Initialises)\s+(.{8,110}?)\.?$")
_TO_DO = re.compile(r"^To ([a-z][^,]{6,90}), (.{10,})$")
_DEFINES = re.compile(r"^(?:An? |The )?([A-Za-z`][\w`.\- ]{1,40}?) (is|are) (?:an?|the) (.{8,})$")
_DEFAULTS_TO = re.compile(r"^(?:The |By default,? )?([A-Za-z`][\w`.\- ]{2,40}?) defaults? to (.{2,})$")
_DEFAULT_IS = re.compile(r"\b[Tt]he default (?:value )?(?:of |for )?([\w`.\- ]{2,40}?) is (.{2,})$")
_IF = re.compile(r"^If ([^,]{8,90}), (.{10,})$")
_USED = re.compile(r"^(?:The |An? )?([A-Za-z`][\w`.\- ]{2,40}?) (?:is|are) used (?:to|for) (.{8,})$")
_VERSION = re.compile(r"^(New in|Changed in|Deprecated since) version (\S+?)[.:]")
_PRONOUN = re.compile(r"^(This|That|These|Those|It|They|Such|Here|There|Then|Which|Otherwise)\b", re.I)
_DEFAULT_IN_DEFINITION = re.compile(r"\b(?:[Dd]efaults? (?:is |to |value is )?|[Bb]y default,? )")


def _short(name: str) -> str:
    """numpy.linalg.norm -> linalg.norm; a method keeps its class: Session.request."""
    parts = name.split(".")
    return ".".join(parts[-2:]) if len(parts) > 2 and parts[-2][:1].isupper() else parts[-1]


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


def _term_words(term: str) -> str:
    return term.strip("*` ")


def questions_for(doc: Doc, rng: random.Random, other_terms: list[str]) -> list[Question]:
    """Questions about `doc` with their answers; `other_terms` (terms other documents define) make
    the questions about terms this one does not define."""
    found: list[Question] = []
    name = _short(doc.name)
    defined = {t for s in doc.sections for t in s.terms if t}
    for si, section in enumerate(doc.sections):
        for ui, (unit, term) in enumerate(zip(section.units, section.terms, strict=True)):
            found += _unit_questions(name, doc.function, si, ui, unit, term, first=(si == 0 and ui == 0), rng=rng)
    # Near-topic unanswerable: a term of another document, asked about here.
    all_text = " ".join(u.lower() for s in doc.sections for u in s.units)
    if defined and other_terms:
        for _ in range(2):
            term = rng.choice(other_terms)
            if term and term not in defined and term.lower() not in all_text and len(term) > 2:
                found.append(Question(rng.choice(_TERM_TEMPLATES).format(t=term, f=name), -1, -1, ""))
    return found


_TERM_TEMPLATES = [
    "What does the {t} parameter of {f} do?", "What is {t} in {f}?", "What is the {t} argument of {f} for?",
    "How does {t} change what {f} does?", "What does {t} mean for {f}?", "What should I pass as {t} to {f}?",
]
_DEFAULT_TEMPLATES = ["What is the default {t} of {f}?", "What does {t} default to in {f}?",
                      "What is {t} set to by default in {f}?", "Which value does {f} use for {t} by default?"]


def _unit_questions(name: str, function: bool, si: int, ui: int, unit: str, term: str, *, first: bool,
                    rng: random.Random) -> list[Question]:
    out: list[Question] = []
    if term == "returns":
        out.append(Question(rng.choice([f"What does {name} return?", f"What do I get back from {name}?",
                                        f"What is the return value of {name}?"]), si, ui, ""))
        return out
    if term.startswith("Raises"):
        exc = term.split(" ", 1)[1] if " " in term else ""
        if exc:
            out.append(Question(rng.choice([f"When does {name} raise {exc}?", f"Why would {name} raise {exc}?"]),
                                si, ui, exc))
        return out
    if term:
        t = _term_words(term)
        out.append(Question(rng.choice(_TERM_TEMPLATES).format(t=t, f=name), si, ui, t))
        if _DEFAULT_IN_DEFINITION.search(unit):
            out.append(Question(rng.choice(_DEFAULT_TEMPLATES).format(t=t, f=name), si, ui, t))
        return out
    if _PRONOUN.match(unit):
        return out  # it needs the sentence before it to be understood: no question of its own
    if first and function:
        match = _IMPERATIVE.match(unit)
        if match:
            what = _lower_first(match.group(2))
            verb = match.group(1).rstrip("s") if match.group(1).endswith("s") and match.group(1) != "Process" else \
                match.group(1)
            verb = {"Applie": "Apply", "Copie": "Copy"}.get(verb, verb).lower()
            out.append(Question(rng.choice([f"What does {name} do?", f"How do I {verb} {what}?",
                                            f"Which function can {verb} {what}?"]), si, ui, ""))
            return out
        out.append(Question(rng.choice([f"What does {name} do?", f"What is {name} for?"]), si, ui, ""))
        return out
    if match := _VERSION.match(unit):
        kind, version = match.groups()
        text = {"New in": f"In which version was {name} added?",
                "Changed in": f"What changed in {name} in version {version}?",
                "Deprecated since": f"Since which version is {name} deprecated?"}[kind]
        return [Question(text, si, ui, version)]
    if match := _TO_DO.match(unit):
        return [Question(f"How do I {match.group(1)}?", si, ui, "")]
    if match := _DEFAULTS_TO.match(unit):
        return [Question(f"What does {match.group(1)} default to?", si, ui, match.group(1))]
    if match := _DEFAULT_IS.search(unit):
        return [Question(f"What is the default {match.group(1)}?", si, ui, match.group(1))]
    if match := _USED.match(unit):
        return [Question(f"What is {match.group(1)} used for?", si, ui, match.group(1))]
    if match := _IF.match(unit):
        return [Question(f"What happens if {_lower_first(match.group(1))}?", si, ui, "")]
    if (match := _DEFINES.match(unit)) and len(match.group(1).split()) <= 4:
        subject = match.group(1)
        if subject.lower() not in {"this", "it", "there", "which", "that", "result", "output", "default"}:
            return [Question(f"What {match.group(2)} {subject}?", si, ui, subject)]
    return out
