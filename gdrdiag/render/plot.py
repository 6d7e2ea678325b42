"""SVG charts of Reports and Comparisons; matplotlib is imported only when a chart is drawn.

Formatting only: what each chart shows (series, bars, labels, units) is decided in ``chart_data``;
this module draws it. Charts are SVG with their text kept as text (``svg.fonttype = none``), so a
page stays sharp at any zoom and its labels can be read back by tests. Each function returns a
:class:`Chart` (the SVG, a short alt text and a caption that says how to read it), or None when
there is nothing to draw.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Iterable, Optional

from gdrdiag.model.results import BenchResult
from gdrdiag.render import chart_data
from gdrdiag.render.chart_data import SWEEP_MIN_SIZES, human_bytes

_SWEEP_GID, _POINTS_GID = "series-sweep", "series-points"  # SVG group ids of the drawn series


@dataclass(frozen=True)
class Chart:
    """One drawn chart: SVG text, alt text, and the caption shown under it."""

    svg: str
    alt: str
    caption: str
    wide: bool = False  # several panels side by side: give it the page's full width


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
    plt.rcParams["svg.fonttype"] = "none"  # text stays text: sharp, searchable, testable
    plt.rcParams["svg.hashsalt"] = "gdrdiag"  # stable ids: the same Report gives the same page
    return plt


def _label(text: str, limit: int = 60) -> str:
    """A plot label from untrusted text: no control characters or lone surrogates, bounded length."""
    from gdrdiag.render.sanitize import one_line

    return one_line(str(text), limit=limit)


def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    _pyplot().close(fig)
    return buf.getvalue()


_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*")


def _styles(labels: Iterable[str]) -> dict[str, tuple[str, str]]:
    """One (colour, marker) per series label, the same in every panel of a chart.

    Markers differ too, so series with equal values (pinned and registered memory often are)
    stay visible on top of each other.
    """
    return {
        label: (f"C{i % 10}", _MARKERS[i % len(_MARKERS)]) for i, label in enumerate(dict.fromkeys(labels))
    }


_PANEL_TITLES = {"h2d": "H2D (host to GPU)", "d2h": "D2H (GPU to host)", "bidir": "both directions at once"}


def _size_ticks(ax, sizes: list[int]) -> None:
    """Ticks at the measured sizes (every other one when crowded), named as a reader says them."""
    from matplotlib.ticker import NullFormatter, NullLocator

    shown = sorted(set(sizes))
    step = max(1, (len(shown) + 7) // 8)
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xticks(shown[::step], [human_bytes(s) for s in shown[::step]])
    ax.tick_params(axis="x", labelsize=8, rotation=30)


def _draw_size_chart(chart: chart_data.SizeChart) -> str:
    plt = _pyplot()
    panels = chart.panels
    fig, axes = plt.subplots(
        1, len(panels), figsize=(3.6 * len(panels) + 2.4, 4.2), sharey=True, squeeze=False
    )
    styles = _styles(s.label for s in chart.series)
    for ax, panel in zip(axes[0], panels, strict=True):
        series = [s for s in chart.series if s.panel == panel]
        for i, s in enumerate(series):
            xs, ys = [p[0] for p in s.points], [p[1] for p in s.points]
            colour, marker = styles[s.label]
            line = ax.plot(
                xs, ys, marker=marker, ms=5, mfc="none", linestyle="-" if s.is_sweep else "none", color=colour
            )[0]
            line.set_gid(f"{_SWEEP_GID if s.is_sweep else _POINTS_GID}-{panel or 'all'}-{i}")
        ax.set_xscale("log", base=2)
        _size_ticks(ax, [p[0] for s in series for p in s.points])
        ax.set_xlabel("transfer size (log scale)")
        ax.set_title(_PANEL_TITLES.get(panel, _label(panel)), fontsize=10)
        ax.grid(True, alpha=0.3)
    axes[0][0].set_ylabel(f"bandwidth, median ({chart.unit})")
    axes[0][0].set_ylim(bottom=0)
    swept = {s.label for s in chart.series if s.is_sweep}
    handles = [
        plt.Line2D(
            [],
            [],
            color=c,
            marker=mk,
            mfc="none",
            linestyle="-" if lbl in swept else "none",
            label=_label(lbl),
        )
        for lbl, (c, mk) in styles.items()
    ]
    fig.legend(handles=handles, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8, frameon=False)
    fig.suptitle(chart.title)
    fig.tight_layout()
    return _svg(fig)


def size_charts(results: Iterable[BenchResult]) -> list[Chart]:
    """Bandwidth vs size, one chart per unit: measured points, lines only along real sweeps."""
    charts = []
    for chart in chart_data.size_charts(list(results)):
        sweeps = sum(s.is_sweep for s in chart.series)
        caption = (
            f"Each marker is a measured median. A line joins the points of a sweep (one case measured at "
            f"{SWEEP_MIN_SIZES} or more sizes: {sweeps} of the {len(chart.series)} series here); points of a "
            f"case measured at two sizes stay unconnected, since nothing was measured between them. "
            f"Cases measured at one size are in the bar charts and the results table."
        )
        if chart.left_out:
            caption += (
                f" {chart.left_out} more series are left out of this chart (the {len(chart.series)} with "
                "the most sizes are drawn); their numbers are in the results table."
            )
        charts.append(Chart(_draw_size_chart(chart), chart.title, caption, wide=len(chart.panels) > 1))
    return charts


def _annotate(ax, bars, texts: list[str]) -> None:
    """Write each bar's value just past its end (left of a bar that grows to the left)."""
    for bar, text in zip(bars, texts, strict=True):
        leftwards = bar.get_width() < 0
        ax.annotate(
            text,
            (bar.get_x() + bar.get_width(), bar.get_y() + bar.get_height() / 2),
            xytext=(-3 if leftwards else 3, 0),
            textcoords="offset points",
            ha="right" if leftwards else "left",
            va="center",
            fontsize=7,
        )


