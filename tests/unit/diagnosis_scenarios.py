"""Evidence situations of docs/diagnosis.md, each a Report made from the fixture machines.

The machines are the saved fixture Reports' machines (captured-style trees of a bare-metal HGX H100
with ConnectX-7 PFs, and a KVM guest with an H100 and a ConnectX-7 VF on kernel 5.15), changed only
in the fact a situation is about (kernel version, out-of-tree mlx5, CPU family). The bench rows are
constructed, provider ``fixture``: they exercise the rules, they are not measurements.
``SCENARIOS`` maps each situation to (builder, the code expected to lead).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Callable, Optional

from gdrdiag.model.params import CopyParams, GatherParams, MrParams, RunSettings
from gdrdiag.model.report import Report
from gdrdiag.model.results import BenchResult, SampleStats, Status
from gdrdiag.model.vocabulary import AccessFlags, Direction, MemoryKind, RegPath

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MiB = 1 << 20
BASE_ACCESS = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE


def machine(name: str):
    """The machine of a saved fixture Report (``baremetal_hgx`` or ``vm_guest_kvm``)."""
    return Report.from_json((FIXTURES / "reports" / f"{name}.json").read_text()).machine


def with_kernel(m, **kw):
    """``m`` with kernel facts replaced (release/version_tuple, mlx5_out_of_tree, cpu_*)."""
    return dataclasses.replace(m, kernel=dataclasses.replace(m.kernel, **kw))


def ok(key: str, value: float, unit: str, params, settings: Optional[RunSettings] = None) -> BenchResult:
    """A constructed OK result with five samples around ``value``."""
    s = tuple(round(value * f, 4) for f in (0.996, 0.998, 1.0, 1.002, 1.004))
    return BenchResult(
        key=key,
        status=Status.OK,
        params=params,
        unit=unit,
        samples=s,
        stats=SampleStats.of(s),
        settings=settings or RunSettings(),
        method="constructed",
        provider="fixture",
        verified=True,
    )


def write(memory: str, gbps: float, ro: bool, size: int = MiB, reg: str = "mr") -> BenchResult:
    """An mr-bench RDMA WRITE bandwidth row."""
    landing = "gpu" if memory == "device" else "host"
    p = MrParams(
        memory=MemoryKind(memory),
        src_memory=MemoryKind(memory),
        reg_path=RegPath(reg),
        size_bytes=size,
        qps=4,
        tx_depth=128,
        post_list=1,
        mode="bw",
        landing=landing,
        access=BASE_ACCESS | AccessFlags.RELAXED_ORDERING if ro else BASE_ACCESS,
    )
    return ok(f"rdma_write_{memory}_{reg}", gbps, "Gb/s", p)


def copy_h2d(gbytes: float) -> BenchResult:
    """A large pinned H2D copy."""
    return ok(
        "copy_h2d_pinned",
        gbytes,
        "GB/s",
        CopyParams(memory=MemoryKind.PINNED, direction=Direction.H2D, mode="async", size_bytes=256 * MiB),
    )


def report(m, results: list[BenchResult], command: str = "scenario") -> Report:
    """A Report of machine ``m`` with ``results`` (findings left for diagnose to compute)."""
    return Report(
        tool_version="test",
        created_utc="2026-11-23T00:00:00Z",
        command=command,
        machine=m,
        results=tuple(results),
    )


def vm(kernel: str = "6.8.0-45-generic", out_of_tree: bool = False):
    """The KVM guest with its VF, on another kernel when asked."""
    m = machine("vm_guest_kvm")
    parts = tuple(int(x) for x in kernel.split("-")[0].split("."))
    return with_kernel(m, release=kernel, version_tuple=parts, mlx5_out_of_tree=out_of_tree)


def ro_ab_present() -> Report:
    """RO off and on measured; RO recovers most of the gap (guest kernel 6.8 honours it)."""
    return report(
        vm(),
        [
            write("device", 120.0, False),
            write("device", 380.0, True),
            write("pinned", 396.0, False),
            write("pinned", 396.5, True),
        ],
    )


def ro_off_only() -> Report:
    """Only RO-off rows: what most users measured before they found RO."""
    return report(vm(), [write("device", 120.0, False), write("pinned", 396.0, False)])


def ro_on_only() -> Report:
    """Only RO-on rows (mr-bench --relaxed-ordering, perftest's default) in a 5.15 VF guest: 45% of host."""
    return report(vm("5.15.0-105-generic"), [write("device", 178.0, True), write("pinned", 395.0, True)])


def different_sizes() -> Report:
    """GPU rows at 1 MiB, host rows at 4 MiB: a 3x gap matched by nearest size."""
    return report(
        vm(), [write("device", 130.0, False, size=MiB), write("pinned", 395.0, False, size=4 * MiB)]
    )


def vf_in_tree() -> Report:
    """5.15 guest, in-tree mlx5, VF: RO requested and ignored (A/B changes nothing)."""
    return report(
        vm("5.15.0-105-generic"),
        [write("device", 84.3, False), write("device", 85.1, True), write("pinned", 395.8, False)],
    )


def vf_out_of_tree() -> Report:
    """5.15 guest with an out-of-tree (OFED) mlx5: RO likely honoured, the peer route remains."""
    return report(
        vm("5.15.0-105-generic", out_of_tree=True),
        [write("device", 84.3, False), write("device", 85.1, True), write("pinned", 395.8, False)],
    )


def ro_sensitive_cpu() -> Report:
    """Bare metal on AMD Zen3/4 (family 0x19): RO off is a 2.6x loss, RO on recovers it."""
    m = with_kernel(
        machine("baremetal_hgx"), cpu_vendor="AuthenticAMD", cpu_family=0x19, cpu_model_number=0x11
    )
    return report(
        m,
        [
            write("device", 150.0, False),
            write("device", 390.0, True),
            write("pinned", 394.0, False),
            write("pinned", 394.2, True),
        ],
    )


def healthy_bare_metal() -> Report:
    """The bare-metal HGX fixture Report as saved: every path healthy."""
    rep = Report.from_json((FIXTURES / "reports" / "baremetal_hgx.json").read_text())
    return dataclasses.replace(rep, findings=())


def sm_read_decline() -> Report:
    """gather-bench --sweep working-set: SM reads of host memory fall from 25 to 16.5 GB/s as tables grow."""
    rows = []
    for i, (size, gbs) in enumerate(((16, 25.0), (64, 24.8), (256, 23.0), (1024, 19.5), (4096, 16.5))):
        p = GatherParams(
            kernel="warp",
            record_bytes=656,
            stride_bytes=656,
            base_offset_bytes=0,
            pattern="random",
            slots=size * MiB // 656,
            records=262144,
        )
        rows.append(ok("gather_warp", gbs, "GB/s", p, RunSettings(sweep="working-set", seed=i)))
    return report(machine("baremetal_hgx"), rows)


def failed_measurement() -> Report:
    """A payload check that failed on the GPU path, beside healthy rows."""
    bad = BenchResult.error(
        "rdma_write_device_mr",
        "payload mismatch at byte 4096 (expected 0x5a, got 0x00)",
        params=MrParams(
            memory=MemoryKind.DEVICE, reg_path=RegPath.MR, size_bytes=MiB, access=BASE_ACCESS, landing="gpu"
        ),
        provider="fixture",
    )
    return report(machine("baremetal_hgx"), [bad, write("pinned", 394.0, False)])


def imported_perftest() -> Report:
    """perftest ib_write_bw text (GPU memory, RO on by perftest's default) imported into the 5.15 guest."""
    from gdrdiag.importers import import_text

    results = []
    for name in ("ib_write_bw_cuda.txt", "ib_write_bw_host.txt"):
        path = FIXTURES / "imported" / name
        results.extend(import_text(path.read_text(), name))
    return report(vm("5.15.0-105-generic"), results, "gdrdiag import")


SCENARIOS: dict[str, tuple[Callable[[], Report], str]] = {
    "RO A/B present": (ro_ab_present, "CAUSE-RO-NOT-REQUESTED"),
    "RO-off rows only": (ro_off_only, "CAUSE-RO-NOT-REQUESTED"),
    "RO-on rows only": (ro_on_only, "CAUSE-RO-NOT-HONOURED"),
    "GPU and host rows at different sizes": (different_sizes, "CAUSE-RO-NOT-REQUESTED"),
    "VF guest, in-tree driver": (vf_in_tree, "CAUSE-RO-NOT-HONOURED"),
    "VF guest, out-of-tree driver": (vf_out_of_tree, "CAUSE-P2P-VIA-RC"),
    "RO-sensitive CPU": (ro_sensitive_cpu, "CAUSE-RO-NOT-REQUESTED"),
    "size-dependent SM-read decline": (sm_read_decline, "CAUSE-WORKING-SET"),
    "failed measurement": (failed_measurement, "MEASURE-FAILED"),
    "imported perftest output": (imported_perftest, "CAUSE-RO-NOT-HONOURED"),
}
