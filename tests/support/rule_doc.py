"""Reading docs/rule-m.md, the rule read paragraph by paragraph: its '### <paragraph>' sections
and their 'Label:' lines. Shared by the test that holds the reading to the check catalogue and
the test that follows the check recipe (docs/contributing.md)."""

from __future__ import annotations

import re


def sections(text: str) -> dict[str, str]:
    """The body of each '### <paragraph>' section, in order."""
    out: dict[str, str] = {}
    parts = re.split(r"^(#{2,3}) (.+)$", text, flags=re.M)
    for level, title, body in zip(parts[1::3], parts[2::3], parts[3::3], strict=True):
        if level == "###":
            out[title.strip()] = body
    return out


def named_lines(body: str, label: str) -> str | None:
    """The text of a 'Label:' line and its continuation lines (up to a blank line)."""
    m = re.search(rf"^{label}:(.*(?:\n(?!\n).+)*)", body, flags=re.M)
    return m.group(1).strip() if m else None
