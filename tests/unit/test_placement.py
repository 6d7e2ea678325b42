"""hw/placement.py: which NUMA node a bench runs on, from fixture sysfs trees, and applying it here."""

from __future__ import annotations

import os

import pytest

from gdrdiag.bench.runner import with_placement
from gdrdiag.errors import UserInputError
from gdrdiag.hw import placement
from gdrdiag.hw.sysfs import SysfsTree
from gdrdiag.model.case import CaseId
from gdrdiag.model.params import CopyParams, NumaPlacement
from gdrdiag.model.report import Report
from gdrdiag.model.results import BenchResult

from .test_gather_link import make_dev

GPU = "0000:06:00.0"
NIC = "0000:9e:00.0"


def two_node_tree(root, gpu_node="1", nodes=(("0", "0-7,16-23"), ("1", "8-15,24-31"))):
    """A /sys with two NUMA nodes, a GPU on ``gpu_node`` and an RDMA NIC (mlx5_0) on node 0."""
    make_dev(root, GPU)
    (root / f"sys/bus/pci/devices/{GPU}/numa_node").write_text(gpu_node + "\n")
    nic = make_dev(root, NIC)
    (nic / "numa_node").write_text("0\n")
    ib = root / "sys/class/infiniband/mlx5_0"
    ib.mkdir(parents=True)
    (ib / "device").symlink_to(nic)
    for node, cpus in nodes:
        d = root / f"sys/devices/system/node/node{node}"
        d.mkdir(parents=True)
        (d / "cpulist").write_text(cpus + "\n")
    (root / "sys/devices/system/node/online").write_text("0-1\n")
    return SysfsTree(str(root))


@pytest.mark.parametrize(
    "text,mode,node",
    [("auto", "auto", None), ("none", "none", None), ("1", "node", 1), (" AUTO ", "auto", None)],
)
def test_parse_numa(text, mode, node):
    request = placement.parse_numa(text)
    assert (request.mode, request.node) == (mode, node)


@pytest.mark.parametrize("text", ["foo", "-1", "1.5", "", "node1", "99999"])
def test_parse_numa_refuses_anything_else(text):
    from gdrdiag.model.words import WordError

    with pytest.raises(WordError, match="auto, none or a NUMA node number"):
        placement.parse_numa(text)


def test_auto_picks_the_gpu_node_and_its_cpus(tmp_path):
    tree = two_node_tree(tmp_path)
    where = placement.plan(placement.AUTO, GPU, "GPU 0", tree)
    assert where == NumaPlacement("auto", 1, "8-15,24-31", f"numa_node of GPU 0 {GPU}")


def test_auto_for_an_rdma_device_follows_its_pci_function(tmp_path):
    tree = two_node_tree(tmp_path)
    assert placement.rdma_device_bdf(tree, "mlx5_0") == NIC
    where = placement.plan_for_rdma(placement.AUTO, "mlx5_0", tree)
    assert (where.node, where.cpus) == (0, "0-7,16-23")


def test_a_software_rdma_device_has_no_node(tmp_path):
    where = placement.plan_for_rdma(placement.AUTO, "soft0", two_node_tree(tmp_path))
    assert where.node is None and where.reason.startswith("unknown because RDMA device soft0 has no PCI")


def test_node_minus_one_is_unknown_with_the_reason(tmp_path):
    tree = two_node_tree(tmp_path, gpu_node="-1")
    where = placement.plan(placement.AUTO, GPU, "GPU 0", tree)
    assert where.node is None and where.cpus is None
    assert where.reason == f"unknown because numa_node of {GPU} is -1 (no NUMA affinity: one node, or a VM)"


def test_one_node_machine_changes_nothing_under_auto(tmp_path):
    tree = two_node_tree(tmp_path, gpu_node="0", nodes=(("0", "0-3"),))
    where = placement.plan(placement.AUTO, GPU, "GPU 0", tree)
    assert where.node is None and "one NUMA node" in where.reason


def test_explicit_node_and_none(tmp_path):
    tree = two_node_tree(tmp_path)
    assert placement.plan(placement.parse_numa("0"), GPU, "GPU 0", tree).cpus == "0-7,16-23"
    none = placement.plan(placement.parse_numa("none"), GPU, "GPU 0", tree)
    assert none.node is None and "left to the OS" in none.reason


def test_a_node_that_does_not_exist_is_a_usage_error(tmp_path):
    tree = two_node_tree(tmp_path)
    with pytest.raises(UserInputError, match=r"--numa 7: no such NUMA node here \(nodes: 0, 1\)"):
        placement.check_request(placement.parse_numa("7"), tree)


