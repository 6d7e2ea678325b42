#!/usr/bin/env python3
"""Make synthetic node records for `gdrdiag fleet`: fixture Reports, per-node noise, injected faults.

SYNTHETIC DATA. Every record is built from the saved fixture Reports in tests/fixtures/reports/
(bare-metal HGX H100 + ConnectX-7, KVM guest, the real H200 GPU-machine Report):

- 80 % of the nodes are the bare-metal HGX fixture, 15 % the KVM guest, 5 % the H200 machine, so
  fleet sees three SKU groups;
- each node's bench numbers are scaled per bench family (copy, gather, RDMA) by a factor drawn
  from a normal distribution around 1 with sigma ``--noise`` (0.8 % by default), so ratios within
  a family, and therefore the findings, stay those of the fixture;
- ``--fault-rate`` of the nodes (1 % by default; bare-metal nodes only, since these are
  bare-metal faults) get one of five faults, injected into the machine facts *and* into the
  numbers, and their findings are re-computed by ``gdrdiag.diagnose`` from the changed Report:

  ==================  ===================================================  ===========================
  fault               machine fact changed                                 numbers
  ==================  ===================================================  ===========================
  ro_missing          NIC mlx5_0 (0000:19:00.0) RlxdOrd-                    RDMA into GPU memory x0.55
  mrrs_small          GPU 0000:18:00.0 MaxReadReq 128                       H2D copy x0.70, gather x0.75
  link_downtrained    GPU 0000:18:00.0 link x8 of x16                       copies and gather x0.50
  acs_redirect        switch port 0000:17:01.0 ACSCtl ReqRedir+ CmpltRedir+  RDMA into GPU memory x0.35
  peermem_missing     nvidia_peermem not loaded                             RDMA via peermem MR: ERROR
  ==================  ===================================================  ===========================

  EXPECTED_CAUSE maps each fault to the finding code fleet must name first.

Records are written through the same code as ``gdrdiag report --record`` (one record per fault
variant and base Report); healthy nodes are copies of their base record with the host name and
the scaled numbers changed in both the head and the embedded Report. A manifest
(``manifest.json``: host -> fault or null) is written next to the records (hidden name, so fleet
does not read it).

Run: ``python scripts/fleet/make_synthetic.py OUT_DIR [-n 10000] [--fault-rate 0.01] [--seed 1]``
or ``--jsonl FILE`` for one JSONL file.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import random
import sys
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from gdrdiag.diagnose import diagnose  # noqa: E402
from gdrdiag.model.machine import PathClass  # noqa: E402
from gdrdiag.model.report import Report  # noqa: E402
from gdrdiag.model.results import BenchResult  # noqa: E402
from gdrdiag.node_record import build_head  # noqa: E402

REPORTS = ROOT / "tests" / "fixtures" / "reports"
BASES = (
    ("baremetal_hgx.json", "hgx8", 0.30),  # made an 8 GPU + 8 NIC machine by make_hgx8()
    ("baremetal_hgx.json", "hgx", 0.30),
    ("vm_guest_kvm.json", "kvm", 0.20),
    ("baremetal_hgx.json", "a100", 0.15),  # made an A100 + ConnectX-6 machine by make_a100()
    ("gpu_machine_h200.json", "h200", 0.05),
)
BARE = ("hgx8", "hgx", "a100")
# The previous gdrdiag build, as records of record version 1 say it: no version-2 facts (NIC
# ports, links as capable, GPU ordinals, NIC names) and no inventory-count facts (its SKU key
# still counts GPUs and NICs). ``old_rate`` of the nodes have such records.
OLD_TOOL_VERSION = "0.1.0"
OLD_DROPPED_FACTS = ("gpus", "rdma devices", "nic functions")
# faults only a version-2 record can show (an older build does not record NIC ports)
V2_ONLY_FAULTS = frozenset({"port_half_rate"})
# fault -> the SKU tags it is injected into
FAULTS: dict[str, tuple[str, ...]] = {
    "lost_gpu": BARE,
    "lost_nic": BARE,
    "no_rdma_driver": BARE,
    "driver_drift": (*BARE, "kvm"),
    "fw_drift": BARE,
    "mtu_1024": BARE,
    "link_gen_down_unbenched": BARE,
    "gen4_h100": ("hgx", "hgx8"),
    "x8_link": BARE,
    "acs_redirect": BARE,
    "iommu_translation": BARE,
    "ro_off": BARE,
    "far_numa": BARE,
    "vm_slow": ("kvm",),
    "mrrs_small": BARE,
    "peermem_missing": BARE,
    "port_half_rate": BARE,
}
NO_CAUSE = "(no cause found)"
# Not faults of a node but of its record: partial (interrupted: the gather benches never ran)
# and corrupt (torn/truncated file). Partial records must be flagged "investigate" with the
# metric "not measured"; corrupt ones skipped with a reason. Neither counts in precision/recall.
RECORD_FAULTS = ("partial", "corrupt")
# fault -> the finding codes that name it (any one of them first counts as the right cause)
EXPECTED_CAUSE: dict[str, list[str]] = {
    "lost_gpu": ["FLEET-GPU-MISSING"],
    "lost_nic": ["FLEET-NIC-MISSING"],
    "no_rdma_driver": ["FLEET-RDMA-DRIVER-MISSING"],
    "driver_drift": ["FLEET-DRIVER-DRIFT"],
    "fw_drift": ["FLEET-FIRMWARE-DRIFT"],
    "mtu_1024": ["FLEET-MTU-DRIFT"],
    "link_gen_down_unbenched": ["FLEET-LINK-BELOW-SKU", "PCIE-LINK-SPEED"],
    "gen4_h100": ["CAUSE-LINK-DEGRADED", "FLEET-LINK-BELOW-SKU", "PCIE-LINK-SPEED"],
    "x8_link": ["PCIE-LINK-WIDTH", "FLEET-LINK-BELOW-SKU", "CAUSE-LINK-DEGRADED"],
    "acs_redirect": ["ACS-REDIRECT", "CAUSE-P2P-VIA-RC"],
    "iommu_translation": ["FLEET-IOMMU-DRIFT"],
    "ro_off": ["RO-PF-DISABLED", "CAUSE-RO-NOT-HONOURED"],
    "far_numa": ["GDR-NUMA-MISMATCH", "GDR-PATH-CLASS"],
    # RDMA into GPU memory at 0.35x in a KVM guest whose findings are those of every guest:
    # nothing in the record names a cause, so the right answer is "no cause found" (metric, z).
    "vm_slow": [NO_CAUSE],
    # the register (PCIE-MRRS-SMALL), or the cause model naming it over the copies it slowed
    "mrrs_small": ["PCIE-MRRS-SMALL", "CAUSE-MPS-MRRS"],
    "peermem_missing": ["GDR-PEERMEM-MISSING"],
    "port_half_rate": ["FLEET-PORT-RATE"],
}
GPU, NIC, SWITCH_PORT = "0000:18:00.0", "0000:19:00.0", "0000:17:01.0"


def family(key: str) -> str:
    """Copy | gather | rdma | other: results in one family are scaled together."""
    for name in ("copy", "gather", "rdma"):
        if key.startswith(name + "_"):
            return name
    return "other"


# --------------------------------------------------------------------------------------------
# faults: machine facts + numbers
# --------------------------------------------------------------------------------------------


def _scale_results(report: Report, factor: dict[str, float]) -> Report:
    return dataclasses.replace(
        report, results=tuple(_scaled(r, factor.get(family(r.key), 1.0)) for r in report.results)
    )


def _scaled(r: BenchResult, f: float) -> BenchResult:
    if f == 1.0 or r.stats is None:
        return r
    stats = dataclasses.replace(
        r.stats,
        median=r.stats.median * f,
        minimum=r.stats.minimum * f,
        maximum=r.stats.maximum * f,
        mean=r.stats.mean * f,
        stdev=r.stats.stdev * f,
    )
    return dataclasses.replace(r, samples=tuple(s * f for s in r.samples), stats=stats)


def inject(report: Report, fault: str) -> Report:
    """The base Report with one fault in its machine facts and its bench numbers; findings re-diagnosed."""
    m = report.machine
    assert m is not None
    gpu0 = m.gpus[0].bdf
    if fault == "ro_off":
        rep = _with_pcie(report, m.nics[0].bdf, relaxed_ordering=False)
        rep = _scale_device_rdma(rep, 0.55)
    elif fault == "mrrs_small":
        rep = _with_pcie(report, gpu0, max_read_request=128)
        rep = _scale_results(rep, {"copy": 0.70, "gather": 0.75})
        rep = _scale_keys(rep, ("copy_d2h",), 1 / 0.70)  # device reads of GPU memory are not host reads
    elif fault in ("x8_link", "gen4_h100", "link_gen_down_unbenched"):
        bdf = m.gpus[-1].bdf if fault == "link_gen_down_unbenched" else gpu0
        f = m.function(bdf)
        assert f is not None and f.link is not None
        if fault == "x8_link":
            link = dataclasses.replace(
                f.link, width=8, width_downgraded=True, raw_gbytes_per_s=(f.link.raw_gbytes_per_s or 0) / 2
            )
        else:
            link = dataclasses.replace(
                f.link,
                speed_gts=(f.link.speed_gts or 32.0) / 2,
                speed_downgraded=True,
                raw_gbytes_per_s=(f.link.raw_gbytes_per_s or 0) / 2,
            )
        rep = _set_gpu_link(report, bdf, link, idle=fault != "gen4_h100")
        if fault != "link_gen_down_unbenched":  # the benches use GPU 0 only
            rep = _scale_results(rep, {"copy": 0.50, "gather": 0.50})
    elif fault == "acs_redirect":
        # the first switch port on GPU 0's path to a NIC that does not redirect yet (root ports do)
        port = next(b for p in m.topology if p.gpu_bdf == gpu0 for b in p.bridges if _acs_open(m, b))
        f = m.function(port)
        assert f is not None and f.acs is not None
        acs = dataclasses.replace(f.acs, ctl=f.acs.ctl | 0x000C, ctl_flags=("ReqRedir", "CmpltRedir"))
        rep = _set_function(report, port, acs=acs)
        rep = _scale_device_rdma(rep, 0.35)
    elif fault == "peermem_missing":
        kernel = dataclasses.replace(
            m.kernel, peermem_loaded=False, peermem_evidence="nvidia_peermem not in /proc/modules"
        )
        rep = dataclasses.replace(report, machine=dataclasses.replace(m, kernel=kernel))
        rep = _error_keys(rep, ("rdma_write_device_mr",), "ibv_reg_mr(device memory): Bad address (EFAULT)")
    elif fault == "lost_gpu":
        lost = m.gpus[-1].bdf  # not the GPU the benches use
        machine = dataclasses.replace(
            m,
            gpus=tuple(g for g in m.gpus if g.bdf != lost),
            pci=tuple(f for f in m.pci if f.bdf != lost),
            topology=tuple(p for p in m.topology if p.gpu_bdf != lost),
            cuda_devices=m.cuda_devices[:-1] if len(m.cuda_devices) == len(m.gpus) else m.cuda_devices,
        )
        rep = dataclasses.replace(report, machine=machine)
    elif fault == "lost_nic":
        lost = m.nics[-1]
        machine = dataclasses.replace(
            m,
            nics=m.nics[:-1],
            pci=tuple(f for f in m.pci if f.bdf != lost.bdf),
            topology=tuple(p for p in m.topology if p.nic_bdf != lost.bdf),
        )
        rep = dataclasses.replace(report, machine=machine)
    elif fault == "no_rdma_driver":
        bdfs = {n.bdf for n in m.nics}
        machine = dataclasses.replace(
            m,
            nics=(),
            pci=tuple(dataclasses.replace(f, driver=None) if f.bdf in bdfs else f for f in m.pci),
            topology=(),
        )
        rep = dataclasses.replace(report, machine=machine)
        rep = _error_keys(rep, ("rdma_write_",), "no RDMA device (ibv_get_device_list returned none)")
    elif fault == "driver_drift":
        kernel = dataclasses.replace(m.kernel, nvidia_driver_version="550.54.15")
        rep = dataclasses.replace(report, machine=dataclasses.replace(m, kernel=kernel))
    elif fault == "fw_drift":
        nics = tuple(
            dataclasses.replace(n, fw_ver=_older_fw(n.fw_ver)) if i == 1 else n for i, n in enumerate(m.nics)
        )
        rep = dataclasses.replace(report, machine=dataclasses.replace(m, nics=nics))
    elif fault == "mtu_1024":
        nics = tuple(
            dataclasses.replace(n, ports=tuple(dataclasses.replace(p, active_mtu=1024) for p in n.ports))
            if i == 0
            else n
            for i, n in enumerate(m.nics)
        )
        rep = dataclasses.replace(report, machine=dataclasses.replace(m, nics=nics))
        rep = _scale_keys(rep, ("rdma_write_",), 0.93)
    elif fault == "iommu_translation":
        virt = dataclasses.replace(m.virt, iommu_mode="translated")
        rep = dataclasses.replace(report, machine=dataclasses.replace(m, virt=virt))
        rep = _scale_keys(rep, ("rdma_write_",), 0.60)
    elif fault == "far_numa":
        gpus = tuple(dataclasses.replace(g, numa_node=1) if g.bdf == gpu0 else g for g in m.gpus)
        topology = tuple(
            dataclasses.replace(p, path_class=PathClass.SYS, gpu_numa=1, bridges=())
            if p.gpu_bdf == gpu0
            else p
            for p in m.topology
        )
        rep = dataclasses.replace(report, machine=dataclasses.replace(m, gpus=gpus, topology=topology))
        rep = _scale_device_rdma(rep, 0.60)
    elif fault == "port_half_rate":  # a port that trained at half rate, on a NIC no bench used
        nics = tuple(
            dataclasses.replace(
                n,
                ports=tuple(
                    dataclasses.replace(p, rate_gbps=(p.rate_gbps or 400.0) / 2, rate="200 Gb/sec (4X HDR)")
                    for p in n.ports
                ),
            )
            if i == 1
            else n
            for i, n in enumerate(m.nics)
        )
        rep = dataclasses.replace(report, machine=dataclasses.replace(m, nics=nics))
    elif fault == "vm_slow":
        rep = _scale_keys(report, ("rdma_write_",), 0.35)
    else:
        raise ValueError(f"unknown fault {fault}")
    return dataclasses.replace(rep, findings=diagnose(rep).findings)


def _acs_open(m: Any, bdf: str) -> bool:
    f = m.function(bdf)
    return f is not None and f.acs is not None and not (f.acs.ctl & 0x000C)


def _older_fw(fw: Optional[str]) -> str:
    return "28.36.1010" if (fw or "").startswith("28.") else "20.35.1012"


def _set_gpu_link(report: Report, bdf: str, link: Any, idle: bool) -> Report:
    rep = _set_function(report, bdf, link=link)
    m = rep.machine
    assert m is not None
    gpus = tuple(
        dataclasses.replace(g, link=link, link_sampled_idle=idle) if g.bdf == bdf else g for g in m.gpus
    )
    return dataclasses.replace(rep, machine=dataclasses.replace(m, gpus=gpus))


def _error_keys(report: Report, prefixes: tuple[str, ...], reason: str) -> Report:
    return dataclasses.replace(
        report,
        results=tuple(
            BenchResult.error(
                r.key, reason, description=r.description, params=r.params, unit=r.unit, provider=r.provider
            )
            if r.key.startswith(prefixes)
            else r
            for r in report.results
        ),
    )


def make_a100(report: Report) -> Report:
    """The HGX fixture made an A100 (PCIe Gen4) + ConnectX-6 (200 Gb/s) machine: names, links, numbers."""
    m = report.machine
    assert m is not None
    gen4 = {g.bdf for g in m.gpus}
    pci = tuple(
        dataclasses.replace(
            f,
            link=dataclasses.replace(
                f.link, speed_gts=16.0, max_speed_gts=16.0, raw_gbytes_per_s=31.51, max_raw_gbytes_per_s=31.51
            ),
        )
        if f.bdf in gen4 and f.link is not None
        else f
        for f in m.pci
    )
    gpus = tuple(
        dataclasses.replace(g, name="NVIDIA A100-SXM4-80GB", link=next(f.link for f in pci if f.bdf == g.bdf))
        for g in m.gpus
    )
    nics = tuple(dataclasses.replace(n, model="ConnectX-6", fw_ver="20.38.1002") for n in m.nics)
    kernel = dataclasses.replace(m.kernel, nvidia_driver_version="535.183.01")
    machine = dataclasses.replace(m, pci=pci, gpus=gpus, nics=nics, kernel=kernel)
    rep = dataclasses.replace(report, machine=machine)
    rep = _scale_results(rep, {"copy": 0.45, "gather": 0.45, "rdma": 0.50})
    return dataclasses.replace(rep, findings=diagnose(rep).findings)


def _in_domain_1(bdf: Optional[str]) -> Optional[str]:
    return None if bdf is None else "0001" + bdf[4:]


def make_hgx8(report: Report) -> Report:
    """The HGX fixture doubled into an 8 GPU + 8 NIC machine: a copy of every device in PCI domain 1.

    Multi-segment hosts number their second PCI segment as domain 0001 (PCI Firmware spec,
    _SEG); the copies keep the fixture's links, registers and paths, with new CUDA ordinals
    and RDMA device names.
    """
    m = report.machine
    assert m is not None
    d1 = _in_domain_1
    pci = (*m.pci, *(dataclasses.replace(f, bdf=d1(f.bdf)) for f in m.pci))
    gpus = (
        *m.gpus,
        *(
            dataclasses.replace(g, bdf=d1(g.bdf), cuda_ordinal=(g.cuda_ordinal or 0) + len(m.gpus))
            for g in m.gpus
        ),
    )
    names = {n.name: f"mlx5_{i + len(m.nics)}" for i, n in enumerate(m.nics)}
    nics = (*m.nics, *(dataclasses.replace(n, name=names[n.name], bdf=d1(n.bdf)) for n in m.nics))
    topology = (
        *m.topology,
        *(
            dataclasses.replace(
                p,
                gpu_bdf=d1(p.gpu_bdf),
                nic=names.get(p.nic, p.nic),
                nic_bdf=d1(p.nic_bdf),
                bridges=tuple(d1(b) for b in p.bridges),
            )
            for p in m.topology
        ),
    )
    cuda = (
        *m.cuda_devices,
        *(
            dataclasses.replace(c, ordinal=c.ordinal + len(m.cuda_devices), pci_bus_id=d1(c.pci_bus_id))
            for c in m.cuda_devices
        ),
    )
    machine = dataclasses.replace(m, pci=pci, gpus=gpus, nics=nics, topology=topology, cuda_devices=cuda)
    rep = dataclasses.replace(report, machine=machine)
    return dataclasses.replace(rep, findings=diagnose(rep).findings)


def old_build(head: dict) -> dict:
    """A version-2 head as the previous build wrote it: record version 1, its tool version, its facts."""
    from gdrdiag.model.fleet import fact_since

    facts = {k: v for k, v in head["facts"].items() if fact_since(k) == 1 and k not in OLD_DROPPED_FACTS}
    return {**head, "record_version": 1, "tool_version": OLD_TOOL_VERSION, "facts": facts}


def with_mtu(report: Report, mtu: int = 4096) -> Report:
    """Every RDMA port's active MTU set (the fixtures were captured without pyverbs)."""
    m = report.machine
    if m is None or not m.nics:
        return report
    nics = tuple(
        dataclasses.replace(n, ports=tuple(dataclasses.replace(p, active_mtu=mtu) for p in n.ports))
        for n in m.nics
    )
    return dataclasses.replace(report, machine=dataclasses.replace(m, nics=nics))


