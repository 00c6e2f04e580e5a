"""The map's search by site address and owner (/api/parcels, docs/publishing.md "Web
service"): the parcels whose address or owner holds the words, as pub.parcel has them; the
panel's answer names the parcel's address and owner; a query too short or too long is a
one-line 400, and LIKE's wildcards and quotes are taken literally. Expected answers are read
from pub.parcel with SQL, never written here."""

from __future__ import annotations

import httpx
import pytest
import sqlalchemy as sa
from web_server import web_server_fixture  # noqa: F401  (provides `web_server`)


def get(server, path: str, **params: str) -> httpx.Response:
    return httpx.get(server.base_url + path, params=params, timeout=60)


def pins_where(server, condition: str, **params: str) -> list[str]:
    """The display PINs of the current parcels meeting an SQL condition, read as the owner."""
    eng = sa.create_engine(server.url)
    try:
        with eng.connect() as conn:
            return sorted(conn.execute(sa.text(
                f"SELECT pin_display FROM pub.parcel WHERE {condition}"), params).scalars())
    finally:
        eng.dispose()


def a_street(server) -> str:
    """A street name of the demo's addresses: the words after the house number."""
    eng = sa.create_engine(server.url)
    try:
        with eng.connect() as conn:
            address = conn.execute(sa.text(
                "SELECT site_address FROM pub.parcel WHERE site_address IS NOT NULL "
                "ORDER BY pin_display LIMIT 1")).scalar()
    finally:
        eng.dispose()
    assert address, "the demo's parcels carry site addresses"
    return address.split(" ", 1)[1]


def test_an_address_fragment_finds_every_parcel_on_the_street(web_server) -> None:
    street = a_street(web_server)
    expected = pins_where(web_server, "site_address ILIKE :s OR owner_name ILIKE :s",
                          s=f"%{street}%")
    r = get(web_server, "/api/parcels", q=street.lower())
    assert r.status_code == 200
    found = r.json()
    assert sorted(p["pin"] for p in found) == expected[:20]
    assert len(expected) > 1
    assert all(street.lower() in (p["site_address"] or "").lower() for p in found)
    assert all(len(p["bbox"]) == 4 for p in found)


def test_an_owner_name_finds_that_owners_parcels(web_server) -> None:
    eng = sa.create_engine(web_server.url)
    try:
        with eng.connect() as conn:
            owner = conn.execute(sa.text(
                "SELECT owner_name FROM pub.parcel WHERE owner_name IS NOT NULL "
                "GROUP BY owner_name ORDER BY count(*) DESC, owner_name LIMIT 1")).scalar()
    finally:
        eng.dispose()
    word = max(owner.split(), key=len)
    expected = pins_where(web_server, "site_address ILIKE :s OR owner_name ILIKE :s",
                          s=f"%{word}%")
    found = get(web_server, "/api/parcels", q=word.upper()).json()
    assert sorted(p["pin"] for p in found) == expected[:20]
    assert owner in {p["owner_name"] for p in found}


def test_the_parcel_panel_names_the_address_and_owner(web_server) -> None:
    eng = sa.create_engine(web_server.url)
    try:
        with eng.connect() as conn:
            pin, address, owner = conn.execute(sa.text(
                "SELECT pin_display, site_address, owner_name FROM pub.parcel "
                "WHERE site_address IS NOT NULL ORDER BY pin_display LIMIT 1")).one()
    finally:
        eng.dispose()
    body = get(web_server, "/api/parcel", pin=pin).json()
    assert (body["site_address"], body["owner_name"]) == (address, owner)


@pytest.mark.parametrize("q", ["", "ab", "  a  ", "x" * 101])
def test_too_short_or_too_long_is_one_line_400(web_server, q: str) -> None:
    r = get(web_server, "/api/parcels", q=q)
    assert r.status_code == 400
    assert "characters of an address" in r.json()["error"]


@pytest.mark.parametrize("q", ["%%%", "___", "%_%", "\\%\\", "' OR 1=1 --",
                               "'); DROP TABLE core.parcel; --"])
def test_wildcards_and_quotes_are_taken_literally(web_server, q: str) -> None:
    r = get(web_server, "/api/parcels", q=q)
    assert r.status_code == 200
    assert r.json() == []
    assert pins_where(web_server, "true")      # the parcels are all still there
