"""The demo's permits carry the facts the permit ingest needs (decision dates); the ingest of
those facts is tested against a database in tests/ingest/test_ingest_permit_facts.py.

Why: a demo permit approved without a decision date would be refused by the ingest, and the
demo load would stop half-way.
"""

from __future__ import annotations


def test_the_demo_permits_all_carry_their_decision_dates() -> None:
    from demo.sites import SITES

    undated = [s.permit_no for s in SITES
               if s.status in ("approved", "expired") and not s.decided_on]
    assert undated == []