def _set_function(report: Report, bdf: str, **fields: Any) -> Report:
    m = report.machine
    assert m is not None
    pci = tuple(dataclasses.replace(f, **fields) if f.bdf == bdf else f for f in m.pci)
    return dataclasses.replace(report, machine=dataclasses.replace(m, pci=pci))


def _with_pcie(report: Report, bdf: str, **fields: Any) -> Report:
    assert report.machine is not None
    f = report.machine.function(bdf)
    assert f is not None and f.pcie is not None
    return _set_function(report, bdf, pcie=dataclasses.replace(f.pcie, **fields))


def _scale_device_rdma(report: Report, factor: float) -> Report:
    return _scale_keys(report, ("rdma_write_device",), factor)


def _scale_keys(report: Report, prefixes: tuple[str, ...], factor: float) -> Report:
    return dataclasses.replace(
        report, results=tuple(_scaled(r, factor) if r.key.startswith(prefixes) else r for r in report.results)
    )


# --------------------------------------------------------------------------------------------
# records
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Template:
    """A record built by the real writer, ready to be copied per node with new numbers.

    ``frame`` is the Report's JSON with the machine and the results left as markers: the machine
    (80 KB for the HGX) is encoded once per template with a marker for the host name, and only
    the scaled results are encoded per node, which gives the same text as encoding it all.
    """

    head: dict
    report: dict
    hostname: str
    frame: str = ""
    machine: str = ""


