"""What a request may ask of the database through tipg: the CQL2 filter allow-list, the
bounds on a filter's size and nesting, and strict parsing of the other query parameters.

Why: tipg turns a `filter=` (cql2-text or cql2-json) into SQL with cql2's `to_sql`, which
writes any function name it meets as a call (`int4(version())`, `pg_sleep(10)`,
`set_config(...)`, `lo_from_bytea(...)`), so an anonymous GET could run any function the
reader may execute. Here the parsed tree (cql2's JSON form, whichever language was sent) is
walked before tipg sees it, and only the operators and functions of ALLOWED_OPS pass; every
property must be a column of the collection, every literal a plain value (finite numbers,
strings, ISO dates, GeoJSON geometries rebuilt from their type and coordinates). Anything
else is a 400 naming what was refused. The walk does not depend on the database's own
hardening (docs/publishing.md, "Web service").

The parser itself (cql2, in Rust) overflows its stack on a few thousand nested parentheses
and takes the process down, so the raw text is measured first: MAX_FILTER_CHARS characters
and MAX_NESTING levels of brackets at most, by a scan that cannot recurse.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from typing import Annotated, Any

from ciso8601 import parse_rfc3339
from cql2 import Expr
from fastapi import Depends, HTTPException, Path, Query
from morecantile import Tile
from tipg.collections import Collection
from tipg.dependencies import CollectionParams, FilterLang

MAX_FILTER_CHARS = 10_000
MAX_NESTING = 32          # brackets ( [ { open at once, outside quoted strings
MAX_LIST = 1_000          # items of one IN list or array literal

LOGICAL = ("and", "or", "not")
COMPARISON = ("=", "<>", "<", ">", "<=", ">=", "like", "between", "in", "isnull")
ARITHMETIC = ("+", "-", "*", "/", "%", "div", "^")
SPATIAL = ("s_intersects", "s_equals", "s_disjoint", "s_touches", "s_within", "s_overlaps",
           "s_crosses", "s_contains")
TEMPORAL = ("t_after", "t_before", "t_contains", "t_disjoint", "t_during", "t_equals",
            "t_finishedby", "t_finishes", "t_intersects", "t_meets", "t_metby",
            "t_overlappedby", "t_overlaps", "t_startedby", "t_starts")
ARRAY = ("a_equals", "a_contains", "a_containedby", "a_overlaps")
FUNCTIONS = ("casei", "upper", "lower", "abs")   # named functions, as cql2 writes them
ALLOWED_OPS = frozenset(LOGICAL + COMPARISON + ARITHMETIC + SPATIAL + TEMPORAL + ARRAY
                        + FUNCTIONS)

GEOMETRY_TYPES = ("Point", "MultiPoint", "LineString", "MultiLineString", "Polygon",
                  "MultiPolygon")
_OPENERS = {"(": ")", "[": "]", "{": "}"}


class FilterRefused(HTTPException):
    """A 400 with a one-line reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(status_code=400, detail=reason)


def nesting(text: str) -> int:
    """The deepest bracket nesting of a filter's text, outside '...' and "..." strings (a
    loop, so that a hostile text cannot exhaust a stack here either)."""
    depth = deepest = 0
    quote: str | None = None
    escaped = False
    for ch in text:
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\" and quote == '"':
                escaped = True
            elif ch == quote:
                quote = None
        elif ch in ("'", '"'):
            quote = ch
        elif ch in _OPENERS:
            depth += 1
            deepest = max(deepest, depth)
        elif ch in (")", "]", "}"):
            depth -= 1
    return deepest


def check_size(text: str, name: str = "filter") -> None:
    """Refuse a text too long or too deeply nested to give to the parser."""
    if len(text) > MAX_FILTER_CHARS:
        raise FilterRefused(f"{name} is {len(text)} characters long (at most "
                            f"{MAX_FILTER_CHARS})")
    if (depth := nesting(text)) > MAX_NESTING:
        raise FilterRefused(f"{name} nests {depth} levels of brackets (at most {MAX_NESTING})")


def _number(value: float | int) -> float | int:
    if isinstance(value, float) and not math.isfinite(value):
        raise FilterRefused("filter: a number is not finite")
    return value


def _positions(coords: Any, depth: int) -> Any:
    """GeoJSON coordinates: nested lists of finite numbers, nothing else."""
    if depth > 4 or not isinstance(coords, list):
        raise FilterRefused("filter: a geometry's coordinates are not GeoJSON positions")
    if coords and all(isinstance(c, int | float) and not isinstance(c, bool) for c in coords):
        if not 2 <= len(coords) <= 3:
            raise FilterRefused("filter: a position has not 2 or 3 numbers")
        return [_number(c) for c in coords]
    return [_positions(c, depth + 1) for c in coords]


