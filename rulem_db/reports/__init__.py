"""What people read: the nightly run's report (run.py), the annual ledger statement
(statement.py), their shared HTML (html.py) and maps (map.py), and the GeoPackage export
(export.py)."""