_MACHINE, _RESULTS, _HOST = '"@@MACHINE@@"', '"@@RESULTS@@"', '"@@HOST@@"'


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), allow_nan=False)


def template(report: Report, exit_code: Optional[int] = None) -> Template:
    """Head and Report of one variant as JSON-able dicts (through gdrdiag.node_record.build_head)."""
    from gdrdiag.model.findings import Severity
    from gdrdiag.model.serde import to_jsonable

    code = (
        exit_code if exit_code is not None else int(any(f.severity is Severity.FAIL for f in report.findings))
    )
    head = build_head(report, "template", code, 0)
    hostname = report.machine.host.hostname if report.machine else ""
    data = to_jsonable(report)
    frame = _dumps({**data, "machine": _MACHINE[1:-1], "results": _RESULTS[1:-1]})
    machine = ""
    if data.get("machine"):
        machine = _dumps({**data["machine"], "host": {**data["machine"]["host"], "hostname": _HOST[1:-1]}})
    return Template(head=to_jsonable(head), report=data, hostname=hostname, frame=frame, machine=machine)


def node_line(t: Template, host: str, factors: dict[str, float]) -> str:
    """One record line: the template with ``host`` and bench numbers scaled per family."""
    results = []
    for r in t.report["results"]:
        f = factors.get(family(r["key"]), 1.0)
        if f != 1.0 and r.get("stats"):
            r = copy.copy(r)
            r["samples"] = [s * f for s in r["samples"]]
            r["stats"] = {k: (v * f if k != "n" else v) for k, v in r["stats"].items()}
        results.append(r)
    machine = t.machine.replace(_HOST, _dumps(host), 1) if t.machine else "null"
    report_json = t.frame.replace(_MACHINE, machine, 1).replace(_RESULTS, _dumps(results), 1)
    head = dict(t.head)
    head["host"] = host
    head["report_chars"] = len(report_json)
    head["metrics"] = {k: v * factors.get(_metric_family(k), 1.0) for k, v in t.head["metrics"].items()}
    return _dumps(head)[:-1] + ',"report":' + report_json + "}"


