#!/usr/bin/env python3
"""Build the saved-Report fixtures under tests/fixtures/reports/ (reproducible).

- ``baremetal_hgx.json``: machine fixture (c) (bare-metal HGX H100, ConnectX-7 PFs under the
  GPUs' PCIe switches) plus bench results.
- ``vm_guest_kvm.json``: machine fixture (d) (KVM guest, H100 + ConnectX-7 VF, flat bus, guest
  kernel 5.15) plus bench results showing the NCCL #1731 pattern: RDMA WRITE into device memory
  ~84 Gb/s against ~396 Gb/s into host memory, with RO requested but ignored.

The machines are faithful captured-style trees; the bench numbers are **synthetic**, modelled
on these published numbers:

- nvbandwidth ``host_to_device_memcpy_ce``: 55.3 GB/s per GPU on an 8x H800 host (the nvbandwidth
  page under ai-infra in https://github.com/liguodongiot/llm-action) and 56.7-57.1 GB/s on an H100
  VM (https://github.com/NVIDIA/nvbandwidth/issues/6);
- the Azure ND H100 v5 health-check floors, 52 GB/s host<->device and 380 Gb/s GPUDirect
  ``ib_write_bw`` (https://github.com/Azure/azurehpc-health-checks);
- ``ib_write_bw`` 395 Gb/s on NDR in a VM once ACS/ATS were set up
  (https://github.com/NVIDIA/nccl/issues/1464);
- NCCL #1731: RDMA WRITE into cudaMalloc memory at 84 Gb/s against ~400 Gb/s into host or
  managed memory (https://github.com/NVIDIA/nccl/issues/1731).

They carry ``provider = "fixture"`` and a note saying so: they exercise diagnose/compare/render,
they are not measurements. The real Report from the GPU machine (``gpu_machine_h200.json``) is written
by ``gdrdiag report`` on that machine, not by this script.

Run: ``python scripts/make_fixture_reports.py`` from the repository root.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gdrdiag.diagnose import diagnose  # noqa: E402
from gdrdiag.hw.bundle import open_bundle  # noqa: E402
from gdrdiag.inspect.collect import inspect_source  # noqa: E402
from gdrdiag.model.params import (  # noqa: E402
    CopyParams,
    GatherMetrics,
    GatherParams,
    MrMetrics,
    MrParams,
    RunSettings,
)
from gdrdiag.model.report import Report  # noqa: E402
from gdrdiag.model.results import BenchResult, SampleStats, Status  # noqa: E402
from gdrdiag.model.vocabulary import AccessFlags, Direction, MemoryKind, RegPath  # noqa: E402

MACHINES = ROOT / "tests" / "fixtures" / "machines"
OUT = ROOT / "tests" / "fixtures" / "reports"
NOTE = (
    "synthetic fixture: machine facts from a faithful captured-style tree; bench numbers modelled on "
    "published numbers listed in scripts/make_fixture_reports.py, provider 'fixture' - not a measurement"
)
MiB = 1 << 20


def samples(value: float) -> tuple[float, ...]:
    """Five deterministic samples within +-0.5% of ``value`` (median = value)."""
    return tuple(round(value * f, 4) for f in (0.995, 0.998, 1.0, 1.002, 1.004))


def result(key: str, value: float, unit: str, params, metrics=None, settings=None) -> BenchResult:
    s = samples(value)
    return BenchResult(
        key=key,
        status=Status.OK,
        description="fixture",
        params=params,
        unit=unit,
        samples=s,
        stats=SampleStats.of(s),
        metrics=metrics,
        settings=settings or RunSettings(),
        method="synthetic fixture (see notes)",
        provider="fixture",
        verified=True,
    )


def copy_results(pinned: float, pageable: float) -> list[BenchResult]:
    out = []
    for kind, value in (("pinned", pinned), ("pageable", pageable)):
        for size in (64 * MiB, 256 * MiB):
            out.append(
                result(
                    f"copy_h2d_{kind}",
                    value,
                    "GB/s",
                    CopyParams(
                        memory=MemoryKind(kind), direction=Direction.H2D, mode="async", size_bytes=size
                    ),
                )
            )
    return out


def rdma_results(values: dict[tuple[str, str, bool], float], qps: int = 4) -> list[BenchResult]:
    out = []
    for (memory, reg, ro), gbps in values.items():
        landing = "gpu" if memory == "device" else "host"
        lands_in = (
            "GPU memory"
            if memory == "device"
            else "host DRAM (managed memory registered with ibv_reg_mr pins CPU pages on x86)"
            if memory == "managed"
            else "host DRAM, page-locked"
        )
        access = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE
        params = MrParams(
            memory=MemoryKind(memory),
            src_memory=MemoryKind(memory),
            reg_path=RegPath(reg),
            landing=landing,
            lands_in=lands_in,
            topology="loopback",
            qps=qps,
            tx_depth=128,
            post_list=1,
            offset_bytes=0,
            size_bytes=1 * MiB,
            mode="bw",
            access=access | AccessFlags.RELAXED_ORDERING if ro else access,
        )
        out.append(
            result(
                f"rdma_write_{memory.replace('-', '_')}_{reg}",
                gbps,
                "Gb/s",
                params,
                MrMetrics(msgs_per_s=gbps * 1e9 / 8 / MiB),
                RunSettings(ro_ab=True),
            )
        )
    return out


def gather_results(ce: float, warp: float, best: float) -> list[BenchResult]:
    base = GatherParams(
        record_bytes=656,
        stride_bytes=656,
        base_offset_bytes=0,
        pattern="random",
        slots=300000,
        records=262144,
    )
    return [
        result("gather_ce_reference", ce, "GB/s", base),
        result(
            "gather_warp",
            warp,
            "GB/s",
            dataclasses.replace(base, kernel="warp"),
            GatherMetrics(ratio_to_ce=warp / ce),
        ),
        result(
            "gather_best",
            best,
            "GB/s",
            dataclasses.replace(base, kernel="best"),
            GatherMetrics(ratio_to_ce=best / ce),
        ),
    ]


def build(machine_dir: str, results: list[BenchResult], command: str) -> Report:
    with open_bundle(str(MACHINES / machine_dir)) as source:
        machine = inspect_source(source)
    rep = Report(
        tool_version="fixture",
        created_utc="2026-11-21T00:00:00Z",
        command=command,
        machine=machine,
        results=tuple(results),
        notes=(NOTE,),
    )
    return dataclasses.replace(rep, findings=diagnose(rep).findings)


def build_all() -> dict[str, Report]:
    """The saved-Report fixtures by file name, built now from the machine fixtures (schema 2)."""
    bare = build(
        "c_baremetal_hgx_h100_cx7",
        copy_results(55.3, 15.2)
        + gather_results(55.3, 48.1, 51.2)
        + rdma_results(
            {
                ("device", "mr", False): 392.1,
                ("device", "mr", True): 393.0,
                ("device", "dmabuf", False): 391.8,
                ("device", "dmabuf", True): 392.6,
                ("pinned", "mr", False): 394.2,
                ("pinned", "mr", True): 394.5,
                ("managed", "mr", False): 393.9,
                ("managed", "mr", True): 394.1,
            }
        ),
        "gdrdiag report -o baremetal_hgx.json (fixture)",
    )
    vm = build(
        "d_kvm_h100_cx7_vf",
        copy_results(52.0, 9.1)
        + gather_results(52.0, 41.0, 44.2)
        + rdma_results(
            {
                ("device", "mr", False): 84.3,
                ("device", "mr", True): 85.1,
                ("device", "dmabuf", False): 83.9,
                ("device", "dmabuf", True): 84.7,
                ("pinned", "mr", False): 395.8,
                ("pinned", "mr", True): 396.1,
                ("managed", "mr", False): 398.7,
                ("managed", "mr", True): 399.0,
            }
        ),
        "gdrdiag report -o vm_guest_kvm.json (fixture)",
    )
    return {"baremetal_hgx.json": bare, "vm_guest_kvm.json": vm}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, rep in build_all().items():
        (OUT / name).write_text(rep.to_json() + "\n")
        print(f"wrote {OUT / name}: {len(rep.results)} results, {len(rep.findings)} findings")


if __name__ == "__main__":
    main()
