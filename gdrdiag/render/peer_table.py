"""peer-bench results as tables (formatting only: every number was computed in bench/peer.py)."""

from __future__ import annotations

from typing import Optional

from gdrdiag.model.params import PeerParams
from gdrdiag.model.results import BenchResult, Status
from gdrdiag.render.layout import DEFAULT_WIDTH, wrap_lines
from gdrdiag.render.results_table import check_mark, num, problems, size, spread, table
from gdrdiag.render.sanitize import shown

_REFERENCE_KEYS = ("peer_ce_gdrdiag", "peer_ce_reference")
_BLOCK_WAYS = (
    ("per_call", "per call (Python)"),
    ("batched", "batched"),
    ("coalesced", "coalesced"),
    ("kernel", "gather kernel"),
)
_HALF_FIELDS = (
    ("per_call", "half_bandwidth_block_bytes_per_call"),
    ("batched", "half_bandwidth_block_bytes_batched"),
    ("kernel", "half_bandwidth_block_bytes_kernel"),
)


def _ratio(v: Optional[float]) -> str:
    return "-" if v is None else f"{v:.2f}"


def _access(p: PeerParams) -> str:
    return "?" if p.peer_access is None else ("on" if p.peer_access else "off")


def _what(r: BenchResult) -> str:
    p = r.params
    assert isinstance(p, PeerParams)
    if p.mover == "sm":
        return f"SM {shown(p.op)}"
    if p.op == "all_to_one":
        return "CE all-to-one"
    if p.op == "all_to_all":
        return "CE all-to-all"
    if p.op == "one_to_all":
        return "CE one-to-all"
    return "CE both ways" if p.bidirectional else "CE copy"


def _gpus(p: PeerParams) -> str:
    if p.op == "all_to_one" and p.src_gpu is None:
        return f"{p.sources or '?'} GPUs->{shown(p.dst_gpu)}"
    if p.op == "all_to_all":
        return f"{p.sources or '?'} GPUs<->all"
    if p.op == "one_to_all" and p.dst_gpu is None:
        return f"{shown(p.src_gpu)}->{p.destinations or '?'} GPUs"
    return f"{shown(p.src_gpu)}{'<->' if p.bidirectional else '->'}{shown(p.dst_gpu)}"


def _sweep(results: list[BenchResult], out: list[str], width: Optional[int]) -> None:
    """One row per transfer: GB/s, the model's expectation, measured / expected, the row's ratio."""
    rows_in = [
        r
        for r in results
        if isinstance(r.params, PeerParams)
        and r.status is not Status.WAIVED
        and r.key not in _REFERENCE_KEYS
        and r.params.op != "latency"
        and r.params.block_bytes is None
        and not r.key.startswith("peer_blocks")
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
                    _gpus(p),
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
                "SM load round trip" if r.params.mover == "sm" else "CE copy",  # type: ignore[union-attr]
                _access(r.params),  # type: ignore[arg-type]
                size(r.params.size_bytes),  # type: ignore[union-attr]
                num(r.value),
                spread(r),
                check_mark(r),
            ]
            for r in rows_in
        ]
        out.append(
            "Peer latency (one at a time, CUDA events; median us; SM: GPU dst loads from src's memory)\n"
            + table(rows, ["GPUs", "path", "what", "peer", "size", "us", "min-max", "payload"], width=width)
        )