def _metric_family(metric: str) -> str:
    return "rdma" if metric.startswith("rdma_") else metric.split("_")[0]


def generate(
    n: int,
    fault_rate: float,
    seed: int,
    noise: float,
    record_fault_rate: float = 0.01,
    old_rate: float = 0.12,
) -> tuple[list[tuple[str, str]], dict[str, Optional[str]]]:
    """[(host, record line)] and {host: fault or None}; deterministic for a seed.

    ``fault_rate`` of the nodes get one node fault (the kinds in turn, each into a SKU it
    applies to); ``record_fault_rate`` get a partial or a corrupt record; ``old_rate`` of the
    records are written as the previous build wrote them (:func:`old_build`).
    """
    from gdrdiag.cli.report_files import load_report

    rng = random.Random(seed)
    hgx = with_mtu(load_report(REPORTS / "baremetal_hgx.json"))
    bases = {
        "hgx8": make_hgx8(hgx),
        "hgx": hgx,
        "kvm": with_mtu(load_report(REPORTS / "vm_guest_kvm.json")),
        "a100": make_a100(hgx),
        "h200": load_report(REPORTS / "gpu_machine_h200.json"),
    }
    # re-diagnosed with today's rules, as `gdrdiag report --from-report` does
    bases = {tag: dataclasses.replace(rep, findings=diagnose(rep).findings) for tag, rep in bases.items()}
    templates = {tag: template(rep) for tag, rep in bases.items()}
    partial = {tag: template(_partial(rep)) for tag, rep in bases.items()}
    fault_templates = {
        (f, tag): template(inject(bases[tag], f)) for f, tags in FAULTS.items() for tag in tags
    }
    counts = {tag: round(n * share) for _, tag, share in BASES}
    counts["hgx"] += n - sum(counts.values())
    tags = [tag for tag, c in counts.items() for _ in range(c)]
    rng.shuffle(tags)
    order = list(range(n))
    rng.shuffle(order)
    old = set(rng.sample(range(n), round(n * old_rate)))
    n_faults = round(n * fault_rate)
    n_records = round(n * record_fault_rate)
    plan: dict[int, str] = {}
    kinds = list(FAULTS)
    k = 0
    for i in order:
        if len(plan) >= n_faults:
            break
        for step in range(len(kinds)):  # the next kind that applies to this node's SKU
            fault = kinds[(k + step) % len(kinds)]
            if tags[i] in FAULTS[fault] and not (i in old and fault in V2_ONLY_FAULTS):
                plan[i] = fault
                k += step + 1
                break
    rest = [i for i in order if i not in plan and tags[i] != "h200"]
    for j, i in enumerate(rest[:n_records]):
        plan[i] = RECORD_FAULTS[j % 2]
    lines, manifest = [], {}
    for i, tag in enumerate(tags):
        host = f"{tag}-{i:05d}"
        factors = {fam: rng.gauss(1.0, noise) for fam in ("copy", "gather", "rdma")}
        fault = plan.get(i)
        if fault in FAULTS:
            t = fault_templates[(fault, tag)]
        elif fault == "partial":
            t = partial[tag]
        else:
            t = templates[tag]
        if i in old:
            t = dataclasses.replace(t, head=old_build(t.head))
        line = node_line(t, host, factors)
        if fault == "corrupt":
            line = line[: rng.randrange(10, len(line) - 2)]
        lines.append((host, line))
        manifest[host] = fault
    return lines, manifest


