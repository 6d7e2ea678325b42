"""``gdrdiag report -o r.json``: inspect plus the standard benches into one Report."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Optional

import typer

from gdrdiag.bench.gpus import GPUS_HELP
from gdrdiag.bench.profiles import PER_GPU_BENCHES, PROFILE_BENCHES, Profile, RdmaPart
from gdrdiag.cli.application import app
from gdrdiag.cli.common import (
    EXIT_FAIL,
    EXIT_OK,
    echo,
    echo_text,
    handles_errors,
    wants_json,
)
from gdrdiag.cli.progress import QUIET_HELP, Progress
from gdrdiag.errors import UserInputError
from gdrdiag.model.words import NUMA_HELP, parse_numa
from gdrdiag.node_record import HOST_RE as HOST_OK  # light: json/os/re and model.serde only


def build_report(profile: Profile, progress: Optional[Callable[[str], None]] = None):
    """Inspect this machine, run the standard benches of ``profile``, diagnose.

    Returns the Report and, when Ctrl-C stopped the benches, the Interruption (the Report then
    holds the results measured before it and a note saying it is partial).
    """
    import dataclasses
    import functools

    from gdrdiag.bench.copy_together import with_sum_alone
    from gdrdiag.bench.gpus import GpuLoop
    from gdrdiag.bench.runner import on_gpu, run_case
    from gdrdiag.cli.interrupt import measure
    from gdrdiag.cli.reporting import results_report
    from gdrdiag.diagnose import diagnose
    from gdrdiag.hw.bundle import LiveSource
    from gdrdiag.inspect.collect import inspect_source

    if progress:
        progress("inspect")
    machine = inspect_source(LiveSource())
    profile = dataclasses.replace(profile, machine=machine)  # the peer cases' path model needs it

    loop = GpuLoop(profile.gpus)

    def run_benches() -> list:
        results = []
        for name, bench in PROFILE_BENCHES:
            if name not in PER_GPU_BENCHES:
                loop.current = None
                if progress:
                    progress(name)
                results.extend(run_case(name.replace("-", "_"), functools.partial(bench, profile)))
                continue
            for i, gpu in enumerate(profile.gpus):
                loop.current = gpu
                if progress:
                    progress(name if len(profile.gpus) == 1 else f"{name} GPU {gpu}")
                this = dataclasses.replace(profile, gpu=gpu, host_kinds=i == 0)
                results.extend(
                    on_gpu(run_case(name.replace("-", "_"), functools.partial(bench, this)), gpu, _used_a_gpu)
                )
        return with_sum_alone(results)

    results, stopped = measure(run_benches, loop.tag_partial)
    report = results_report("report", results, machine=machine, notes=(stopped.note,) if stopped else ())
    return dataclasses.replace(report, findings=diagnose(report).findings), stopped


def _profile(
    level: str, rdma: RdmaPart, numa: str, gpus: Optional[str], from_report: Optional[Path]
) -> Profile:
    """The report profile the options ask for, its placement and GPUs checked before any work."""
    from gdrdiag.bench.gpus import choose_gpus

    profile = Profile(level, rdma, parse_numa(numa))
    profile.check_numa()
    if gpus is None:
        return profile
    if from_report is not None:
        raise UserInputError("--from-report measures nothing; drop --gpus")
    return Profile(level, rdma, profile.numa, gpus=choose_gpus(gpus) or (0,))


def _refuse_measuring_options(from_report: Optional[Path], **given: object) -> None:
    """``--from-report`` re-measures nothing: an option that only shapes a measurement contradicts it.

    ``given`` maps each such option's parameter name to its value (False or None when not given).
    """
    if from_report is None:
        return
    for name, value in given.items():
        if value not in (None, False):
            flag = "--" + name.replace("_", "-")
            raise UserInputError(f"--from-report uses the saved Report and measures nothing; drop {flag}")


def _used_a_gpu(result) -> bool:
    """Whether a per-GPU bench's result used its GPU (an RDMA WRITE into host memory used none)."""
    from gdrdiag.bench.mr_setup import uses_local_gpu
    from gdrdiag.model.params import COPY_MODE_TOGETHER
    from gdrdiag.model.vocabulary import Bench

    if getattr(result.params, "mode", None) == COPY_MODE_TOGETHER:
        return False  # every GPU at once
    return result.bench is not Bench.MR or uses_local_gpu(result)


