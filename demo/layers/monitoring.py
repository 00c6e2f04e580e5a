"""What follows a decision: sureties (financial_assurance), conditions of issuance
(permit_condition) and the yearly monitoring of certified replacements (replacement_monitoring).

Why together: a surety is posted per wetland replacement feature and held through its
monitoring years, and the conditions of issuance are met by the declarations, the easement and
the surety; all are made after every other feature, from what is already collected.
"""

from __future__ import annotations

from datetime import date

from demo.collector import Collector, Feature
from demo.geometry import acres
from demo.sites import SITES, recorded_on

# The standards a certified replacement's monitoring judges each year, and the surety per acre
# of replacement.
PERFORMANCE_STANDARDS: dict[str, str] = {
    "hydrology": "hydrology: saturated within 12 in of the surface for 14 consecutive days of "
                 "the growing season",
    "vegetation": "vegetation: native hydrophytes cover at least 50 %, invasive species less "
                  "than 10 %",
}
MONITORING_DAY = "09-20"  # the yearly monitoring visit, late growing season
MONITORING_FAILURE_NOTE = ("reed canary grass covers about 35 % of the basin; the District asks "
                           "for control and reseeding before the surety is released")
MONITORING_YEARS = 5  # the parameter monitoring_years (sql/030): years from certification
SURETY_USD_PER_ACRE = 10_000.0


def build_permit_records(c: Collector, today: date) -> None:
    """Monitoring years, sureties and conditions of issuance, after every other feature (no
    other key shifts). For each decided permit: a surety per wetland replacement feature at
    SURETY_USD_PER_ACRE (letter of credit; a bond on public land), posted at issuance and held
    until the replacement is certified and its monitoring years met (so all are held: none is
    through MONITORING_YEARS yet), but where the site says otherwise (``surety_posted_on``,
    ``surety_released_on_certification``); conditions of issuance for its declarations,
    easement and sureties, met when recorded or posted, open where the site says
    (``open_conditions``); and the impact dates of a permit with impacts (on the permit
    records, see demo/layers/permits.py). Every certified wetland replacement, the District's
    too, is monitored (``_monitoring``)."""
    replacements = {f.key: f for f in c.layers["replacement"]}
    for s in SITES:
        if s.decided_on is None:
            continue
        mine = [f for f in replacements.values()
                if f.attrs.get("permit_key") == s.permit_no
                and f.attrs["component"] == "wetland"]
        posted = s.surety_posted_on or s.decided_on
        for f in mine:
            certified_on = f.attrs["certified_on"]
            c.add("financial_assurance", c.next_key("SU"), None, permit_key=s.permit_no,
                  replacement_key=f.key,
                  amount=surety_usd(f.geom.area),
                  instrument="bond" if s.buffer_public else "letter_of_credit",
                  posted_on=posted,
                  released_on=certified_on if s.surety_released_on_certification else None)
            _monitoring(c, f, s.monitoring_not_met, s.monitoring_skipped, today)
        recorded = recorded_on(s)
        conditions = [("declaration", f"Record the {kind} declaration",
                       kind != "buffer" or s.buffer_declared) for kind in s.declarations]
        conditions += [("declaration", f"Record the {kind} declaration", False)
                       for kind in s.open_conditions]
        if s.easement:
            conditions.append(("easement", "Convey and record the easement of section 8", True))
        if mine:
            conditions.append(("surety", "Post the replacement surety", True))
        for kind, words, met in conditions:
            c.add("permit_condition", c.next_key("PC"), None, permit_key=s.permit_no,
                  condition=words, kind=kind, state="met" if met else "open",
                  due_on=recorded,
                  met_on=(posted if kind == "surety" else recorded) if met else None)
    for f in replacements.values():  # the District monitors its own projects too
        if f.attrs.get("permit_key") is None and f.attrs["component"] == "wetland":
            _monitoring(c, f, (), (), today)


def _monitoring(c: Collector, f: Feature, not_met: tuple[str, ...],
                skipped: tuple[int, ...], today: date) -> None:
    """The yearly visits of a certified wetland replacement feature: each of
    PERFORMANCE_STANDARDS observed on MONITORING_DAY (in the year of certification, on the
    certification date when that is later) of each of its MONITORING_YEARS years, as far as
    ``today`` reaches (a visit not made yet is not on record), but the ``skipped`` years;
    ``not_met`` standards fail in the first year."""
    certified_on = f.attrs.get("certified_on")
    if certified_on is None:
        return
    first = int(certified_on[:4])
    for year in range(first, first + MONITORING_YEARS):
        visit = max(f"{year}-{MONITORING_DAY}", certified_on if year == first else "")
        if year in skipped or date.fromisoformat(visit) > today:
            continue
        for standard, words in PERFORMANCE_STANDARDS.items():
            failed = year == first and standard in not_met
            c.add("replacement_monitoring", c.next_key("RM"), None,
                  replacement_key=f.key, monitoring_year=year,
                  performance_standard=words, outcome="not_met" if failed else "met",
                  observed_on=visit, notes=MONITORING_FAILURE_NOTE if failed else None)


def surety_usd(area_m2: float) -> float:
    """A replacement's surety: SURETY_USD_PER_ACRE per acre, to the next 100 dollars."""
    return float(-(-round(acres(area_m2) * SURETY_USD_PER_ACRE) // 100) * 100)
