"""The task retry policy as RULEM_TASK_RETRIES and RULEM_TASK_RETRY_DELAYS set it: defaults
when unset, the values given, and a one-line refusal naming the variable for a bad one."""

from __future__ import annotations

import pytest

from flows import retry


def test_unset_means_three_retries_after_5_30_120_seconds() -> None:
    assert retry.retries_from(None) == retry.retries_from(" ") == 3
    assert retry.delays_from(None) == retry.delays_from("") == (5.0, 30.0, 120.0)


def test_values_given_are_used() -> None:
    assert retry.retries_from("0") == 0
    assert retry.retries_from("5") == 5
    assert retry.delays_from("1") == (1.0,)
    assert retry.delays_from("0.5, 2,10") == (0.5, 2.0, 10.0)


@pytest.mark.parametrize("value", ["-1", "three", "2.5"])
def test_bad_retries_are_refused_naming_the_variable(value: str) -> None:
    with pytest.raises(ValueError, match=rf"^RULEM_TASK_RETRIES='{value}': give a whole number"):
        retry.retries_from(value)


@pytest.mark.parametrize("value", ["-5", "5,,30", "soon"])
def test_bad_delays_are_refused_naming_the_variable(value: str) -> None:
    with pytest.raises(ValueError, match=r"^RULEM_TASK_RETRY_DELAYS=.*: give seconds"):
        retry.delays_from(value)
