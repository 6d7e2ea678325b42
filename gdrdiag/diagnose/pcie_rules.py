"""PCIe link and register rules (docs/kb/pcie.md).

Every register rule skips VFs: a VF's DevCtl RO/ExtTag/MPS/MRRS fields are RsvdP and read 0
(Linux drivers/pci/probe.c). Inside a VM, MPS and MRRS are virtualized by vfio
(drivers/vfio/pci/vfio_pci_config.c), so those rules speak softly there and say the value is the
guest's view.
"""

from __future__ import annotations

from typing import Iterable

from gdrdiag.diagnose._common import (
    best_pairs,
    endpoints,
    ev,
    finding,
    on_bare_metal,
    shown,
    upstream_chain,
)
from gdrdiag.model.findings import Finding, Severity
from gdrdiag.model.machine import MachineInfo

LINK_REF = ""


def needs_root(m: MachineInfo) -> Iterable[Finding]:
    """PCIE-NEEDS-ROOT: register facts are unknown because config space was not readable."""
    if "registers" in m.unknown:
        yield finding(
            "PCIE-NEEDS-ROOT",
            Severity.INFO,
            "register checks skipped: config space beyond 64 bytes needs root",
            [ev("machine.privileged", m.privileged), ev("machine.unknown.registers", m.unknown["registers"])],
            "Run `gdrdiag inspect` (or collect) as root to check RO, MPS/MRRS, ExtTag, ACS and ATS; "
            "links were read from the sysfs text attributes meanwhile.",
            "",
        )


def link_downgrade(m: MachineInfo) -> Iterable[Finding]:
    """PCIE-LINK-SPEED / PCIE-LINK-SPEED-IDLE / PCIE-LINK-WIDTH on GPU and NIC endpoints."""
    idle_gpus = {g.bdf for g in m.gpus if g.link_sampled_idle}
    for role, f in endpoints(m):
        link = f.link
        if link is None or (f.is_vf and f.physfn):
            continue  # a host-side VF reports its PF's link; judged on the PF
        base = f"pci[{f.bdf}].link"
        evidence = [
            ev(f"{base}.speed_gts", link.speed_gts),
            ev(f"{base}.max_speed_gts", link.max_speed_gts),
            ev(f"{base}.width", link.width),
            ev(f"{base}.max_width", link.max_width),
            ev(f"{base}.source", link.source),
        ]
        if link.width_downgraded:
            yield finding(
                "PCIE-LINK-WIDTH",
                Severity.WARN,
                f"{role} link trained at x{shown(link.width)} of x{shown(link.max_width)} (downgraded): "
                f"{shown(link.raw_gbytes_per_s)} of {shown(link.max_raw_gbytes_per_s)} GB/s raw",
                evidence,
                "Reseat the card or riser, check the slot's electrical width and the BIOS "
                "bifurcation setting; "
                "a narrower link cuts bandwidth in proportion.",
                LINK_REF,
                f.bdf,
            )
        if link.speed_downgraded:
            if f.bdf in idle_gpus:
                yield finding(
                    "PCIE-LINK-SPEED-IDLE",
                    Severity.INFO,
                    f"{role} link at {shown(link.speed_gts)} of {shown(link.max_speed_gts)} GT/s while idle",
                    evidence + ["machine.gpus[].link_sampled_idle = True"],
                    "GPUs lower link speed at idle to save power; re-check under load "
                    "(`gdrdiag copy-bench` samples the link during a copy, or watch nvidia-smi "
                    "-q while busy).",
                    LINK_REF,
                    f.bdf,
                )
            else:
                yield finding(
                    "PCIE-LINK-SPEED",
                    Severity.WARN,
                    f"{role} link at {shown(link.speed_gts)} of {shown(link.max_speed_gts)} GT/s "
                    "(downgraded)",
                    evidence,
                    "Check BIOS PCIe generation settings for the slot, retimers/risers and cabling; update "
                    "firmware. The device and slot should train at the device's maximum speed.",
                    LINK_REF,
                    f.bdf,
                )


def path_narrow(m: MachineInfo) -> Iterable[Finding]:
    """PCIE-PATH-NARROW: a bridge on the GPU<->NIC path is slower than both endpoints."""
    for p in best_pairs(m):
        hop = p.narrowest_capable
        if not p.reliable or hop is None or hop.bdf in (p.gpu_bdf, p.nic_bdf):
            continue
        g, n = m.function(p.gpu_bdf), m.function(p.nic_bdf)
        ends = [x.link.max_raw_gbytes_per_s for x in (g, n) if x and x.link and x.link.max_raw_gbytes_per_s]
        if ends and hop.raw_gbytes_per_s < min(ends):
            yield finding(
                "PCIE-PATH-NARROW",
                Severity.WARN,
                f"a bridge on the {p.gpu_bdf} <-> {p.nic} path caps it at {hop.raw_gbytes_per_s} GB/s raw",
                [
                    ev(
                        f"topology[{p.gpu_bdf},{p.nic}].narrowest_capable",
                        f"{hop.bdf} {shown(hop.speed_gts)} GT/s x{shown(hop.width)}",
                    ),
                    ev("endpoints.max_raw_gbytes_per_s", min(ends)),
                ],
                "Move the GPU or NIC behind a faster port, or check the bridge's BIOS link settings.",
                "",
                hop.bdf,
            )


