"""The basemap a district configures for the web map: `RULEM_BASEMAP_URL` (none by default)
and `RULEM_BASEMAP_ATTRIBUTION` (docs/publishing.md, "The web map").

Why checked at start and this strictly: the value is written into the map's style and its
origin into every answer's Content-Security-Policy, so a value that could break out of either
(a quote, a space, a semicolon, a line break), carry a password (`user:pass@host`) or name
another scheme (`javascript:`, `file:`) is refused in one line before the service listens,
never half-used. Two forms:

- an XYZ raster template on another host, `https://host/path/{z}/{x}/{y}.png` (a WMTS REST
  template in WebMercatorQuad has the same form): the browser fetches its tiles there, the
  only other origin the page may then load images from;
- a PMTiles file on the server's disk (raster tiles: PNG, JPEG, WebP or AVIF): the service
  serves it itself at BASEMAP_PATH with HTTP Range requests, and the map reads it through the
  pmtiles library (npm, served from node_modules like MapLibre), so nothing comes from
  another host.
"""

from __future__ import annotations

import html
import os
import re
from dataclasses import dataclass
from pathlib import Path

BASEMAP_PATH = "/basemap.pmtiles"   # where the service serves a PMTiles basemap
MAX_URL_CHARS = 2000
MAX_ATTRIBUTION_CHARS = 500
# An http(s) URL of unreserved and a few reserved characters: no quotes, spaces, backslashes,
# angle brackets, semicolons or commas (a CSP's separators), no user information.
_XYZ = re.compile(
    r"^(?P<scheme>https?)://(?P<host>[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]{2,45}\])"
    r"(?::(?P<port>[0-9]{1,5}))?(?P<rest>/[A-Za-z0-9._~/{}%=&?!$*+()@:-]*)?$")
# the PMTiles v3 header: magic, version, ... tile type at byte 99
_PMTILES_MAGIC = b"PMTiles"
_PMTILES_RASTER = {2: "png", 3: "jpeg", 4: "webp", 5: "avif"}


class BasemapError(ValueError):
    """RULEM_BASEMAP_URL or RULEM_BASEMAP_ATTRIBUTION cannot be used; the text is one line."""


@dataclass(frozen=True)
class Basemap:
    """A checked basemap: an XYZ template on `origin`, or a PMTiles file at `file`."""

    attribution: str = ""           # HTML-escaped, ready for MapLibre's attribution control
    tiles: str | None = None        # the XYZ template
    origin: str | None = None       # its scheme://host[:port], for the CSP's img-src
    file: Path | None = None        # the PMTiles file served at BASEMAP_PATH

    def source(self, base_url: str) -> dict[str, object]:
        """The MapLibre raster source of the style (a PMTiles file under the service's base)."""
        out: dict[str, object] = {"type": "raster", "tileSize": 256}
        if self.file is not None:
            out["url"] = f"pmtiles://{base_url.rstrip('/')}{BASEMAP_PATH}"
        else:
            out["tiles"] = [self.tiles]
        if self.attribution:
            out["attribution"] = self.attribution
        return out


def _one_line(text: str) -> str:
    shown = text[:80].encode("unicode_escape").decode("ascii")
    return shown + ("..." if len(text) > 80 else "")


def _xyz(url: str) -> tuple[str, str]:
    """The template and its origin, or BasemapError."""
    authority = url.split("://", 1)[1].split("/", 1)[0] if "://" in url else ""
    if "@" in authority:
        raise BasemapError("RULEM_BASEMAP_URL must not carry a user name or password")
    m = _XYZ.match(url)
    if m is None:
        raise BasemapError(f"RULEM_BASEMAP_URL {_one_line(url)!r} is not an http(s) tile URL "
                           "of plain URL characters (no quotes, spaces, ';' or ',') nor a "
                           ".pmtiles file")
    if m.group("port") and not 0 < int(m.group("port")) < 65536:
        raise BasemapError(f"RULEM_BASEMAP_URL {_one_line(url)!r} has no valid port")
    if not all(k in url for k in ("{z}", "{x}", "{y}")):
        raise BasemapError(f"RULEM_BASEMAP_URL {_one_line(url)!r} lacks {{z}}, {{x}} and {{y}} "
                           "(an XYZ template, e.g. https://host/tiles/{z}/{x}/{y}.png)")
    origin = f"{m.group('scheme')}://{m.group('host').lower()}"
    if m.group("port"):
        origin += f":{int(m.group('port'))}"
    return url, origin


def _pmtiles(value: str) -> Path:
    """The PMTiles file, checked to be a raster PMTiles v3 archive, or BasemapError."""
    path = Path(value).expanduser()
    try:
        with path.open("rb") as f:
            header = f.read(127)
    except OSError as exc:
        raise BasemapError(f"RULEM_BASEMAP_URL: cannot read {_one_line(value)!r} "
                           f"({exc.strerror or type(exc).__name__})") from None
    if len(header) < 127 or not header.startswith(_PMTILES_MAGIC) or header[7] != 3:
        raise BasemapError(f"RULEM_BASEMAP_URL: {_one_line(value)!r} is not a PMTiles "
                           "version 3 file")
    if header[99] not in _PMTILES_RASTER:
        raise BasemapError(f"RULEM_BASEMAP_URL: {_one_line(value)!r} holds no raster tiles "
                           "(PNG, JPEG, WebP or AVIF); a vector basemap needs a style of its own")
    return path.resolve()


def parse(url: str | None, attribution: str | None = None) -> Basemap | None:
    """The basemap of these settings (None: no basemap), or BasemapError in one line."""
    if url is None or url.strip() == "":
        return None
    if len(url) > MAX_URL_CHARS:
        raise BasemapError(f"RULEM_BASEMAP_URL is longer than {MAX_URL_CHARS} characters")
    text = (attribution or "").strip()
    if len(text) > MAX_ATTRIBUTION_CHARS or not text.isprintable():
        raise BasemapError(f"RULEM_BASEMAP_ATTRIBUTION must be one line of at most "
                           f"{MAX_ATTRIBUTION_CHARS} printable characters")
    escaped = html.escape(text, quote=True)
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", url) or not url.lower().endswith(".pmtiles"):
        tiles, origin = _xyz(url)
        return Basemap(attribution=escaped, tiles=tiles, origin=origin)
    return Basemap(attribution=escaped, file=_pmtiles(url))


def from_environment() -> Basemap | None:
    """The basemap `RULEM_BASEMAP_URL` and `RULEM_BASEMAP_ATTRIBUTION` ask for."""
    return parse(os.environ.get("RULEM_BASEMAP_URL"), os.environ.get("RULEM_BASEMAP_ATTRIBUTION"))
