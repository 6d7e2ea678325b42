"""Cause rules for the RDMA path as a whole (not GPU against host memory): pure, over a Report.

- ``CAUSE-REG-PATH-MISSING``: no GPU-memory RDMA row could be measured because registration failed
  (WAIVED/ERROR), weighed with the machine's nvidia-peermem and dma-buf facts.
- ``CAUSE-NIC-LINK``: host-memory RDMA WRITE below the port rate and the NIC's PCIe link below what
  it is capable of (the link, not the wire, is the ceiling).
- ``CAUSE-SMALL-MESSAGES``: host-memory RDMA WRITE below the port rate at small messages only: the
  per-message cost (posting, completion, per-packet overhead) bounds it, not a path.

Each returns a :class:`gdrdiag.diagnose.causes.Cause`; the report rule in ``causes_host`` ranks them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from gdrdiag.diagnose._common import failed_call_not_registration
from gdrdiag.diagnose.causes import Cause, Context
from gdrdiag.diagnose.evidence import WriteRow
from gdrdiag.diagnose.thresholds import GPU_VS_HOST_SLOW
from gdrdiag.model.machine import NicInfo
from gdrdiag.model.params import MrParams
from gdrdiag.model.results import Status
from gdrdiag.model.vocabulary import MemoryKind
from gdrdiag.units import KiB, format_size

if TYPE_CHECKING:  # pragma: no cover
    from gdrdiag.model.report import Report

# Host-memory RDMA WRITE / port rate below this: the RDMA path itself is slow (one threshold, the
# same fraction as GPU vs host memory: a healthy RC WRITE stream runs within a few % of the wire).
WIRE_SLOW = GPU_VS_HOST_SLOW
SMALL_MESSAGE = 64 * KiB  # at or below this, per-message costs dominate a single-QP stream
PCIE_PAYLOAD = 0.9  # payload share of a NIC's PCIe link for large writes (MPS 256, ~24 B per TLP)


def _role_nic(report: "Report") -> Optional[NicInfo]:
    m = report.machine
    if m is None or not m.nics:
        return None
    named = {r.settings.device_name for r in report.results} | {
        getattr(r.params, "device_name", None) for r in report.results
    }
    return next((n for n in m.nics if n.name in named), m.nics[0])


def _port_gbps(nic: Optional[NicInfo]) -> Optional[float]:
    if nic is None or nic.software:  # a software device's rate is the CPU's, not its netdev's
        return None
    rates = [
        p.rate_gbps for p in nic.ports if p.rate_gbps and (p.state or "ACTIVE").upper().endswith("ACTIVE")
    ]
    return max(rates) if rates else None


def reg_path_missing(report: "Report", ctx: Context) -> list[Cause]:
    """CAUSE-REG-PATH-MISSING: every GPU-memory RDMA case failed to register; none measured."""
    gpu = [
        r
        for r in report.results
        if isinstance(r.params, MrParams)
        and r.params.memory is MemoryKind.DEVICE
        and r.key.startswith("rdma_write_")
    ]
    if not gpu or any(r.status is Status.OK for r in gpu):
        return []
    # A row that failed in another verbs call (ibv_create_qp ENOMEM) never reached the question.
    failed = [
        r
        for r in gpu
        if r.status in (Status.WAIVED, Status.ERROR) and failed_call_not_registration(r.reason) is None
    ]
    if not failed:
        return []
    pro = [f"results[{r.key}] {r.status.value}: {(r.reason or '')[:100]}" for r in failed[:3]]
    k = ctx.machine.kernel if ctx.machine else None
    if k is not None and k.peermem_loaded is False:
        pro.append("nvidia_peermem is not loaded (ibv_reg_mr on GPU memory needs it)")
    if ctx.has("GDR-DMABUF-UNAVAILABLE") or ctx.has("GDR-NO-REG-PATH"):
        pro.append("dma-buf registration is unusable on this machine")
    paths = sorted({str(r.params.reg_path) for r in failed if r.params.reg_path})  # type: ignore[union-attr]
    other = "dmabuf" if paths == ["mr"] else "mr"
    fix = (
        "Load nvidia_peermem (modprobe nvidia_peermem) for --reg mr, or use the open NVIDIA kernel module "
        "with a dma-buf capable kernel (>= 5.12) and rdma-core (>= v34) for --reg dmabuf."
    )
    return [
        Cause(
            "CAUSE-REG-PATH-MISSING",
            "GPU memory could not be registered for RDMA",
            1.0,
            1.0,
            "measured",
            1.0,
            tuple(pro),
            (),
            fix,
            f"gdrdiag mr-bench --memory device,pinned --reg {other}",
            "device",
        )
    ]


def _host_rows(report: "Report", ctx: Context) -> list[WriteRow]:
    """Host-memory RDMA rows, less those the path model judged healthy at their size.

    A row at what its own path allows (a NIC held by a Gen5 x4 attach, a 4 KiB message at the
    per-message cost) is no loss for these causes to explain (judge by the row's own path).
    """
    healthy = {j.key for j in ctx.judgements if j.ratio is not None and not j.is_loss}
    lost = {j.key for j in ctx.losses if j.is_loss}
    return [r for r in ctx.write_rows if not r.on_gpu and (r.key in lost or r.key not in healthy)]


def nic_link(report: "Report", ctx: Context) -> list[Cause]:
    """CAUSE-NIC-LINK: the NIC's PCIe link, below its capable speed/width, caps host-memory RDMA."""
    nic = _role_nic(report)
    port = _port_gbps(nic)
    rows = _host_rows(report, ctx)
    if nic is None or port is None or not rows or nic.link is None:
        return []
    best = max(rows, key=lambda r: r.gbps)
    link = nic.link
    if best.gbps >= WIRE_SLOW * port or not (link.raw_gbytes_per_s and link.max_raw_gbytes_per_s):
        return []
    if link.raw_gbytes_per_s >= link.max_raw_gbytes_per_s:
        return []
    ceiling = link.raw_gbytes_per_s * 8 * PCIE_PAYLOAD
    loss = 1 - best.gbps / port
    share = max(0.0, min(1.0, (port - min(port, ceiling)) / (port - best.gbps)))
    if share <= 0.05:
        return []
    pro = [
        best.label,
        f"port rate {port:g} Gb/s ({nic.name})",
        f"NIC PCIe link {link.speed_gts:g} GT/s x{link.width} of "
        f"{link.max_speed_gts:g} GT/s x{link.max_width}"
        f" -> ~{ceiling:.0f} Gb/s of payload",
    ]
    return [
        Cause(
            "CAUSE-NIC-LINK",
            "the NIC's PCIe link runs below its capable speed or width",
            1.0,
            share,
            "measured",
            loss,
            tuple(pro),
            (),
            "Reseat the NIC, check the slot's wiring, bifurcation and the "
            "BIOS link speed; a VF shares its PF's link.",
            "gdrdiag inspect",
            nic.name,
        )
    ]


def small_messages(report: "Report", ctx: Context) -> list[Cause]:
    """CAUSE-SMALL-MESSAGES: only small messages measured, and the host path is below the wire."""
    port = _port_gbps(_role_nic(report))
    rows = _host_rows(report, ctx)
    if port is None or not rows:
        return []
    best = max(rows, key=lambda r: r.gbps)
    sizes = [r.size_bytes for r in rows if r.size_bytes]
    if best.gbps >= WIRE_SLOW * port or not sizes or max(sizes) > SMALL_MESSAGE:
        return []
    loss = 1 - best.gbps / port
    pro = [best.label, f"port rate {port:g} Gb/s", f"largest message measured: {format_size(max(sizes))}"]
    con = ["no large-message row: a path problem would also show there, and it was not measured"]
    return [
        Cause(
            "CAUSE-SMALL-MESSAGES",
            "per-message cost bounds these small RDMA WRITEs",
            0.6,
            0.6,
            "inferred",
            loss,
            tuple(pro),
            tuple(con),
            "Send larger messages (coalesce), post lists of WRs "
            "(-l), more QPs, or fewer signalled completions.",
            "gdrdiag mr-bench --memory pinned --all",
            "rdma_write",
        )
    ]


RULES = (reg_path_missing, nic_link, small_messages)