def mps_mrrs_tags(m: MachineInfo) -> Iterable[Finding]:
    """PCIE-MPS-MISMATCH, PCIE-MPS-SMALL, PCIE-MRRS-SMALL, PCIE-EXTTAG-OFF."""
    in_vm = not on_bare_metal(m)
    for role, f in endpoints(m):
        if f.pcie is None or f.is_vf:
            continue
        base = f"pci[{f.bdf}].pcie"
        if not in_vm:
            chain = [x for x in upstream_chain(m, f) if x.pcie is not None]
            values = {x.bdf: x.pcie.max_payload for x in chain}  # type: ignore[union-attr]
            if len(set(values.values())) > 1:
                yield finding(
                    "PCIE-MPS-MISMATCH",
                    Severity.WARN,
                    f"MaxPayload differs along the {role} path",
                    [ev(f"pci[{b}].pcie.max_payload", v) for b, v in values.items()],
                    "Let the kernel configure MPS consistently (pci=pcie_bus_perf or "
                    "pcie_bus_safe) or fix the "
                    "BIOS setting; mismatched MPS risks malformed TLPs and limits payload size.",
                    "",
                    f.bdf,
                )
        if not in_vm and f.pcie.max_payload <= 128 and f.pcie.max_payload_supported > 128:
            yield finding(
                "PCIE-MPS-SMALL",
                Severity.INFO,
                f"{role} MaxPayload {f.pcie.max_payload} bytes (supports {f.pcie.max_payload_supported})",
                [ev(f"{base}.max_payload", f.pcie.max_payload)],
                "128-byte payloads cost about 8% write efficiency against 256; usually the "
                "root complex limits it.",
                "",
                f.bdf,
            )
        if f.pcie.max_read_request < 512:
            yield finding(
                "PCIE-MRRS-SMALL",
                Severity.INFO if in_vm else Severity.WARN,
                f"{role} MaxReadReq {f.pcie.max_read_request} bytes",
                [ev(f"{base}.max_read_request", f.pcie.max_read_request)]
                + (["VM: MaxReadReq is virtualized by vfio; check the host's value"] if in_vm else []),
                "Raise MaxReadReq to 512-4096 (BIOS, or setpci on CAP_EXP+8 as root); small "
                "read requests lower "
                "DMA read throughput.",
                "",
                f.bdf,
            )
        if f.pcie.ext_tag_supported and not f.pcie.ext_tag:
            yield finding(
                "PCIE-EXTTAG-OFF",
                Severity.WARN,
                f"{role} supports 8-bit extended tags but ExtTag- is set",
                [ev(f"{base}.ext_tag_supported", True), ev(f"{base}.ext_tag", False)],
                "Too few outstanding reads to cover latency at Gen4/Gen5. The kernel enables ExtTag unless a "
                "host-bridge quirk forbids it; check dmesg and the BIOS.",
                "",
                f.bdf,
            )


def aer_errors(m: MachineInfo) -> Iterable[Finding]:
    """PCIE-AER-ERRORS: AER counters that are not zero on a GPU, NIC or bridge above them."""
    seen: set[str] = set()
    for role, f in endpoints(m):
        for x in upstream_chain(m, f):
            if x.bdf in seen:
                continue
            seen.add(x.bdf)
            bad = {
                k: v
                for k, v in x.aer_counters.items()
                if v
                and not k.endswith("TOTAL_ERR_COR")
                and not k.endswith("TOTAL_ERR_FATAL")
                and not k.endswith("TOTAL_ERR_NONFATAL")
            }
            if bad:
                fatal = any(not k.startswith("correctable.") for k in bad)
                yield finding(
                    "PCIE-AER-ERRORS",
                    Severity.WARN,
                    f"AER {'uncorrectable' if fatal else 'correctable'} errors counted on "
                    f"{x.bdf} ({role} path)",
                    [ev(f"pci[{x.bdf}].aer_counters.{k}", v) for k, v in sorted(bad.items())[:8]],
                    "Counts that grow under traffic mean link replays that eat bandwidth: "
                    "reseat, replace the "
                    "riser/cable, update BIOS/firmware. Compare before and after a benchmark.",
                    "",
                    x.bdf,
                )


def cap_chain(m: MachineInfo) -> Iterable[Finding]:
    """PCIE-CAP-CHAIN: a looped or broken capability list on a GPU or NIC."""
    for role, f in endpoints(m):
        bad = [p for p in f.cap_problems if "looped" in p or "broken" in p]
        if bad:
            yield finding(
                "PCIE-CAP-CHAIN",
                Severity.WARN if on_bare_metal(m) else Severity.INFO,
                f"{role} capability list is {'looped' if any('looped' in p for p in bad) else 'broken'}",
                [ev(f"pci[{f.bdf}].cap_problems", "; ".join(bad))],
                "On bare metal this points at a failing device or a config-space read "
                "problem; inside a VM the "
                "hypervisor may have rewritten the list (Firecracker hides some capabilities).",
                "",
                f.bdf,
            )


RULES = [needs_root, link_downgrade, path_narrow, mps_mrrs_tags, aer_errors, cap_chain]
