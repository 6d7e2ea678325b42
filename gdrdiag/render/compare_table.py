"""A Comparison as text tables (formatting only; ratios were computed in compare.py)."""

from __future__ import annotations

from typing import Optional

from gdrdiag.model.comparison import CaseDelta, Comparison, PeerPairDelta
from gdrdiag.render.findings_table import render_findings
from gdrdiag.render.layout import DEFAULT_WIDTH, wrap_lines
from gdrdiag.render.results_table import num, size, table

_SIZE_PARAMS = (
    "size_bytes",
    "block_bytes",
    "record_bytes",
    "chunk_bytes",
    "stride_bytes",
    "copy_bytes",
    "offset_bytes",
)


def _params(p: dict) -> str:
    return " ".join(f"{k}={size(v) if k in _SIZE_PARAMS else v}" for k, v in p.items())


NOT_HARDWARE_NOTE = (
    "Cases marked [soft] or [fixture] were not measured on hardware: their ratios compare "
    "software or synthetic numbers, never a NIC or GPU."
)


def provider_mark(d: CaseDelta) -> str:
    """`` [soft]`` / `` [fixture]`` for a row not measured on hardware (text and HTML alike)."""
    provider = d.case.provider.value if d.case.provider else "?"
    return "" if d.hardware or d.not_comparable else f" [{provider}]"


def shows_not_hardware(c: Comparison) -> bool:
    """Whether a row measured on both sides was not measured on hardware (the note is due)."""
    return any(not d.hardware and d.a_status and d.b_status for d in c.cases)


def _case_label(d: CaseDelta, varying: set) -> str:
    mark = provider_mark(d)
    params = _params({k: v for k, v in d.params.items() if k in varying})
    return f"{d.key}{mark}" + (f" {params}" if params else "")


def _ratio_cell(d: CaseDelta) -> str:
    if d.ratio is not None:
        return num(d.ratio, 3)
    if d.not_comparable:
        return d.not_comparable
    return f"{d.a_status or '-'}/{d.b_status or '-'}"


def _row_notes(rows: list[CaseDelta], a_label: str, b_label: str) -> list[str]:
    """Why a side has no number, and run settings that differ, under the table."""
    notes = []
    for d in rows:
        for label, status, reason in ((a_label, d.a_status, d.a_reason), (b_label, d.b_status, d.b_reason)):
            if status in ("WAIVED", "ERROR") and reason:
                notes.append(f"  {d.key} in {label}: {status}: {reason}")
        if d.settings:
            notes.append(f"  {d.key}: run settings differ ({'; '.join(d.settings)})")
    return notes


def _varying_params(shown) -> set:
    """Parameters whose value differs between two shown rows of the same case key.

    One pass with a set of values per (key, parameter): linear, where comparing every row with
    every other row of its key took seconds for 20,000 cases.
    """
    rows = [(d.key, d.params) for d in shown]  # ``params`` builds a dict: once per row
    names: dict = {}
    for key, params in rows:
        names.setdefault(key, set()).update(params)
    values: dict = {}
    for key, params in rows:
        for k in names[key]:
            values.setdefault((key, k), set()).add(repr(params.get(k)))
    return {k for (_, k), seen in values.items() if len(seen) > 1}


def peer_cell(d: PeerPairDelta, side: str) -> str:
    """One side of a GPU pair in one cell: ``NV18; peer access yes; 18 NVLinks, 478.125 GB/s``."""
    path, access, links, rate = (getattr(d, f"{side}_{f}") for f in ("path", "access", "nvlinks", "rate"))
    if links == "-":  # the pair is not on this side
        return path
    return f"{path}; peer access {access}; {links} NVLinks, {rate} GB/s"


def render_peers(c: Comparison, width: Optional[int]) -> str:
    """The GPU peer matrix of both Reports side by side, one row per ordered pair."""
    rows = [[d.pair, peer_cell(d, "a"), peer_cell(d, "b"), "differs" if d.differs else ""] for d in c.peers]
    return (
        "GPU peer matrix side by side (path class; cuDeviceCanAccessPeer; NVLinks, one-way GB/s)\n"
        + table(rows, ["pair", c.a_label, c.b_label, ""], width=width, wrap=_WRAP["peers"])
    )


# Text columns each table may wrap to fit the width (the numbers never wrap).
_WRAP = {"peers": (1, 2), "machine": (0, 1, 2), "cases": (0, 4), "causes": (0, 2, 3, 4)}


def render_comparison(
    c: Comparison, *, all_cases: bool = False, wide: bool = False, width: Optional[int] = DEFAULT_WIDTH
) -> str:
    """Machine differences, the cases (large deltas, or all), explanations, differing findings.

    Fits ``width`` columns (default 100); ``wide`` (or ``width=None``) leaves everything unwrapped.
    """
    width = None if wide else width
    out = []
    if c.leading_cause:
        out.append(f"Leading cause in {c.b_label}: {c.leading_cause}")
    if c.machine:
        rows = [[d.fact, d.a, d.b] for d in c.machine]
        out.append(
            "Machine differences that matter\n"
            + table(rows, ["fact", c.a_label, c.b_label], width=width, wrap=_WRAP["machine"])
        )
        out.append("\n".join(f"  {d.fact}: {d.why}" for d in c.machine))
    else:
        out.append("Machine differences that matter: none found")
    if c.peers:
        out.append(render_peers(c, width))
    shown = [d for d in c.cases if all_cases or d.large or d.a_status != d.b_status or d.not_comparable]
    if shown:
        # Show only the parameters that tell the shown rows apart.
        varying = _varying_params(shown)
        rows = [
            [
                _case_label(d, varying),
                num(d.a_value),
                num(d.b_value),
                d.unit,
                _ratio_cell(d),
                "<<" if d.large and d.ratio is not None and d.ratio < 1 else (">>" if d.large else ""),
            ]
            for d in shown
        ]
        label = "All cases" if all_cases else "Cases that differ by more than 10% (or in status)"
        out.append(
            f"{label}; ratio = {c.b_label}/{c.a_label}\n"
            + table(
                rows, ["case", c.a_label, c.b_label, "unit", "ratio", ""], width=width, wrap=_WRAP["cases"]
            )
        )
        notes = _row_notes(shown, c.a_label, c.b_label)
        if notes:
            out.append("\n".join(notes))
    else:
        out.append(f"Cases: {len(c.cases)} matched, none differ by more than 10%")
    if shows_not_hardware(c):
        out.append(NOT_HARDWARE_NOTE)
    if c.explanations:
        rows = [[e.case, str(e.rank), e.cause, e.evidence_a, e.evidence_b] for e in c.explanations]
        out.append(
            "Likely causes of the large deltas, most likely first\n"
            + table(
                rows,
                ["case", "#", "cause", f"evidence ({c.a_label})", f"evidence ({c.b_label})"],
                width=width,
                wrap=_WRAP["causes"],
            )
        )
    if c.findings_only_b:
        out.append(render_findings(c.findings_only_b, title=f"Findings only in {c.b_label}"))
    if c.findings_only_a:
        out.append(render_findings(c.findings_only_a, title=f"Findings only in {c.a_label}"))
    return wrap_lines("\n\n".join(out), width)
