"""hw/gpu_link.py against fixture trees shaped like /sys."""

import pytest

from gdrdiag.hw import gpu_link


def make_dev(root, bdf="0000:00:06.0", speed="32.0 GT/s PCIe", width="16", cfg=None):
    d = root / "sys/bus/pci/devices" / bdf
    d.mkdir(parents=True)
    (d / "current_link_speed").write_text(speed + "\n")
    (d / "max_link_speed").write_text("32.0 GT/s PCIe\n")
    (d / "current_link_width").write_text(width + "\n")
    (d / "max_link_width").write_text("16\n")
    if cfg is not None:
        (d / "config").write_bytes(cfg)
    return d


def config_with_pcie_cap(devctl, lnkctl, size=256):
    cfg = bytearray(size)
    cfg[0x06] = 0x10  # capability list
    cfg[0x34] = 0x60
    cfg[0x60], cfg[0x61] = 0x05, 0x78  # MSI -> next
    cfg[0x78], cfg[0x79] = 0x10, 0x00  # PCIe capability, end of list
    cfg[0x78 + 8 : 0x78 + 10] = devctl.to_bytes(2, "little")
    cfg[0x78 + 0x10 : 0x78 + 0x12] = lnkctl.to_bytes(2, "little")
    return bytes(cfg)


def test_h200_vm_values(tmp_path):
    # MPS 256 (DevCtl[7:5]=1) and MRRS 4096 (DevCtl[14:12]=5) as on the H200 VM (the capture in
    # tests/fixtures/machines/b_gpu_firecracker_h200); LnkCtl bit 3 is set to check RCB 128 decodes
    # (that GPU reads RCB 64).
    make_dev(tmp_path, cfg=config_with_pcie_cap((1 << 5) | (5 << 12), 0x8))
    link = gpu_link.read_link("00000000:00:06.0", root=str(tmp_path))
    assert (link.generation, link.width, link.max_generation, link.max_width) == (5, 16, 5, 16)
    assert link.raw_gbytes_per_s == pytest.approx(63.015, abs=0.01)
    assert (link.mps, link.mrrs, link.rcb) == (256, 4096, 128)
    assert link.unknown == {}


def test_non_root_config_is_unknown_with_reason(tmp_path):
    make_dev(tmp_path, speed="16.0 GT/s PCIe", width="8", cfg=config_with_pcie_cap(0, 0)[:64])
    link = gpu_link.read_link("0000:00:06.0", root=str(tmp_path))
    assert link.generation == 4 and link.width == 8
    assert link.mps is None and "root" in link.unknown["mps"]


def test_missing_device_is_unknown_never_zero(tmp_path):
    link = gpu_link.read_link("0000:00:07.0", root=str(tmp_path))
    assert link.raw_gbytes_per_s is None and link.generation is None
    assert "raw_gbytes_per_s" in link.unknown and "current_link_speed" in link.unknown["generation"]


def test_unknown_speed_text(tmp_path):
    make_dev(tmp_path, speed="Unknown", width="0")
    link = gpu_link.read_link("0000:00:06.0", root=str(tmp_path))
    assert link.generation is None and link.width is None and link.raw_gbytes_per_s is None


def test_bus_id_normalisation():
    assert gpu_link.normalize_bus_id("00000000:1B:00.0") == "0000:1b:00.0"
    with pytest.raises(ValueError):
        gpu_link.normalize_bus_id("gpu0")
    assert gpu_link.parse_speed("8.0 GT/s PCIe") == 3
    assert gpu_link.parse_speed("2.5 GT/s") == 1
