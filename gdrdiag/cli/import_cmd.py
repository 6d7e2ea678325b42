"""``gdrdiag import FILE... --bundle node.tar.gz -o r.json``: other tools' outputs into a Report."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from gdrdiag.cli.application import app
from gdrdiag.cli.common import (
    EXIT_FAIL,
    EXIT_OK,
    echo,
    echo_text,
    error_line,
    force_requested,
    handles_errors,
    wants_json,
)
from gdrdiag.errors import UserInputError


@app.command("import")
@handles_errors
def import_cmd(
    ctx: typer.Context,
    files: list[Path] = typer.Argument(
        ...,
        metavar="FILE...",
        help="perftest BW text or --out_json, nvbandwidth -j, bandwidthTest, p2pBandwidthLatencyTest, "
        "ucx_perftest, nccl-tests text or -J, an NCCL_DEBUG=INFO log alone.",
    ),
    bundle: Optional[Path] = typer.Option(
        None, "--bundle", help="inspect/collect bundle (folder or .tar.gz) of the machine the tools ran on."
    ),
    into: Optional[Path] = typer.Option(
        None, "--into", help="Add the results to this saved Report (written back to it unless -o is given)."
    ),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the Report (JSON) here."),
    perftest_gbits: bool = typer.Option(
        False, "--perftest-gbits", help="perftest JSON files were made with --report_gbits (default MB/sec)."
    ),
) -> None:
    """Turn other tools' output into results (perftest, nvbandwidth, CUDA samples, nccl-tests, ucx_perftest).

    With --bundle (or --into) the machine facts come along, so `diagnose` and `compare` judge the
    imported numbers against this machine. --into adds to a saved Report and writes it back (or to
    -o). At most 16 MiB per file and 10,000 results per import. Exit code: 0, or 1 with a FAIL
    finding; 2 for input it cannot read (one line saying why; nothing is written).
    """
    import dataclasses
    import hashlib

    from gdrdiag.cli.report_files import load_report, write_text_file
    from gdrdiag.cli.reporting import results_report
    from gdrdiag.diagnose import diagnose
    from gdrdiag.importers import MAX_IMPORT_RESULTS, import_text
    from gdrdiag.model.findings import Severity
    from gdrdiag.render.findings_table import render_findings

    if bundle is not None and into is not None:
        raise UserInputError("give --bundle or --into, not both")
    results: list = []
    overwrite = False
    per_file: list = []
    seen: dict[object, Path] = {}
    for path in files:
        data = _read_bounded(path)
        for mark in (_identity(path), hashlib.sha256(data).hexdigest()):
            if mark in seen:
                raise UserInputError(f"{path}: the same file as {seen[mark]}, given twice")
            seen[mark] = path
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise UserInputError(f"{path}: cannot read as text (not UTF-8)") from None
        try:
            rows = import_text(text, path.name, perftest_gbits=perftest_gbits)
        except UserInputError as exc:
            raise UserInputError(f"{path}: {exc}") from None
        per_file.append((path, rows))
        results.extend(rows)
        if len(results) > MAX_IMPORT_RESULTS:
            raise UserInputError(
                f"more than {MAX_IMPORT_RESULTS} results in one import (gdrdiag's limit); "
                "import fewer files at a time"
            )
    if into is not None:
        base = load_report(into)
        _refuse_reimport(into, base, per_file)
        report = dataclasses.replace(
            base,
            results=base.results + tuple(results),
            notes=base.notes + (f"imported {', '.join(p.name for p in files)}",),
        )
        if output is None:
            output, overwrite = into, True
    else:
        machine = _machine(bundle) if bundle is not None else None
        report = results_report("import", results, machine=machine)
    report = dataclasses.replace(report, findings=diagnose(report).findings)
    text_out = _readable(report)
    _warn_other_machine(results, report.machine, into is not None)
    if output is not None:
        write_text_file(output, text_out, force=overwrite or force_requested(ctx))
    if wants_json(ctx):
        echo(text_out)
    else:
        where = f"; wrote {output}" if output else " (give -o to keep them)"
        echo_text(
            ctx,
            f"imported {len(results)} results from {len(files)} file(s){where}"
            + ("" if report.machine else "; no machine facts (give --bundle)"),
        )
        echo_text(ctx, render_findings(report.findings))
    raise typer.Exit(EXIT_FAIL if any(f.severity is Severity.FAIL for f in report.findings) else EXIT_OK)


def _machine(bundle: Path):
    from gdrdiag.hw.bundle import open_bundle
    from gdrdiag.inspect.collect import inspect_source

    if not bundle.exists():
        raise UserInputError(f"--bundle {bundle}: no such file or folder")
    with open_bundle(str(bundle)) as source:
        return inspect_source(source)


def _read_bounded(path: Path) -> bytes:
    """The file's bytes, refusing anything larger than MAX_IMPORT_BYTES before reading it.

    The size is checked first and at most the limit + 1 bytes are read, so neither a huge file nor
    one that grows while being read (or a /proc-like file that reports size 0) is read whole.
    """
    import os
    import stat

    from gdrdiag.importers import MAX_IMPORT_BYTES

    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise UserInputError(f"{path}: no such file") from None
    except OSError as exc:
        raise UserInputError(f"{path}: cannot read ({exc.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise UserInputError(f"{path}: not a regular file")
    too_big = f"{path}: larger than {MAX_IMPORT_BYTES} bytes (gdrdiag imports at most 16 MiB per file)"
    if st.st_size > MAX_IMPORT_BYTES:
        raise UserInputError(too_big)
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_IMPORT_BYTES + 1)
    except OSError as exc:
        raise UserInputError(f"{path}: cannot read ({exc.strerror})") from None
    if len(data) > MAX_IMPORT_BYTES:
        raise UserInputError(too_big)
    return data


def _identity(path: Path) -> tuple[int, int]:
    import os

    st = os.stat(path)
    return (st.st_dev, st.st_ino)


def _readable(report) -> str:
    """The Report's JSON, checked to read back (a Report import writes is always one gdrdiag reads)."""
    from gdrdiag.model.report import MAX_REPORT_BYTES, Report
    from gdrdiag.model.serde import SchemaError

    text = report.to_json()
    if len(text) > MAX_REPORT_BYTES:
        raise UserInputError(f"the Report would be larger than {MAX_REPORT_BYTES} bytes; import fewer files")
    try:
        Report.from_json(text)
    except SchemaError as exc:
        raise UserInputError(f"the imported values do not make a readable Report: {str(exc)[:200]}") from None
    return text


