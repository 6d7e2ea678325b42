"""Wrap bench results into a Report stamped with tool version, time, command and machine."""

from __future__ import annotations

import datetime
import sys

from gdrdiag import __version__
from gdrdiag.bench.runner import with_gpu_addresses
from gdrdiag.model.report import Report
from gdrdiag.model.results import BenchResult


def results_report(command: str, results: list[BenchResult], **fields) -> Report:
    """A Report holding ``results`` (and any other Report fields given).

    With the machine's facts, each row that ran on a GPU records that GPU's PCI address and UUID in its
    run settings (:func:`gdrdiag.bench.runner.with_gpu_addresses`).
    """
    machine = fields.get("machine")
    return Report(
        tool_version=__version__,
        created_utc=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        command=" ".join(["gdrdiag", *sys.argv[1:]]) if command in sys.argv else f"gdrdiag {command}",
        results=tuple(with_gpu_addresses(results, machine) if machine is not None else results),
        **fields,
    )


def bench_report(command: str, results: list[BenchResult], **fields) -> Report:
    """A bench's Report: its results plus the facts of the machine that measured them.

    The machine is read the way ``inspect`` reads it (host, GPUs, NICs, virtualization, links;
    about half a second), so a saved ``--json-out`` file says which host and GPU produced it and
    ``diagnose``/``compare`` can judge it. When the machine cannot be read, ``machine`` is null and
    a note says why; the results are never lost for it.
    """
    from gdrdiag.hw.bundle import LiveSource
    from gdrdiag.inspect.collect import inspect_source

    notes = tuple(fields.pop("notes", ()))
    try:
        machine = inspect_source(LiveSource())
    except Exception as exc:  # any failure here must not cost the measured results
        reason = " ".join(str(exc).split())[:200] or type(exc).__name__
        return results_report(
            command, results, machine=None, notes=(*notes, f"machine facts unknown: {reason}"), **fields
        )
    return results_report(command, results, machine=machine, notes=notes, **fields)
