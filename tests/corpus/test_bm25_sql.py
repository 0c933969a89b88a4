"""corpus/bm25.sql is today's BM25: the migrated database runs exactly its functions and triggers, and the
newest migration that applies it applied this very text."""

from __future__ import annotations

import hashlib
import importlib
import re
from pathlib import Path

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
BM25_SQL = ROOT / "corpus" / "bm25.sql"
MIGRATIONS = ROOT / "corpus" / "migrations"


def definitions() -> dict[str, str]:
    """Every function and trigger of the project's own (extensions' aside), as Postgres prints it."""
    with connection.cursor() as cursor:
        cursor.execute("""
            SELECT 'function ' || p.proname, pg_get_functiondef(p.oid)
            FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
            WHERE n.nspname = 'public'
              AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')
            UNION ALL
            SELECT 'trigger ' || tgname, pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal""")
        return dict(cursor.fetchall())


def defined_in_file() -> set[str]:
    text = BM25_SQL.read_text()
    return ({f"function {name}" for name in re.findall(r"^CREATE OR REPLACE FUNCTION (\w+)", text, re.M)}
            | {f"trigger {name}" for name in re.findall(r"^CREATE OR REPLACE TRIGGER (\w+)", text, re.M)})


@pytest.mark.django_db
def test_the_database_runs_exactly_the_file():
    before = definitions()
    assert set(before) == defined_in_file()  # nothing defined elsewhere, nothing in the file missing
    with connection.cursor() as cursor:
        cursor.execute(BM25_SQL.read_text())
    assert definitions() == before  # applying the file changes nothing: it is what the migrations left


def test_the_newest_migration_that_applies_the_file_applied_this_text():
    applying = sorted(path.stem for path in MIGRATIONS.glob("0*.py") if "APPLIES_SHA256" in path.read_text())
    assert applying, "no migration applies corpus/bm25.sql"
    newest = importlib.import_module(f"corpus.migrations.{applying[-1]}")
    assert newest.APPLIES_SHA256 == hashlib.sha256(BM25_SQL.read_bytes()).hexdigest(), (
        "corpus/bm25.sql changed: add a migration that applies it again (see corpus/migrations/0021)")
