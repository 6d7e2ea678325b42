"""GPU<->NIC path classes the way NCCL and nvidia-smi compute them."""

from __future__ import annotations

from gdrdiag.inspect.topology import classify, pci_nodes
from gdrdiag.model.machine import PathClass, PciFunction

from .test_machine_rules_fixtures import machine


def _f(path: str, numa: int | None = 0) -> PciFunction:
    parts = path.split("/")
    return PciFunction(bdf=parts[-1], sysfs_path="/sys/devices/" + path, host_bridge=parts[0], numa_node=numa)


def test_nccl_two_components_per_step():
    assert pci_nodes(["rp", "usp", "dsp"]) == ["usp"]
    assert pci_nodes(["rp", "usp1", "dsp1", "usp2", "dsp2"]) == ["usp1", "usp2"]
    assert pci_nodes(["rp"]) == [] and pci_nodes([]) == []


def test_classes():
    gpu = _f("pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/0000:18:00.0")
    nic = _f("pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:01.0/0000:19:00.0")
    assert classify(gpu, nic)[0] is PathClass.PIX
    deep = _f("pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:02.0/0000:1a:00.0/0000:1b:00.0/0000:1c:00.0")
    assert classify(deep, nic)[0] is PathClass.PXB
    other_rp = _f("pci0000:15/0000:15:02.0/0000:30:00.0")
    assert classify(gpu, other_rp)[0] is PathClass.PHB
    assert classify(gpu, _f("pci0000:37/0000:37:01.0/0000:38:00.0", 0))[0] is PathClass.NODE
    assert classify(gpu, _f("pci0000:9a/0000:9a:01.0/0000:9b:00.0", 1))[0] is PathClass.SYS
    assert classify(gpu, _f("pci0000:9a/0000:9a:01.0/0000:9b:00.0", None))[0] is None


def test_fixture_c_pairs_and_narrowest_link():
    m = machine("c_baremetal_hgx_h100_cx7")
    by = {(p.gpu_bdf, p.nic): p for p in m.topology}
    p = by[("0000:18:00.0", "mlx5_0")]
    assert p.path_class is PathClass.PIX and p.reliable and p.bridges == ("0000:17:00.0", "0000:17:01.0")
    assert p.narrowest_capable.raw_gbytes_per_s == 63.02
    assert by[("0000:18:00.0", "mlx5_2")].path_class is PathClass.SYS
    assert len(m.topology) == 16


def test_vm_flat_tree_is_marked_unreliable():
    (p,) = machine("d_kvm_h100_cx7_vf").topology
    assert p.path_class is PathClass.PHB and p.reliable is False and "depend on the host" in p.note


def test_downtrained_link_is_the_narrowest():
    (p,) = machine("f_link_downtrained").topology
    assert p.narrowest_current.width == 8 or p.narrowest_current.speed_gts == 16.0
    assert p.narrowest_current.raw_gbytes_per_s == 31.51
