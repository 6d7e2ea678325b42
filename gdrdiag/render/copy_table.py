"""copy-bench results as tables (formatting only)."""

from __future__ import annotations

from typing import Optional

from gdrdiag.model.params import CopyParams
from gdrdiag.model.results import BenchResult, Status
from gdrdiag.render.layout import DEFAULT_WIDTH, wrap_lines
from gdrdiag.render.results_table import check_mark, num, placement_line, problems, size, spread, table
from gdrdiag.render.sanitize import shown


def _ms(seconds: "float | None") -> "float | None":
    return None if seconds is None else seconds * 1e3


def _ok(results: list[BenchResult], prefix: str) -> list[BenchResult]:
    return [r for r in results if r.key.startswith(prefix) and r.status is not Status.WAIVED]


HALF_BANDWIDTH_FIELDS = (
    "half_bandwidth_block_bytes_per_call",
    "half_bandwidth_block_bytes_per_call_c",
    "half_bandwidth_block_bytes_batched",
    "half_bandwidth_block_bytes_batched_c",
    "half_bandwidth_block_bytes_kernel",
)


def _sweep(results: list[BenchResult], out: list[str], width: Optional[int]) -> None:
    """The size sweep per memory kind and direction."""
    sweep = [
        r
        for r in results
        if isinstance(r.params, CopyParams)
        and r.params.direction
        and r.params.mode
        and r.status is not Status.WAIVED
    ]
    if sweep:
        rows = [
            [
                shown(r.params.memory),
                shown(r.params.direction),
                shown(r.params.mode),
                size(r.params.size_bytes),
                num(r.value),
                spread(r),
                check_mark(r),
            ]
            for r in sweep
        ]
        out.append(
            "Host<->GPU copies (GB/s = 1e9 B/s, median of samples)\n"
            + table(rows, ["memory", "dir", "mode", "size", "GB/s", "min-max", "payload"], width=width)
        )


def _references(results: list[BenchResult], out: list[str], width: Optional[int]) -> None:
    """The pinned H2D copy of gdrdiag beside CuPy/PyTorch, same run."""
    refs = [
        r
        for r in results
        if r.key in ("copy_h2d_pinned_gdrdiag", "copy_h2d_pinned_reference") and r.status is not Status.WAIVED
    ]
    if refs:
        rows = [
            [
                r.key,
                str(r.params.library or "gdrdiag"),
                size(r.params.size_bytes),
                num(r.value),
                num(r.metrics.gdrdiag_over_reference, 3),
                check_mark(r),
            ]
            for r in refs
        ]
        out.append(
            "Pinned H2D against other libraries, same run\n"
            + table(
                rows, ["case", "library", "size", "GB/s", "gdrdiag/ref", "payload"], width=width, wrap=(0,)
            )
        )


def _pinning(results: list[BenchResult], out: list[str], width: Optional[int]) -> None:
    """Pageable vs pin-on-demand vs preallocated."""
    pin = _ok(results, "copy_pinning_")
    if pin:
        rows = [
            [
                r.key.removeprefix("copy_pinning_"),
                size(r.params.size_bytes),
                num(r.value),
                num(r.metrics.ratio_to_preallocated, 3),
                num(r.metrics.pin_ms_median, 1),
                check_mark(r),
            ]
            for r in pin
        ]
        out.append(
            "Pinning trade-off, host->device\n"
            + table(rows, ["variant", "size", "GB/s", "vs pinned", "pin ms", "payload"], width=width)
        )


def _overlap(results: list[BenchResult], out: list[str], width: Optional[int]) -> None:
    """One stream vs two."""
    ov = _ok(results, "copy_overlap_")
    if ov:
        rows = [
            [
                r.key.removeprefix("copy_overlap_"),
                shown(r.params.layers),
                size(r.params.chunk_bytes),
                num(_ms(r.metrics.seconds_median), 1),
                num(r.metrics.parts_sum_ms, 1),
                num(r.metrics.speedup_vs_one_stream, 2),
                check_mark(r),
            ]
            for r in ov
        ]
        out.append(
            "Overlap: N x (H2D -> compute -> D2H)\n"
            + table(
                rows,
                ["pipeline", "layers", "chunk", "ms", "sum of parts ms", "speed-up", "payload"],
                width=width,
            )
        )


