"""The layers Rule M names, as data: the one list that the schema, ingest, the demo and the
published views are built from.

Why a data table and not hand-written classes: every layer shares the same versioning and
provenance columns, and ingest needs to know each layer's geometry, coded domains and natural
key without importing the ORM. Attribute columns are listed in the rule's own words; the spec's
section 2 is the source (`../shared/design/rule-m-spec.md`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Coded values, each enforced by a CHECK constraint in the database.
DELINEATION_STATUS = ("submitted", "tep_reviewed", "approved", "rejected")
CIRCULAR39_TYPES = ("1", "2", "3", "4", "5", "6", "7", "8")
SUSCEPTIBILITY_CLASSES = ("high", "moderate", "slight", "least")
DITCH_STATUS = ("active", "partially_abandoned", "abandoned")
HERITAGE_RANKS = ("A", "AB", "B", "BC", "C", "CD", "D", "unranked")
COMMUNITY_KINDS = ("wetland", "upland")
HYDROLOGIC_SOIL_GROUPS = ("A", "B", "C", "D", "A/D", "B/D", "C/D")
PERMIT_STATUS = ("applied", "under_review", "approved", "denied", "withdrawn", "expired")
IMPACT_KINDS = ("fill", "excavate", "drain_full", "drain_partial")
REPLACEMENT_COMPONENTS = ("wetland", "upland")
REPLACEMENT_STATUS = ("proposed", "constructed", "certified")
MARKER_TYPES = ("free_standing", "flush", "breakaway")
DECLARATION_KINDS = ("buffer", "fertilizer_snow", "buffer_restoration_3yr")
IMPERVIOUS_CONDITIONS = ("existing", "proposed")
STRUCTURE_KINDS = ("road", "utility", "passive_recreation", "education", "other")
STRUCTURE_EXCEPTIONS = ("none", "suspended_6fi", "public_utility_6fii")
BMP_KINDS = ("infiltration", "pretreatment", "biofiltration", "wet_pond")
FUNCTION_RATINGS = ("exceptional", "high", "medium", "low", "not_applicable")


@dataclass(frozen=True)
class Col:
    """One attribute column of a layer.

    kind is one of text, int, numeric, bool, date, text[], jsonb, or ref:<layer> (a stable
    feature id of another layer, a foreign key to core.feature).
    """

    name: str
    kind: str
    doc: str
    required: bool = False
    codes: tuple[str, ...] | None = None
    check: str | None = None  # extra CHECK expression on this column, SQL
    references: str | None = None  # foreign key to a reference table, "schema.table.column"

    @property
    def ref_layer(self) -> str | None:
        return self.kind.split(":", 1)[1] if self.kind.startswith("ref:") else None


@dataclass(frozen=True)
class Layer:
    """A versioned layer: a table core.<name> and, later, a view pub.<name>."""

    name: str
    geometry: str | None  # MULTIPOLYGON, MULTILINESTRING, POINT or None (attribute-only)
    rule: str
    doc: str
    columns: tuple[Col, ...]
    key: str = "source_fid"  # column (or expression) giving the natural feature key on ingest
    restricted: bool = False  # readable only by the restricted role (3(d) species records)
    extra_checks: tuple[tuple[str, str], ...] = field(default_factory=tuple)

    @property
    def id_column(self) -> str:
        return f"{self.name}_id"

    def column(self, name: str) -> Col:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(f"layer {self.name} has no column {name}")


def _permit(required: bool = True) -> Col:
    return Col("permit_id", "ref:permit", "The permit this feature belongs to.", required)


LAYERS: tuple[Layer, ...] = (
    Layer(
        "cwmp_area", "MULTIPOLYGON", "1, 2",
        "The plan area (CWMP area) boundary that Rule M regulates.",
        (
            Col("name", "text", "Plan name as adopted.", True),
            Col("adopted_on", "date", "Date the plan was adopted."),
        ),
        key="name",
    ),
    Layer(
        "central_wetland_seed", "MULTIPOLYGON", "6(a)",
        "The CWMP's central wetland complex as mapped; wetland connected to it is 'central'.",
        (Col("name", "text", "Name of the mapped complex."),),
    ),
    Layer(
        "parcel", "MULTIPOLYGON", "6, 7",
        "County tax parcels. A parcel refresh opens versions only for parcels that changed.",
        (
            Col("pin", "text", "County parcel identification number as delivered.", True),
            Col("pin_normalized", "text",
                "PIN with punctuation and spaces removed, upper case: the matching key.", True),
        ),
        key="pin_normalized",
    ),
    Layer(
        "delineation", "MULTIPOLYGON", "3(e), 7(f)",
        "A wetland delineation: its study area, its provenance and its review status. A status "
        "change (TEP review, approval, rejection) is a new version.",
        (
            Col("delineation_no", "text", "District's delineation number.", True),
            Col("permit_id", "ref:permit", "Permit the delineation was submitted for, if any."),
            Col("consultant", "text", "Firm or person who delineated."),
            Col("field_on", "date", "Date of the field work."),
            Col("method", "text", "Delineation method (e.g. 1987 Corps Manual, Regional "
                "Supplement)."),
            Col("file_name", "text", "Name of the delivered file."),
            Col("file_sha256", "text", "SHA-256 of the delivered file."),
            Col("status", "text", "Review status.", True, DELINEATION_STATUS),
            Col("submitted_on", "date", "Date the delineation was submitted."),
            Col("tep_reviewed_on", "date", "Date the Technical Evaluation Panel reviewed it."),
            Col("tep_findings", "text", "TEP findings and recommendations (3(e), 7(f))."),
            Col("approved_on", "date", "Date approved; approved delineations define wetland."),
            Col("rejected_on", "date", "Date rejected."),
        ),
        key="delineation_no",
        extra_checks=(
            ("approved_has_date", "status <> 'approved' OR approved_on IS NOT NULL"),
            ("rejected_has_date", "status <> 'rejected' OR rejected_on IS NOT NULL"),
        ),
    ),
    Layer(
        "wetland", "MULTIPOLYGON", "3(e), 5(d)",
        "Delineated wetland polygons, each belonging to one delineation.",
        (
            Col("delineation_id", "ref:delineation", "The delineation that mapped it.", True),
            Col("circular39_type", "text", "Circular 39 wetland type (1 to 8); the type "
                "determination of 3(e).", codes=CIRCULAR39_TYPES),
            Col("cowardin_code", "text", "Cowardin classification code (e.g. PEM1C)."),
            Col("eggers_reed_community", "text", "Eggers & Reed plant community name."),
            Col("invasive_dominated", "bool", "Dominated by invasive species."),
            Col("post_cwmp_type", "text", "Circular 39 type resulting from implementation of "
                "the CWMP; sets the susceptibility class (5(d)).", codes=CIRCULAR39_TYPES),
            Col("susceptibility_class", "text", "Stormwater susceptibility class (5(d)).",
                codes=SUSCEPTIBILITY_CLASSES),
        ),
    ),
    Layer(
        "functional_assessment", None, "3(e)",
        "Functional assessment of a wetland (MnRAM or another approved method).",
        (
            Col("wetland_id", "ref:wetland", "The assessed wetland.", True),
            Col("method", "text", "Method and version, e.g. 'MnRAM 3.4'.", True),
            Col("assessed_on", "date", "Date of the assessment."),
            Col("ratings", "jsonb", "Per-function ratings, e.g. {\"hydrology\": \"high\"}."),
        ),
    ),
    Layer(
        "ditch", "MULTILINESTRING", "3(f), 9",
        "Ditches found by the on-site determination; lines that connect wetland to the central "
        "complex.",
        (
            Col("system_id", "text", "Public drainage system id, e.g. 'ACD 53-62'."),
            Col("permit_id", "ref:permit", "Permit whose on-site determination found it."),
            Col("determined_on", "date", "Date of the on-site determination (3(f))."),
            Col("determined_by", "text", "Who made the on-site determination."),
            Col("status", "text", "Drainage system status (9).", True, DITCH_STATUS),
        ),
    ),
    Layer(
        "heritage_area", "MULTIPOLYGON", "7(c)(i)-(iii)",
        "Natural Heritage ranked plant communities (CWMP Map 1).",
        (
            Col("rank", "text", "Natural Heritage rank.", True, HERITAGE_RANKS),
            Col("community_kind", "text", "Wetland or upland community.", True, COMMUNITY_KINDS),
            Col("community_name", "text", "Community name."),
            Col("source_map", "text", "Source map, e.g. 'CWMP Map 1'."),
        ),
    ),
    Layer(
        "figure5_area", "MULTIPOLYGON", "7(c)",
        "Planned replacement zones of CWMP Map Figure 5.",
        (
            Col("zone_name", "text", "Zone name as on Figure 5.", True),
            Col("planned_type", "text", "Planned wetland type (Circular 39).",
                codes=CIRCULAR39_TYPES),
        ),
    ),
    Layer(
        "soil", "MULTIPOLYGON", "5(c)",
        "Soil map units with hydrologic soil group.",
        (
            Col("mukey", "text", "SSURGO map unit key."),
            Col("musym", "text", "Map unit symbol."),
            Col("hydrologic_soil_group", "text", "Hydrologic soil group.", True,
                HYDROLOGIC_SOIL_GROUPS),
            Col("high_groundwater", "bool", "High groundwater table (5(c)(iii)).", True),
            Col("contaminated", "bool", "Soil contamination of particular concern.", True),
        ),
    ),
    Layer(
        "permit", None, "2, 3, 10",
        "Rule M permits and applications.",
        (
            Col("permit_no", "text", "Permit number, e.g. '24-017'.", True,
                check=r"permit_no ~ '^[0-9]{2}-[0-9]{3,4}$'"),
            Col("applicant", "text", "Applicant."),
            Col("parcel_pins", "text[]", "Normalized PINs of the parcels the permit covers."),
            Col("status", "text", "Permit status.", True, PERMIT_STATUS),
            Col("applied_on", "date", "Application date."),
            Col("tep_on", "date", "Date of the TEP's findings (7(f))."),
            Col("decided_on", "date", "Date of the permit decision."),
            Col("expires_on", "date", "Expiry date."),
            Col("baseline_on", "date", "Date whose wetland layer impacts and credit are "
                "measured against (default: decided_on, or today while undecided)."),
            Col("description", "text", "What the project does."),
            Col("involves_subdivision", "bool", "The project subdivides land."),
            Col("vegetation_plan_on", "date", "Date the buffer vegetation management plan was "
                "approved (6(d))."),
            Col("species_assessment_on", "date", "Date of a protected species assessment (3(d))."),
            Col("ditch_determined_on", "date", "Date of the on-site determination of all ditches "
                "(3(f)); recorded even when it found none."),
            Col("public_land", "bool", "The site is public land or right-of-way (6, 6(b): "
                "agreements and flush or breakaway markers allowed)."),
        ),
        key="permit_no",
    ),
    Layer(
        "impact", "MULTIPOLYGON", "2(a)(i), 7(b)",
        "Wetland impacts: fill, excavation, full or partial drainage.",
        (_permit(), Col("kind", "text", "Kind of impact.", True, IMPACT_KINDS)),
    ),
    Layer(
        "replacement", "MULTIPOLYGON", "7(b), 7(c)",
        "Replacement areas: new wetland (credit) and upland included in the replacement area.",
        (
            _permit(required=False),
            Col("district_project", "text", "District replacement project, when not a permit's."),
            Col("component", "text", "Wetland (earns credit) or upland (does not, 7(c)(iv)).",
                True, REPLACEMENT_COMPONENTS),
            Col("status", "text", "Construction status.", True, REPLACEMENT_STATUS),
            Col("status_on", "date", "Date the status was reached."),
            Col("planned_type", "text", "Circular 39 type the replacement will create (for "
                "Figure 5 conformance, 7(c)).", codes=CIRCULAR39_TYPES),
        ),
        extra_checks=(
            ("has_owner", "permit_id IS NOT NULL OR district_project IS NOT NULL"),
        ),
    ),
    Layer(
        "credit_transfer", None, "1",
        "Replacement credit moved from a permit or a District replacement project to a permit "
        "(area basis).",
        (
            Col("from_permit_id", "ref:permit",
                "Permit giving credit (NULL when a District project gives it)."),
            Col("to_permit_id", "ref:permit", "Permit receiving credit.", True),
            Col("acres", "numeric", "Acres transferred.", True, check="acres > 0"),
            Col("transferred_on", "date", "Date of the transfer.", True),
            Col("from_district_project", "text",
                "District replacement project giving credit (NULL when a permit gives it)."),
        ),
        extra_checks=(("distinct_permits", "from_permit_id <> to_permit_id"),
                      ("one_giver", "(from_permit_id IS NULL) <> (from_district_project IS NULL)")),
    ),
    Layer(
        "buffer", "MULTIPOLYGON", "6",
        "Declared vegetated buffers.",
        (
            _permit(),
            Col("declaration_no", "text", "Recording number of the buffer declaration."),
            Col("public_land_agreement", "bool", "Documented by written agreement on public "
                "land instead of a recorded declaration."),
        ),
    ),
    Layer(
        "trail", "MULTIPOLYGON", "6(f)(iv)",
        "Non-motorized trails enclosed by a buffer; they do not count toward buffer width.",
        (_permit(), Col("width_ft", "numeric", "Trail surface width, feet.", check="width_ft > 0")),
    ),
    Layer(
        "buffer_marker", "POINT", "6(b)",
        "Buffer monuments at the buffer's upland edge.",
        (_permit(), Col("marker_type", "text", "Marker type.", True, MARKER_TYPES)),
    ),
    Layer(
        "easement", "MULTIPOLYGON", "8",
        "Recorded easements to the District.",
        (
            _permit(required=False),
            Col("grantor", "text", "Grantor."),
            Col("recording_no", "text", "Recording number."),
            Col("recorded_on", "date", "Recording date."),
        ),
    ),
    Layer(
        "declaration", None, "5(e), 6, 6(e)(v)",
        "Recorded declarations the rule requires.",
        (
            _permit(),
            Col("kind", "text", "Declaration kind.", True, DECLARATION_KINDS),
            Col("recording_no", "text", "Recording number."),
            Col("recorded_on", "date", "Recording date."),
            Col("public_land_agreement", "bool", "A written agreement on public land in place "
                "of a recorded declaration (6)."),
        ),
    ),
    Layer(
        "impervious", "MULTIPOLYGON", "2(a)(ii), 6(f)",
        "Impervious surface, existing or proposed.",
        (_permit(), Col("condition", "text", "Existing or proposed.", True,
                        IMPERVIOUS_CONDITIONS)),
    ),
    Layer(
        "grading", "MULTIPOLYGON", "2(a)(iii)",
        "Grading with motorized equipment.",
        (
            _permit(),
            Col("alters_runoff_to_wetland", "bool", "Changes the rate or volume of runoff into "
                "a CWMP wetland.", True),
        ),
    ),
    Layer(
        "structure", "MULTIPOLYGON", "6(f), 7(g)",
        "Roads, utilities and other structures.",
        (
            _permit(),
            Col("kind", "text", "Structure kind.", True, STRUCTURE_KINDS),
            Col("variance_ref", "text", "Variance granted for a structure in wetland (7(g))."),
            Col("buffer_exception", "text", "6(f)(i)-(ii) exception on record.",
                codes=STRUCTURE_EXCEPTIONS),
        ),
    ),
    Layer(
        "land_cover", "MULTIPOLYGON", "5(c)",
        "Proposed land cover (TR-55 cover classes).",
        (
            _permit(),
            Col("cover_class", "text", "TR-55 cover class (see core.tr55_cover).", True,
                references="core.tr55_cover.cover_class"),
        ),
    ),
    Layer(
        "subwatershed", "MULTIPOLYGON", "5(c), 5(d)",
        "Subwatersheds of a permit's site, each draining to a receiving wetland.",
        (
            _permit(),
            Col("name", "text", "Subwatershed name.", True),
            Col("receiving_wetland_id", "ref:wetland", "Receiving wetland."),
            Col("routable_to_ab", "bool", "Its C/D soils drain by gravity to on-site A/B soils, "
                "so infiltration applies (5(c)(iii))."),
        ),
    ),
    Layer(
        "bmp", "MULTIPOLYGON", "5(c)",
        "Stormwater best management practices.",
        (
            _permit(),
            Col("subwatershed_id", "ref:subwatershed", "Subwatershed it serves.", True),
            Col("kind", "text", "BMP kind.", True, BMP_KINDS),
            Col("volume_cuft", "numeric", "Water quality volume provided, cubic feet.", True,
                check="volume_cuft >= 0"),
            Col("roof_runoff_only", "bool", "Treats rooftop runoff only (no pretreatment "
                "needed).", True),
        ),
    ),
    Layer(
        "hydroperiod", None, "5(d)",
        "Modelled 10-year bounce and inundation period of a receiving wetland.",
        (
            _permit(),
            Col("wetland_id", "ref:wetland", "Receiving wetland.", True),
            Col("existing_bounce_ft", "numeric", "Existing 10-year bounce, feet.", True),
            Col("proposed_bounce_ft", "numeric", "Proposed 10-year bounce, feet.", True),
            Col("existing_inundation_days", "numeric", "Existing inundation period, days.", True),
            Col("proposed_inundation_days", "numeric", "Proposed inundation period, days.", True),
        ),
    ),
    Layer(
        "species_record", "MULTIPOLYGON", "3(d)",
        "Protected plant or animal species observations (restricted: not published).",
        (
            _permit(required=False),
            Col("species", "text", "Species name.", True),
            Col("observed_on", "date", "Observation date."),
            Col("status", "text", "Legal status (endangered, threatened, special concern)."),
        ),
        restricted=True,
    ),
)

BY_NAME: dict[str, Layer] = {layer.name: layer for layer in LAYERS}


def layer(name: str) -> Layer:
    """The layer called name, or a KeyError that lists the known layers."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown layer {name!r}; layers are: {', '.join(BY_NAME)}") from None
