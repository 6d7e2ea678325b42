"""peer-bench results as tables (formatting only: every number was computed in bench/peer.py)."""

from __future__ import annotations

from typing import Optional

from gdrdiag.model.params import PeerParams
from gdrdiag.model.results import BenchResult, Status
from gdrdiag.render.layout import DEFAULT_WIDTH, wrap_lines
from gdrdiag.render.results_table import check_mark, num, problems, size, spread, table
from gdrdiag.render.sanitize import shown

_REFERENCE_KEYS = ("peer_ce_gdrdiag", "peer_ce_reference")


def _ratio(v: Optional[float]) -> str:
    return "-" if v is None else f"{v:.2f}"


def _access(p: PeerParams) -> str:
    return "?" if p.peer_access is None else ("on" if p.peer_access else "off")


def _what(r: BenchResult) -> str:
    p = r.params
    assert isinstance(p, PeerParams)
    if p.mover == "sm":
        return f"SM {shown(p.op)}"
    return "CE both ways" if p.bidirectional else "CE copy"


def _sweep(results: list[BenchResult], out: list[str], width: Optional[int]) -> None:
    """One row per transfer: GB/s, the model's expectation, measured / expected, the row's ratio."""
    rows_in = [
        r
        for r in results
        if isinstance(r.params, PeerParams)
        and r.status is not Status.WAIVED
        and r.key not in _REFERENCE_KEYS
        and r.params.op != "latency"
    ]
    if rows_in:
        rows = []
        for r in rows_in:
            p, m = r.params, r.metrics
            assert isinstance(p, PeerParams)
            extra = _ratio(getattr(m, "on_over_off", None))
            if p.mover == "sm":
                extra = _ratio(getattr(m, "ratio_to_ce", None)) + " of CE"
            elif getattr(m, "on_over_off", None) is not None:
                extra += " on/off"
            rows.append(
                [
                    f"{shown(p.src_gpu)}{'<->' if p.bidirectional else '->'}{shown(p.dst_gpu)}",
                    p.path or "?",
                    _what(r),
                    _access(p),
                    size(p.size_bytes),
                    num(r.value),
                    spread(r),
                    num(getattr(m, "expected_gbytes_per_s", None), 1),
                    _ratio(getattr(m, "measured_over_expected", None)),
                    extra,
                    check_mark(r),
                ]
            )
        out.append(
            "GPU<->GPU transfers (GB/s = 1e9 B/s, median of samples; expected from the path model)\n"
            + table(
                rows,
                [
                    "GPUs",
                    "path",
                    "mover",
                    "peer",
                    "size",
                    "GB/s",
                    "min-max",
                    "expected",
                    "meas/exp",
                    "ratio",
                    "payload",
                ],
                width=width,
            )
        )


def _references(results: list[BenchResult], out: list[str], width: Optional[int]) -> None:
    """The peer copy of gdrdiag beside CuPy's on the same buffers."""
    refs = [r for r in results if r.key in _REFERENCE_KEYS and r.status is not Status.WAIVED]
    if refs:
        rows = [
            [
                f"{shown(r.params.src_gpu)}->{shown(r.params.dst_gpu)}",  # type: ignore[union-attr]
                _access(r.params),  # type: ignore[arg-type]
                r.params.library or "gdrdiag",  # type: ignore[union-attr]
                size(r.params.size_bytes),  # type: ignore[union-attr]
                num(r.value),
                spread(r),
                _ratio(getattr(r.metrics, "gdrdiag_over_reference", None)),
                check_mark(r),
            ]
            for r in refs
        ]
        out.append(
            "Peer copies beside CuPy, same buffers, interleaved rounds\n"
            + table(
                rows,
                ["GPUs", "peer", "library", "size", "GB/s", "min-max", "gdrdiag/ref", "payload"],
                width=width,
            )
        )


def _latencies(results: list[BenchResult], out: list[str], width: Optional[int]) -> None:
    """One small copy at a time: the median per-copy latency, peer access off and on."""
    rows_in = [
        r
        for r in results
        if isinstance(r.params, PeerParams) and r.params.op == "latency" and r.status is not Status.WAIVED
    ]
    if rows_in:
        rows = [
            [
                f"{shown(r.params.src_gpu)}->{shown(r.params.dst_gpu)}",  # type: ignore[union-attr]
                r.params.path or "?",  # type: ignore[union-attr]
                _access(r.params),  # type: ignore[arg-type]
                size(r.params.size_bytes),  # type: ignore[union-attr]
                num(r.value),
                spread(r),
                check_mark(r),
            ]
            for r in rows_in
        ]
        out.append(
            "Peer copy latency (one copy at a time, CUDA events; median us)\n"
            + table(rows, ["GPUs", "path", "peer", "size", "us", "min-max", "payload"], width=width)
        )


def render_peer_results(results: list[BenchResult], width: Optional[int] = DEFAULT_WIDTH) -> str:
    """The sweep (measured / expected per row), the reference comparison, the models, problems."""
    out: list[str] = []
    _sweep(results, out, width)
    _references(results, out, width)
    _latencies(results, out, width)
    models = sorted({r.params.model for r in results if isinstance(r.params, PeerParams) and r.params.model})
    if models:
        out.append(wrap_lines("Expected values:\n" + "\n".join(f"  {m}" for m in models), width))
    waived = [r for r in results if r.status is Status.WAIVED]
    if waived:
        reasons = sorted({r.reason or "" for r in waived})
        out.append(
            wrap_lines(
                f"WAIVED ({len(waived)} cases): " + "; ".join(reasons),
                width,
            )
        )
    bad = problems(results)
    if bad:
        out.append(bad)
    return "\n\n".join(out) if out else "no peer-bench results"
