"""rulem-db's core: the database side of the system of record, in bands like sql/.

- catalogue/  the layer catalogue (layers.py), the tables Alembic compares against, the SQL
              files' application, the data dictionary, the superuser hardening;
- ledger/     the 1:1 replacement ledger's recompute and balances, and the resident service;
- checks/     the rule checks' runs and findings;
- reports/    what people read: the run report, the annual statement, maps, the export;
- local/      the embedded PostgreSQL cluster and backups;
- db, config, paths, locks: connections and migration, which database, where files are,
  what a writer waits for.

Why bands: the SQL under sql/ is the engine and these modules move data in and out, so each
band here follows one band there. This package imports neither etl, flows, demo nor
rulem_cli (an import-linter contract in the tests holds it).
"""
