"""docs/rule-m.md and the check catalogue held together: every paragraph of Rule M, in the
rule's order, has a section; every check registered (checks.rule_check, current) is named on
the `Checks:` line of its paragraph and every code named there is registered under it; a
paragraph without checks says what it records. The failure message says what to add where."""

from __future__ import annotations

import re

import sqlalchemy as sa
from checks_scenarios import checks_engine_fixture  # noqa: F401  (the fixture)
from rule_doc import named_lines, sections

from rulem_db.paths import ROOT

RULE_DOC = ROOT / "docs" / "rule-m.md"

# Every paragraph of the rule (../shared/rule-m.txt) in its order; sections 2 and 3 have no
# text of their own beyond their title.
PARAGRAPHS = (
    "1", "2(a)", "2(a)(i)", "2(a)(ii)", "2(a)(iii)", "2(b)",
    *(f"3({c})" for c in "abcdefgh"),
    "4",
    "5", "5(a)", "5(b)", "5(b)(i)", "5(b)(ii)", "5(b)(iii)", "5(c)", "5(c)(i)", "5(c)(ii)",
    "5(c)(iii)", "5(d)", "5(e)", "5(f)",
    "6", "6(a)", "6(b)", "6(c)", "6(d)", "6(e)",
    *(f"6(e)({n})" for n in ("i", "ii", "iii", "iv", "v", "vi")),
    "6(f)", *(f"6(f)({n})" for n in ("i", "ii", "iii", "iv")), "6(g)",
    "7", "7(a)", "7(b)", "7(c)",
    *(f"7(c)({n})" for n in ("i", "ii", "iii", "iv", "v", "vi", "vii")),
    "7(d)", "7(e)", "7(f)", "7(g)",
    "8", "9", "10",
)


def test_every_paragraph_in_the_rules_order() -> None:
    found = list(sections(RULE_DOC.read_text()))
    assert found == list(PARAGRAPHS), (
        "docs/rule-m.md: the '### <paragraph>' headings must be the rule's paragraphs in its "
        f"order; missing {sorted(set(PARAGRAPHS) - set(found))}, unknown "
        f"{sorted(set(found) - set(PARAGRAPHS))}")


def test_the_catalogue_and_the_reading_agree(checks_engine: sa.Engine) -> None:
    with checks_engine.connect() as conn:
        registered = conn.execute(sa.text(
            "SELECT paragraph, check_code, defined_in FROM checks.current_checks() "
            "ORDER BY sort_order, paragraph, check_code")).all()
    assert registered
    by_paragraph: dict[str, dict[str, str]] = {}
    for r in registered:
        by_paragraph.setdefault(r.paragraph, {})[r.check_code] = r.defined_in
    doc = sections(RULE_DOC.read_text())
    problems = []
    for paragraph, codes in by_paragraph.items():
        if paragraph not in doc:
            problems.append(
                f"checks {sorted(codes)} are registered under paragraph {paragraph!r}, which "
                f"docs/rule-m.md has no '### {paragraph}' section for: add it in the rule's "
                f"order with the line 'Checks: " + ", ".join(f"`{c}`" for c in codes) + "'")
    for paragraph, body in doc.items():
        listed = named_lines(body, "Checks")
        names = set(re.findall(r"`([a-z0-9_]+)`", listed or ""))
        codes = by_paragraph.get(paragraph, {})
        for code in sorted(set(codes) - names):
            problems.append(
                f"docs/rule-m.md: add `{code}` to the 'Checks:' line under '### {paragraph}' "
                f"(registered by sql/{codes[code]}), and say in a sentence what it judges")
        for code in sorted(names - set(codes)):
            problems.append(
                f"docs/rule-m.md: '### {paragraph}' names `{code}` on its 'Checks:' line, but no "
                f"current check {paragraph} {code} is registered: remove it from the line")
        records = named_lines(body, "Records")
        if not names and not records:
            problems.append(f"docs/rule-m.md: '### {paragraph}' needs a 'Checks:' line or a "
                            "'Records:' line saying what rulem-db keeps for it")
    assert not problems, "\n".join(problems)


def test_the_record_kinds_are_the_catalogues() -> None:
    """Every kind of permit record (rulem_db/catalogue/layers.py) is in the table of kinds."""
    from rulem_db.catalogue.layers import RECORD_KINDS

    table = set(re.findall(r"^\| `([a-z_]+)` \|", RULE_DOC.read_text(), flags=re.M))
    assert table == set(RECORD_KINDS), (
        f"docs/rule-m.md, 'Permit records': add {sorted(set(RECORD_KINDS) - table)}, remove "
        f"{sorted(table - set(RECORD_KINDS))}")
