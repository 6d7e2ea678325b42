"""Wrap bench results into a Report stamped with tool version, time, command and machine."""

from __future__ import annotations

import dataclasses
import datetime
import sys

from gdrdiag import __version__
from gdrdiag.model.machine import MachineInfo
from gdrdiag.model.params import COPY_MODE_TOGETHER
from gdrdiag.model.report import Report
from gdrdiag.model.results import BenchResult
from gdrdiag.model.vocabulary import Bench


def results_report(command: str, results: list[BenchResult], **fields) -> Report:
    """A Report holding ``results`` (and any other Report fields given).

    With the machine's facts, each row that ran on a GPU records that GPU's PCI address and UUID in its
    run settings (:func:`with_gpu_addresses`).
    """
    machine = fields.get("machine")
    return Report(
        tool_version=__version__,
        created_utc=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        command=" ".join(["gdrdiag", *sys.argv[1:]]) if command in sys.argv else f"gdrdiag {command}",
        results=tuple(with_gpu_addresses(results, machine) if machine is not None else results),
        **fields,
    )


def with_gpu_addresses(results: list[BenchResult], machine: MachineInfo) -> list[BenchResult]:
    """``results`` with ``settings.gpu_bdf``/``gpu_uuid`` of the GPU each per-GPU row ran on.

    The ordinal alone is CUDA's numbering in that process (``CUDA_VISIBLE_DEVICES`` renumbers it), so a
    row names its GPU the way the machine facts, ``nvidia-smi`` and another node's Report can.
    """
    by_ordinal = {g.cuda_ordinal: g for g in machine.gpus if g.cuda_ordinal is not None}
    out = []
    for r in results:
        ordinal = getattr(r.params, "gpu", None) if r.bench in (Bench.COPY, Bench.GATHER, Bench.MR) else None
        if getattr(r.params, "mode", None) == COPY_MODE_TOGETHER:
            ordinal = None  # every GPU at once: no one GPU's row
        elif r.bench in (Bench.COPY, Bench.GATHER) and ordinal is None:
            ordinal = 0  # their implied GPU (params.py: the benches' default)
        gpu = by_ordinal.get(ordinal) if ordinal is not None else None
        if gpu is not None and r.settings.gpu_bdf is None:
            settings = dataclasses.replace(r.settings, gpu_bdf=gpu.bdf, gpu_uuid=gpu.uuid)
            r = dataclasses.replace(r, settings=settings)
        out.append(r)
    return out


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
