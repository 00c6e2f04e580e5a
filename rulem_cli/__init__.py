"""The `rulem-db` command line: the top of the package stack. It imports the core (rulem_db),
ingest (etl), the flows and the demo; nothing imports it."""
