"""Which joins in sql/*.sql pair two plan-area tables without equating plan_area_id: the list
docs/scaling.md needs before a Citus cluster (plan_area_id as the distribution column) can run
every query on one worker.

    env -u PYTHONDONTWRITEBYTECODE .venv/bin/python bench/plan_area_joins.py [--all]

A heuristic reading of the SQL text, not a parser: each `JOIN <schema.table> [alias]
ON <condition>` (or USING (...)) whose table has a plan_area_id column (asked of a migrated
database: the kept empty template of the harness) is listed with its file, line and
condition when the condition does not mention plan_area_id. Joins to functions, CTEs, staging
tables and reference tables (no plan_area_id) are not listed: they do not decide co-location.
Comma joins and EXISTS sub-queries are not read. --all prints the joins that do include it too.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import sqlalchemy as sa  # noqa: E402

from bench import common  # noqa: E402
from rulem_db import db  # noqa: E402

JOIN = re.compile(r"\bJOIN\s+(?:LATERAL\s+)?(?P<table>(?:core|ledger|checks|ops)\.\w+)\b"
                  r"(?:\s+(?:AS\s+)?(?P<alias>(?!ON\b|USING\b)\w+))?\s+(?P<kind>ON|USING)\b",
                  re.IGNORECASE)
STOP = re.compile(r"\b(JOIN|WHERE|GROUP|ORDER|LIMIT|UNION|CROSS|LEFT|RIGHT|INNER|FULL|"
                  r"WINDOW|HAVING|RETURNING|EXCEPT|INTERSECT)\b|;|\$\w*\$",
                  re.IGNORECASE)


@dataclass
class Join:
    """One join of a plan-area table found in a SQL file."""

    file: str
    line: int
    table: str
    condition: str

    @property
    def keyed(self) -> bool:
        return "plan_area_id" in self.condition.lower()


def plan_area_tables() -> set[str]:
    """Tables of core, ledger, checks and ops that carry plan_area_id."""
    url = common.url_of(f"{common.PREFIX}_empty_src")
    with db.connect(url) as conn:
        rows = conn.execute(sa.text(
            "SELECT table_schema || '.' || table_name FROM information_schema.columns "
            "WHERE column_name = 'plan_area_id' AND table_schema IN "
            "('core', 'ledger', 'checks', 'ops') AND table_name IN (SELECT table_name FROM "
            "information_schema.tables WHERE table_type = 'BASE TABLE')")).scalars()
        return {r.lower() for r in rows}


CONSTRAINTS = """
SELECT c.conrelid::regclass::text AS tbl, c.conname,
       CASE c.contype WHEN 'p' THEN 'primary key' WHEN 'u' THEN 'unique' WHEN 'f' THEN 'foreign key'
                      WHEN 'x' THEN 'exclusion' END AS kind,
       pg_get_constraintdef(c.oid) AS def,
       CASE WHEN c.contype = 'f' THEN c.confrelid::regclass::text END AS ref
FROM pg_constraint c
JOIN pg_namespace n ON n.oid = c.connamespace
WHERE n.nspname IN ('core', 'ledger', 'checks', 'ops') AND c.contype IN ('p', 'u', 'f', 'x')
  AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.conrelid
              AND a.attname = 'plan_area_id' AND NOT a.attisdropped)
  AND NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.conrelid
                  AND a.attname = 'plan_area_id' AND a.attnum = ANY (c.conkey))
ORDER BY 1, 3, 2
"""


def constraints_without_key() -> list[tuple[str, str, str, str, str | None]]:
    """Keys and foreign keys of plan-area tables that leave plan_area_id out (Citus requires it
    in every primary key, unique constraint and foreign key between distributed tables)."""
    url = common.url_of(f"{common.PREFIX}_empty_src")
    with db.connect(url) as conn:
        return [tuple(r) for r in conn.execute(sa.text(CONSTRAINTS)).all()]


def _condition(text: str, start: int) -> str:
    """The join condition from start to the next clause keyword at parenthesis depth 0."""
    depth, i = 0, start
    while i < len(text):
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0:
            m = STOP.match(text, i)
            if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
                break
        i += 1
    return " ".join(text[start:i].split())


def _strip_comments(sql: str) -> str:
    """Line comments blanked out (lengths kept, so offsets still give line numbers)."""
    return re.sub(r"--[^\n]*", lambda m: " " * len(m.group(0)), sql)


def joins(tables: set[str], folder: Path = ROOT / "sql") -> list[Join]:
    """Every join of a plan-area table in the folder's SQL files, in file and line order."""
    found = []
    for path in sorted(folder.glob("*.sql")):
        text = _strip_comments(path.read_text())
        for m in JOIN.finditer(text):
            table = m.group("table").lower()
            if table not in tables:
                continue
            found.append(Join(path.name, text.count("\n", 0, m.start()) + 1, table,
                              f"{m.group('kind').upper()} {_condition(text, m.end())}"))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--all", action="store_true", help="also list the keyed joins")
    args = parser.parse_args(argv)
    common.empty_database(f"{common.PREFIX}_joins")  # makes sure the empty template is current
    common.drop_database(f"{common.PREFIX}_joins")
    tables = plan_area_tables()
    found = joins(tables)
    missing = [j for j in found if not j.keyed]
    for j in (found if args.all else missing):
        mark = "keyed  " if j.keyed else "MISSING"
        print(f"{mark} {j.file}:{j.line}  {j.table}  {j.condition[:150]}")
    print(f"\n{len(found)} joins of plan-area tables in sql/*.sql; {len(found) - len(missing)} "
          f"equate plan_area_id, {len(missing)} do not")
    by_file: dict[str, int] = {}
    for j in missing:
        by_file[j.file] = by_file.get(j.file, 0) + 1
    print("without plan_area_id, by file: " + ", ".join(f"{f} {n}" for f, n in by_file.items()))
    print("\nkeys of plan-area tables without plan_area_id:")
    cons = constraints_without_key()
    kinds: dict[str, int] = {}
    for tbl, name, kind, definition, ref in cons:
        kinds[kind] = kinds.get(kind, 0) + 1
        if args.all or kind != "foreign key" or ref not in ("core.feature", "ops.batch"):
            print(f"  {tbl:<28} {kind:<12} {name:<34} {definition[:90]}")
    print("  " + ", ".join(f"{n} {k}s" for k, n in kinds.items()) + " (foreign keys to "
          "core.feature and ops.batch summarised; --all lists them)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
