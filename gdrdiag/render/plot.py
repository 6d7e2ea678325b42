"""PNG plots of Reports and Comparisons; matplotlib is imported only when a plot is drawn.

Formatting only: every plotted number was computed upstream. Each function returns PNG bytes,
or None when the input has nothing to draw.
"""

from __future__ import annotations

import io
from typing import Iterable, Optional

from gdrdiag.model.results import BenchResult, Status


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        from gdrdiag.errors import NotSupported

        raise NotSupported("plots need matplotlib: pip install 'gdrdiag[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # Labels come from Reports (untrusted): "$...$" must be text, not mathtext to parse (a bad
    # expression raised ValueError mid-render), and TeX is never run.
    plt.rcParams["text.parse_math"] = False
    plt.rcParams["text.usetex"] = False
    return plt


def _label(text: str, limit: int = 60) -> str:
    """A plot label from untrusted text: no control characters or lone surrogates, bounded length."""
    from gdrdiag.render.sanitize import one_line

    return one_line(str(text), limit=limit)


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    _pyplot().close(fig)
    return buf.getvalue()


def _ok(results: Iterable[BenchResult]) -> list[BenchResult]:
    return [r for r in results if r.status is Status.OK and r.value is not None]


def _kind(r: BenchResult) -> Optional[str]:
    v = getattr(r.params, "memory", None)
    return str(v) if v is not None else None


def _ro(r: BenchResult) -> Optional[bool]:
    return getattr(r.params, "relaxed_ordering", None)


def bandwidth_vs_size(results: Iterable[BenchResult]) -> Optional[bytes]:
    """One line per memory kind (copy H2D async; RDMA WRITE per registration path and RO)."""
    series: dict[str, list[tuple[int, float]]] = {}
    labels: dict[str, str] = {}
    for r in _ok(results):
        size, kind = getattr(r.params, "size_bytes", None), _kind(r)
        if not isinstance(size, int) or kind is None:
            continue
        if r.key.startswith("copy_") and not (r.params.direction == "h2d" and r.params.mode == "async"):
            continue
        label = f"{r.key.split('_')[0]} {kind}"
        if r.key.startswith(("rdma", "mr")):
            ro = _ro(r)
            label += f" {r.params.reg_path or ''} RO {'on' if ro else 'off'}"
        raw = f"{label} ({r.unit})"
        shown = labels.get(raw)
        if shown is None:  # a few labels for 20,000 results: each made terminal-safe once
            shown = labels[raw] = _label(raw, 80)
        series.setdefault(shown, []).append((size, r.value))  # type: ignore[arg-type]
    if not series:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for label, pts in sorted(series.items()):
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=label)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("size (bytes)")
    ax.set_ylabel("bandwidth (median)")
    ax.set_title("Bandwidth vs size per memory kind")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    return _png(fig)


def ro_bars(results: Iterable[BenchResult]) -> Optional[bytes]:
    """Relaxed ordering off vs on, per memory kind (largest size of each)."""
    best: dict[tuple[str, bool], BenchResult] = {}
    for r in _ok(results):
        ro, kind = _ro(r), _kind(r)
        if ro is None or kind is None:
            continue
        k = (kind, ro)
        if k not in best or (r.params.size_bytes or 0) > (best[k].params.size_bytes or 0):  # type: ignore[operator]
            best[k] = r
    kinds = sorted({k for k, _ in best})
    if not kinds:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.38
    for i, ro in enumerate((False, True)):
        vals = [best[(k, ro)].value if (k, ro) in best else 0 for k in kinds]
        ax.bar(
            [x + (i - 0.5) * width for x in range(len(kinds))],
            vals,
            width,
            label=f"RO {'on' if ro else 'off'}",
        )
    unit = next(iter(best.values())).unit
    ax.set_xticks(range(len(kinds)), kinds)
    ax.set_ylabel(unit)
    ax.set_title("RDMA WRITE: relaxed ordering off vs on")
    ax.legend()
    return _png(fig)


def gather_ladder(results: Iterable[BenchResult]) -> Optional[bytes]:
    """Gather kernels (one bar each, the first measured configuration) beside the copy engine."""
    bars: dict[str, float] = {}
    for r in _ok(results):
        if not r.key.startswith("gather_"):
            continue
        name = r.key.removeprefix("gather_")
        bars.setdefault(name, r.value)  # type: ignore[arg-type]
    if not bars:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4))
    names = list(bars)
    ax.bar(names, [bars[n] for n in names], color=["tab:gray" if "ce" in n else "tab:blue" for n in names])
    ax.set_ylabel("GB/s")
    ax.set_title("Zero-copy gather ladder vs copy engine")
    ax.tick_params(axis="x", rotation=30)
    return _png(fig)


def compare_deltas(cases, a_label: str, b_label: str) -> Optional[bytes]:
    """Ratio b/a per matched case that differs by more than 10%."""
    pts = [
        (c.key + " " + " ".join(f"{v}" for v in c.params.values()), c.ratio)
        for c in cases
        if c.ratio is not None and c.large
    ]
    if not pts:
        return None
    pts = sorted(pts, key=lambda p: p[1])[:30]
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 0.3 * len(pts) + 1.5))
    ax.barh(
        [_label(p[0]) for p in pts],
        [p[1] for p in pts],
        color=["tab:red" if p[1] < 1 else "tab:green" for p in pts],
    )
    ax.axvline(1.0, color="black", lw=0.8)
    ax.set_xlabel(_label(f"ratio {b_label} / {a_label}", 120))
    ax.set_title("Largest deltas")
    ax.tick_params(axis="y", labelsize=7)
    return _png(fig)