def _geometry(node: dict[str, Any]) -> dict[str, Any]:
    kind = node.get("type")
    if kind == "GeometryCollection":
        parts = node.get("geometries")
        if not isinstance(parts, list):
            raise FilterRefused("filter: a GeometryCollection without geometries")
        return {"type": kind, "geometries": [_geometry(p) if isinstance(p, dict) else
                                             _refuse_literal(p) for p in parts]}
    if kind not in GEOMETRY_TYPES:
        raise FilterRefused(f"filter: {str(kind)[:40]!r} is not a GeoJSON geometry type")
    return {"type": kind, "coordinates": _positions(node.get("coordinates"), 0)}


def _refuse_literal(value: Any) -> Any:
    raise FilterRefused(f"filter: {type(value).__name__} is not a literal a filter may hold")


def _instant(value: Any, key: str) -> str:
    if not isinstance(value, str):
        raise FilterRefused(f"filter: {key} needs a string")
    if key == "interval" and value == "..":
        return value
    try:
        if key == "date":
            dt.date.fromisoformat(value)
        else:
            dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise FilterRefused(f"filter: {value[:40]!r} is not an ISO {key}") from None
    return value


class _Walk:
    """One filter's walk: the columns it may name, and the rebuilt tree."""

    def __init__(self, columns: set[str]) -> None:
        self.columns = columns

    def node(self, node: Any, depth: int = 0) -> Any:
        if depth > MAX_NESTING * 2:
            raise FilterRefused(f"filter nests more than {MAX_NESTING} levels")
        if node is None or isinstance(node, bool | str):
            return node
        if isinstance(node, int | float):
            return _number(node)
        if isinstance(node, list):
            if len(node) > MAX_LIST:
                raise FilterRefused(f"filter: a list of {len(node)} items (at most {MAX_LIST})")
            return [self.node(n, depth + 1) for n in node]
        if not isinstance(node, dict):
            return _refuse_literal(node)
        if "op" in node:
            return self.op(node, depth)
        if set(node) == {"property"}:
            name = node["property"]
            if not isinstance(name, str) or name not in self.columns:
                raise FilterRefused(f"filter: {str(name)[:60]!r} is not a property of this "
                                    "collection (see its /queryables)")
            return {"property": name}
        if set(node) == {"timestamp"} or set(node) == {"date"}:
            key = next(iter(node))
            return {key: _instant(node[key], key)}
        if set(node) == {"interval"}:
            ends = node["interval"]
            if not isinstance(ends, list) or len(ends) != 2:
                raise FilterRefused("filter: an interval has two ends")
            return {"interval": [_instant(e, "interval") for e in ends]}
        if set(node) == {"bbox"}:
            box = node["bbox"]
            if (not isinstance(box, list) or len(box) not in (4, 6)
                    or not all(isinstance(b, int | float) and not isinstance(b, bool)
                               for b in box)):
                raise FilterRefused("filter: a bbox is 4 or 6 numbers")
            return {"bbox": [_number(b) for b in box]}
        if "type" in node:
            return _geometry(node)
        raise FilterRefused(f"filter: an object with keys {sorted(node)[:5]} is not CQL2")

    def op(self, node: dict[str, Any], depth: int) -> dict[str, Any]:
        name = node.get("op")
        if not isinstance(name, str) or name.lower() not in ALLOWED_OPS:
            raise FilterRefused(f"filter: function {str(name)[:60]!r} is not allowed (allowed: "
                                "the CQL2 comparison, spatial, temporal and array operators, "
                                f"{', '.join(FUNCTIONS)}; docs/publishing.md)")
        args = node.get("args", [])
        if not isinstance(args, list) or set(node) - {"op", "args"}:
            raise FilterRefused(f"filter: operator {name} is not in CQL2 form")
        return {"op": name, "args": [self.node(a, depth + 1) for a in args]}


def parse(text: str, columns: set[str], lang: str | None = None) -> Expr:
    """The filter as a cql2 Expr that holds only what the allow-list permits (or 400)."""
    check_size(text)
    try:
        if lang == "cql2-json" or text.lstrip().startswith("{"):
            tree = json.loads(text)
        else:
            tree = Expr(text).to_json()
    except ValueError as exc:
        raise FilterRefused(f"filter is not {lang or 'cql2-text'}: {_reason(exc)}") from None
    except Exception as exc:  # cql2 raises plain Exception on a parse error
        raise FilterRefused(f"filter is not {lang or 'cql2-text'}: {_reason(exc)}") from None
    clean = _Walk(columns).node(tree)
    if not isinstance(clean, dict):
        raise FilterRefused("filter is not a CQL2 expression")
    try:
        # tipg round-trips through cql2-json (its filter_query) so literals carry SRID 4326
        return Expr(Expr(clean).to_json())
    except Exception as exc:
        raise FilterRefused(f"filter is not CQL2: {_reason(exc)}") from None


