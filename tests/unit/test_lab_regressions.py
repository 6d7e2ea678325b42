"""Bugs the QEMU lab's real stack (Soft-RoCE in a Linux 6.1 guest) found outside the provider.

Each test here fails on the code before its fix:
- a timed-out size in an ``-a`` sweep threw away every size already measured;
- ``inspect`` could not place a software RDMA device (rxe0: no ``device`` link, a ``parent``);
- with a vIOMMU in DMA mode and no GPU/NIC PCI endpoint the IOMMU mode was unknown (``?``).
"""

from __future__ import annotations

import os

from gdrdiag.bench import mr, rdma_loop
from gdrdiag.hw.memory import MemoryKind
from gdrdiag.hw.sysfs import SysfsTree
from gdrdiag.inspect.nic import inspect_nics
from gdrdiag.inspect.virt import iommu_mode
from gdrdiag.model.machine import KernelInfo, PciFunction
from gdrdiag.model.results import Status


def test_sweep_keeps_measured_sizes_when_a_larger_one_times_out(monkeypatch):
    real_run_bw = mr.run_bw

    def slow_for_big_sizes(lanes, *a, **kw):
        length = lanes[0].plain[0].wrs[0].length
        if length >= 65536:
            raise rdma_loop.LoopTimeout("no RDMA completion for 1 s (test: this size is too slow)")
        return real_run_bw(lanes, *a, **kw)

    monkeypatch.setattr(mr, "run_bw", slow_for_big_sizes)
    cfg = mr.MrBenchConfig(
        provider="soft",
        kinds=(MemoryKind.PAGEABLE,),
        sizes=(4096, 16384, 65536, 262144),
        iterations=50,
        repeats=1,
    )
    res = mr.run(cfg)
    by_size = {r.params.size_bytes: r for r in res}
    assert by_size[4096].status is Status.OK and by_size[4096].verified
    assert by_size[16384].status is Status.OK and by_size[16384].verified
    assert by_size[65536].status is Status.ERROR
    assert "size 64 KiB" in by_size[65536].reason and "1 larger size(s) were not run" in by_size[65536].reason
    assert 262144 not in by_size


def _link(path, target):
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, path)


def test_soft_roce_device_is_placed_through_its_parent_netdev(tmp_path):
    # The shape of a Debian 12 guest's sysfs (captured in the lab): rxe0 has no device link,
    # its parent file names the virtio netdev, whose device is virtio0 under the PCI function.
    fn = "sys/devices/pci0000:00/0000:00:03.0"
    (tmp_path / fn / "virtio0/net/ens3").mkdir(parents=True)
    _link(tmp_path / "sys/class/net/ens3", "../../devices/pci0000:00/0000:00:03.0/virtio0/net/ens3")
    (tmp_path / "sys/devices/virtual/infiniband/rxe0/ports/1").mkdir(parents=True)
    (tmp_path / "sys/devices/virtual/infiniband/rxe0/parent").write_text("ens3\n")
    (tmp_path / "sys/devices/virtual/infiniband/rxe0/ports/1/state").write_text("4: ACTIVE\n")
    port = tmp_path / "sys/devices/virtual/infiniband/rxe0/ports/1"
    (port / "gids").mkdir()
    (port / "gid_attrs/types").mkdir(parents=True)
    (port / "gids/1").write_text("0000:0000:0000:0000:0000:ffff:0a00:020f\n")
    (port / "gid_attrs/types/1").write_text("RoCE v2\n")
    _link(tmp_path / "sys/class/infiniband/rxe0", "../../devices/virtual/infiniband/rxe0")
    _link(tmp_path / fn / "virtio0/net/ens3/device", "../../../virtio0")
    tree = SysfsTree(str(tmp_path))
    pci = (PciFunction(bdf="0000:00:03.0", vendor_id=0x1AF4, device_id=0x1000),)
    verbs = {"devices": {"rxe0": {"name": "rxe0", "ports": [{"port": 1, "active_mtu_bytes": 1024}]}}}
    (nic,) = inspect_nics(tree, pci, verbs)
    assert nic.bdf == "0000:00:03.0" and nic.vendor_id == 0x1AF4
    assert nic.netdevs == ("ens3",) and "pci" not in nic.unknown
    (p1,) = nic.ports
    assert p1.state == "ACTIVE" and p1.active_mtu == 1024
    assert p1.gids == ("0000:0000:0000:0000:0000:ffff:0a00:020f",) and p1.gid_types == ("RoCE v2",)


