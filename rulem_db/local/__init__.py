"""This machine's side: the embedded PostgreSQL + PostGIS cluster that rulem-db creates and
starts when no database URL is given (cluster.py), and backup and restore (backup.py)."""