def _blocks(results: list[BenchResult], out: list[str], width: Optional[int]) -> None:
    """The block sweep: Python and C issue loops, batched, coalesced, kernel."""
    blocks = _ok(results, "copy_blocks_")
    by_size: dict[int, dict[str, BenchResult]] = {}
    for r in blocks:
        if r.params.block_bytes is not None:
            by_size.setdefault(int(r.params.block_bytes), {})[r.key.removeprefix("copy_blocks_")] = r  # type: ignore[arg-type]
    if by_size:
        gap = " " if width is None else "\n"  # narrow: the time per block under the bandwidth
        rows = []
        for bs in sorted(by_size):
            row = by_size[bs]
            cells = [size(bs), shown(next(iter(row.values())).params.blocks)]
            for m in (
                "per_call",
                "per_call_c",
                "batched",
                "batched_c",
                "batched_binding",
                "coalesced",
                "kernel",
            ):
                r = row.get(m)
                cells.append(
                    "-"
                    if r is None or r.status is not Status.OK
                    else f"{num(r.value)}{gap}({num(r.metrics.us_per_block, 2)} us)"
                )
            rows.append(cells)
        out.append(
            "Block sweep, host->device, GB/s (microseconds per block); batched: one batch at a time on a\n"
            "drained stream; bindings: the same call through cuda-bindings (lists converted in each call)\n"
            + table(
                rows,
                [
                    "block",
                    "blocks",
                    "per call (Python)",
                    "per call (C)",
                    "batched (Python)",
                    "batched (C)",
                    "bindings",
                    "coalesced",
                    "kernel",
                ],
                width=width,
                wrap=(2, 3, 4, 5, 6, 7, 8),
            )
        )
        issue = [
            [
                size(bs),
                *[
                    num(row[m].metrics.issue_us_per_call, 2) if m in row else "-"
                    for m in ("per_call", "per_call_c", "batched", "batched_c", "batched_binding")
                ],
            ]
            for bs, row in sorted(by_size.items())
        ]
        if any(cell != "-" for r in issue for cell in r[1:]):
            out.append(
                "Host time to issue one driver call, us (bindings: their list conversion included)\n"
                + table(
                    issue,
                    [
                        "block",
                        "per call (Python)",
                        "per call (C)",
                        "batched (Python)",
                        "batched (C)",
                        "bindings",
                    ],
                    width=width,
                )
            )


def _half_bandwidth(results: list[BenchResult], out: list[str], width: Optional[int]) -> None:
    """Where each way reaches half the coalesced bandwidth."""
    summary = next((r for r in results if r.key == "copy_blocks_summary"), None)
    if summary:
        parts = [
            f"{name.removeprefix('half_bandwidth_block_bytes_')}: "
            + (
                size(round(getattr(summary.metrics, name)))
                if getattr(summary.metrics, name) is not None
                else "never"
            )
            for name in HALF_BANDWIDTH_FIELDS
        ]
        out.append(
            wrap_lines("Half the coalesced bandwidth is reached at block size -> " + "; ".join(parts), width)
        )


def render_copy_results(results: list[BenchResult], width: Optional[int] = DEFAULT_WIDTH) -> str:
    """Placement, the link under load, every copy-bench section with results, WAIVED/ERROR reasons.

    Fitted to ``width`` (None: every column, unwrapped).
    """
    link = next((r.params.link for r in results if isinstance(r.params, CopyParams) and r.params.link), None)
    head = [placement_line(results)] + ([f"GPU link under load: {link}"] if link else [])
    out: list[str] = [wrap_lines("\n".join(line for line in head if line), width)] if any(head) else []
    for section in (_sweep, _references, _pinning, _overlap, _blocks, _half_bandwidth):
        section(results, out, width)
    bad = problems(results)
    if bad:
        out.append(wrap_lines(bad, width))
    return "\n\n".join(out) if out else "no results"