def _partial(report: Report) -> Report:
    """An interrupted run: the gather benches never ran; the Report says so in a note."""
    rep = dataclasses.replace(
        report,
        results=tuple(r for r in report.results if not r.key.startswith("gather_")),
        notes=(*report.notes, "interrupted (SIGINT) before the gather benches"),
    )
    return dataclasses.replace(rep, findings=diagnose(rep).findings)


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "out", type=Path, help="directory for one record per node (or a .jsonl file with --jsonl)"
    )
    ap.add_argument("-n", type=int, default=10000, help="number of nodes (default 10000)")
    ap.add_argument(
        "--fault-rate", type=float, default=0.05, help="fraction of nodes with a fault (default 0.05)"
    )
    ap.add_argument(
        "--noise", type=float, default=0.02, help="per-node sigma of bench numbers (default 0.02)"
    )
    ap.add_argument(
        "--record-fault-rate", type=float, default=0.01, help="partial and corrupt records (default 0.01)"
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jsonl", action="store_true", help="write one JSONL file instead of a directory")
    args = ap.parse_args(argv)
    lines, manifest = generate(args.n, args.fault_rate, args.seed, args.noise, args.record_fault_rate)
    if args.jsonl:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "w", encoding="utf-8") as f:
            for _, line in lines:
                f.write(line + "\n")
        manifest_path = args.out.with_name("." + args.out.name + ".manifest.json")
    else:
        args.out.mkdir(parents=True, exist_ok=True)
        for host, line in lines:
            (args.out / f"{host}.json").write_text(line + "\n", encoding="utf-8")
        manifest_path = args.out / ".manifest.json"
    manifest_path.write_text(json.dumps({"expected_cause": EXPECTED_CAUSE, "nodes": manifest}, indent=1))
    n_faults = sum(1 for v in manifest.values() if v in FAULTS)
    print(
        f"wrote {len(lines)} records ({n_faults} with injected faults) to {args.out}; "
        f"manifest {manifest_path}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
