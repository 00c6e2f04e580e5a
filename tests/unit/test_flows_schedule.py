"""`rulem-db schedule`: the deployment it serves (cron, time zone, parameters), checked without a
Prefect server; serving itself was tried against a real server (docs/operations.md)."""

from __future__ import annotations

import argparse

import pytest

from rulem_cli import main as cli
from rulem_cli.commands import schedule


def _args(*argv: str) -> argparse.Namespace:
    return cli.build_parser().parse_args(["schedule", *argv])


def test_default_is_two_in_the_morning_in_chicago(tmp_path):
    deployment = schedule.build_deployment(_args("--inbox", str(tmp_path)))
    (sched,) = deployment.schedules
    assert (sched.schedule.cron, sched.schedule.timezone) == ("0 2 * * *", "America/Chicago")
    assert deployment.name == "nightly"
    assert deployment.entrypoint == "flows.nightly.nightly_reconciliation"
    assert deployment.parameters["inbox"] == str(tmp_path.resolve())
    assert deployment.parameters["started_via"] == "schedule"
    assert "url" not in deployment.parameters and "db" not in deployment.parameters


def test_cron_and_time_zone_can_change(capsys):
    code = cli.main(["schedule", "--cron", "30 23 * * 1-5", "--timezone", "UTC", "--dry-run"])
    out = capsys.readouterr().out
    assert code == 0
    assert "cron '30 23 * * 1-5' in UTC" in out
    runs = [line for line in out.splitlines() if "next run:" in line]
    assert len(runs) == 3 and all("T23:30:00+00:00" in r for r in runs)


def test_next_runs_follow_daylight_saving_time():
    # 02:00 in Chicago is 08:00 UTC in winter and 07:00 UTC in summer.
    import datetime as dt

    dates = schedule.next_runs("0 2 * * *", "America/Chicago", 400)
    offsets = {d.astimezone(dt.UTC).hour for d in dates}
    assert offsets == {7, 8}


@pytest.mark.parametrize("argv, message", [
    (["--cron", "0 25 * * *"], "Invalid cron string"),
    (["--timezone", "Mars/Olympus"], "Invalid timezone"),
])
def test_bad_schedules_are_refused_in_one_line(argv, message, capsys):
    assert cli.main(["schedule", *argv, "--dry-run"]) != 0
    err = capsys.readouterr().err
    assert err.startswith("rulem-db schedule: bad schedule") and message in err
    assert len(err.strip().splitlines()) == 1


def test_serving_needs_a_prefect_server(monkeypatch, capsys):
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings(updates={PREFECT_API_URL: None}):
        assert cli.main(["schedule"]) != 0
    assert "PREFECT_API_URL is not set" in capsys.readouterr().err
