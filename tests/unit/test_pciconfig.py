"""Config-space decoding: register fields, capability walks and their guards."""

from __future__ import annotations

import struct

from gdrdiag.hw import pciconfig as pc
from gdrdiag.model.machine import PortType

from .test_machine_rules_fixtures import MACHINES


def _cfg(size: int = 4096) -> bytearray:
    b = bytearray(size)
    struct.pack_into("<HH", b, 0, 0x15B3, 0x1021)
    struct.pack_into("<H", b, 0x06, 0x0010)
    return b


def _with_exp(devctl: int, lnkcap: int, lnksta: int, devcap2: int = 0) -> bytearray:
    b = _cfg()
    b[0x34] = 0x60
    b[0x60], b[0x61] = 0x10, 0x00
    struct.pack_into("<H", b, 0x62, 0x0002)  # v2 endpoint
    struct.pack_into("<I", b, 0x64, 0x0002 | 0x20)  # MPS supported 512, ExtTag capable
    struct.pack_into("<H", b, 0x68, devctl)
    struct.pack_into("<I", b, 0x6C, lnkcap)
    struct.pack_into("<H", b, 0x72, lnksta)
    struct.pack_into("<I", b, 0x84, devcap2)
    struct.pack_into("<I", b, 0x8C, 0x3E)  # LnkCap2: 2.5..32 GT/s
    return b


def test_devctl_fields_decode_like_lspci():
    # RlxdOrd+ (0x10), MPS 256 (1<<5), ExtTag+ (0x100), NoSnoop+ (0x800), MRRS 4096 (5<<12)
    b = _with_exp(0x0010 | 0x0020 | 0x0100 | 0x0800 | 0x5000, 0x0105, 0x0084, devcap2=0x0400 | 0x30000)
    out = pc.decode_all(pc.ConfigSpace(bytes(b), 4096))
    p = out["pcie"]
    assert p.port_type is PortType.ENDPOINT
    assert (p.relaxed_ordering, p.ext_tag, p.no_snoop) == (True, True, True)
    assert (p.max_payload, p.max_read_request, p.max_payload_supported) == (256, 4096, 512)
    assert p.no_ro_enabled_pr_pr_passing is True and p.tag10_requester is True
    assert p.supported_speeds_gts == (2.5, 5.0, 8.0, 16.0, 32.0)
    # LnkCap 32 GT/s x16, LnkSta 16 GT/s x8
    assert out["link"] == {"speed_gts": 16.0, "width": 8, "max_speed_gts": 32.0, "max_width": 16}


def test_devctl_all_clear_reads_minimums():
    out = pc.decode_all(pc.ConfigSpace(bytes(_with_exp(0, 0x0105, 0x0105)), 4096))
    p = out["pcie"]
    assert (p.relaxed_ordering, p.ext_tag, p.max_payload, p.max_read_request) == (False, False, 128, 128)


def test_ext_caps_acs_ats_sriov():
    b = _with_exp(0, 0x0105, 0x0105)
    struct.pack_into("<I", b, 0x100, 0x000D | (1 << 16) | (0x180 << 20))  # ACS -> 0x180
    struct.pack_into("<HH", b, 0x104, 0x005F, 0x001D)  # ctl SV RR CR UF
    struct.pack_into("<I", b, 0x180, 0x0010 | (1 << 16) | (0x480 << 20))  # SR-IOV -> 0x480
    struct.pack_into("<H", b, 0x188, 0x0019)  # VF Enable + MSE + ARI
    struct.pack_into("<HHH", b, 0x18C, 16, 16, 4)  # InitialVFs, TotalVFs, NumVFs
    struct.pack_into("<HH", b, 0x194, 1, 1)
    struct.pack_into("<H", b, 0x19A, 0x101E)
    struct.pack_into("<I", b, 0x480, 0x000F | (1 << 16))  # ATS, end
    struct.pack_into("<HH", b, 0x484, 0x0020, 0x8000)
    out = pc.decode_all(pc.ConfigSpace(bytes(b), 4096))
    assert out["acs"].ctl_flags == ("SrcValid", "ReqRedir", "CmpltRedir", "UpstreamFwd")
    assert out["acs"].offset == 0x100
    assert out["ats"].enabled is True and out["ats"].offset == 0x480
    s = out["sriov"]
    assert (s.vf_enable, s.total_vfs, s.num_vfs, s.vf_device_id) == (True, 16, 4, 0x101E)
    assert [c.name for c in out["caps"] if c.extended] == ["ACS", "SRIOV", "ATS"]


def test_loop_and_broken_chain_are_reported_not_raised():
    b = _cfg()
    b[0x34] = 0x40
    b[0x40], b[0x41] = 0x01, 0x50
    b[0x50], b[0x51] = 0x05, 0x40  # loops back
    caps, problems = pc.walk_std_caps(pc.ConfigSpace(bytes(b), 4096))
    assert [c.offset for c in caps] == [0x40, 0x50]
    assert any("looped" in p for p in problems)
    b[0x51] = 0x10  # points into the header
    _, problems = pc.walk_std_caps(pc.ConfigSpace(bytes(b), 4096))
    assert any("broken" in p for p in problems)
    struct.pack_into("<I", b, 0x100, 0x0001 | (0x100 << 20))  # ext cap pointing at itself
    _, problems = pc.walk_ext_caps(pc.ConfigSpace(bytes(b), 4096))
    assert any("looped" in p for p in problems)


def test_unprivileged_64_bytes_means_unknown_not_zero():
    full = bytes(_with_exp(0x0010, 0x0105, 0x0105))
    cfg = pc.ConfigSpace(full[:64], 4096)
    assert cfg.truncated_by_privilege
    out = pc.decode_all(cfg)
    assert out["pcie"] is None and out["link"] is None
    assert any("access denied" in p for p in out["problems"])


def test_real_fixture_cx7_ats_at_0x480_and_h100_rebar():
    cx7 = (
        MACHINES / "c_baremetal_hgx_h100_cx7/fs/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:01.0"
        "/0000:19:00.0/config"
    ).read_bytes()
    out = pc.decode_all(pc.ConfigSpace(cx7, 4096))
    assert out["ats"].offset == 0x480 and out["ats"].enabled is False
    assert [c.offset for c in out["caps"] if not c.extended] == [0x60, 0x48, 0x9C, 0xC0, 0x40]
    h100 = (
        MACHINES / "c_baremetal_hgx_h100_cx7/fs/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0"
        "/0000:18:00.0/config"
    ).read_bytes()
    out = pc.decode_all(pc.ConfigSpace(h100, 4096))
    assert out["rebar"].current_sizes == {"1": 128 << 30}
    assert out["pcie"].relaxed_ordering is True


def test_target_link_speed_0000b_means_2_5_gts():
    # PCIe spec, Link Control 2: a 2.5 GT/s-only component may hardwire Target Link Speed to 0;
    # lspci prints 2.5GT/s for it (seen on QEMU's x3130 ports and NVMe in the lab).
    assert pc._target_speed(0x0000) == 2.5
    assert pc._target_speed(0x0003) == 8.0
    assert pc._target_speed(None) is None
