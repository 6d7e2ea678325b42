"""Text view of a saved Report (``gdrdiag show``): where it came from, its numbers, its findings.

Formatting only. The per-bench sections are the tables the benches themselves print
(:mod:`copy_table`, :mod:`gather_table`, :mod:`mr_table`) and the generic results table for
imported results; every number shown is the Report's own. The RO pairs of the mr section are
derived by the caller (``diagnose.rdma_rules``), as mr-bench does.

The view fits ``width`` columns: a table wider than that is folded into stacked parts that
each repeat the first column (no cell is cut), and prose lines are wrapped.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from typing import Optional, Sequence

from gdrdiag.model.machine import MachineInfo
from gdrdiag.model.report import Report
from gdrdiag.model.results import BenchResult, Status
from gdrdiag.model.vocabulary import Bench
from gdrdiag.render.copy_table import render_copy_results
from gdrdiag.render.findings_table import render_findings
from gdrdiag.render.gather_table import render_gather_results
from gdrdiag.render.mr_table import render_mr_results
from gdrdiag.render.results_table import num, problems, size, spread, table

DEFAULT_WIDTH = 100

# What each bench is called on the command line (``--bench``), in the order the view shows them.
BENCH_NAMES: dict[Bench, str] = {
    Bench.COPY: "copy-bench",
    Bench.GATHER: "gather-bench",
    Bench.MR: "mr-bench",
    Bench.PEER: "peer-bench",
    Bench.IMPORTED: "imported",
}


@dataclass(frozen=True)
class ViewInput:
    """What ``show`` renders: the Report, how to name it, which benches, the mr RO pairs."""

    report: Report
    label: str
    benches: tuple[Bench, ...]
    ro_pairs: Sequence = ()
    width: int = DEFAULT_WIDTH


def machine_summary(machine: Optional[MachineInfo]) -> list[str]:
    """A few lines naming the machine: host, GPUs, NICs and virtualization (``?`` when unknown)."""
    if machine is None:
        return ["machine: not recorded in this Report (no inspect facts)"]
    host = machine.host
    lines = [
        f"host: {host.hostname or '?'}"
        + "".join(f"; {v}" for v in (host.os, host.kernel, host.cpu_model) if v)
    ]
    gpus = [f"{g.name or '?'} ({g.bdf})" for g in machine.gpus]
    lines.append(f"GPUs: {', '.join(gpus) if gpus else 'none'}")
    nics = [f"{n.name} ({n.bdf or '?'}{', ' + n.model if n.model else ''})" for n in machine.nics]
    lines.append(f"NICs: {', '.join(nics) if nics else 'none'}")
    virt = machine.virt
    if virt.is_vm:
        kind = f"VM ({virt.hypervisor or 'hypervisor unknown'})"
    else:
        kind = "bare metal" if virt.is_vm is False else "unknown"
    lines.append(f"virtualization: {kind}; IOMMU {virt.iommu_mode or '?'}")
    return lines


def _status_counts(results: Sequence[BenchResult]) -> str:
    counts = {s: sum(1 for r in results if r.status is s) for s in Status}
    return ", ".join(f"{n} {s.value}" for s, n in counts.items() if n)


def render_header(view: ViewInput) -> str:
    """Where the Report came from: file, command, date, gdrdiag version, machine, result counts."""
    r = view.report
    lines = [
        f"Report {view.label}",
        f"command: {r.command or '?'}",
        f"created: {r.created_utc or '?'} by gdrdiag {r.tool_version or '?'}",
        *machine_summary(r.machine),
    ]
    benches = [BENCH_NAMES[b] for b in BENCH_NAMES if any(x.bench is b for x in r.results)]
    lines.append(
        f"results: {len(r.results)} ({_status_counts(r.results) or 'none'})"
        + (f" from {', '.join(benches)}" if benches else "")
    )
    lines += [f"note: {n}" for n in r.notes]
    return "\n".join(lines)


def _imported_where(r: BenchResult) -> str:
    """Which device an imported number was measured on (the GPU ordinal, else the RDMA device)."""
    gpu, device = r.params.gpu, r.params.device_name
    return f"GPU {gpu}" if gpu is not None else (device or "-")


def _imported_table(results: Sequence[BenchResult]) -> str:
    """Imported results (perftest, nvbandwidth): one row each, with the tool and device that measured it.

    No payload column: another tool's numbers carry no gdrdiag payload check.
    """
    rows = [
        [
            r.key,
            r.provider or "-",
            _imported_where(r),
            size(r.params.size_bytes) if r.params.size_bytes is not None else "-",
            num(r.value),
            r.unit or "-",
            spread(r),
        ]
        for r in results
        if r.status is not Status.WAIVED
    ]
    parts = []
    if rows:
        parts.append(
            "Imported results (median of samples)\n"
            + table(
                rows,
                ["case", "tool", "on", "size", "value", "unit", "min-max"],
                max_widths=[36, 12, 16],
            )
        )
    bad = problems(results)
    if bad:
        parts.append(bad)
    return "\n\n".join(parts) if parts else "no imported results"


def render_bench(bench: Bench, results: Sequence[BenchResult], ro_pairs: Sequence = ()) -> str:
    """One bench's section, with the tables that bench prints."""
    items = list(results)
    if bench is Bench.COPY:
        return render_copy_results(items)
    if bench is Bench.GATHER:
        return render_gather_results(items)
    if bench is Bench.MR:
        return render_mr_results(items, pairs=ro_pairs) or "no mr-bench results"
    if bench is Bench.PEER:
        from gdrdiag.render.peer_table import render_peer_results

        return render_peer_results(items)
    return _imported_table(items)


