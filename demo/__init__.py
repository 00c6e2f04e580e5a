"""The demo: a synthetic CWMP plan area (generate.py writes its files from the permits' table
sites.py and the layer builders of layers/, cases.toml holds its hand-checked figures, load.py
ingests the files) for a new user's first run, the tests and the benchmarks.

Why a package of its own: the demo is one user of the system, not part of it. rulem_db, etl
and flows never import it, so nothing in them defaults to the demo's plan area.
"""

DEMO_PLAN_AREA: tuple[str, str] = ("acd-53-62", "Anoka County Ditch 53-62 CWMP")
"""The demo's plan area (code, name): the one `rulem-db demo` registers and loads into."""
