"""The one form a PIN is shown in: the Python twin of core.pin_display (sql/025_pin_display.sql).

Why a twin: reports and maps format PINs they read from places that hold them as delivered or
normalized (run records, feature keys), and a label drawn in Python must read exactly as the
table beside it. tests/publish/test_publish_look.py holds the two to the same answers.
"""

from __future__ import annotations

import re

_NOT_ALNUM = re.compile(r"[^0-9A-Za-z]")
_TWELVE_DIGITS = re.compile(r"[0-9]{12}")


def pin_display(pin: str | None) -> str | None:
    """A PIN as people read it: NN-NN-NN-NN-NNNN for a 12-digit (Anoka County) PIN in any
    punctuation, anything else as delivered (reformatting what we do not understand would hide
    it); None stays None."""
    if pin is None:
        return None
    digits = _NOT_ALNUM.sub("", pin)
    if not _TWELVE_DIGITS.fullmatch(digits):
        return pin
    return f"{digits[0:2]}-{digits[2:4]}-{digits[4:6]}-{digits[6:8]}-{digits[8:12]}"
