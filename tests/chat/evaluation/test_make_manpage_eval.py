import json
import re
from io import StringIO

from django.core.management import call_command

from chat.evaluation.management.commands.make_manpage_eval import (
    identifier_questions,
    manpage_documents,
    option_questions,
    page_options,
    parse_apropos,
    plain_text,
    without_description,
)
from chat.evaluation.metrics import load_items, normalise

PAGE = """GIT-CLEAN(1)                      Git Manual                      GIT-CLEAN(1)

NAME
       git-clean - Remove untracked files from the working tree

SYNOPSIS
       git clean [-d] [-f] [-i] [-n] [-q] [-e <pattern>] [-x | -X] [--] [<pathspec>...]

DESCRIPTION
       Cleans the working tree by recursively removing files that are not
       under version control, starting from the current directory.

OPTIONS
       -d
           Normally, when no <pathspec> is specified, git clean will not
           recurse into untracked directories. More follows.

       -f, --force
           If the Git configuration variable clean.requireForce is not set to
           false, git clean will refuse to delete files.

       -n, --dry-run
           Don't actually remove anything, just show what would be done.

       -q, --quiet
           Be quiet.

       -e <pattern>, --exclude=<pattern>
           Use the given exclude pattern in addition to the standard ignore
           rules.

SEE ALSO
       -f, --force
           Described a second time here, so which paragraph answers is unclear.
""" + "       Options follow. " * 20


def test_parse_apropos_keeps_pages_with_a_real_unique_description():
    lines = [
        "git-clean (1)        - Remove untracked files from the working tree.",
        "ls (1)               - list information about the files",
        "vi (1)               - Vi IMproved, a programmer's text editor",
        "vim (1)              - Vi IMproved, a programmer's text editor",
        "gcloud_x (1)         - (unknown subject)",
        "short (8)            - too short",
        "not an apropos line",
    ]
    assert parse_apropos(lines) == [
        ("git-clean", "1", "Remove untracked files from the working tree"),
        ("ls", "1", "list information about the files"),
    ]


def test_plain_text_drops_overstrike_and_colour():
    assert plain_text("N\x08NA\x08AM\x08ME\x08E \x1b[1mbold\x1b[0m _\x08u") == "NAME bold u"


def test_the_description_is_taken_out_of_the_page():
    body = without_description(PAGE, "Remove untracked files from the working tree")
    assert "untracked files from the working tree" not in body.lower()
    assert "Cleans the working tree" in body and "git clean [-d]" in body
    # Still there elsewhere: the page would answer its question by string search, so it is left out.
    repeated = PAGE + "\n  Remove untracked\n  files from the working tree\n"
    assert without_description(repeated, "Remove untracked files from the working tree") is None


def test_manpage_documents_takes_a_stable_sample_of_long_distinct_pages():
    entries = [("git-clean", "1", "Remove untracked files from the working tree"),
               ("git-clean-alias", "1", "An alias page that renders the same text"),
               ("tiny", "1", "A page far too short to keep")]
    pages = {"git-clean": PAGE, "git-clean-alias": PAGE, "tiny": "tiny(1)\n\nNAME\n  tiny - short\n"}
    docs = manpage_documents(entries, lambda name, section: pages[name], count=10, min_chars=300)
    assert len(docs) == 1  # the alias repeats git-clean's text; tiny is too short
    assert docs[0][0] in {"git-clean.1.txt", "git-clean-alias.1.txt"}
    again = manpage_documents(list(reversed(entries)), lambda name, section: pages[name], count=10, min_chars=300)
    assert again == docs  # the order is fixed by the names, not by the listing
    assert manpage_documents(entries, lambda name, section: pages[name], count=0, min_chars=300) == []


def test_command_writes_an_evaluation_set_of_this_machines_pages(tmp_path):
    out = StringIO()
    call_command("make_manpage_eval", str(tmp_path), "--count", "5", stdout=out)
    items = load_items(tmp_path / "questions.jsonl")
    assert len(items) == 5 and "5 manual pages" in out.getvalue()
    for item in items:
        text = (tmp_path / "docs" / item.source).read_text(encoding="utf-8")
        assert len(text) >= 3000 and item.question.lower() not in text.lower()
    lines = [json.loads(line) for line in (tmp_path / "questions.jsonl").read_text().splitlines()]
    assert [line["id"] for line in lines] == ["man-001", "man-002", "man-003", "man-004", "man-005"]
    for option in load_items(tmp_path / "options.jsonl"):  # each evidence phrase is in its page
        text = (tmp_path / "docs" / option.source).read_text(encoding="utf-8")
        assert normalise(option.evidence[0]) in normalise(text)
    for question in load_items(tmp_path / "identifiers.jsonl"):  # named by its source and no other page
        identifier = question.question.removeprefix("What does ").removesuffix(" do?")
        naming = [p.name for p in (tmp_path / "docs").iterdir()
                  if re.search(rf"\b{re.escape(identifier)}\b", p.read_text(encoding="utf-8"))]
        assert naming == [question.source]


def test_page_options_reads_each_option_and_the_first_words_of_its_description():
    assert page_options(PAGE) == [
        ("-d", "Normally, when no <pathspec> is specified, git clean will not recurse into"),  # 12 words
        ("--dry-run", "Don't actually remove anything, just show what would be done"),
        ("--exclude", "Use the given exclude pattern in addition to the standard ignore rules"),
    ]  # --quiet: too short a description; --force: described twice


def test_option_questions_ask_about_one_option_per_page_with_its_description_as_evidence():
    docs = [("git-clean.1.txt", PAGE, "Remove untracked files"), ("tiny.1.txt", "no options here", "Tiny page")]
    items = option_questions(docs)
    assert len(items) == 1 and items[0]["id"] == "opt-001" and items[0]["source"] == "git-clean.1.txt"
    option, evidence = next((o, e) for o, e in page_options(PAGE) if f" {o} " in items[0]["question"])
    assert items[0]["question"] == f"What does the {option} option of git-clean do?"
    assert items[0]["evidence"] == [evidence]
    assert option_questions(docs) == items  # the same choice every time
    assert option_questions(docs, min_options=4) == []


def test_identifier_questions_ask_about_an_identifier_only_one_page_names():
    docs = [
        ("dpkg.1.txt", "Set DPKG_COLORS to always. DPKG_ADMINDIR and SHARED_VAR are read too. ", "Package manager"),
        ("apt.8.txt", "APT reads SHARED_VAR and APT_CONFIG; apt_get is the command. ", "APT"),
        ("pg_dump.1.txt", "pg_dump writes a dump; pg_dump is the page's own name. ", "Dump"),
        ("x.1.txt", "A_B is too short an identifier to ask about. ", "X"),
    ]
    items = identifier_questions(docs)
    assert [item["source"] for item in items] == ["dpkg.1.txt", "apt.8.txt"]
    assert items[0]["question"] in ("What does DPKG_COLORS do?", "What does DPKG_ADMINDIR do?")
    assert items[1]["question"] in ("What does APT_CONFIG do?", "What does apt_get do?")
    assert all("SHARED_VAR" not in item["question"] for item in items)  # named by two pages
    assert all(item["kind"] == "factoid" and item["evidence"] == [] for item in items)
    assert [item["id"] for item in items] == ["ident-001", "ident-002"]
    assert identifier_questions(docs) == items  # the same choice every time
