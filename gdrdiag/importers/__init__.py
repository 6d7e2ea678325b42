"""Other tools' outputs -> Report results (provider = the tool). Pure: text in, BenchResults out.

Supported: perftest BW text output and ``--out_json`` files (:mod:`.perftest`), nvbandwidth ``-j``
JSON (:mod:`.nvbandwidth`). :func:`import_text` recognises the format from the content; anything it
cannot read raises a ``UserInputError`` subclass with one line saying what was wrong.
"""

from __future__ import annotations

import json

from gdrdiag.errors import UserInputError
from gdrdiag.importers import nvbandwidth, perftest
from gdrdiag.model.results import BenchResult

MAX_IMPORT_BYTES = 16 * 1024 * 1024


def detect(text: str) -> str:
    """``perftest-json``, ``nvbandwidth-json`` or ``perftest-text``; UserInputError when none fits."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise UserInputError(f"not valid JSON (truncated?): {exc}") from None
        if isinstance(data, dict) and "nvbandwidth" in data:
            return "nvbandwidth-json"
        if isinstance(data, dict) and "test_info" in data:
            return "perftest-json"
        raise UserInputError("JSON that is neither perftest --out_json nor nvbandwidth -j")
    if perftest._TITLE.search(text) or any(perftest._TITLE.match(ln) for ln in text.splitlines()):
        return "perftest-text"
    raise UserInputError(
        "not perftest BW output (no 'RDMA_Write/RDMA_Read/Send BW Test' header) nor tool JSON"
    )


def import_text(text: str, source: str = "", *, perftest_gbits: bool = False) -> list[BenchResult]:
    """The results in one tool output; ``perftest_gbits`` says a perftest JSON was run with --report_gbits."""
    if len(text) > MAX_IMPORT_BYTES:
        raise UserInputError(f"{source or 'input'}: larger than {MAX_IMPORT_BYTES} bytes")
    kind = detect(text)
    if kind == "perftest-text":
        return perftest.parse_text(text, source)
    data = json.loads(text)
    if kind == "perftest-json":
        return perftest.parse_json(data, source, gbits=perftest_gbits)
    return nvbandwidth.parse_json(data, source)


__all__ = ["MAX_IMPORT_BYTES", "detect", "import_text"]
