"""Which field of a delivered file feeds which column of a layer: a declarative mapping file
where one is given, else built-in recognition of the names GIS files commonly use.

Why declarative: a consultant's field names and codes are facts about that consultant's files,
not about our code; a staff member writes them down once (TOML or JSON, see docs/ingest.md)
and every later delivery in that shape loads without a programmer.

Recognition, in order, for each column of the layer (rulem_db/catalogue/layers.py):
1. the mapping file's [fields] entry (a field, a constant, a value table, or false = not
   delivered);
2. the column's own name, ignoring case and punctuation (`cowardin_code`, `COWARDIN CODE`);
3. for a reference `X_id`: `X_key` (the demo convention), `X_no`, `X`;
4. the common names in ALIASES (NWI's `ATTRIBUTE` is the Cowardin code, `CIRC39` the
   Circular 39 type, ...).
Coded values are recognised by their letters and digits (`Drain partial` -> drain_partial,
`B/C` -> BC, `Type 3` or `III` -> 3), and Eggers & Reed community names are written the way
Eggers & Reed spell them.
"""

from __future__ import annotations

import difflib
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from etl.problems import refuse
from rulem_db.catalogue.layers import BY_NAME, CIRCULAR39_TYPES, Col, Layer

# Common field names by (layer, column); compared ignoring case and punctuation.
ALIASES: dict[tuple[str, str], tuple[str, ...]] = {
    ("wetland", "cowardin_code"): ("ATTRIBUTE", "COWARDIN", "COWARDIN_CODE", "COWARDIN_C",
                                   "NWI_CODE", "NWI_CLASS", "CLASS_CODE"),
    ("wetland", "circular39_type"): ("CIRC39", "CIRCULAR39", "CIRC_39", "CIR39", "C39",
                                     "CIRC39_TYPE", "CIRCULAR39_TYPE", "TYPE_CIRC39",
                                     "WETLAND_TYPE_CIRC39", "MNTYPE", "CIRC39TYPE"),
    ("wetland", "eggers_reed_community"): ("EGGERS_REED", "EGGERS_AND_REED", "EGGERS",
                                           "ER_COMMUNITY", "ER_COMM", "PLANT_COMMUNITY",
                                           "PLANT_COMM", "COMMUNITY", "COMM_TYPE"),
    ("wetland", "invasive_dominated"): ("INVASIVE", "INVASIVES", "INVASIVE_DOM"),
    ("wetland", "post_cwmp_type"): ("POST_CWMP", "CWMP_TYPE", "POST_TYPE"),
    ("wetland", "susceptibility_class"): ("SUSCEPTIBILITY", "SUSCEPT", "SUSC_CLASS"),
    ("parcel", "pin"): ("PIN", "PID", "PARCEL_ID", "PARCELID", "PARCEL_NO", "PARCEL_NUM",
                        "PARCEL", "TAX_PIN", "TAXPIN", "COUNTY_PIN", "PIN_NO", "APN"),
    ("parcel", "site_address"): ("SITE_ADDRESS", "SITEADDR", "SITE_ADDR", "SITUS",
                                 "SITUS_ADDR", "SITUS_ADDRESS", "ADDRESS", "ADDR",
                                 "PROP_ADDR", "PROPERTY_ADDRESS", "FULL_ADDRESS", "BLDG_ADDR"),
    ("parcel", "owner_name"): ("OWNER", "OWNER_NAME", "OWNERNAME", "OWN_NAME", "OWNNAME",
                               "OWNER1", "TAXPAYER", "TAXPAYER_NAME", "TAX_NAME"),
    ("soil", "hydrologic_soil_group"): ("HYDGRP", "HYDGRPDCD", "HSG", "HYD_GROUP",
                                        "HYDROLOGIC_GROUP"),
    ("permit", "permit_no"): ("PERMIT", "PERMIT_NUMBER", "PERMITNO", "PERMIT_NUM"),
    ("delineation", "delineation_no"): ("DELINEATION", "DELINEATION_NUMBER", "DELIN_NO"),
    ("heritage_area", "rank"): ("NH_RANK", "HERITAGE_RANK", "NHRANK", "RANK"),
}
# Names a field often has for a column that recognition does not take on its own (too loose to
# map unasked: `approved_on` is a delineation's own column), but close enough to suggest when
# the column is not delivered: (layer, column) -> names, compared like ALIASES.
LIKELY: dict[tuple[str, str], tuple[str, ...]] = {
    ("permit", "decided_on"): ("DECISION_DATE", "DECISION", "DECIDED", "DECIDED_DATE",
                               "DATE_DECIDED", "DECISION_ON", "APPROVAL_DATE", "APPROVED_ON",
                               "APPROVED", "APPROVED_DATE", "DATE_APPROVED", "ISSUED",
                               "ISSUED_ON", "ISSUE_DATE", "DATE_ISSUED"),
    ("permit", "applied_on"): ("APPLICATION_DATE", "APPLIED", "APPLIED_DATE", "DATE_APPLIED",
                               "RECEIVED", "RECEIVED_ON", "DATE_RECEIVED"),
    ("permit", "expires_on"): ("EXPIRATION_DATE", "EXPIRATION", "EXPIRY_DATE", "EXPIRY",
                               "EXPIRES", "EXPIRE_DATE", "DATE_EXPIRES"),
    ("permit", "baseline_on"): ("BASELINE_DATE", "BASELINE"),
    ("permit", "tep_on"): ("TEP_DATE", "TEP_FINDINGS_DATE", "TEP_FINDING_DATE"),
}
LIKELY_CUTOFF = 0.85  # difflib ratio of normalised names above which a name is suggested
KEY_FIELDS = ("feature_key",)  # the demo convention for a feature's key in its layer

