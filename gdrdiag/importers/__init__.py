"""Other tools' outputs -> Report results (provider = the tool). Pure: text in, BenchResults out.

Supported, recognised from the content (:func:`detect`):

- perftest BW text output and ``--out_json`` files (:mod:`.perftest`);
- nvbandwidth ``-j`` JSON (:mod:`.nvbandwidth`);
- CUDA samples ``bandwidthTest`` text or ``--csv`` (:mod:`.bandwidth_test`);
- CUDA samples ``p2pBandwidthLatencyTest`` text (:mod:`.p2p_test`);
- nccl-tests (``all_reduce_perf`` ...) text and ``-J`` JSON (:mod:`.nccl_tests`);
- UCX's ``ucx_perftest`` text, with UCX_PROTO_INFO tables where printed (:mod:`.ucx_perftest`);
- NCCL's own INFO log (``NCCL_DEBUG=INFO``) without an nccl-tests table (:mod:`.nccl_log`): one
  result holding the run's facts and no bandwidth.

Anything :func:`import_text` cannot read raises a ``UserInputError`` subclass with one line saying
what was wrong. The bounds (:mod:`.common`): at most MAX_IMPORT_BYTES of text per file, at most
MAX_IMPORT_RESULTS results, and only numbers a Report can hold.
"""

from __future__ import annotations

from typing import Any

from gdrdiag.errors import UserInputError
from gdrdiag.importers import (
    bandwidth_test,
    nccl_log,
    nccl_tests,
    nvbandwidth,
    p2p_test,
    perftest,
    ucx_perftest,
)
from gdrdiag.importers.common import MAX_IMPORT_RESULTS, ImportLimitError, loads
from gdrdiag.model.results import BenchResult

MAX_IMPORT_BYTES = 16 * 1024 * 1024

FORMATS = (
    "perftest-text",
    "perftest-json",
    "nvbandwidth-json",
    "bandwidthTest-text",
    "p2pBandwidthLatencyTest-text",
    "nccl-tests-text",
    "nccl-tests-json",
    "nccl-log-text",
    "ucx_perftest-text",
)


def _detect(text: str) -> tuple[str, Any]:
    """(format, decoded JSON or None); UserInputError when no format fits."""
    if text.lstrip().startswith("{"):
        data = loads(text, "input")
        if isinstance(data, dict) and "nvbandwidth" in data:
            return "nvbandwidth-json", data
        if isinstance(data, dict) and "test_info" in data:
            return "perftest-json", data
        if nccl_tests.is_json(data):
            return "nccl-tests-json", data
        raise UserInputError("JSON that is neither perftest --out_json, nvbandwidth -j nor nccl-tests -J")
    lines = text.splitlines()
    if p2p_test.looks_like(lines):
        return "p2pBandwidthLatencyTest-text", None
    if bandwidth_test.looks_like(lines):
        return "bandwidthTest-text", None
    if nccl_tests.looks_like(lines):
        return "nccl-tests-text", None
    if ucx_perftest.looks_like(lines):
        return "ucx_perftest-text", None
    if any(perftest.title_of(ln) for ln in lines):
        return "perftest-text", None
    if nccl_log.looks_like(lines):
        return "nccl-log-text", None
    raise UserInputError(
        "not a supported tool output (perftest BW, nvbandwidth -j, bandwidthTest, "
        "p2pBandwidthLatencyTest, nccl-tests, ucx_perftest, an NCCL_DEBUG=INFO log)"
    )


def detect(text: str) -> str:
    """The format of ``text`` (one of FORMATS); UserInputError when none fits."""
    return _detect(text)[0]


def import_text(text: str, source: str = "", *, perftest_gbits: bool = False) -> list[BenchResult]:
    """The results in one tool output; ``perftest_gbits`` says a perftest JSON was run with --report_gbits."""
    if len(text) > MAX_IMPORT_BYTES:
        raise UserInputError(f"{source or 'input'}: larger than {MAX_IMPORT_BYTES} bytes")
    kind, data = _detect(text)
    if kind == "perftest-text":
        return perftest.parse_text(text, source)
    if kind == "perftest-json":
        return perftest.parse_json(data, source, gbits=perftest_gbits)
    if kind == "nvbandwidth-json":
        return nvbandwidth.parse_json(data, source)
    if kind == "bandwidthTest-text":
        return bandwidth_test.parse_text(text, source)
    if kind == "p2pBandwidthLatencyTest-text":
        return p2p_test.parse_text(text, source)
    if kind == "nccl-tests-text":
        return nccl_tests.parse_text(text, source)
    if kind == "nccl-log-text":
        return nccl_log.parse_text(text, source)
    if kind == "ucx_perftest-text":
        return ucx_perftest.parse_text(text, source)
    return nccl_tests.parse_json(data, source)


__all__ = ["FORMATS", "MAX_IMPORT_BYTES", "MAX_IMPORT_RESULTS", "ImportLimitError", "detect", "import_text"]
