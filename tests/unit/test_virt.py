"""Virtualization, SR-IOV role and IOMMU detection on the fixture machines."""

from __future__ import annotations

import pytest

from .test_machine_rules_fixtures import MACHINES, machine


def test_dev_machine_is_a_firecracker_vm():
    v = machine("a_dev_firecracker").virt
    assert v.is_vm is True and v.hypervisor == "Firecracker"
    assert v.dmi_present is False and v.iommu_groups == 0
    assert any(s.startswith("cpu flag:") for s in v.signals)


def test_bare_metal_has_real_dmi_and_passthrough_iommu():
    v = machine("c_baremetal_hgx_h100_cx7").virt
    assert v.is_vm is False and v.hypervisor is None
    assert v.iommu_mode == "passthrough" and v.iommu_units == ("dmar0",)
    assert machine("e_baremetal_acs_redirect").virt.iommu_mode == "translated"


def test_kvm_guest_signals_and_guest_view_vf():
    m = machine("d_kvm_h100_cx7_vf")
    assert m.virt.is_vm is True and m.virt.hypervisor == "QEMU/KVM" and m.virt.flat_pci is True
    assert any(s.startswith("SR-IOV:") for s in m.virt.signals)
    vf = m.function("0000:00:06.0")
    assert vf.is_vf is True and vf.physfn is None and "15b3:101e" in vf.vf_evidence
    nic = m.nics[0]
    assert nic.is_vf is True and nic.model == "ConnectX mlx5Gen VF"
    # QEMU turns an endpoint on pcie.0 into an RC-integrated endpoint with zeroed link registers
    assert vf.pcie.port_type.value == "rc_integrated_endpoint"
    assert nic.link.speed_gts is None and nic.link.width is None


def test_pf_role_from_sriov_files():
    m = machine("c_baremetal_hgx_h100_cx7")
    f = m.function("0000:19:00.0")
    assert f.is_vf is False and f.sriov_totalvfs == 16 and f.sriov.total_vfs == 16
    assert m.kernel.peermem_loaded is True and m.kernel.mlx5_out_of_tree is True


def test_synth_microvm_gpu_facts_match_the_h200_vm():
    m = machine("b_synth_firecracker_h200")
    assert m.virt.is_vm and m.virt.flat_pci and not m.nics
    g = m.gpus[0]
    assert (g.link.speed_gts, g.link.width, g.link.max_speed_gts) == (32.0, 16, 32.0)
    assert g.bar1_index == 2 and g.bar1_bytes == 256 << 30  # BAR1 is resource2, as in b_gpu_firecracker_h200
    assert g.nvml_virtualization_mode == "PASSTHROUGH" and g.numa_node is None
    f = m.function(g.bdf)
    assert (f.pcie.relaxed_ordering, f.pcie.no_snoop, f.pcie.max_payload, f.pcie.max_read_request) == (
        True,
        False,
        256,
        4096,
    )
    assert any(c.cap_id == 0 and c.extended for c in f.caps)  # hidden ext caps kept in the chain
    assert m.kernel.nvidia_flavour.value == "open" and m.kernel.peermem_loaded is False


GPU_MACHINE = [n for n in ("b_gpu_firecracker_h200", "b_synth_firecracker_h200")]


@pytest.mark.parametrize("name", GPU_MACHINE)
def test_gpu_machine_claims(name):
    """The GPU machine (a Firecracker microVM): a VM with a passed-through GPU, Gen5 x16, the
    GPUDirect attributes known, no RDMA device, no nvidia_peermem; inspect well under 2 s."""
    import time

    from gdrdiag.diagnose import diagnose_machine
    from gdrdiag.hw.bundle import open_bundle
    from gdrdiag.inspect.collect import inspect_source

    if not (MACHINES / name).exists():
        pytest.skip(f"{name} not captured yet (see docs/inspect.md: the lead runs gdrdiag collect there)")
    t = time.perf_counter()
    with open_bundle(str(MACHINES / name)) as src:
        m = inspect_source(src)
    fs = diagnose_machine(m)
    assert time.perf_counter() - t < 2.0
    assert m.virt.is_vm is True and m.gpus and not m.nics
    g = m.gpus[0]
    assert g.nvml_virtualization_mode in ("PASSTHROUGH", None)
    assert (g.link.speed_gts, g.link.width) == (32.0, 16) or g.link.max_speed_gts == 32.0
    for attr in ("GPU_DIRECT_RDMA_SUPPORTED", "DMA_BUF_SUPPORTED", "GPU_DIRECT_RDMA_WRITES_ORDERING"):
        assert g.gdr_attributes.get(attr) is not None
    assert m.kernel.peermem_loaded is False
    got = {f.code for f in fs}
    assert {"VIRT-VM", "GDR-NO-RDMA", "GDR-PEERMEM-MISSING"} <= got
    assert not any(f.severity.value == "FAIL" for f in fs)