# Eggers & Reed (1997/2015) wetland plant communities, spelled as they spell them.
EGGERS_REED = (
    "Shallow Open Water", "Deep Marsh", "Shallow Marsh", "Sedge Meadow", "Fresh (Wet) Meadow",
    "Wet to Wet-Mesic Prairie", "Calcareous Fen", "Open Bog", "Coniferous Bog", "Shrub-Carr",
    "Alder Thicket", "Hardwood Swamp", "Coniferous Swamp", "Floodplain Forest",
    "Seasonally Flooded Basin",
)
_EGGERS_REED_VARIANTS = {"Fresh Meadow": "Fresh (Wet) Meadow", "Wet Meadow": "Fresh (Wet) Meadow",
                         "Shallow Open Water Community": "Shallow Open Water",
                         "Shrub Carr": "Shrub-Carr", "Wet Prairie": "Wet to Wet-Mesic Prairie"}
_ROMAN = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII")


def norm(name: str) -> str:
    """A name or value by its letters and digits, upper case: how recognition compares."""
    return re.sub(r"[^0-9A-Za-z]", "", name).upper()


@dataclass
class Rule:
    """A mapping file's instruction for one column."""

    field: str | None = None
    const: str | None = None
    values: dict[str, str] | None = None
    off: bool = False  # the file's same-named field is not this column


@dataclass
class Mapping:
    """A parsed mapping file (see docs/ingest.md for the format)."""

    path: Path | None = None
    layer: str | None = None
    key: str | None = None
    geometry: str | None = None
    source_layer: str | None = None
    rules: dict[str, Rule] = field(default_factory=dict)
    delineation: dict[str, str] = field(default_factory=dict)
    text: str = ""  # the file's text (its hash identifies the options of a batch)


def load_mapping(path: Path | None) -> Mapping:
    """Read a mapping file (.toml or .json); a malformed one is refused with the reason."""
    if path is None:
        return Mapping()
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix.lower() == ".json" else tomllib.loads(text)
    except FileNotFoundError:
        raise refuse(path.name, f"no such mapping file: {path}") from None
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise refuse(path.name, f"is not a valid mapping file ({exc})") from None
    allowed = {"layer", "key", "geometry", "source_layer", "fields", "delineation"}
    unknown = set(data) - allowed
    if unknown:
        raise refuse(path.name, f"unknown entries {', '.join(sorted(unknown))}; a mapping file "
                     f"has {', '.join(sorted(allowed))}")
    rules: dict[str, Rule] = {}
    for col, spec in (data.get("fields") or {}).items():
        rules[col] = _rule(path.name, col, spec)
    return Mapping(path=path, layer=data.get("layer"), key=data.get("key"),
                   geometry=data.get("geometry"), source_layer=data.get("source_layer"),
                   rules=rules, text=text,
                   delineation={k: None if v is None else str(v)
                                for k, v in (data.get("delineation") or {}).items()})


