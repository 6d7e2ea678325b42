"""What the HTML charts show, decided without matplotlib: series, bars and their labels.

Pure formatting of measured numbers (nothing is computed but grouping and labels), kept apart from
the drawing in ``plot.py`` so the choices a reader relies on are plain data and testable:

- one chart per unit: GPU copy and gather bandwidth (GB/s) and RDMA bandwidth (Gb/s) never share an
  axis;
- a case series is every result of one case that differs only in size; only a series measured at
  ``SWEEP_MIN_SIZES`` sizes or more is a sweep whose points may be joined by a line (two sizes on a
  log axis joined by a straight line would claim measurements between them);
- every bar has its own label, built from the identity parameters that tell it apart from the
  other bars (the registration path, mr or dma-buf, is identity, so mr and dma-buf never merge).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from gdrdiag.model.case import CaseId, Scalar
from gdrdiag.model.results import BenchResult, Status
from gdrdiag.model.vocabulary import AccessFlags, RegPath

# A case series measured at this many sizes or more is drawn as a line; fewer, as points only.
SWEEP_MIN_SIZES = 3
# At most this many series in one chart (those with the most sizes); a legend longer than that is
# not read, and the results table has every number.
MAX_SERIES = 16

# Units of bandwidth charts, and what each one measures (the chart title).
BANDWIDTH_UNITS = {
    "GB/s": "GPU copies (GB/s, gigabytes per second)",
    "Gb/s": "RDMA (Gb/s, gigabits per second)",
}

# Parameters whose value alone reads well as a label ("pinned", "h2d", "async").
_BARE_VALUES = ("memory", "direction", "mode", "kernel", "variant", "pattern", "tool", "test")
_REG_PATH_NAMES = {RegPath.MR.value: "ibv_reg_mr", RegPath.DMABUF.value: "dma-buf"}


def human_bytes(n: float) -> str:
    """``64 KiB``, ``1 MiB``, ``1.5 GiB``, ``656 B``: a size as a reader says it."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.4g} {unit}"
    return f"{n:.4g} B"


def param_text(name: str, value: Scalar) -> str:
    """One identity parameter as label text: ``dma-buf``, ``RO on``, ``1 MiB``, ``qps=4``."""
    if name == "reg_path":
        return _REG_PATH_NAMES.get(str(value), f"reg {value}")
    if name == "access" and isinstance(value, int) and not isinstance(value, bool):
        return "RO on" if value & AccessFlags.RELAXED_ORDERING else "RO off"
    if name == "src_memory":
        return f"from {value}"
    if name.endswith("_bytes") and isinstance(value, (int, float)) and not isinstance(value, bool):
        size = human_bytes(value)
        return size if name == "size_bytes" else f"{name.removesuffix('_bytes')} {size}"
    if isinstance(value, bool):
        return name if value else f"no {name}"
    if name in _BARE_VALUES:
        return str(value)
    return f"{name}={value}"


def _varying(cases: Sequence[CaseId], skip: set[str]) -> set[str]:
    """The parameter names whose value is not the same in every one of ``cases``."""
    params = [dict(c.physics) for c in cases]
    names = {n for c in cases for n, _ in c.physics} - skip
    return {n for n in names if len({repr(p.get(n)) for p in params}) > 1}


def distinguishing_labels(
    cases: Sequence[CaseId], *, leave_out: Iterable[str] = (), with_key: bool = False
) -> list[str]:
    """A label per case made of what tells it apart from the others; labels are unique.

    Without ``with_key``: the parameters whose values differ between the cases ("pinned",
    "dma-buf · RO on"), and the case key only when those do not tell the cases apart. With
    ``with_key``: the key, then the parameters that differ between cases of that key. The provider
    is named when it differs. Cases that are still alike get ``#2``, ``#3``.
    """
    skip = set(leave_out)
    if with_key:
        by_key = {k: _varying([c for c in cases if c.key == k], skip) for k in {c.key for c in cases}}
        parts = [[c.key, *(param_text(n, v) for n, v in c.physics if n in by_key[c.key])] for c in cases]
    else:
        varying = _varying(cases, skip)
        parts = [[param_text(n, v) for n, v in c.physics if n in varying] for c in cases]
        if len({tuple(p) for p in parts}) < len(cases) and len({c.key for c in cases}) > 1:
            parts = [[c.key, *p] for c, p in zip(cases, parts, strict=True)]
    if len({c.provider for c in cases}) > 1:
        for c, p in zip(cases, parts, strict=True):
            p.append(f"({c.provider.value if c.provider else 'unknown provider'})")
    return _unique([" · ".join(p) or c.key for c, p in zip(cases, parts, strict=True)])


def _unique(labels: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label} #{seen[label]}")
    return out


def _measured(results: Iterable[BenchResult]) -> list[BenchResult]:
    return [r for r in results if r.status is Status.OK and r.value is not None]


# ---------------------------------------------------------------------------------------------
# bandwidth vs size
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SizeSeries:
    """One case measured at several sizes: (size in bytes, median) points, smallest size first."""

    label: str
    panel: str  # the copy direction (h2d, d2h, bidir), or "" for a single-panel chart
    points: tuple[tuple[int, float], ...]

    @property
    def is_sweep(self) -> bool:
        """True when the series has enough sizes to be drawn as a line (``SWEEP_MIN_SIZES``)."""
        return len(self.points) >= SWEEP_MIN_SIZES


@dataclass(frozen=True)
class SizeChart:
    """Bandwidth against size for one unit; one panel per copy direction."""

    unit: str
    title: str
    series: tuple[SizeSeries, ...]
    left_out: int = 0  # series beyond MAX_SERIES, not drawn

    @property
    def panels(self) -> list[str]:
        """The panels in order of first appearance."""
        return list(dict.fromkeys(s.panel for s in self.series))


