"""Facts about one machine, as ``inspect`` collected them.

This is the snapshot ``diagnose`` reasons about. Each record keeps an ``unknown`` mapping of
field name -> reason for facts that could not be read (no root, no driver, not in a bundle),
so "unknown" is never confused with 0 or False.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass(frozen=True)
class HostInfo:
    """Identity of the machine a Report was taken on."""

    hostname: str = ""
    kernel: str = ""
    os: str = ""
    cpu_model: str = ""
    unknown: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CudaDeviceFacts:
    """What the CUDA driver says about one GPU (the fields benches need)."""

    ordinal: int
    name: str
    pci_bus_id: str
    compute_capability: tuple[int, int]
    total_memory: int
    multiprocessor_count: int
    attributes: dict[str, Optional[int]] = field(default_factory=dict)


@dataclass(frozen=True)
class MachineInfo:
    """Everything inspect knows about a machine. Extended by the inspect layer."""

    host: HostInfo = field(default_factory=HostInfo)
    cuda_driver_version: Optional[int] = None
    cuda_devices: tuple[CudaDeviceFacts, ...] = ()
    unknown: dict[str, str] = field(default_factory=dict)