def _reason(exc: Exception) -> str:
    """cql2's and json's messages in one line, without the echoed input."""
    text = str(exc)
    expected = re.search(r"= (expected [^\n]*)", text)
    where = re.search(r"--> (\d+:\d+)", text)
    if expected:
        return f"{expected.group(1)}" + (f" at {where.group(1)}" if where else "")
    return " ".join(text.split())[:160]


def columns_of(collection: Collection) -> set[str]:
    return {c.name for c in collection.properties}


def checked_filter(
    collection: Annotated[Collection, Depends(CollectionParams)],
    query: Annotated[str | None, Query(description="CQL2 filter (cql2-text or cql2-json); "
                                       "functions only from the allow-list",
                                       alias="filter")] = None,
    filter_lang: Annotated[FilterLang | None, Query(
        description="cql2-text (default) or cql2-json", alias="filter-lang")] = None,
) -> Expr | None:
    """tipg's filter_query, with the walk above (installed as a dependency override)."""
    if query is None:
        return None
    return parse(query, columns_of(collection), filter_lang)


UNORDERED_TYPES = ("json",)   # no ordering operator: cannot be a sort key


def checked_sortby(
    collection: Annotated[Collection, Depends(CollectionParams)],
    sortby: Annotated[str | None, Query(description="Column(s) to sort the items by, "
                                        "-column for descending")] = None,
) -> str | None:
    """tipg's sortby_query, with a total order for a collection without a key column: tipg
    orders such a collection by its first column alone, so rows sharing that value came in
    any order from one request to the next and a page's `next` link repeated some rows and
    skipped others. Without a sortby asked, those pages follow every column that has an
    order (not geometry, not json): the same order on every page."""
    if sortby is not None or collection.id_column is not None:
        return sortby
    return ",".join(c.name for c in collection.properties
                    if not c.is_geometry and c.type not in UNORDERED_TYPES) or None


_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def checked_bbox(bbox: Annotated[str | None, Query(description="Spatial filter: minx,miny,"
                                                   "maxx,maxy in longitude/latitude")] = None
                 ) -> list[float] | None:
    """tipg's bbox_query, refusing what is not 4 or 6 finite numbers in range (400)."""
    if not bbox:
        return None
    parts = bbox.split(",")
    if len(parts) not in (4, 6) or not all(_NUMBER.match(p.strip()) for p in parts):
        raise FilterRefused("bbox is 4 (or 6) comma-separated numbers: minx,miny,maxx,maxy")
    bounds = [float(p) for p in parts]
    xs = (bounds[0], bounds[2]) if len(bounds) == 4 else (bounds[0], bounds[3])
    ys = (bounds[1], bounds[3]) if len(bounds) == 4 else (bounds[1], bounds[4])
    if not all(math.isfinite(b) for b in bounds) or any(abs(x) > 180 for x in xs) or any(
            abs(y) > 90 for y in ys):
        raise FilterRefused("bbox is outside longitude -180..180, latitude -90..90")
    return bounds


def _rfc3339(value: str) -> bool:
    """What tipg's parse_rfc3339 reads (a date-time with its UTC offset)."""
    try:
        parse_rfc3339(value)
        return True
    except ValueError:
        return False


def checked_datetime(datetime: Annotated[str | None, Query(
        description="Temporal filter: an instant or start/end (.. for open)")] = None
                     ) -> list[str] | None:
    """tipg's datetime_query, refusing what is not an RFC 3339 instant or interval (400)."""
    if not datetime:
        return None
    ends = datetime.split("/")
    if len(ends) > 2 or not all(e in ("..", "") or _rfc3339(e) for e in ends) or (
            len(ends) == 1 and ends[0] in ("..", "")):
        raise FilterRefused("datetime is an RFC 3339 date-time (2024-05-01T00:00:00Z) or "
                            "start/end interval (.. for an open end)")
    return ends


MAX_ZOOM = 30


def checked_tile(
    z: Annotated[int, Path(ge=0, le=MAX_ZOOM, description="Zoom level (TileMatrix).")],
    x: Annotated[int, Path(ge=0, description="Column (X) of the tile.")],
    y: Annotated[int, Path(ge=0, description="Row (Y) of the tile.")],
) -> Tile:
    """tipg's TileParams, refusing a negative or impossible zoom, column or row (a negative
    zoom reached morecantile as an infinite scale: a 500)."""
    if x >= 2 ** (z + 1) or y >= 2 ** (z + 1):  # wider than any tile matrix set's at z
        raise HTTPException(status_code=404, detail="tile outside the tile matrix set")
    return Tile(x, y, z)
