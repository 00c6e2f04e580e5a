"""The unit tier: tests that need no database (run alone with `scripts/test --unit`).

A package so that a split test file can keep its name here (tests/unit/test_ingest.py beside
tests/ingest/test_ingest.py) without pytest mistaking one module for the other.
"""
