"""Every "slow" threshold of the cause model, one per quantity, with the yardstick it divides by.

Where a yardstick depends on the machine, it comes from the PCIe model (:mod:`gdrdiag.pathmodel.pcie`)
for *this* link, MaxPayload, MaxReadReq and request size, never from a fixed fraction of the raw
rate: a host with MaxPayload 128 moves fewer payload bytes per wire byte than one with 256, and is
healthy at a lower number. docs/diagnosis.md lists these values and why.
"""

from __future__ import annotations

from typing import Optional

from gdrdiag.diagnose._common import shown
from gdrdiag.model.machine import MachineInfo, PcieLink
from gdrdiag.pathmodel.pcie import LinkParams, ce_efficiency

# RDMA WRITE into GPU memory / the same run's RDMA WRITE into host memory (same size, nearest
# size otherwise). Below SLOW the GPU path is slow; below FAIL more than half the bandwidth is lost.
GPU_VS_HOST_SLOW = 0.70
GPU_VS_HOST_FAIL = 0.50

# RDMA WRITE with IBV_ACCESS_RELAXED_ORDERING / without, same buffers and QPs. At or above
# RO_GAIN relaxed ordering matters on the path; at or above RO_GAIN_FAIL missing it halves bandwidth.
RO_GAIN = 1.10
RO_GAIN_FAIL = 2.0

# The copies judged against the model are large ones: per-call costs vanish at 64 MiB and above.
LARGE_COPY_BYTES = 64 << 20

# Copy-engine H2D / what the PCIe model says this link delivers with this MPS/MRRS (large copy).
# Healthy hosts measure 94-97% of the model; below this fraction something else costs bandwidth.
CE_OF_MODEL_HEALTHY = 0.90

# Working-set sweep: bandwidth at the largest table / at the smallest. Below this the path loses
# bandwidth as the working set grows (translation reach, NUMA), not to the link.
WORKING_SET_KEEPS = 0.85

# Sizes of a device row and its host reference that differ by more than this factor are still
# matched (nearest size), but the mismatch is stated in the evidence.
SIZE_MATCH_EXACT = 1.0


def gpu_link_params(machine: Optional[MachineInfo]) -> tuple[Optional[LinkParams], list[str]]:
    """(LinkParams of the first GPU's function, evidence lines); None when MPS/MRRS are unknown.

    The completer's RCB is not visible from the endpoint; 128 B is what root ports report on the
    machines we have seen (PCIe Base Spec r5.0 7.5.3.7, Link Control RCB), and the CE efficiency
    depends on it only through completion splitting of unaligned ranges, which a large copy avoids.
    """
    if machine is None or not machine.gpus:
        return None, ["no GPU in the Report"]
    fn = machine.function(machine.gpus[0].bdf)
    if fn is None or fn.pcie is None:
        return None, [f"gpus[0] {machine.gpus[0].bdf}: PCIe capability not readable"]
    mps, mrrs = fn.pcie.max_payload, fn.pcie.max_read_request
    try:
        params = LinkParams(mps=mps, mrrs=mrrs)
    except ValueError as exc:
        return None, [f"pci[{fn.bdf}] MPS {mps} / MRRS {mrrs}: {exc}"]
    return params, [
        f"pci[{fn.bdf}].pcie.max_payload = {mps}",
        f"pci[{fn.bdf}].pcie.max_read_request = {mrrs}",
    ]


def expected_ce_gbytes(machine: Optional[MachineInfo]) -> tuple[Optional[float], list[str]]:
    """What a large pinned H2D copy should reach on this GPU's link (GB/s), with the evidence.

    The capable rate is the yardstick (an idle GPU link downshifts, so the current rate read at
    rest says nothing); the model's efficiency for this MPS/MRRS turns it into payload GB/s.
    """
    if machine is None or not machine.gpus or machine.gpus[0].link is None:
        return None, ["GPU link unknown"]
    link: PcieLink = machine.gpus[0].link
    raw = link.max_raw_gbytes_per_s or link.raw_gbytes_per_s
    if raw is None:
        return None, ["GPU link rate unknown"]
    params, ev = gpu_link_params(machine)
    eff = ce_efficiency(params or LinkParams())
    note = "" if params else " (MPS/MRRS unknown: model defaults 256/4096)"
    ev = ev + [
        f"gpus[0].link = {link.max_speed_gts or link.speed_gts:g} GT/s "
        f"x{shown(link.max_width or link.width)} "
        f"-> {raw:.2f} GB/s raw; model efficiency {eff:.3f}{note} -> {raw * eff:.1f} GB/s expected"
    ]
    return raw * eff, ev