def _rdma_part(skip: bool, size: Optional[str], iters: Optional[int], qps: Optional[int]) -> RdmaPart:
    """The RDMA part of a report as the options ask (a slow device needs a smaller matrix)."""
    from gdrdiag.units import parse_size

    for name, value in (("--rdma-iters", iters), ("--rdma-qps", qps)):
        if value is not None and value < 1:
            raise UserInputError(f"{name} must be at least 1")
    if skip and any(v is not None for v in (size, iters, qps)):
        raise UserInputError("--no-rdma leaves the RDMA matrix out; drop --rdma-size/--rdma-iters/--rdma-qps")
    return RdmaPart(
        skip=skip,
        size=parse_size(size, what="--rdma-size") if size is not None else None,
        iterations=iters,
        qps=qps,
    )


def node_name(explicit: Optional[str], report) -> str:
    """The node name: ``--host``, else $GDRDIAG_HOST, else the Report's hostname, else this host's name.

    The name goes into file names (``{host}``), so it must be a plain host name.
    """
    import socket

    name = explicit or os.environ.get("GDRDIAG_HOST") or ""
    if not name and report.machine is not None:
        name = report.machine.host.hostname
    name = name or socket.gethostname()
    if not HOST_OK.match(name):
        raise UserInputError(f"host name {name[:80]!r} is not a plain host name (letters, digits, . _ -)")
    return name


def _expand(path: Optional[Path], host: str, what: str, force: bool) -> Optional[Path]:
    if path is None:
        return None
    out = Path(str(path).replace("{host}", host))
    if out.is_dir():
        raise UserInputError(f"{what} {out} is a folder; give a file name such as DIR/{{host}}.json")
    if not out.parent.is_dir():
        raise UserInputError(f"{what} {out}: folder {out.parent} does not exist")
    from gdrdiag.cli.report_files import check_output_path

    check_output_path(out, what, force=force, append=what == "--jsonl")
    return out


