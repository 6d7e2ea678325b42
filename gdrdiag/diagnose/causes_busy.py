"""CAUSE-GPU-BUSY: a loss on a GPU that another process was using when the machine facts were read.

Pure. The facts are NVML's (:class:`gdrdiag.model.machine.GpuInfo` ``other_processes`` and
``utilization_pct``), read by ``inspect``/``collect``: a bundle collected while the slow run happened
holds them. Each loss is tied to the GPUs its path crosses: a copy's GPU, a peer copy's two, every
rank's GPU of a single-node collective.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gdrdiag.diagnose.causes import Cause, Context
from gdrdiag.diagnose.inventory_rules import busy_reason
from gdrdiag.model.path import Judgement, Place
from gdrdiag.model.vocabulary import MemoryKind
from gdrdiag.pathmodel import path_of

if TYPE_CHECKING:  # pragma: no cover
    from gdrdiag.model.report import Report

NEXT = "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv"


def _gpus_of(report: "Report", j: Judgement) -> list[int]:
    """The CUDA ordinals a judged row's path crosses."""
    ordinals = [e.index for e in (j.source, j.destination) if e is not None and e.place is Place.GPU]
    path, _ = path_of(report.results[j.index])
    if path is not None and path.collective is not None:
        ordinals += list(path.collective.gpus)
    return sorted({o for o in ordinals if o is not None})


def _pageable(j: Judgement) -> bool:
    """True for a row whose host end is pageable memory."""
    return any(e is not None and e.memory is MemoryKind.PAGEABLE for e in (j.source, j.destination))


def busy_gpu_causes(report: "Report", ctx: Context) -> list[Cause]:
    """One CAUSE-GPU-BUSY per busy GPU, on the worst loss whose path crosses it."""
    machine = ctx.machine
    if machine is None or not machine.gpus:
        return []
    by_ordinal = {g.cuda_ordinal: g for g in machine.gpus if g.cuda_ordinal is not None}
    out: list[Cause] = []
    named: set[int] = set()
    # the worst loss first, pageable rows last: the host CPU's staging sets their rate by design, so
    # a loss the GPU's own work sets is the better evidence of the other process
    for j in sorted(ctx.losses, key=lambda j: (_pageable(j), j.ratio or 0.0)):
        for ordinal in _gpus_of(report, j):
            gpu = by_ordinal.get(ordinal)
            why = busy_reason(gpu) if gpu is not None and ordinal not in named else None
            if why is None:
                continue
            named.add(ordinal)
            strong = bool(gpu.other_processes)  # type: ignore[union-attr]
            out.append(
                Cause(
                    "CAUSE-GPU-BUSY",
                    f"GPU {ordinal} ({gpu.bdf}) was in use by another process: {why}",  # type: ignore[union-attr]
                    0.9 if strong else 0.6,
                    0.9 if strong else 0.6,
                    "inferred",
                    j.loss,
                    (
                        f"results[{j.index}] {j.label} = {j.ratio:.0%} of what its path allows",
                        f"GPU {ordinal} when the machine facts were read: {why}",
                    ),
                    (),
                    "Run when the GPU is idle or move the other job; processes on one GPU share it by "
                    "time-slicing.",
                    NEXT,
                    subject=j.key,
                )
            )
    return out


RULES = (busy_gpu_causes,)
