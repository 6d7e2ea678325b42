"""The path an imported row measured, as typed fields: what kind of path, what moved it, which way.

Importers fill these from what they parsed (perftest's ib_read_bw pulls bytes from the remote
side, an nvbandwidth ``*_sm`` testcase copies with SM kernels); the path model reads only them.
Reports saved before the fields existed hold only the tool and test names: :func:`legacy_path`
reads the same facts from those names, once, when such a row is built or loaded.
"""

from __future__ import annotations

import enum
from typing import Optional

from gdrdiag.model.path import Mover
from gdrdiag.model.vocabulary import Provider


class PathKind(str, enum.Enum):
    """What kind of data path an imported row measured."""

    NIC_DMA = "nic-dma"  # RDMA WRITE/READ/SEND between this host's memory and the far side
    HOST_GPU = "host-gpu"  # copies between host memory and one GPU
    GPU_GPU = "gpu-gpu"  # copies between two GPUs (or within one: the path model says why not)
    COLLECTIVE = "collective"  # an NCCL collective, judged by its bus bandwidth
    FACTS = "facts"  # no bandwidth: the facts of a run (an NCCL INFO log)
    CPU_STORES = "cpu-stores"  # the CPU stores into GPU memory through its BAR (gdrcopy): no DMA


class Flow(str, enum.Enum):
    """Which way an imported row's bytes moved along its path."""

    H2D = "h2d"  # host memory -> GPU
    D2H = "d2h"  # GPU -> host memory
    BIDIR = "bidir"  # host <-> GPU, both ways at once
    TO_REMOTE = "to-remote"  # this host's memory -> the far side (RDMA WRITE, SEND)
    FROM_REMOTE = "from-remote"  # the far side -> this host's memory (RDMA READ)
    PEER = "peer"  # GPU -> the other GPU
    PEER_BIDIR = "peer-bidir"  # GPU <-> the other GPU, both ways at once


HOST_FLOWS = {"h2d": Flow.H2D, "d2h": Flow.D2H, "bidir": Flow.BIDIR}

_RDMA_TESTS = ("write_bw", "read_bw", "send_bw")
_RDMA_TOOLS = (Provider.PERFTEST.value, Provider.POSTED.value)
# nvbandwidth testcase names and what they move (nvbandwidth README, "Test Details")
_NVB_MOVER = {"_ce": Mover.COPY_ENGINE, "_sm": Mover.SM}

LegacyPath = tuple[Optional[PathKind], Optional[Mover], Optional[Flow]]


def rdma_flow(test: str, direction: Optional[str]) -> Flow:
    """The RDMA flow of a perftest (or posted) row: READ and a ``nic->`` direction pull from the far side."""
    return Flow.FROM_REMOTE if test == "read_bw" or direction in ("nic->gpu", "nic->host") else Flow.TO_REMOTE


def peer_flow(test: str) -> Flow:
    """A GPU<->GPU test's flow: the tools name their both-ways tests ``*bidirectional*``."""
    return Flow.PEER_BIDIR if "bidirectional" in test.lower() else Flow.PEER


def legacy_path(
    tool: Optional[str], test: Optional[str], direction: Optional[str], collective: Optional[str]
) -> LegacyPath:
    """(kind, mover, flow) of a row saved before importers filled them, read from its tool and test names.

    The rules the path model applied to those names before the fields existed, so an old Report is
    judged as it was: (None, None, None) for a measurement none of them knows.
    """
    tool, test = tool or "", test or ""
    if "gdrcopy" in test.lower() or "gdrcopy" in tool.lower():
        return PathKind.CPU_STORES, None, None
    if tool in _RDMA_TOOLS and test in _RDMA_TESTS:
        return PathKind.NIC_DMA, Mover.NIC_DMA, rdma_flow(test, direction)
    if tool == Provider.NCCL.value:
        return PathKind.FACTS, None, None
    if tool == Provider.NCCL_TESTS.value or test.endswith("_perf") or collective:
        return PathKind.COLLECTIVE, Mover.COLLECTIVE, None
    if direction == "d2d" or test.startswith("device_to_device") or tool == Provider.P2P_TEST.value:
        return PathKind.GPU_GPU, copy_mover(test), peer_flow(test)
    flow = HOST_FLOWS.get(direction or "")
    if flow is not None or test.startswith(("host_to_device", "device_to_host")):
        if flow is None:
            flow = Flow.H2D if test.startswith("host_to_device") else Flow.D2H
        return PathKind.HOST_GPU, copy_mover(test), flow
    return None, None, None


def copy_mover(test: str) -> Mover:
    """What an nvbandwidth testcase copies with (its ``_ce``/``_sm`` suffix); the copy engine otherwise."""
    return next((m for suffix, m in _NVB_MOVER.items() if test.endswith(suffix)), Mover.COPY_ENGINE)