def render_report_view(view: ViewInput) -> str:
    """The whole view: header, one section per bench asked for, the findings saved in the Report."""
    parts = [render_header(view)]
    for bench in view.benches:
        results = [r for r in view.report.results if r.bench is bench]
        title = f"== {BENCH_NAMES[bench]}: {len(results)} results"
        if not results:
            if len(view.benches) == 1:  # asked for by name: say so; in the full view, leave it out
                parts.append(f"{title} (none in this Report)")
            continue
        parts.append(f"{title} ({_status_counts(results)})\n\n" + render_bench(bench, results, view.ro_pairs))
    parts.append(render_findings(view.report.findings, title="== Findings saved in the Report"))
    return fit_width("\n\n".join(parts), view.width)


# --------------------------------------------------------------------------------------------
# fitting a width: fold wide tables, wrap prose
# --------------------------------------------------------------------------------------------

_RULE = re.compile(r"^-+(?:  +-+)*$")


def _spans(rule: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"-+", rule)]


def _is_row(line: str, spans: list[tuple[int, int]]) -> bool:
    """True when ``line`` is a row of the table whose columns are ``spans`` (blank in every gap)."""
    if not line.strip() or len(line.rstrip()) > spans[-1][1]:
        return False
    gaps = [(a[1], b[0]) for a, b in zip(spans, spans[1:], strict=False)]
    return all(not line[s:e].strip() for s, e in gaps)


def _groups(spans: list[tuple[int, int]], width: int) -> list[list[int]]:
    """Column indexes per folded part: the first column, then as many more as fit ``width``."""
    first = spans[0][1] - spans[0][0]
    groups: list[list[int]] = []
    current: list[int] = []
    used = first
    for i in range(1, len(spans)):
        w = spans[i][1] - spans[i][0] + 2
        if current and used + w > width:
            groups.append(current)
            current, used = [], first
        current.append(i)
        used += w
    groups.append(current)
    return [[0, *g] for g in groups]


def _fold_table(lines: list[str], width: int) -> list[str]:
    """A tabulate "simple" table (header, rule, rows) as stacked parts no wider than ``width``."""
    spans = _spans(lines[1])
    if spans[-1][1] <= width or len(spans) < 2:
        return lines
    out: list[str] = []
    for n, group in enumerate(_groups(spans, width)):
        if n:
            out.append("")
        for k, line in enumerate(lines):
            cells = [line[spans[i][0] : spans[i][1]].ljust(spans[i][1] - spans[i][0]) for i in group]
            joined = "  ".join(cells).rstrip()
            # the rule under the header is cut, a cell too wide for any part is wrapped
            out += [joined[:width]] if k == 1 else _wrap(joined, width, indent=spans[0][1] - spans[0][0] + 2)
    return out


def _wrap(line: str, width: int, indent: int) -> list[str]:
    """``line`` wrapped at ``width``, continuation lines indented by ``indent`` (at most half)."""
    if len(line) <= width:
        return [line]
    pad = " " * min(indent, width // 2)
    return textwrap.wrap(line, width, subsequent_indent=pad) or [line[:width]]


def fit_width(text: str, width: int = DEFAULT_WIDTH) -> str:
    """``text`` with tables wider than ``width`` folded and longer prose lines wrapped."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        if i + 1 < len(lines) and _RULE.match(lines[i + 1]) and lines[i].strip():
            spans = _spans(lines[i + 1])
            end = i + 2
            while end < len(lines) and _is_row(lines[end], spans):
                end += 1
            out += _fold_table(lines[i:end], width)
            i = end
            continue
        line = lines[i]
        out += _wrap(line, width, indent=len(line) - len(line.lstrip()) + 4)
        i += 1
    return "\n".join(out)
