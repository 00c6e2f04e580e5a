"""Hardening: the audit trail, backup and restore, and secrets kept out of output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from rulem_db import db
from rulem_db.catalogue.layers import LAYERS
from rulem_db.local import backup

SQUARE = "ST_Multi(ST_MakeEnvelope(0, 0, 100, 100, 26915))"


def _history(engine: sa.Engine) -> dict[str, list[tuple]]:
    """Every version of every layer, bookkeeping included, in a stable order."""
    out: dict[str, list[tuple]] = {}
    with engine.connect() as conn:
        for layer in LAYERS:
            out[layer.name] = [tuple(r) for r in conn.execute(sa.text(
                f"SELECT md5(t::text) FROM core.{layer.name} t ORDER BY version_id"))]
        out["feature"] = conn.execute(sa.text(
            "SELECT md5(f::text) FROM core.feature f ORDER BY feature_id")).all()
        out["parameter"] = conn.execute(sa.text(
            "SELECT md5(p::text) FROM core.parameter p ORDER BY parameter_id")).all()
    return out


def _edit_history(engine: sa.Engine) -> int:
    with engine.begin() as conn:
        pid = conn.execute(sa.text(
            "INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom) "
            f"VALUES (1, 'A', 'A', {SQUARE}) RETURNING parcel_id")).scalar_one()
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE core.parcel SET pin = 'A-1' WHERE parcel_id = :p"),
                     {"p": pid})
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE core.parcel SET valid_to = now() WHERE parcel_id = :p "
                             "AND valid_to IS NULL"), {"p": pid})
    with engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom) "
                             f"VALUES (1, 'A-2', 'A', {SQUARE})"))
    return pid


def test_change_history_shows_who_did_what_from_which_version(engine: sa.Engine) -> None:
    pid = _edit_history(engine)
    with engine.connect() as conn:
        events = conn.execute(sa.text(
            "SELECT action, changed_by = current_user, old_version_id IS NULL, "
            "new_version_id IS NULL FROM pub.change_history "
            "WHERE layer = 'parcel' AND feature_id = :p ORDER BY changed_at, action"),
            {"p": pid}).all()
        versions = conn.execute(sa.text(
            "SELECT version_id FROM core.parcel WHERE parcel_id = :p ORDER BY version_id"),
            {"p": pid}).scalars().all()
        chain = conn.execute(sa.text(
            "SELECT old_version_id, new_version_id FROM pub.change_history "
            "WHERE layer = 'parcel' AND feature_id = :p AND action = 'update'"),
            {"p": pid}).one()
    assert [e[0] for e in events] == ["insert", "update", "retire", "reinstate"]
    assert all(e[1] for e in events)
    assert tuple(chain) == (versions[0], versions[1])


def test_backup_and_restore_keep_every_version(engine: sa.Engine, db_url: str,
                                               empty_db_url: str, tmp_path: Path) -> None:
    _edit_history(engine)
    before = _history(engine)
    path = backup.backup(db_url, tmp_path / "rulem.dump")
    backup.restore(empty_db_url, path)
    restored = db.engine(empty_db_url)
    try:
        assert _history(restored) == before
        # the versioning triggers are back after the restore
        with pytest.raises(sa.exc.DBAPIError, match="DELETE is not allowed"), \
                restored.begin() as conn:
            conn.execute(sa.text("DELETE FROM core.parcel"))
    finally:
        restored.dispose()
    db.migrate(empty_db_url)  # a restored database migrates like any other


def test_restore_refuses_a_database_that_has_data(db_url: str, tmp_path: Path) -> None:
    path = backup.backup(db_url, tmp_path / "rulem.dump")
    with pytest.raises(backup.BackupError, match="already holds a rulem-db schema"):
        backup.restore(db_url, path)


def test_errors_never_show_the_password(db_url: str, tmp_path: Path) -> None:
    wrong = sa.engine.make_url(db_url).set(password="s3cret-not-shown", database="nope")
    url = wrong.render_as_string(hide_password=False)
    proc = subprocess.run(
        [sys.executable, "-m", "rulem_cli.main", "--db", url, "backup", str(tmp_path / "x.dump")],
        capture_output=True, text=True)
    assert proc.returncode != 0
    assert "s3cret-not-shown" not in proc.stderr + proc.stdout
    assert proc.stderr.startswith("rulem-db backup:")


def test_etl_role_cannot_delete_or_rewrite_history(engine: sa.Engine) -> None:
    pid = _edit_history(engine)
    for sql, match in [
        ("DELETE FROM core.parcel", "permission denied|not allowed"),
        ("TRUNCATE core.parcel", "permission denied|not allowed"),
        (f"UPDATE core.parcel SET pin = 'forged' WHERE parcel_id = {pid} "
         "AND valid_to IS NOT NULL", "is history"),
        ("UPDATE core.parameter SET value_num = 2 WHERE name = 'replacement_ratio'",
         "permission denied|append-only"),
        ("DELETE FROM ops.batch", "permission denied"),
    ]:
        with pytest.raises(sa.exc.DBAPIError, match=match), engine.begin() as conn:
            conn.execute(sa.text("SET ROLE rulem_etl"))
            conn.execute(sa.text(sql))


def test_restricted_layers_are_readable_only_by_the_restricted_role(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        conn.execute(sa.text(
            "INSERT INTO core.species_record (plan_area_id, species, source_fid, geom) "
            f"VALUES (1, 'Blanding''s turtle', 'S1', {SQUARE})"))
    with engine.connect() as conn:
        conn.execute(sa.text("SET ROLE rulem_restricted"))
        assert conn.execute(sa.text("SELECT count(*) FROM restricted.species_record")).scalar() == 1
    for role in ("rulem_staff", "rulem_gis", "rulem_etl"):
        with pytest.raises(sa.exc.ProgrammingError, match="permission denied"), \
                engine.connect() as conn:
            conn.execute(sa.text(f"SET ROLE {role}"))
            conn.execute(sa.text("SELECT count(*) FROM restricted.species_record"))
    with engine.connect() as conn:
        published = conn.execute(sa.text(
            "SELECT count(*) FROM information_schema.views WHERE table_schema = 'pub' "
            "AND view_definition ILIKE '%species_record%'")).scalar()
    assert published == 0


def test_public_can_execute_nothing_and_security_definers_pin_search_path(
        engine: sa.Engine) -> None:
    with engine.connect() as conn:
        public_exec = conn.execute(sa.text(
            "SELECT p.oid::regprocedure::text FROM pg_proc p "
            "JOIN pg_namespace n ON n.oid = p.pronamespace "
            "WHERE n.nspname IN ('core', 'ops', 'staging', 'ledger', 'checks') "
            "AND has_function_privilege('public', p.oid, 'EXECUTE')")).scalars().all()
        loose_definers = conn.execute(sa.text(
            "SELECT p.oid::regprocedure::text FROM pg_proc p "
            "JOIN pg_namespace n ON n.oid = p.pronamespace "
            "WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'public') "
            "AND p.prosecdef AND NOT EXISTS (SELECT 1 FROM unnest(p.proconfig) c "
            "WHERE c LIKE 'search_path=%')")).scalars().all()
    assert public_exec == []
    assert loose_definers == []
