"""The OGC API's HTML pages: our own small templates (rulem_web/templates), escaped.

Why not tipg's: its Jinja environment does not escape, so a finding's review note or any
text attribute of an ingested file was written into /collections/.../items?f=html as HTML
and ran as script for whoever opened it; and its pages load jQuery, Bootstrap, Leaflet and
tiles from other hosts (and sit at "Loading..." offline). These templates print every value
escaped (autoescape), use no script at all, and load only /static/pages.css from this
server, so they hold under the service's Content-Security-Policy (rulem_web.guard). Every
template name tipg renders has one here (TIPG_TEMPLATES): tipg's own are never loaded.
"""

from __future__ import annotations

from pathlib import Path

import jinja2
from starlette.templating import Jinja2Templates

TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"
# the names tipg's factory renders (tipg/factory.py, template_name=...)
TIPG_TEMPLATES = ("landing", "conformance", "collections", "collection", "queryables",
                  "items", "item", "tilematrixsets", "tilematrixset", "tilesets", "tileset",
                  "map")


def environment() -> jinja2.Environment:
    """Our templates only, every value escaped."""
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
                              autoescape=True, undefined=jinja2.ChainableUndefined)


def templates() -> Jinja2Templates:
    return Jinja2Templates(env=environment())
