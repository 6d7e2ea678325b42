"""A whole node measured NIC by NIC: the RDMA device slower than its siblings is named, with its cause.

The machine is the 8-GPU + 8-NIC fixture (tests/fixtures/machines/g_8gpu_8nic_two_odd: eight
ConnectX-7 at Gen5 x16 with 400 Gb/s NDR ports; mlx5_6 and GPU 6 on NUMA node 1, the rest on node 0),
edited per case. The rows are constructed (provider ``fixture``) as ``mr-bench -d mlx5_N --gpu N``
runs merged into one Report would hold them: they exercise the rule, they are not measurements.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from gdrdiag.diagnose import diagnose
from gdrdiag.diagnose.nic_outliers import nic_groups, nic_outlier_findings, nics_below
from gdrdiag.model.findings import Severity
from gdrdiag.model.machine import MachineInfo, PcieLink
from gdrdiag.model.params import MrParams, RunSettings
from gdrdiag.model.report import Report
from gdrdiag.model.vocabulary import MemoryKind, RegPath
from tests.unit.diagnosis_scenarios import ok
from tests.unit.test_machine_rules_fixtures import machine

MiB = 1 << 20
# RDMA WRITE into GPU memory at 4 and 64 MiB on healthy NDR ports (~390 Gb/s of 400).
HEALTHY = {n: 390.0 + (n % 3) for n in range(8)}


def node() -> MachineInfo:
    return machine("g_8gpu_8nic_two_odd")


def write(nic: str, gbps: float, gpu: int, size: int, provider: str = "fixture"):
    p = MrParams(
        memory=MemoryKind.DEVICE,
        src_memory=MemoryKind.DEVICE,
        reg_path=RegPath("dmabuf"),
        size_bytes=size,
        qps=4,
        mode="bw",
        gpu=gpu,
    )
    r = ok("rdma_write_device_dmabuf", gbps, "Gb/s", p, RunSettings(device_name=nic, port=1))
    return dataclasses.replace(r, provider=provider)


def rows(values: dict[int, float], gpu_of=lambda n: n, names=lambda n: f"mlx5_{n}", provider="fixture"):
    sizes = (4 * MiB, 64 * MiB)
    return [write(names(n), v, gpu_of(n), size, provider) for size in sizes for n, v in values.items()]


def report(results, m: MachineInfo | None = None) -> Report:
    return Report(
        tool_version="test",
        created_utc="2026-11-28T00:00:00Z",
        command="t",
        results=tuple(results),
        machine=m if m is not None else node(),
    )


def found(rep: Report):
    return [f for f in diagnose(rep).findings if f.code == "PERF-NIC-OUTLIER"]


def with_nic(m: MachineInfo, name: str, **change) -> MachineInfo:
    return dataclasses.replace(
        m, nics=tuple(dataclasses.replace(n, **change) if n.name == name else n for n in m.nics)
    )


def with_ports(m: MachineInfo, name: str | None = None, **change) -> MachineInfo:
    nics = []
    for n in m.nics:
        if name is None or n.name == name:
            n = dataclasses.replace(n, ports=tuple(dataclasses.replace(p, **change) for p in n.ports))
        nics.append(n)
    return dataclasses.replace(m, nics=tuple(nics))


def test_a_nic_on_a_link_trained_down_is_named_with_its_cause_and_no_other():
    m = node()
    narrow = next(n for n in m.nics if n.name == "mlx5_3")
    m = with_nic(m, "mlx5_3", link=dataclasses.replace(narrow.link, width=8, width_downgraded=True))
    values = {**HEALTHY, 3: 200.0}
    rep = report(rows(values), m)
    (f,) = found(rep)
    assert f.subject == "mlx5_3" and f.severity is Severity.WARN
    assert f.title.startswith(f"NIC mlx5_3 ({narrow.bdf})") and "x8" in f.title and "x16" in f.title
    assert "0.51 of the other NICs' median" in f.evidence[0]
    assert "lspci -vv -s " + narrow.bdf in f.advice
    assert not any(f"mlx5_{n}" in " ".join((f.title, *f.evidence)) for n in range(8) if n != 3)
    # GPU 3 wrote through the slow NIC: PERF-GPU-OUTLIER must not blame it (GPUs compare through one NIC)
    assert [g for g in diagnose(rep).findings if g.code == "PERF-GPU-OUTLIER"] == []


def test_a_slower_port_is_the_cause():
    m = with_ports(node(), "mlx5_2", rate_gbps=200.0, rate="200 Gb/sec (4X HDR)")
    (f,) = found(report(rows({**HEALTHY, 2: 195.0}), m))
    assert f.subject == "mlx5_2" and "200 Gb/s (200 Gb/sec (4X HDR))" in f.title and "400 Gb/s" in f.title
    assert "ibstat mlx5_2" in f.advice


def test_a_smaller_mtu_is_the_cause():
    m = with_ports(with_ports(node(), active_mtu=4096), "mlx5_4", active_mtu=1024)
    (f,) = found(report(rows({**HEALTHY, 4: 300.0}), m))
    assert f.subject == "mlx5_4" and "MTU is 1024 while its siblings' is 4096" in f.title


def test_a_nic_measured_with_a_gpu_on_the_far_node_is_named_with_that_cause():
    """Every NIC measured with GPU 0 (node 0): mlx5_6 sits on node 1, so its writes cross the sockets."""
    (f,) = found(report(rows({**HEALTHY, 6: 280.0}, gpu_of=lambda n: 0)))
    gpu0 = next(g.bdf for g in node().gpus if g.cuda_ordinal == 0)
    assert f.subject == "mlx5_6" and "NUMA node 1" in f.title and f"GPU 0 ({gpu0}) on node 0" in f.title


def test_no_cause_in_the_facts_still_names_the_nic():
    (f,) = found(report(rows({**HEALTHY, 1: 250.0})))
    assert f.subject == "mlx5_1" and ";" not in f.title and "ibv_devinfo" in f.advice


def test_a_healthy_node_and_a_lone_shallow_dip_name_no_nic():
    jitter = {n: 390.0 * (1 + 0.03 * ((n * 37) % 5 - 2) / 2) for n in range(8)}
    assert found(report(rows(jitter))) == []
    one_case = [write(f"mlx5_{n}", 320.0 if n == 5 else 390.0, n, 4 * MiB) for n in range(8)]
    assert nic_groups(one_case, node()) and found(report(one_case)) == []  # 0.82: one case, not corroborated


def test_two_nics_or_half_slow_are_not_odd_ones_out():
    assert found(report(rows({0: 390.0, 1: 200.0}))) == []
    assert found(report(rows({n: (200.0 if n % 2 else 390.0) for n in range(8)}))) == []


def test_soft_rows_and_software_devices_are_never_compared_as_hardware():
    values = {**HEALTHY, 3: 100.0}
    assert nic_groups(rows(values, provider="soft"), node()) == {}
    assert nic_groups(rows(values, provider="native-null"), node()) == {}
    rxe = rows(values, names=lambda n: f"rxe{n}", provider="pyverbs")
    assert nic_groups(rxe, node()) == {} and found(report(rxe)) == []
    # a device the machine facts say is Soft-RoCE (rdma_rxe's vendor id), whatever its name
    m = node()
    m = dataclasses.replace(
        m,
        nics=tuple(
            dataclasses.replace(n, verbs={**n.verbs, "vendor_id": str(0xFFFFFF)}) if n.name == "mlx5_3" else n
            for n in m.nics
        ),
    )
    groups = nic_groups(rows(values), m)
    assert groups and all("mlx5_3" not in members for members in groups.values())
    assert list(nic_outlier_findings(rows(values), m)) == []


def test_rows_without_a_device_name_or_below_one_mib_are_left_out():
    unnamed = rows({**HEALTHY, 3: 100.0}, names=lambda n: "")
    assert nic_groups(unnamed, node()) == {}
    small = [write(f"mlx5_{n}", 10.0 if n == 2 else 50.0, n, 64 * 1024) for n in range(8)]
    assert nics_below(small, node()) == []


def test_a_noisy_run_widens_the_tolerance():
    values = {**HEALTHY, 3: 320.0}  # 0.82 of the others, in both cases
    plain = rows(values)
    assert [b.nic for b in nics_below(plain, node())] == ["mlx5_3", "mlx5_3"]
    noisy = []
    for r in plain:
        s = tuple(r.value * f for f in (0.85, 0.95, 1.0, 1.05, 1.15))
        noisy.append(dataclasses.replace(r, samples=s, stats=type(r.stats).of(s)))
    assert nics_below(noisy, node()) == []


def test_without_machine_facts_the_nic_is_named_by_device_alone():
    (f,) = list(nic_outlier_findings(rows({**HEALTHY, 7: 150.0}), None))
    assert f.subject == "mlx5_7" and f.title.startswith("NIC mlx5_7 is slower")


def test_a_pcie_link_slower_in_speed_is_the_cause():
    m = with_nic(node(), "mlx5_0", link=PcieLink(speed_gts=16.0, width=16, max_speed_gts=32.0, max_width=16))
    (f,) = found(report(rows({**HEALTHY, 0: 250.0}), m))
    assert f.subject == "mlx5_0" and "16 GT/s" in f.title and "32 GT/s" in f.title


def test_gpus_measured_through_one_nic_are_still_compared_as_gpus():
    """mr-bench --gpus all -d mlx5_0: one NIC, eight GPUs; the slow GPU is PERF-GPU-OUTLIER's, no NIC's."""
    results = rows({**HEALTHY, 4: 200.0}, gpu_of=lambda n: n, names=lambda n: "mlx5_0")
    diagnosis = diagnose(report(results))
    gpu4 = next(g.bdf for g in node().gpus if g.cuda_ordinal == 4)
    assert [f.subject for f in diagnosis.findings if f.code == "PERF-GPU-OUTLIER"] == [gpu4]
    assert [f for f in diagnosis.findings if f.code == "PERF-NIC-OUTLIER"] == []


# ---- imported perftest outputs, one per NIC ------------------------------------------------------

PERFTEST = (
    Path(__file__).resolve().parents[1] / "fixtures" / "imported" / "ib_write_bw_cuda.txt"
).read_text()


def perftest_output(nic: str, gbps: float) -> str:
    """The fixture's ib_write_bw --use_cuda=0 output, as run with ``-d nic``, averaging ``gbps``."""
    text = PERFTEST.replace("Device         : mlx5_0", f"Device         : {nic}")
    return text.replace("85.12              84.31", f"{gbps + 1:.2f}              {gbps:.2f}")


def test_imported_perftest_outputs_of_several_nics_are_compared_and_the_slow_one_named():
    from gdrdiag.importers import import_text

    values = {0: 385.0, 1: 388.0, 2: 390.0, 3: 386.0, 4: 250.0}
    results = [
        r for n, v in values.items() for r in import_text(perftest_output(f"mlx5_{n}", v), f"pt-{n}.txt")
    ]
    assert {r.params.device_name for r in results} == {f"mlx5_{n}" for n in values}
    (f,) = found(report(results))
    assert f.subject == "mlx5_4" and "0.65" in f.title
    # the link that trained down is the cause the facts give
    m = with_nic(node(), "mlx5_4", link=PcieLink(speed_gts=32.0, width=8, max_speed_gts=32.0, max_width=16))
    (f,) = found(report(results, m))
    assert f.subject == "mlx5_4" and "x8" in f.title


def test_imported_perftest_on_a_soft_device_is_never_compared():
    from gdrdiag.importers import import_text

    values = {0: 385.0, 1: 388.0, 2: 390.0, 3: 100.0}
    results = [
        r for n, v in values.items() for r in import_text(perftest_output(f"rxe{n}", v), f"pt-{n}.txt")
    ]
    assert found(report(results)) == []