def test_a_memory_only_node_is_not_applied(tmp_path):
    tree = two_node_tree(tmp_path, nodes=(("0", "0-3"), ("1", "")))
    where = placement.plan(placement.AUTO, GPU, "GPU 0", tree)
    assert where.node is None and "names no CPU" in where.reason


@pytest.mark.parametrize("text", ["0", "0-3", "0-3,8,10-11", "5"])
def test_cpulist_round_trip(text):
    assert placement.format_cpulist(placement.parse_cpulist(text)) == text


def test_cpulist_rejects_garbage():
    assert placement.parse_cpulist("zero") is None


def test_applied_binds_and_restores_on_this_machine():
    """A real call: node 0 exists on every Linux machine with NUMA support (this one has one node)."""
    if 0 not in placement.online_nodes(SysfsTree("/")):
        pytest.skip("no NUMA node 0 in /sys/devices/system/node")
    cpus_before, policy_before = os.sched_getaffinity(0), placement._get_mempolicy()
    where = placement.plan(placement.parse_numa("0"), None, "nothing")
    with placement.applied(where) as done:
        if done.node is None:
            pytest.skip(f"the kernel refused the placement here: {done.reason}")
        inside = placement._get_mempolicy()
        assert inside == (placement.MPOL_PREFERRED, 1)
        assert os.sched_getaffinity(0) == placement.parse_cpulist(done.cpus)
    assert os.sched_getaffinity(0) == cpus_before
    assert placement._get_mempolicy() == policy_before


def test_a_refused_memory_policy_is_recorded_and_the_affinity_restored(monkeypatch):
    def refuse(mode, nodes):
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(placement, "_set_mempolicy", refuse)
    cpus_before = os.sched_getaffinity(0)
    cpus = placement.format_cpulist(frozenset(cpus_before))
    with placement.applied(NumaPlacement("0", 0, cpus, "--numa 0")) as done:
        assert done.node is None and done.cpus is None
        assert done.reason == "node 0 not applied: Operation not permitted (--numa 0)"
    assert os.sched_getaffinity(0) == cpus_before


def test_placement_is_a_run_setting_not_identity():
    params = CopyParams(size_bytes=1 << 20)
    a = BenchResult.waived("copy_h2d_pinned", "x", params=params)
    near, far = (
        with_placement([a], NumaPlacement("auto", n, "0-1", "numa_node of GPU 0"))[0] for n in (0, 1)
    )
    assert near.settings.numa_node == 0 and far.settings.numa_node == 1
    assert CaseId.of(near) == CaseId.of(far)
    report = Report(tool_version="t", created_utc="2026-01-01T00:00:00Z", command="c", results=(near,))
    back = Report.from_json(report.to_json())
    assert back.results[0].settings == near.settings


def test_both_sides_of_a_two_machine_run_record_their_placement():
    from gdrdiag.bench import exchange, mr

    from .test_mr_pipeline import _serve_in_thread, soft

    out: dict = {}
    with exchange.Listener(0, "127.0.0.1") as lst:
        t = _serve_in_thread(soft(numa=placement.parse_numa("none")), lst, out)
        (client,) = mr.run_client(soft(), "127.0.0.1", port=lst.port)
        t.join(10)
    assert "server_error" not in out
    (server,) = out["server"]
    assert server.settings.numa == "none" and "left to the OS" in server.settings.numa_reason
    assert client.settings.numa == "auto" and client.settings.numa_reason.startswith("unknown because RDMA")


@pytest.mark.parametrize("bench", ["copy", "gather", "mr"])
def test_every_bench_shows_the_placement_in_one_line(bench):
    from gdrdiag.render.copy_table import render_copy_results
    from gdrdiag.render.gather_table import render_gather_results
    from gdrdiag.render.mr_table import render_mr_results

    render = {"copy": render_copy_results, "gather": render_gather_results, "mr": render_mr_results}[bench]
    where = NumaPlacement("auto", 1, "8-15", "numa_node of GPU 0 0000:1b:00.0")
    results = with_placement([BenchResult.waived(f"{bench}_x", "no device") for _ in range(3)], where)
    lines = [line for line in render(results).splitlines() if line.startswith("numa:")]
    assert lines == ["numa: auto -> node 1, CPUs 8-15 (numa_node of GPU 0 0000:1b:00.0)"]