def _rule(file: str, col: str, spec: Any) -> Rule:
    if spec is False:
        return Rule(off=True)
    if isinstance(spec, str):
        return Rule(field=spec)
    if isinstance(spec, dict):
        unknown = set(spec) - {"field", "value", "values"}
        if unknown or ("field" in spec and "value" in spec):
            raise refuse(file, f"[fields.{col}] takes either field (with optional values) or "
                         "value")
        values = spec.get("values")
        if values is not None and not isinstance(values, dict):
            raise refuse(file, f"[fields.{col}] values must be a table of 'delivered' = 'ours'")
        return Rule(field=spec.get("field"),
                    const=None if spec.get("value") is None else _text(spec["value"]),
                    values=None if values is None else {str(k): _text(v)
                                                       for k, v in values.items()})
    raise refuse(file, f"[fields] {col} must be a field name, false, or a table")


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ";".join(str(v) for v in value)
    return str(value)


@dataclass
class ColumnPlan:
    """Where one column's values come from; the merge spec's column entry."""

    col: Col
    field: str | None = None
    const: str | None = None
    const_id: int | None = None
    values: dict[str, str] | None = None
    derive_from: str | None = None
    how: str = ""  # how it was found, for the batch's notes

    @property
    def delivered(self) -> bool:
        return (self.field is not None or self.const is not None or self.const_id is not None
                or self.derive_from is not None)

    def code_map(self) -> dict[str, str] | None:
        """Recognised spellings of the coded values (normalised -> code)."""
        col = self.col
        if col.name == "eggers_reed_community":
            out = {norm(n): n for n in EGGERS_REED}
            out.update({norm(k): v for k, v in _EGGERS_REED_VARIANTS.items()})
            return out
        if not col.codes:
            return None
        out = {norm(c): c for c in col.codes}
        if col.codes == CIRCULAR39_TYPES:
            for i, roman in enumerate(_ROMAN, start=1):
                for variant in (roman, f"TYPE{roman}", f"TYPE{i}", f"T{i}"):
                    out[variant] = str(i)
        if "unranked" in col.codes:
            out.update({"NR": "unranked", "NOTRANKED": "unranked"})
        return out


def _candidates(layer: Layer, col: Col) -> list[str]:
    """Other names a column goes by (its own name is tried first, for every column)."""
    names = []
    if col.ref_layer and col.name.endswith("_id"):
        base = col.name[:-3]
        names += [f"{base}_key", f"{base}_no", base]
    return names + list(ALIASES.get((layer.name, col.name), ()))


def plan_columns(layer: Layer, fields: tuple[str, ...], mapping: Mapping,
                 file: str) -> list[ColumnPlan]:
    """Each column of the layer with the field (or constant) that delivers it."""
    by_norm: dict[str, str] = {}
    for f in fields:
        by_norm.setdefault(norm(f), f)
    known = [c.name for c in layer.columns]
    for col in mapping.rules:
        if col not in known:
            raise refuse(file, f"the mapping file names column {col!r}, which layer "
                         f"{layer.name} does not have; its columns are {', '.join(known)}")
    if mapping.key is not None and mapping.key not in fields:
        raise refuse(file, f"the mapping file takes feature keys from field {mapping.key!r}, "
                     f"which the file does not have; its fields are {', '.join(fields)}")
    plans = {c.name: ColumnPlan(c) for c in layer.columns}
    taken: set[str] = {mapping.key} if mapping.key else set()
    for col in layer.columns:  # the mapping file first
        rule = mapping.rules.get(col.name)
        if rule is None or rule.off:
            continue
        plan = plans[col.name]
        if rule.field is not None:
            if rule.field not in fields:
                raise refuse(file, f"the mapping file maps {col.name} from field "
                             f"{rule.field!r}, which the file does not have; its fields are "
                             f"{', '.join(fields)}")
            plan.field, plan.how = rule.field, "mapping file"
            taken.add(rule.field)
        plan.const, plan.values = rule.const, rule.values
        if rule.const is not None:
            plan.how = "mapping file (constant)"
    unmapped = [c for c in layer.columns if c.name not in mapping.rules]
    # then every column's own name, before any other name (so an alias never takes a field
    # that is another column's own)
    own_name = {c.name: [c.name] for c in unmapped}
    other_names = {c.name: _candidates(layer, c) for c in unmapped}
    for names in (own_name, other_names):
        for col in unmapped:
            plan = plans[col.name]
            if plan.field is not None:
                continue
            for name in names[col.name]:
                hit = by_norm.get(norm(name))
                if hit is not None and hit not in taken:
                    plan.field, plan.how = hit, "recognised"
                    taken.add(hit)
                    break
    return list(plans.values())


