"""gdrdiag's decoding of a real kernel's PCIe tree against the guest's own lspci and sysfs.

The fixture ``lab_qemu_pcie`` was captured by ``scripts/lab/run.sh pcie`` (q35 + Intel vIOMMU,
root ports, an x3130 switch, an SR-IOV NVMe with 2 VFs enabled, an e1000e behind the switch
with Soft-RoCE on it): the bundle gdrdiag collected and, under ``guest/``, lspci -vvv/-xxxx and a
shell listing of sysfs from the same boot. These tests run everywhere from the committed
fixture; when the lab ran on this machine (out/lab/pcie), they check that fresh capture too.
"""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

import pytest

from tests.lab import pcie_compare as pc

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests/fixtures/machines/lab_qemu_pcie"
FRESH = Path(os.environ.get("LAB_OUT", REPO / "out/lab")) / "pcie"


def _captures():
    yield pytest.param(FIXTURE, id="fixture")
    fresh = pytest.param(
        FRESH,
        id="fresh",
        marks=pytest.mark.skipif(
            not (FRESH / "bundle-pcie.tar.gz").is_file(),
            reason=f"no fresh PCIe lab capture in {FRESH} (run scripts/lab/run.sh pcie)",
        ),
    )
    yield fresh


@pytest.fixture(params=list(_captures()))
def capture(request, tmp_path):
    """(machine facts, bundle root, guest/ folder) of one capture."""
    from gdrdiag.hw.bundle import open_bundle
    from gdrdiag.inspect.collect import inspect_source

    where: Path = request.param
    if where == FIXTURE:
        root, guest = FIXTURE, FIXTURE / "guest"
    else:
        with tarfile.open(where / "bundle-pcie.tar.gz") as tar:
            safe = {"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}
            tar.extractall(tmp_path, **safe)
        root = next(p for p in tmp_path.rglob("meta.json")).parent
        guest = where
    with open_bundle(str(root)) as src:
        machine = inspect_source(src)
    return machine, root, guest


def _report(checks: list[pc.Check]) -> str:
    bad = [c for c in checks if not c.ok]
    lines = [f"{len(checks)} fields compared, {len(checks) - len(bad)} matched"]
    lines += [f"  {c.bdf} {c.field}: gdrdiag {c.ours!r} vs guest {c.theirs!r}" for c in bad[:40]]
    return "\n".join(lines)


def test_every_decoded_register_equals_lspci(capture):
    machine, _root, guest = capture
    checks = pc.register_checks(machine, (guest / "lspci-vvv.txt").read_text())
    # The tree the lab builds: 17 functions, of them root ports, a switch and the PF/VF pair.
    assert len({c.bdf for c in checks}) >= 15
    fields = {c.field.split(".")[0] for c in checks}
    assert {"pcie", "sriov", "acs", "aer", "link", "caps", "bar0"} <= fields, fields
    assert all(c.ok for c in checks), _report(checks)


def test_config_bytes_equal_lspci_xxxx(capture):
    _machine, root, guest = capture
    checks = pc.byte_checks(root, (guest / "lspci-xxxx.txt").read_text())
    assert len(checks) >= 30
    assert all(c.ok for c in checks), _report(checks)


def test_inspect_sriov_iommu_topology_and_vm_facts_equal_sysfs(capture):
    machine, _root, guest = capture
    checks = pc.sysfs_checks(machine, (guest / "sysfs-facts.txt").read_text())
    assert all(c.ok for c in checks), _report(checks)
    # What the lab set up is really there (not only "equal"): VFs, a vIOMMU in DMA mode, a
    # switch between the root port and the endpoints, rxe0 placed on the NIC behind it.
    vfs = [f for f in machine.pci if f.is_vf]
    assert len(vfs) == 2 and {f.physfn for f in vfs} == {vfs[0].physfn}
    assert machine.virt.is_vm and machine.virt.iommu_mode == "translated"
    types = {f.pcie.port_type.value for f in machine.pci if f.pcie}
    assert {"root_port", "switch_upstream", "switch_downstream", "endpoint"} <= types
    (rxe,) = [n for n in machine.nics if n.name == "rxe0"]
    assert rxe.bdf and machine.function(rxe.bdf).parent_bdf in {
        f.bdf for f in machine.pci if f.pcie and f.pcie.port_type.value == "switch_downstream"
    }