def _blocks(results: list[BenchResult], out: list[str], width: Optional[int]) -> None:
    """The block sweep per ordered pair, as copy-bench's block table: GB/s (us per block) per way."""
    by_pair: dict[tuple, dict[int, dict[str, BenchResult]]] = {}
    for r in results:
        p = r.params
        if not isinstance(p, PeerParams) or p.block_bytes is None or r.status is Status.WAIVED:
            continue
        if not r.key.startswith("peer_blocks_") or r.key == "peer_blocks_summary":
            continue
        way = r.key.removeprefix("peer_blocks_")
        by_pair.setdefault((p.src_gpu, p.dst_gpu, p.path), {}).setdefault(p.block_bytes, {})[way] = r
    gap = " " if width is None else "\n"  # narrow: the time per block under the bandwidth
    for (src, dst, path), by_size in by_pair.items():
        rows = []
        for bs in sorted(by_size):
            row = by_size[bs]
            cells = [size(bs), str(next(iter(row.values())).params.blocks)]  # type: ignore[union-attr]
            for way, _ in _BLOCK_WAYS:
                r = row.get(way)
                us = getattr(r.metrics, "us_per_block", None) if r is not None else None
                cells.append(
                    "-" if r is None or r.status is not Status.OK else f"{num(r.value)}{gap}({num(us, 3)} us)"
                )
            rows.append(cells)
        title = f"Block sweep, GPU {src} -> GPU {dst} ({path or '?'}, peer access on), GB/s"
        title += " (microseconds per block)"
        out.append(
            wrap_lines(title, width)
            + "\n"
            + table(rows, ["block", "blocks", *[t for _, t in _BLOCK_WAYS]], width=width, wrap=(2, 3, 4, 5))
        )


def _half_bandwidth(results: list[BenchResult], out: list[str], width: Optional[int]) -> None:
    """Where each way of the block sweep reaches half the coalesced rate, per ordered pair."""
    for r in results:
        if r.key != "peer_blocks_summary" or not isinstance(r.params, PeerParams):
            continue
        parts = []
        for name, field_name in _HALF_FIELDS:
            v = getattr(r.metrics, field_name, None)
            parts.append(f"{name}: {size(round(v)) if v is not None else 'never'}")
        out.append(
            wrap_lines(
                f"GPU {shown(r.params.src_gpu)} -> GPU {shown(r.params.dst_gpu)}: half the coalesced rate is "
                "reached at "
                "block size -> " + "; ".join(parts),
                width,
            )
        )


def _matrices(results: list[BenchResult], out: list[str], width: Optional[int]) -> None:
    """On three GPUs or more, each one-way case at each size as a source x destination matrix (GB/s).

    A node of 8 GPUs has 56 ordered pairs: a matrix shows the pair that differs at a glance, as
    nvidia-smi topo -m and p2pBandwidthLatencyTest print theirs.
    """
    cells: dict[tuple[str, int], dict[tuple[int, int], float]] = {}
    for r in results:
        p = r.params
        if not isinstance(p, PeerParams) or r.status is not Status.OK or r.value is None:
            continue
        if p.src_gpu is None or p.dst_gpu is None or p.bidirectional or p.size_bytes is None:
            continue
        if r.unit != "GB/s" or p.library or r.key == "peer_ce_gdrdiag":  # the reference comparison's own
            continue
        what = f"{_what(r)}, peer access {_access(p)}"
        cells.setdefault((what, p.size_bytes), {})[(p.src_gpu, p.dst_gpu)] = r.value
    for (what, nbytes), by_pair in cells.items():
        gpus = sorted({g for pair in by_pair for g in pair})
        if len(gpus) < 3:
            continue
        rows = [
            [f"GPU {src}", *("-" if src == dst else num(by_pair.get((src, dst)), 1) for dst in gpus)]
            for src in gpus
        ]
        headers = ["from \\ to", *(f"GPU {g}" for g in gpus)]
        title = f"{what}, {size(nbytes)} (GB/s; a row is the source, a column the destination)"
        out.append(title + "\n" + table(rows, headers, width=width))


def render_peer_results(results: list[BenchResult], width: Optional[int] = DEFAULT_WIDTH) -> str:
    """Matrices (three GPUs or more), the sweep (measured / expected per row), references, models."""
    out: list[str] = []
    _matrices(results, out, width)
    _sweep(results, out, width)
    _references(results, out, width)
    _latencies(results, out, width)
    _blocks(results, out, width)
    _half_bandwidth(results, out, width)
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
