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
from gdrdiag.model.report import Report  # noqa: E402
from gdrdiag.model.results import BenchResult  # noqa: E402
from gdrdiag.node_record import build_head  # noqa: E402

REPORTS = ROOT / "tests" / "fixtures" / "reports"
BASES = (
    ("baremetal_hgx.json", "hgx", 0.80),
    ("vm_guest_kvm.json", "kvm", 0.15),
    ("gpu_machine_h200.json", "h200", 0.05),
)
FAULTS = ("ro_missing", "mrrs_small", "link_downtrained", "acs_redirect", "peermem_missing")
EXPECTED_CAUSE = {
    "ro_missing": "RO-PF-DISABLED",
    "mrrs_small": "PCIE-MRRS-SMALL",
    "link_downtrained": "PCIE-LINK-WIDTH",
    "acs_redirect": "ACS-REDIRECT",
    "peermem_missing": "GDR-PEERMEM-MISSING",
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
    if fault == "ro_missing":
        rep = _with_pcie(report, NIC, relaxed_ordering=False)
        rep = _scale_device_rdma(rep, 0.55)
    elif fault == "mrrs_small":
        rep = _with_pcie(report, GPU, max_read_request=128)
        rep = _scale_results(rep, {"copy": 0.70, "gather": 0.75})
        rep = _scale_keys(rep, ("copy_d2h",), 1 / 0.70)  # device reads of GPU memory are not host reads
    elif fault == "link_downtrained":
        f = m.function(GPU)
        assert f is not None and f.link is not None
        link = dataclasses.replace(
            f.link, width=8, width_downgraded=True, raw_gbytes_per_s=(f.link.raw_gbytes_per_s or 0) / 2
        )
        rep = _set_function(report, GPU, link=link)
        gpus = tuple(dataclasses.replace(g, link=link) if g.bdf == GPU else g for g in m.gpus)
        rep = dataclasses.replace(rep, machine=dataclasses.replace(rep.machine, gpus=gpus))  # type: ignore[arg-type]
        rep = _scale_results(rep, {"copy": 0.50, "gather": 0.50})
    elif fault == "acs_redirect":
        f = m.function(SWITCH_PORT)
        assert f is not None and f.acs is not None
        acs = dataclasses.replace(f.acs, ctl=f.acs.ctl | 0x000C, ctl_flags=("ReqRedir", "CmpltRedir"))
        rep = _set_function(report, SWITCH_PORT, acs=acs)
        rep = _scale_device_rdma(rep, 0.35)
    elif fault == "peermem_missing":
        kernel = dataclasses.replace(
            m.kernel, peermem_loaded=False, peermem_evidence="nvidia_peermem not in /proc/modules"
        )
        rep = dataclasses.replace(report, machine=dataclasses.replace(m, kernel=kernel))
        rep = dataclasses.replace(
            rep,
            results=tuple(
                BenchResult.error(
                    r.key,
                    "ibv_reg_mr(device memory): Bad address (EFAULT): nvidia_peermem is not loaded",
                    description=r.description,
                    params=r.params,
                    unit=r.unit,
                    provider=r.provider,
                )
                if r.key.startswith("rdma_write_device_mr")
                else r
                for r in rep.results
            ),
        )
    else:
        raise ValueError(f"unknown fault {fault}")
    return dataclasses.replace(rep, findings=tuple(diagnose(rep)))


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
    """A record built by the real writer, ready to be copied per node with new numbers."""

    head: dict
    report: dict
    hostname: str


def template(report: Report, exit_code: Optional[int] = None) -> Template:
    """Head and Report of one variant as JSON-able dicts (through gdrdiag.node_record.build_head)."""
    from gdrdiag.model.findings import Severity
    from gdrdiag.model.serde import to_jsonable

    code = (
        exit_code if exit_code is not None else int(any(f.severity is Severity.FAIL for f in report.findings))
    )
    head = build_head(report, "template", code, 0)
    hostname = report.machine.host.hostname if report.machine else ""
    return Template(head=to_jsonable(head), report=to_jsonable(report), hostname=hostname)


def node_line(t: Template, host: str, factors: dict[str, float]) -> str:
    """One record line: the template with ``host`` and bench numbers scaled per family."""
    report = dict(t.report)
    machine = dict(report["machine"]) if report.get("machine") else None
    if machine is not None:
        machine["host"] = {**machine["host"], "hostname": host}
        report["machine"] = machine
    results = []
    for r in report["results"]:
        f = factors.get(family(r["key"]), 1.0)
        if f != 1.0 and r.get("stats"):
            r = copy.copy(r)
            r["samples"] = [s * f for s in r["samples"]]
            r["stats"] = {k: (v * f if k != "n" else v) for k, v in r["stats"].items()}
        results.append(r)
    report["results"] = results
    report_json = json.dumps(report, separators=(",", ":"), allow_nan=False)
    head = dict(t.head)
    head["host"] = host
    head["report_chars"] = len(report_json)
    head["metrics"] = {k: v * factors.get(_metric_family(k), 1.0) for k, v in t.head["metrics"].items()}
    head_json = json.dumps(head, separators=(",", ":"), allow_nan=False)
    return head_json[:-1] + ',"report":' + report_json + "}"


def _metric_family(metric: str) -> str:
    return "rdma" if metric.startswith("rdma_") else metric.split("_")[0]


def generate(
    n: int, fault_rate: float, seed: int, noise: float
) -> tuple[list[tuple[str, str]], dict[str, Optional[str]]]:
    """[(host, record line)] and {host: fault or None}; deterministic for a seed."""
    from gdrdiag.cli.report_files import load_report

    rng = random.Random(seed)
    bases = {tag: load_report(REPORTS / name) for name, tag, _ in BASES}
    templates = {tag: template(rep) for tag, rep in bases.items()}
    fault_templates = {f: template(inject(bases["hgx"], f)) for f in FAULTS}
    counts = {tag: round(n * share) for _, tag, share in BASES}
    counts["hgx"] += n - sum(counts.values())
    n_faults = round(n * fault_rate)
    tags = [tag for tag, c in counts.items() for _ in range(c)]
    rng.shuffle(tags)
    hgx_positions = [i for i, tag in enumerate(tags) if tag == "hgx"]
    faulty = set(rng.sample(hgx_positions, n_faults))
    lines, manifest = [], {}
    k = 0
    for i, tag in enumerate(tags):
        host = f"{tag}-{i:05d}"
        factors = {fam: rng.gauss(1.0, noise) for fam in ("copy", "gather", "rdma")}
        fault = None
        if i in faulty:
            fault = FAULTS[k % len(FAULTS)]
            k += 1
            t = fault_templates[fault]
        else:
            t = templates[tag]
        lines.append((host, node_line(t, host, factors)))
        manifest[host] = fault
    return lines, manifest


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "out", type=Path, help="directory for one record per node (or a .jsonl file with --jsonl)"
    )
    ap.add_argument("-n", type=int, default=10000, help="number of nodes (default 10000)")
    ap.add_argument(
        "--fault-rate", type=float, default=0.01, help="fraction of nodes with a fault (default 0.01)"
    )
    ap.add_argument(
        "--noise", type=float, default=0.008, help="per-node sigma of bench numbers (default 0.008)"
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jsonl", action="store_true", help="write one JSONL file instead of a directory")
    args = ap.parse_args(argv)
    lines, manifest = generate(args.n, args.fault_rate, args.seed, args.noise)
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
    n_faults = sum(1 for v in manifest.values() if v)
    print(
        f"wrote {len(lines)} records ({n_faults} with injected faults) to {args.out}; "
        f"manifest {manifest_path}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