def test_iommu_mode_from_all_groups_when_no_endpoint_says():
    kernel = KernelInfo()
    assert iommu_mode([], 5, kernel, ("DMA", "DMA", "DMA")) == "translated"
    assert iommu_mode([], 5, kernel, ("identity",)) == "passthrough"
    assert iommu_mode([], 5, kernel, ("DMA", "identity")) == "mixed"
    assert iommu_mode([], 5, kernel) is None
    assert iommu_mode([], 0, kernel, ("DMA",)) == "off"


def test_ro_ab_from_one_run_per_side_gets_no_verdict():
    from gdrdiag.diagnose import rdma_rules as rr

    one = rr.classify_ro(100.0, 130.0, landing="host", samples=1)
    assert one.code == "inconclusive" and "1 run per side" in one.words
    assert rr.classify_ro(100.0, 130.0, landing="host", samples=3).code == "ro_sensitive"


def test_reads_never_ask_the_kernel_for_4_mib_at_once(tmp_path, monkeypatch):
    # Linux 6.1 answers a /proc/sys read of count >= KMALLOC_MAX_SIZE with ENOMEM: the lab's
    # guest bundle had "osrelease: Cannot allocate memory" until reads were chunked.
    import errno

    from gdrdiag.hw import sysfs

    (tmp_path / "proc/sys/kernel").mkdir(parents=True)
    (tmp_path / "proc/sys/kernel/osrelease").write_text("6.1.0-50-amd64\n")
    real_open = open

    class ProcSysFile:
        def __init__(self, path):
            self.fh = real_open(path, "rb", buffering=0)

        def read(self, n=-1):
            if n < 0 or n >= 4 * 1024 * 1024:
                raise OSError(errno.ENOMEM, "Cannot allocate memory")
            return self.fh.read(n)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

    monkeypatch.setattr(sysfs, "open", lambda path, *a, **kw: ProcSysFile(path), raising=False)
    tree = SysfsTree(str(tmp_path))
    assert tree.read_text("/proc/sys/kernel/osrelease") == "6.1.0-50-amd64"


def test_report_can_shrink_or_leave_out_its_rdma_part(tmp_path, monkeypatch):
    # Under emulation the default quick RDMA matrix ran for minutes: report takes its size.
    from typer.testing import CliRunner

    from gdrdiag.cli import app

    seen = []
    monkeypatch.setattr(mr, "run", lambda cfg, mode="bw": seen.append(cfg) or [])
    runner = CliRunner()
    out = tmp_path / "r.json"
    args = ["report", "-o", str(out), "--quick", "--rdma-size", "4K", "--rdma-iters", "50", "--rdma-qps", "1"]
    res = runner.invoke(app, args)
    assert res.exit_code in (0, 1), res.output
    (cfg,) = seen
    assert cfg.sizes == (4096,) and cfg.iterations == 50 and cfg.qps == 1
    seen.clear()
    res = runner.invoke(app, ["report", "-o", str(out), "--force", "--quick", "--no-rdma"])
    assert res.exit_code in (0, 1) and not seen
    assert "left out by --no-rdma" in out.read_text()
    res = runner.invoke(app, ["report", "-o", str(out), "--force", "--quick", "--rdma-iters", "0"])
    assert res.exit_code == 2 and "--rdma-iters must be at least 1" in res.output


def test_loc_qp_op_err_advice_names_what_rxe_means_by_it():
    from gdrdiag.hw import verbs as v

    wc = v.Completion(1, v.WcStatus.LOC_QP_OP_ERR, 0, 0, 17)
    text = str(v.CompletionError(wc))
    assert "lkey" in text and "network namespace" in text