def _absent_devices(results, machine) -> list[str]:
    """The perftest devices (``mlx5_3``) the results name that the machine facts do not list."""
    from gdrdiag.model.params import ImportedParams
    from gdrdiag.model.vocabulary import Provider

    if machine is None:
        return []
    present = {n.name for n in machine.nics}
    named = {
        r.params.device_name
        for r in results
        if isinstance(r.params, ImportedParams)
        and r.params.tool == Provider.PERFTEST.value
        and r.params.device_name
    }
    return sorted(named - present)


def _warn_other_machine(results, machine, into: bool) -> None:
    """One warning line each when the results name NICs or GPUs the machine facts do not have."""
    absent = _absent_devices(results, machine)
    if absent:
        where = "--into report's machine" if into else "--bundle machine"
        has = ", ".join(sorted(n.name for n in machine.nics)) or "no RDMA device"
        error_line(
            f"gdrdiag: warning: perftest ran on {', '.join(absent)}, which the {where} does not have "
            f"(it has {has}); the results are judged against a NIC that did not move them"
        )
    gpu_mismatch = _gpu_mismatch(results, machine)
    if gpu_mismatch:
        error_line(f"gdrdiag: warning: {gpu_mismatch}")


def _gpu_mismatch(results, machine) -> str:
    """One line when the GPUs a tool's output names (model per ordinal) are not the machine facts' GPUs.

    p2pBandwidthLatencyTest prints a ``Device: N, <name>, pciBusID: ...`` line per GPU; a bundle of
    another machine (another count or model) would judge its numbers against links they never used.
    """
    from gdrdiag.model.params import ImportedParams

    if machine is None or not machine.gpus:
        return ""
    named = {
        r.params.gpu: r.params.device_name
        for r in results
        if isinstance(r.params, ImportedParams) and r.params.gpu is not None and r.params.gpu_bdf
    }
    if not named:
        return ""
    output = sorted(n or "?" for n in named.values())
    bundle = sorted(g.name or "?" for g in machine.gpus)
    if len(output) != len(bundle):
        return (
            f"the imported output names {len(output)} GPU(s) ({', '.join(sorted(set(output)))}), the "
            f"bundle has {len(bundle)} ({', '.join(sorted(set(bundle)))}): not the machine the tool ran on?"
        )
    if output != bundle:
        return (
            f"the imported output's GPUs ({', '.join(output)}) are not the bundle's ({', '.join(bundle)}): "
            "not the machine the tool ran on?"
        )
    return ""


def _refuse_reimport(into: Path, base, per_file) -> None:
    """One line when every result a file gives is already in the --into Report (imported before)."""
    try:
        held = {(r.key, r.params, r.stats) for r in base.results}
    except TypeError:  # a Report holding unhashable values: nothing to compare
        return
    for path, rows in per_file:
        if rows and all((r.key, r.params, r.stats) in held for r in rows):
            raise UserInputError(f"{path}: already imported into {into} (its {len(rows)} results are there)")
