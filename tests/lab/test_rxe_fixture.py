"""inspect on the bundle collected in the lab's verbs guest (Soft-RoCE rxe0 on a virtio NIC).

The fixture ``lab_qemu_rxe`` is what ``gdrdiag collect`` wrote in a Debian 12 guest (Linux 6.1,
rdma-core 44) by ``scripts/lab/run.sh verbs``: a software RDMA device, which has no PCI
``device`` link of its own, and pyverbs facts read from the real device.
"""

from __future__ import annotations

from pathlib import Path

from tests.unit.test_machine_rules_fixtures import machine

GUEST = Path(__file__).resolve().parents[1] / "fixtures/machines/lab_qemu_rxe/guest"


def test_rxe0_is_placed_on_its_virtio_nic_with_port_facts():
    m = machine("lab_qemu_rxe")
    (nic,) = m.nics
    parent = (GUEST / "rxe0-parent.txt").read_text().strip()
    assert nic.name == "rxe0" and nic.netdevs == (parent,)
    f = m.function(nic.bdf)
    assert f is not None and f.vendor_id == 0x1AF4 and (f.class_code or 0) >> 8 == 0x0200
    (port,) = nic.ports
    assert port.state == "ACTIVE" and port.link_layer == "Ethernet" and port.active_mtu == 1024
    assert "RoCE v2" in port.gid_types and len(port.gids) == len(port.gid_types)
    assert int(nic.verbs["max_qp"]) > 0 and "pci" not in nic.unknown


def test_guest_kernel_and_vm_facts():
    m = machine("lab_qemu_rxe")
    assert m.kernel.release and m.kernel.release.startswith("6.1.")
    assert m.virt.is_vm and m.virt.iommu_mode == "off"