@app.command("report")
@handles_errors
def report_cmd(
    ctx: typer.Context,
    output: Optional[Path] = typer.Option(
        None, "--output", "-o", help="Where to write the Report (JSON); {host} is replaced by the node name."
    ),
    quick: bool = typer.Option(False, "--quick", help="A short bench set (about 20 s on a GPU)."),
    full: bool = typer.Option(False, "--full", help="Every sweep of every bench (several minutes)."),
    html: Optional[Path] = typer.Option(None, "--html", help="Also write an HTML page with plots."),
    record: Optional[Path] = typer.Option(
        None, "--record", help="Write one node record for `gdrdiag fleet` (atomic); e.g. DIR/{host}.json."
    ),
    jsonl: Optional[Path] = typer.Option(
        None, "--jsonl", help="Append one node record line to this file (one O_APPEND write; local disks)."
    ),
    prometheus: Optional[Path] = typer.Option(
        None, "--prometheus", help="Write node_exporter textfile metrics (.prom) for this node (atomic)."
    ),
    host: Optional[str] = typer.Option(
        None, "--host", help="Node name for records and {host} (default: $GDRDIAG_HOST, else the hostname)."
    ),
    from_report: Optional[Path] = typer.Option(
        None, "--from-report", help="Use a saved Report instead of measuring (make a record from it)."
    ),
    add_results: Optional[list[Path]] = typer.Option(
        None,
        "--add-results",
        metavar="REPORT.json",
        help="Add results of other saved Reports (two-machine mr-bench --json-out runs); re-diagnose.",
    ),
    force: bool = typer.Option(
        False, "--force", "-f", help="Overwrite existing -o, --html and --record files."
    ),
    no_rdma: bool = typer.Option(False, "--no-rdma", help="Leave the RDMA matrix out (WAIVED)."),
    rdma_size: Optional[str] = typer.Option(
        None, "--rdma-size", help="RDMA matrix message size (default 1M)."
    ),
    rdma_iters: Optional[int] = typer.Option(
        None, "--rdma-iters", help="RDMA matrix WRs per QP per run (default 2000; --full 20000)."
    ),
    rdma_qps: Optional[int] = typer.Option(None, "--rdma-qps", help="RDMA matrix QPs (default 4)."),
    quiet: bool = typer.Option(False, "--quiet", help=QUIET_HELP),
    numa: str = typer.Option("auto", "--numa", help=NUMA_HELP),
    gpus: Optional[str] = typer.Option(None, "--gpus", help=GPUS_HELP, show_default=False),
) -> None:
    """Inspect this machine and run the standard benches it supports into one Report (WAIVED for the rest).

    With --record/--jsonl it also writes a node record for `gdrdiag fleet` (docs/fleet.md).
    """
    import dataclasses

    from gdrdiag.cli.interrupt import exit_130_after
    from gdrdiag.model.findings import Severity

    if quick and full:
        raise UserInputError("choose --quick or --full, not both")
    _refuse_measuring_options(
        from_report,
        quick=quick,
        full=full,
        no_rdma=no_rdma,
        rdma_size=rdma_size,
        rdma_iters=rdma_iters,
        rdma_qps=rdma_qps,
    )
    if output is None and record is None and jsonl is None and prometheus is None and not wants_json(ctx):
        raise UserInputError(
            "give -o FILE, --record FILE, --jsonl FILE, --prometheus FILE, or --json (the Report on stdout)"
        )
    if host is not None and not HOST_OK.match(host):
        raise UserInputError(f"--host {host[:80]!r} is not a plain host name (letters, digits, . _ -)")
    for path in (html, prometheus, jsonl):
        if path is not None and not path.parent.exists():
            raise UserInputError(f"{path}: directory {path.parent} does not exist")
    _check_templates((output, record, jsonl, html), host, force)
    level = "quick" if quick else ("full" if full else "standard")
    profile = _profile(level, _rdma_part(no_rdma, rdma_size, rdma_iters, rdma_qps), numa, gpus, from_report)
    if from_report is not None:
        from gdrdiag.cli.report_files import load_report
        from gdrdiag.diagnose import diagnose

        report = load_report(from_report)
        # Judge a saved Report with the current rules (its stored findings may predate them).
        report, stopped = dataclasses.replace(report, findings=diagnose(report).findings), None
    else:
        per_gpu = sum(1 for name, _ in PROFILE_BENCHES if name in PER_GPU_BENCHES)
        steps = 1 + len(PROFILE_BENCHES) + per_gpu * (len(profile.gpus) - 1)
        progress = Progress(f"report ({level})", steps, enabled=not quiet)
        report, stopped = build_report(profile, progress=progress.step)
    with exit_130_after(stopped):
        if add_results:
            report = _merge_results(report, add_results)
        # A FAIL finding, or a measurement that failed (diagnose reports it as MEASURE-FAILED), exits 1.
        failed = any(r.status.value == "ERROR" or r.verified is False for r in report.results)
        code = EXIT_FAIL if failed or any(f.severity is Severity.FAIL for f in report.findings) else EXIT_OK
        name = node_name(host, report)
        output = _expand(output, name, "-o", force)
        record = _expand(record, name, "--record", force)
        jsonl = _expand(jsonl, name, "--jsonl", force)
        written = []
        if output is not None:
            from gdrdiag.cli.report_files import write_text_file

            write_text_file(output, report.to_json(), force=force, what="-o")
            written.append(str(output))
        if record is not None or jsonl is not None or prometheus is not None:
            written += _write_node_outputs(report, name, code, record, jsonl, prometheus, force)
        if html is not None:
            from gdrdiag.cli.report_files import write_text_file
            from gdrdiag.render.html import report_html

            write_text_file(html, report_html(report, report.findings), force=force, what="--html")
            written.append(str(html))
        if wants_json(ctx):
            echo(report.to_json())
        else:
            _say_written(ctx, report, name, written)
        raise typer.Exit(code)


