"""What every importer shares: the bounds that keep an import small and its Report readable.

Every number an importer keeps goes through :func:`number` or :func:`integer`, every name through
:func:`text`, and every result through :func:`add`: so a hostile file (``Infinity``, ``1e309``, a
1000-digit integer, a device "name" that is a list, a matrix of a million cells) is one
``UserInputError`` line, never a traceback, and a Report that ``import`` writes always reads back
(the Report reader refuses non-finite floats, floats above 1e300 and integers outside 64 bits).
"""

from __future__ import annotations

import json
import math
from typing import Any, Optional

from gdrdiag.errors import UserInputError

#: The most results one ``gdrdiag import`` makes (all files together). An 8-GPU nvbandwidth run of
#: every testcase is about 1,500 cells, an nccl-tests sweep a few dozen rows, a bandwidthTest shmoo
#: about 80; a Report of this many imported results is about 20 MB of JSON.
MAX_IMPORT_RESULTS = 10_000
#: No tool these importers read reports a bandwidth, latency or rate above this (in its own unit).
MAX_NUMBER = 1e15
#: Sizes, counts and iterations above this are not a measurement (and would not fit a Report's 64 bits).
MAX_INT = 1 << 62
#: Names (devices, hosts, connection types) longer than this are cut.
MAX_TEXT = 200
#: Numbers are read from at most this many characters (a 400-digit "size" is refused, not parsed).
MAX_DIGITS = 40


class ImportLimitError(UserInputError):
    """An import larger than :data:`MAX_IMPORT_RESULTS` results."""


def add(out: list, item: Any, already: int = 0) -> None:
    """Append ``item`` to ``out``; one line when the import would exceed MAX_IMPORT_RESULTS."""
    if len(out) + already >= MAX_IMPORT_RESULTS:
        raise ImportLimitError(
            f"more than {MAX_IMPORT_RESULTS} results in one import (gdrdiag's limit); "
            "import fewer testcases or sizes at a time"
        )
    out.append(item)


def number(value: Any, what: str, *, allow_zero: bool = True) -> float:
    """A finite, non-negative float below MAX_NUMBER from a JSON number or a numeric string."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise UserInputError(f"{what}: {_show(value)} is not a number")
    if isinstance(value, str):
        s = value.strip()
        if len(s) > MAX_DIGITS:
            raise UserInputError(f"{what}: {_show(value)} is not a number")
        try:
            v = float(s)
        except ValueError:
            raise UserInputError(f"{what}: {_show(value)} is not a number") from None
    elif isinstance(value, int):
        if abs(value) > MAX_NUMBER:
            raise UserInputError(f"{what}: {_show(value)} is out of range")
        v = float(value)
    else:
        v = value
    if not math.isfinite(v) or v < 0 or v > MAX_NUMBER or (v == 0 and not allow_zero):
        raise UserInputError(f"{what}: {_show(value)} is out of range")
    return v


def integer(value: Any, what: str) -> int:
    """A non-negative integer below MAX_INT from a JSON integer or a string of digits."""
    if isinstance(value, bool):
        raise UserInputError(f"{what}: {_show(value)} is not an integer")
    if isinstance(value, str):
        s = value.strip()
        if not s or len(s) > MAX_DIGITS or not s.isdigit() or not s.isascii():
            raise UserInputError(f"{what}: {_show(value)} is not an integer")
        value = int(s)
    if not isinstance(value, int):
        raise UserInputError(f"{what}: {_show(value)} is not an integer")
    if not 0 <= value < MAX_INT:
        raise UserInputError(f"{what}: {_show(value)} is out of range")
    return value


def text(value: Any, what: str) -> Optional[str]:
    """A name as the tool printed it: a string (cut to MAX_TEXT) or None; anything else is refused."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise UserInputError(f"{what}: expected a string, got {type(value).__name__}")
    return value[:MAX_TEXT]


def loads(data: str, what: str) -> Any:
    """JSON text -> Python, refusing NaN/Infinity literals and nesting Python cannot decode."""

    def refuse(name: str) -> Any:
        raise UserInputError(f"{what}: {name} is not a number JSON allows")

    try:
        return json.loads(data, parse_constant=refuse)
    except RecursionError:
        raise UserInputError(f"{what}: JSON nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, and integers of more than 4300 digits
        raise UserInputError(f"{what}: not valid JSON (truncated?): {str(exc)[:120]}") from None


def _show(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**20:
        return f"an integer of {value.bit_length()} bits"
    s = repr(value)
    return s if len(s) <= 40 else s[:37] + "..."
