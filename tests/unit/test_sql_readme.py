"""sql/README.md, the map of the SQL files, names every file under sql/ and nothing else.

Why: the map is how a newcomer finds where a function lives and which number a new file
takes; a file added without its line (or a line left behind by a removed file) would make the
map lie without anyone noticing.
"""

from __future__ import annotations

import re
from pathlib import Path

from rulem_db.catalogue.sqlfiles import sql_files
from rulem_db.paths import SQL_DIR

README = SQL_DIR / "README.md"
# a row of the "Files" table: | `NNN_name.sql` | ... |  (or `superuser/name.sql`)
_ROW = re.compile(r"^\| `((?:superuser/)?[0-9a-z_]+\.sql)` \|", re.MULTILINE)


def _listed() -> list[str]:
    return _ROW.findall(README.read_text())


def _present() -> list[str]:
    files = [p.name for p in sql_files()]
    files += [f"superuser/{p.name}" for p in sorted((SQL_DIR / "superuser").glob("*.sql"))]
    return files


def test_every_sql_file_is_on_the_map() -> None:
    missing = sorted(set(_present()) - set(_listed()))
    assert missing == [], f"add a line for each to the Files table of {README}: {missing}"


def test_every_file_on_the_map_exists() -> None:
    gone = sorted(set(_listed()) - set(_present()))
    assert gone == [], f"{README} lists files that are not in sql/: {gone}"


def test_the_map_lists_each_file_once_in_the_order_they_apply() -> None:
    listed = _listed()
    assert len(listed) == len(set(listed)), "a file is listed twice"
    assert listed == _present(), "list the files in the order they apply (name order)"


def test_no_stray_sql_files() -> None:
    # The runner applies only NNN_<name>.sql: a file named otherwise would silently not apply.
    strays = [p.name for p in Path(SQL_DIR).glob("*.sql") if p not in sql_files()]
    assert strays == [], f"sql/ files the runner never applies (name them NNN_<what>.sql): {strays}"
