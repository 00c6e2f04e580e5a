"""The data dictionary: written from the database's comments, complete, and the committed copy
is what a freshly migrated database gives."""

from __future__ import annotations

import sqlalchemy as sa

from rulem_db.catalogue import datadict


def test_committed_data_dictionary_is_current(engine: sa.Engine) -> None:
    with engine.connect() as conn:
        text = datadict.generate(conn)
    committed = datadict.DEFAULT_PATH.read_text() if datadict.DEFAULT_PATH.exists() else ""
    assert committed == text, (
        "docs/data-dictionary.md is not current: run `rulem-db docs` against a freshly "
        "migrated database and commit it")


def test_every_published_view_and_column_is_in_it(engine: sa.Engine) -> None:
    with engine.connect() as conn:
        text = datadict.generate(conn)
        columns = conn.execute(sa.text(
            "SELECT n.nspname, c.relname, a.attname FROM pg_attribute a "
            "JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname IN ('pub', 'restricted') AND c.relkind IN ('v', 'm') "
            "AND a.attnum > 0 AND NOT a.attisdropped ORDER BY 1, 2, a.attnum")).all()
    sections = {s.split("\n", 1)[0]: s for s in text.split("\n### ")[1:]}
    for schema, view, column in columns:
        section = sections.get(f"{schema}.{view}")
        assert section is not None, f"{schema}.{view}"
        assert f"| `{column}` |" in section, f"{schema}.{view}.{column}"
    assert "| `pub.parcel_tile(z integer, x integer, y integer)` | bytea |" in text