def key_field(fields: tuple[str, ...], mapping: Mapping) -> str | None:
    """The field giving each feature's key: the mapping's, else feature_key when present."""
    if mapping.key is not None:
        return mapping.key
    lower = {norm(f): f for f in fields}
    return next((lower[norm(k)] for k in KEY_FIELDS if norm(k) in lower), None)


def layer_of(name: str) -> Layer:
    """The catalogue layer, or a refusal listing the layers."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise refuse(name, f"unknown layer {name!r}; layers are {', '.join(BY_NAME)}") from None


def _date_stem(name: str) -> str:
    """A date column's or field's name without its date words (DECIDED_ON, DATE_DECIDED and
    DECIDED_DATE are all DECIDED)."""
    n = norm(name)
    for suffix in ("DATE", "ON", "DT"):
        if n.endswith(suffix) and len(n) > len(suffix) + 2:
            n = n[:-len(suffix)]
            break
    return n[4:] if n.startswith("DATE") and len(n) > 6 else n


def likely_column(layer: Layer, name: str, columns: list[Col]) -> str | None:
    """The column among columns (those the file does not deliver) that a field named name
    probably is, or None: a name in LIKELY, the same date stem (`decided` is decided_on), the
    names of a reference (`permit_number` is permit_id), or a name close to the column's own
    or one of its other names (difflib, ratio at least LIKELY_CUTOFF)."""
    n = norm(name)
    pool: dict[str, str] = {}
    for col in columns:
        for alt in LIKELY.get((layer.name, col.name), ()):
            if norm(alt) == n:
                return col.name
        names = [col.name, *_candidates(layer, col)]
        if col.ref_layer and col.name.endswith("_id"):
            names += [f"{col.name[:-3]}_number", f"{col.name[:-3]}_num"]
        for other in names:
            pool.setdefault(norm(other), col.name)
        if col.kind == "date" and _date_stem(name) == _date_stem(col.name):
            return col.name
    close = difflib.get_close_matches(n, list(pool), n=1, cutoff=LIKELY_CUTOFF)
    return pool[close[0]] if close else None


def unmapped_fields(layer: Layer, fields: tuple[str, ...], plans: list[ColumnPlan],
                    mapping: Mapping, used: tuple[str | None, ...] = ()
                    ) -> tuple[list[str], dict[str, str]]:
    """The file's fields that feed no column (they stay in source_attributes), and for some of
    them the column they probably are (field -> column): a column the file does not deliver
    and the mapping file does not switch off."""
    taken = {p.field for p in plans if p.field} | {f for f in used if f}
    if mapping.key:
        taken.add(mapping.key)
    open_cols = [p.col for p in plans if not p.delivered
                 and not (mapping.rules.get(p.col.name) and mapping.rules[p.col.name].off)]
    unmapped = [f for f in fields if f not in taken]
    likely = {}
    for f in unmapped:
        col = likely_column(layer, f, open_cols)
        if col is not None:
            likely[f] = col
    return unmapped, likely


def unmapped_line(file: str, unmapped: list[str], likely: dict[str, str],
                  limit: int = 40) -> str | None:
    """One line naming the fields that feed no column, with the mapping-file line for each
    likely one; None when every field is mapped."""
    if not unmapped:
        return None
    def one(f: str) -> str:
        col = likely.get(f)
        return f"{f} (likely {col}: [fields] {col} = {json.dumps(f)})" if col else f
    shown = [one(f) for f in unmapped[:limit]]
    more = len(unmapped) - limit
    if more > 0:
        shown.append(f"and {more} more")
    n = len(unmapped)
    return (f"{file}: {n} field{'s' * (n != 1)} map{'s' * (n == 1)} to no column (kept in "
            f"source_attributes): {', '.join(shown)}")
