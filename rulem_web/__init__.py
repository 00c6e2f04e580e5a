"""The web band: `rulem-db serve`'s ASGI application (OGC API Features and Tiles over schema
`pub`, the balance map, the pre-application screen, /healthz). It reads the database as the
GIS reader and imports only the core (rulem_db); the command line sits above it."""