def _say_written(ctx: typer.Context, report, name: str, written: list[str]) -> None:
    """The text output: what was written and the results' count, placement, GPUs side by side, findings."""
    from gdrdiag.render.findings_table import render_findings
    from gdrdiag.render.results_table import placement_lines

    counts: dict[str, int] = {}
    for r in report.results:
        counts[r.status.value] = counts.get(r.status.value, 0) + 1
    echo_text(
        ctx,
        f"wrote {', '.join(written)}: node {name}, {len(report.results)} "
        f"result{'' if len(report.results) == 1 else 's'} "
        f"({', '.join(f'{n} {s}' for s, n in sorted(counts.items()))})",
    )
    placed = placement_lines(report.results)
    if placed:
        echo_text(ctx, placed)
    side = _gpus_side_by_side(report.results)
    if side:
        echo_text(ctx, side)
    echo_text(ctx, render_findings(report.findings))


def _gpus_side_by_side(results) -> str:
    """The per-GPU benches' cases side by side, one column per GPU ("" for a one-GPU Report)."""
    from gdrdiag.diagnose.node_rules import outliers, sibling_rows
    from gdrdiag.render.gpu_table import render_gpus_side_by_side

    rows = sibling_rows(results)
    return render_gpus_side_by_side(results, rows, outliers(results, rows))


def _write_node_outputs(
    report,
    name: str,
    code: int,
    record: Optional[Path],
    jsonl: Optional[Path],
    prometheus: Optional[Path],
    force: bool,
) -> list[str]:
    """The node record (one file, or one appended line) and the Prometheus textfile; what was written."""
    from gdrdiag.node_record import append_record_line, parse_head, record_line, write_record_file

    line = record_line(report, name, code)
    written = []
    if record is not None:
        try:
            write_record_file(record, line, force=force)
        except FileExistsError:
            raise UserInputError(f"--record {record} exists; use -f/--force to overwrite") from None
        written.append(str(record))
    if jsonl is not None:
        append_record_line(jsonl, line)
        written.append(f"{jsonl} (+1 line)")
    if prometheus is not None:
        from gdrdiag.render.prometheus import write_node_prom

        write_node_prom(prometheus, parse_head(line))
        written.append(str(prometheus))
    return written


def _check_templates(paths, host: Optional[str], force: bool) -> None:
    """Check ``{host}`` output paths before measuring, with the name the run will most likely use.

    (Paths without ``{host}`` were checked by ``handles_errors``; these are checked again after
    the run with the final name.)
    """
    import socket

    guess = host or os.environ.get("GDRDIAG_HOST") or socket.gethostname()
    for path, what in zip(paths, ("-o", "--record", "--jsonl", "--html"), strict=True):
        if path is not None and "{host}" in str(path) and HOST_OK.match(guess):
            _expand(path, guess, what, force)


def _merge_results(report, paths: list[Path]):
    """``report`` plus the results of the Reports at ``paths``, diagnosed again as one Report."""
    import dataclasses

    from gdrdiag.cli.report_files import load_report
    from gdrdiag.diagnose import diagnose

    extra = []
    for path in paths:
        extra.extend(load_report(path).results)
    merged = dataclasses.replace(
        report,
        results=report.results + tuple(extra),
        notes=report.notes + (f"results added from {', '.join(p.name for p in paths)}",),
    )
    return dataclasses.replace(merged, findings=diagnose(merged).findings)