def _without_size(ident: CaseId) -> CaseId:
    physics = tuple((n, v) for n, v in ident.physics if n != "size_bytes")
    return CaseId(ident.bench, ident.key, physics, ident.provider)


def _legend_id(series: CaseId) -> CaseId:
    """What a series' legend entry names: the case without its direction (that is the panel).

    ``copy_h2d_pinned`` and ``copy_d2h_pinned`` are both "pinned", one colour in both panels; the
    key is kept only where the parameters alone do not tell series apart.
    """
    physics = tuple((n, v) for n, v in series.physics if n != "direction")
    key = series.key if "direction" not in dict(series.physics) else series.bench.value
    return CaseId(series.bench, key, physics, series.provider)


def size_charts(results: Iterable[BenchResult]) -> list[SizeChart]:
    """Per bandwidth unit, the case series measured at two sizes or more (single sizes are bars)."""
    charts = []
    for unit, title in BANDWIDTH_UNITS.items():
        by_case: dict[CaseId, dict[int, float]] = {}
        for r in _measured(results):
            size = getattr(r.params, "size_bytes", None)
            if r.unit != unit or not isinstance(size, int) or size <= 0:
                continue
            by_case.setdefault(_without_size(CaseId.of(r)), {}).setdefault(size, r.value)  # type: ignore[arg-type]
        series_ids = [c for c, pts in by_case.items() if len(pts) >= 2]
        if not series_ids:
            continue
        left_out = max(0, len(series_ids) - MAX_SERIES)
        series_ids = sorted(series_ids, key=lambda c: len(by_case[c]), reverse=True)[:MAX_SERIES]
        legend = {c: _legend_id(c) for c in series_ids}
        distinct = list(dict.fromkeys(legend.values()))
        label_of = dict(zip(distinct, distinguishing_labels(distinct), strict=True))
        series = tuple(
            SizeSeries(
                label_of[legend[c]],
                str(dict(c.physics).get("direction", "")),
                tuple(sorted(by_case[c].items())),
            )
            for c in series_ids
        )
        charts.append(SizeChart(unit, f"{title}: bandwidth vs size", series, left_out))
    return charts


# ---------------------------------------------------------------------------------------------
# bars: relaxed ordering off/on, gather kernels, compare deltas
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RoPair:
    """One RDMA WRITE case at its largest measured size, relaxed ordering off and on."""

    label: str  # memory kind and registration path: "device · dma-buf"
    size_bytes: Optional[int]
    off: Optional[float]
    on: Optional[float]


@dataclass(frozen=True)
class RoChart:
    """Relaxed ordering off vs on per memory kind and registration path, in one unit."""

    unit: str
    pairs: tuple[RoPair, ...]


def ro_chart(results: Iterable[BenchResult]) -> Optional[RoChart]:
    """RO off/on bars for the RDMA results that say whether RO was requested (Gb/s only)."""
    largest: dict[tuple[CaseId, bool], BenchResult] = {}
    for r in _measured(results):
        ro = getattr(r.params, "relaxed_ordering", None)
        if ro is None or r.unit != "Gb/s":
            continue
        physics = tuple((n, v) for n, v in CaseId.of(r).physics if n in ("memory", "reg_path"))
        case = CaseId(r.bench, "rdma_write", physics, r.provider_kind)
        size = getattr(r.params, "size_bytes", None) or 0
        best = largest.get((case, ro))
        if best is None or size > (getattr(best.params, "size_bytes", None) or 0):
            largest[(case, ro)] = r
    cases = list(dict.fromkeys(c for c, _ in largest))
    if not cases:
        return None
    labels = [
        " · ".join(param_text(n, v) for n, v in c.physics) or c.key
        for c in cases  # memory and path always named, so every bar says what it is
    ]
    pairs = []
    for c, label in zip(cases, _unique(labels), strict=True):
        off, on = largest.get((c, False)), largest.get((c, True))
        ref = off or on
        pairs.append(
            RoPair(
                label,
                getattr(ref.params, "size_bytes", None) if ref else None,
                off.value if off else None,
                on.value if on else None,
            )
        )
    return RoChart("Gb/s", tuple(pairs))


def gather_bars(results: Iterable[BenchResult]) -> list[tuple[str, float]]:
    """Gather kernels beside the copy-engine reference: (label, GB/s), first configuration of each."""
    firsts: dict[str, BenchResult] = {}
    for r in _measured(results):
        if r.key.startswith("gather_") and r.unit == "GB/s":
            firsts.setdefault(r.key, r)
    return [(k.removeprefix("gather_").replace("_", " "), r.value) for k, r in firsts.items()]  # type: ignore[misc]


@dataclass(frozen=True)
class DeltaBar:
    """One compared case with a large delta: its own label and the ratio b/a."""

    label: str
    ratio: float


def delta_bars(cases: Iterable, limit: int = 40) -> tuple[list[DeltaBar], int]:
    """The large deltas, largest change first (at most ``limit``), and how many there are in all.

    ``cases`` are ``compare.CaseDelta`` rows; every bar's label is unique, so none is merged away.
    """
    import math

    large = [c for c in cases if c.ratio is not None and c.large and c.ratio > 0]
    large.sort(key=lambda c: abs(math.log(c.ratio)), reverse=True)
    shown = large[:limit]
    labels = distinguishing_labels([c.case for c in shown], with_key=True)
    return [DeltaBar(label, c.ratio) for label, c in zip(labels, shown, strict=True)], len(large)
