"""gather-bench results as tables (formatting only: every number was computed in bench/)."""

from __future__ import annotations

from typing import Iterable, Optional

from gdrdiag.model.results import BenchResult, Status
from gdrdiag.render.layout import DEFAULT_WIDTH, wrap_lines
from gdrdiag.render.results_table import check_mark, num, placement_line, problems, size, spread, table
from gdrdiag.render.sanitize import shown

CE_KEY = "gather_ce_reference"

_SWEEP_TITLES = {
    "ladder": "Kernel ladder",
    "record-size": "Record size (packed)",
    "stride": "Stride: packed vs padded to 128 B",
    "offset": "Table base offset",
    "pattern": "Index pattern",
    "sm": "SM limit (one CTA per SM)",
    "threads": "Threads per block",
    "request-rate": "Read-request rate calibration (one request per record; sets the model's cap)",
}

# Columns that distinguish rows within a sweep.
_SWEEP_COLUMNS = {
    "ladder": (),
    "record-size": ("record_bytes",),
    "stride": ("record_bytes", "stride"),
    "offset": ("record_bytes", "base_offset"),
    "pattern": ("pattern",),
    "sm": ("sm_limit",),
    "threads": ("threads",),
    "request-rate": (),
}
_HEAD = {
    "record_bytes": "R",
    "stride": "stride",
    "base_offset": "offset",
    "pattern": "pattern",
    "sm_limit": "SMs",
    "threads": "threads",
}


def _kib(v: Optional[float]) -> str:
    return "-" if v is None else f"{v / 1024:.0f}"


def _pct(v: Optional[float]) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def _row(r: BenchResult, cols: Iterable[str]) -> list[str]:
    m = r.metrics
    lead = [
        size(getattr(r.params, c)) if c in ("record_bytes", "stride_bytes") else shown(getattr(r.params, c))
        for c in cols
    ]
    return lead + [
        str(r.params.kernel or r.key),
        num(r.value) if r.status is Status.OK else r.status.value,
        spread(r),
        num(m.ratio_to_ce, 3),
        num(m.model_ratio_to_ce, 3),
        num(m.model_kernel_ratio_to_ce, 3),
        _pct(m.partial_line_loss),
        num(m.ratio_to_raw, 3),
        num(m.us_per_batch, 0),
        _kib(m.bytes_in_flight_per_sm),
        num(m.sms_used, 0),
        check_mark(r),
    ]


_TAIL = [
    "kernel",
    "GB/s",
    "min-max",
    "x CE",
    "model x CE",
    "+sort x CE",
    "line loss",
    "x raw",
    "us/batch",
    "KiB/SM in flight",
    "SMs used",
    "payload",
]


# Columns of _TAIL left out first when a sweep table must fit a narrow terminal (--wide shows them).
_DROP_FIRST = ("x raw", "KiB/SM in flight", "SMs used", "us/batch", "min-max", "+sort x CE")


def render_gather_results(
    results: list[BenchResult], notes: Iterable[str] = (), width: Optional[int] = DEFAULT_WIDTH
) -> str:
    """Placement, copy-engine references, the ladder, each sweep, notes, then WAIVED/ERROR reasons.

    Fitted to ``width`` (None: every column, unwrapped).
    """
    out: list[str] = [wrap_lines(line, width) for line in (placement_line(results),) if line]
    ce = [r for r in results if r.key == CE_KEY and r.status is not Status.WAIVED]
    if ce:
        rows = [
            [
                size(r.params.copy_bytes),
                num(r.value),
                spread(r),
                num(r.metrics.ratio_to_raw, 3),
                num(r.metrics.us_per_batch, 0),
                check_mark(r),
            ]
            for r in ce
        ]
        out.append(
            "Copy-engine reference (cuMemcpyHtoDAsync, same bytes, same pinned table, same run)\n"
            + table(rows, ["bytes", "GB/s", "min-max", "x raw", "us/batch", "payload"], width=width)
        )
    gathers = [
        r
        for r in results
        if r.key.startswith("gather_") and r.key != CE_KEY and r.status is not Status.WAIVED
    ]
    sweeps: dict[str, list[BenchResult]] = {}
    for r in gathers:
        sweeps.setdefault(str(r.settings.sweep or "ladder"), []).append(r)
    for sweep, rows in sweeps.items():
        cols = _SWEEP_COLUMNS.get(sweep, ())
        first = rows[0].params
        where = (
            ""
            if sweep in ("record-size", "stride", "offset")
            else (
                f" - R={shown(first.record_bytes)} B, stride {shown(first.stride_bytes)} B, "
                f"offset {shown(first.base_offset_bytes)} B, "
                f"{shown(first.pattern)} indices, {shown(first.records)} records"
            )
        )
        title = f"{_SWEEP_TITLES.get(sweep, sweep)}{where} (GB/s = 1e9 B/s of records, median)"
        drop = [len(cols) + _TAIL.index(name) for name in _DROP_FIRST]
        out.append(
            wrap_lines(title, width)
            + "\n"
            + table(
                [_row(r, cols) for r in rows],
                [_HEAD[c] for c in cols] + _TAIL,
                width=width,
                wrap=(len(cols),),
                drop=drop,
            )
        )
    notes = list(notes)
    if notes:
        out.append(wrap_lines("\n".join(notes), width))
    bad = problems(r for r in results if r.key.startswith("gather_"))
    if bad:
        out.append(wrap_lines(bad, width))
    return "\n\n".join(out) if out else "no gather results"
