"""The catalogue and the schema: the layers Rule M names (layers.py, the one place a layer
fact is written), the tables built from it (schema.py, tables_*.py), the layer catalogue's
table ops.layer (register.py), the numbered SQL files (sqlfiles.py), the data dictionary
(datadict.py) and the superuser hardening (hardening.py)."""
