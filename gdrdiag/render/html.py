"""A self-contained HTML page for a Report or a Comparison: machine facts, findings, charts, tables.

Charts are embedded as SVG images (``data:`` URIs: no script in them runs, and the page needs no
other file). Every text from a Report is escaped here or sanitized in ``html_machine``/``plot``.
"""

from __future__ import annotations

import base64
import html
from typing import Iterable, Optional

from gdrdiag.model.comparison import LARGE_DELTA, CaseDelta, Comparison
from gdrdiag.model.findings import Finding, Severity
from gdrdiag.model.params import shown_items
from gdrdiag.model.report import Report
from gdrdiag.render import plot
from gdrdiag.render.compare_table import NOT_HARDWARE_NOTE, peer_cell, provider_mark, shows_not_hardware
from gdrdiag.render.html_machine import machine_section, machine_side_by_side
from gdrdiag.render.results_table import num

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}
h1{font-size:1.5em} h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;font-size:0.85em;margin:0.5em 0}
td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f3f3f3} .FAIL{color:#b00;font-weight:bold} .WARN{color:#b60} .INFO{color:#06c}
img{max-width:100%;border:1px solid #eee;margin:0.5em 0} code{background:#f5f5f5}
table.findings td:nth-child(3){width:50%}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:0 24px;align-items:start} .pair .wide{grid-column:1/-1}
figure{margin:1em 0} summary{cursor:pointer;margin:0.5em 0;color:#06c}
figcaption{font-size:0.85em;color:#444;max-width:900px}
.meta{color:#555}
.machine{display:grid;align-items:start;grid-template-columns:repeat(auto-fill,minmax(370px,1fr));gap:0 16px}
table.facts{width:100%} table.facts caption{text-align:left;font-weight:bold;padding:4px 0}
table.facts th{width:38%;font-weight:normal}
table.paths caption{text-align:left;font-weight:bold;padding:4px 0} table.paths{margin-top:1em}
table.side-by-side th{font-weight:normal}
table.side-by-side tr.section th{font-weight:bold;background:#e8eef5}
tr.differs td,tr.differs th{background:#fff3bf} tr.differs th{font-weight:bold}
"""


def _img(png: Optional[bytes], alt: str) -> str:
    if not png:
        return ""
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'


def _figure(chart: Optional[plot.Chart]) -> str:
    """A chart as an SVG image with its caption (empty when there is no chart)."""
    if chart is None:
        return ""
    src = "data:image/svg+xml;base64," + base64.b64encode(chart.svg.encode("utf-8")).decode()
    return (
        f'<figure><img alt="{html.escape(chart.alt)}" src="{src}">'
        f"<figcaption>{html.escape(chart.caption)}</figcaption></figure>"
    )


def _table(headers: list[str], rows: Iterable[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _finding_rows(items: list[Finding]) -> str:
    rows = []
    for f in items:
        against = "".join(f"<br>against: {html.escape(a)}" for a in f.against)
        nxt = f"<br>next: <code>{html.escape(f.next_step)}</code>" if f.next_step else ""
        evidence = "<br>".join(map(html.escape, f.evidence))
        rows.append(
            f'<tr><td class="{f.severity.value}">{f.severity.value}</td>'
            f"<td><code>{html.escape(f.code)}</code></td>"
            f"<td>{html.escape(f.title)}<br><small>{evidence}{against}</small></td>"
            f"<td>{html.escape(f.advice)}{nxt}</td></tr>"
        )
    return (
        '<table class="findings"><tr><th>severity</th><th>code</th>'
        "<th>finding and evidence</th><th>fix</th></tr>" + "".join(rows) + "</table>"
    )


def _findings(findings: Iterable[Finding]) -> str:
    """FAIL and WARN findings in a table; INFO findings folded below them (one click to open)."""
    items = list(findings)
    if not items:
        return "<p>No findings.</p>"
    problems = [f for f in items if f.severity is not Severity.INFO]
    notes = [f for f in items if f.severity is Severity.INFO]
    out = _finding_rows(problems) if problems else "<p>No FAIL or WARN findings.</p>"
    if notes:
        out += f"<details><summary>{len(notes)} INFO findings</summary>{_finding_rows(notes)}</details>"
    return out


def _page(title: str, body: str) -> str:
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>{body}</body></html>"
    )


def _charts_of(report: Report) -> list[plot.Chart]:
    return [
        *plot.size_charts(report.results),
        *(c for c in (plot.ro_bars(report.results), plot.gather_ladder(report.results)) if c is not None),
    ]


def _plots(report: Report) -> str:
    """The Report's charts; without matplotlib, one line saying how to get them (the rest still renders)."""
    from gdrdiag.errors import NotSupported

    try:
        return "".join(_figure(c) for c in _charts_of(report)) or "<p>No plottable results.</p>"
    except NotSupported as exc:
        return f"<p>{html.escape(exc.reason)}</p>"


def _plots_side_by_side(a: Report, b: Report, a_label: str, b_label: str) -> str:
    """Each chart of the two Reports in two columns, the same kind of chart on one row."""
    from gdrdiag.errors import NotSupported

    try:
        charts_a, charts_b = _charts_of(a), _charts_of(b)
    except NotSupported as exc:
        return f"<p>{html.escape(exc.reason)}</p>"
    by_kind_a, by_kind_b = {c.alt: c for c in charts_a}, {c.alt: c for c in charts_b}
    kinds = list(dict.fromkeys([*by_kind_a, *by_kind_b]))
    if not kinds:
        return "<p>No plottable results.</p>"
    missing = "<p>Not measured in this Report.</p>"
    cells = [f"<div><h3>{html.escape(a_label)}</h3></div>", f"<div><h3>{html.escape(b_label)}</h3></div>"]
    for kind in kinds:
        ca, cb = by_kind_a.get(kind), by_kind_b.get(kind)
        wide = any(c is not None and c.wide for c in (ca, cb))
        for label, chart in ((a_label, ca), (b_label, cb)):
            body = _figure(chart) if chart is not None else missing
            if wide:  # a chart of several panels gets the full width, its Report named above it
                cells.append(f'<div class="wide"><p><b>{html.escape(label)}</b></p>{body}</div>')
            else:
                cells.append(f"<div>{body}</div>")
    return '<div class="pair">' + "".join(cells) + "</div>"


def report_html(report: Report, findings: Iterable[Finding]) -> str:
    """The HTML text for one Report."""
    results = [
        [
            r.key,
            " ".join(f"{k}={v}" for k, v in shown_items(r.params)),
            r.status.value,
            num(r.value),
            r.unit,
            r.provider,
            r.reason or "",
        ]
        for r in report.results
    ]
    body = (
        f'<p class="meta">{html.escape(report.command)} — gdrdiag {html.escape(report.tool_version)}, '
        f"{html.escape(report.created_utc)}</p><h2>Machine</h2>{machine_section(report.machine)}"
        f"<h2>Findings</h2>{_findings(findings)}"
        f"<h2>Charts</h2>{_plots(report)}<h2>Results</h2>"
        + _table(["case", "params", "status", "median", "unit", "provider", "reason"], results)
    )
    return _page("gdrdiag report", body)


def _deltas_chart(c: Comparison) -> str:
    from gdrdiag.errors import NotSupported

    try:
        chart = plot.compare_deltas(c.cases, c.a_label, c.b_label)
    except NotSupported as exc:
        return f"<p>{html.escape(exc.reason)}</p>"
    if chart is None:
        return (
            "<p>No chart: no case measured on both sides by the same provider differs by more than "
            f"{LARGE_DELTA:.0%}.</p>"
        )
    return _figure(chart)


def _delta_note(d: CaseDelta, a_label: str, b_label: str) -> str:
    """Why a row has no ratio: another provider, measured on one side only, or not OK there."""
    if d.not_comparable:
        return d.not_comparable
    notes = []
    for label, status, reason in ((a_label, d.a_status, d.a_reason), (b_label, d.b_status, d.b_reason)):
        if status is None:
            notes.append(f"not in {label}")
        elif status != "OK":
            notes.append(f"{status} in {label}" + (f": {reason}" if reason else ""))
    return "; ".join(notes)


def comparison_html(c: Comparison, a: Report, b: Report) -> str:
    """The HTML text for a Comparison of two Reports."""
    body = (
        f"<p>Leading cause in {html.escape(c.b_label)}: <b>{html.escape(c.leading_cause)}</b></p>"
        if c.leading_cause
        else ""
    )
    body += "<h2>Machine differences that matter</h2>" + _table(
        ["fact", c.a_label, c.b_label, "why it matters"], [[d.fact, d.a, d.b, d.why] for d in c.machine]
    )
    if c.peers:
        body += "<h2>GPU peer matrix side by side</h2>" + _table(
            ["pair", c.a_label, c.b_label, ""],
            [[d.pair, peer_cell(d, "a"), peer_cell(d, "b"), "differs" if d.differs else ""] for d in c.peers],
        )
    body += "<h2>Likely causes of the large deltas</h2>" + (
        _table(
            ["case", "#", "cause", c.a_label, c.b_label],
            [[e.case, str(e.rank), e.cause, e.evidence_a, e.evidence_b] for e in c.explanations],
        )
        if c.explanations
        else "<p>No large deltas to explain.</p>"
    )
    body += "<h2>Deltas</h2>" + _deltas_chart(c)
    if shows_not_hardware(c):
        body += f"<p><b>{html.escape(NOT_HARDWARE_NOTE)}</b></p>"
    body += _table(
        ["case", "params", c.a_label, c.b_label, "unit", f"{c.b_label}/{c.a_label}", "note"],
        [
            [
                d.key + provider_mark(d),
                " ".join(f"{k}={v}" for k, v in d.params.items()),
                num(d.a_value),
                num(d.b_value),
                d.unit,
                num(d.ratio, 3),
                _delta_note(d, c.a_label, c.b_label),
            ]
            for d in c.cases
        ],
    )
    body += (
        f"<h2>Machines side by side</h2>{machine_side_by_side(a.machine, b.machine, c.a_label, c.b_label)}"
    )
    body += f"<h2>Findings only in {html.escape(c.b_label)}</h2>{_findings(c.findings_only_b)}"
    body += f"<h2>Findings only in {html.escape(c.a_label)}</h2>{_findings(c.findings_only_a)}"
    body += f"<h2>Charts of each Report</h2>{_plots_side_by_side(a, b, c.a_label, c.b_label)}"
    return _page(f"gdrdiag compare: {c.a_label} vs {c.b_label}", body)