def ro_bars(results: Iterable[BenchResult]) -> Optional[Chart]:
    """RDMA WRITE with relaxed ordering off and on, one pair of bars per memory kind and reg path."""
    chart = chart_data.ro_chart(results)
    if chart is None:
        return None
    plt = _pyplot()
    n = len(chart.pairs)
    fig, ax = plt.subplots(figsize=(8, 0.7 * n + 1.4))
    height = 0.38
    for i, (ro, colour) in enumerate(((False, "tab:blue"), (True, "tab:orange"))):
        values = [(p.on if ro else p.off) for p in chart.pairs]
        ys = [k + (i - 0.5) * height for k in range(n)]
        bars = ax.barh(
            ys, [v or 0 for v in values], height, color=colour, label=f"RO {'on' if ro else 'off'}"
        )
        _annotate(ax, bars, ["not measured" if v is None else f"{v:.1f}" for v in values])
    sizes = {p.size_bytes for p in chart.pairs}
    labels = [
        p.label if len(sizes) == 1 else f"{p.label} · {human_bytes(p.size_bytes or 0)}" for p in chart.pairs
    ]
    ax.set_yticks(range(n), [_label(lbl) for lbl in labels])
    ax.invert_yaxis()
    ax.set_xlabel(f"RDMA WRITE bandwidth, median ({chart.unit})")
    ax.set_title("RDMA WRITE: relaxed ordering off vs on")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    ax.margins(x=0.1)
    at = (
        f"at {human_bytes(next(iter(sizes)))}, the largest size measured"
        if len(sizes) == 1 and None not in sizes
        else "each at the largest size measured for it"
    )
    caption = (
        f"One pair of bars per memory kind and registration path (ibv_reg_mr or dma-buf), {at}: "
        "relaxed ordering requested (on) or not (off)."
    )
    return Chart(_svg(fig), "RDMA WRITE, relaxed ordering off vs on", caption)


def gather_ladder(results: Iterable[BenchResult]) -> Optional[Chart]:
    """Gather kernels (one bar each, the first measured configuration) beside the copy engine."""
    bars = chart_data.gather_bars(results)
    if not bars:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 0.32 * len(bars) + 1.4))
    drawn = ax.barh(
        range(len(bars)),
        [v for _, v in bars],
        color=["tab:gray" if "ce" in name.split() else "tab:blue" for name, _ in bars],
    )
    _annotate(ax, drawn, [f"{v:.1f}" for _, v in bars])
    ax.set_yticks(range(len(bars)), [_label(name) for name, _ in bars])
    ax.invert_yaxis()
    ax.set_xlabel("gather bandwidth, median (GB/s)")
    ax.set_title("Zero-copy gather kernels vs the copy engine")
    ax.margins(x=0.1)
    caption = "Each gather kernel's first measured configuration; the grey bar is the copy-engine reference."
    return Chart(_svg(fig), "gather kernels vs copy engine", caption)


def _ratio_ticks(ax, left: float, right: float) -> None:
    """Ticks at the powers of two between ``left`` and ``right``, written as plain numbers (0.25, 2)."""
    from matplotlib.ticker import NullLocator

    ticks = [2.0**e for e in range(-12, 13) if left <= 2.0**e <= right]
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])


def compare_deltas(cases, a_label: str, b_label: str) -> Optional[Chart]:
    """Ratio b/a of every case that differs by more than 10%, one labelled bar each."""
    bars, total = chart_data.delta_bars(cases)
    if not bars:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 0.3 * len(bars) + 1.6))
    ys = range(len(bars))
    drawn = ax.barh(
        ys,
        [b.ratio - 1 for b in bars],
        left=1,
        color=["tab:red" if b.ratio < 1 else "tab:green" for b in bars],
    )
    for i, patch in enumerate(drawn):
        patch.set_gid(f"delta-bar-{i}")  # one SVG group per bar: a page can be checked bar by bar
    _annotate(ax, drawn, [f"×{b.ratio:.3g}" for b in bars])
    ax.set_yticks(ys, [_label(b.label, 70) for b in bars])
    ax.tick_params(axis="y", labelsize=9)
    ax.invert_yaxis()
    ax.set_xscale("log", base=2)
    low, high = min(b.ratio for b in bars), max(b.ratio for b in bars)
    left, right = min(low, 1) / 1.4, max(high, 1) * 1.4
    ax.set_xlim(left, right)
    _ratio_ticks(ax, left, right)
    ax.axvline(1.0, color="black", lw=0.8)
    ax.set_xlabel(_label(f"ratio {b_label} / {a_label} (log scale; 1 = the same, below 1 = slower)", 120))
    ax.set_title("Cases that differ by more than 10%")
    shown = f"the {len(bars)} largest of {total}" if total > len(bars) else f"all {total}"
    caption = f"One bar per compared case, {shown}, largest change first; the values are in the table below."
    return Chart(_svg(fig), "deltas", caption)
