"""What ``inspect`` writes, ``diagnose`` reads back: every fixture machine, and values
no register can hold (ReBAR size codes up to 63, sysfs integers beyond 64 bits, huge NVML facts)."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from gdrdiag.cli.reporting import results_report
from gdrdiag.hw.bundle import open_bundle
from gdrdiag.hw.sysfs import SysfsTree
from gdrdiag.inspect.collect import inspect_source
from gdrdiag.model.report import Report

from ..conftest import FIXTURES

MACHINES = sorted(p for p in (FIXTURES / "machines").iterdir() if p.is_dir())


@pytest.mark.parametrize("machine", MACHINES, ids=[p.name for p in MACHINES])
def test_every_fixture_machine_round_trips(machine):
    with open_bundle(str(machine)) as src:
        m = inspect_source(src)
    report = results_report("inspect", [], machine=m)
    assert Report.from_json(report.to_json()).machine == m


def test_out_of_range_values_become_unknown_and_the_report_reads_back(tmp_path):
    root = tmp_path / "b"
    shutil.copytree(MACHINES[0], root, symlinks=True)
    dev = next((root / "fs/sys/devices").rglob("config")).parent
    for attr in ("numa_node", "sriov_totalvfs", "current_link_width", "max_link_width"):
        path = dev / attr
        if path.is_symlink():
            path.unlink()
        path.write_text("0xffffffffffffffffffffffff\n")
    (dev / "resource").write_text("0x0 0xffffffffffffffffffffffff 0x140204\n")
    config = bytearray((dev / "config").read_bytes().ljust(4096, b"\0"))
    config[0x100:0x104] = (0x0015 | 1 << 16).to_bytes(4, "little")  # ReBAR, size code 63
    config[0x104:0x108] = (0xFFFFFFF0).to_bytes(4, "little")
    config[0x108:0x10C] = (1 << 5 | 63 << 8).to_bytes(4, "little")
    (dev / "config").write_bytes(bytes(config))
    nvml = root / "facts/nvml.json"
    nvml.write_text(json.dumps({"status": "ok", "gpus": {}, "driver_version": 10**30}))
    with open_bundle(str(root)) as src:
        m = inspect_source(src)
    text = results_report("inspect", [], machine=m).to_json()
    assert Report.from_json(text).machine == m


def test_try_int_refuses_values_beyond_64_bits(tmp_path):
    (tmp_path / "sys").mkdir()
    (tmp_path / "sys/big").write_text("0x1" + "0" * 20)
    (tmp_path / "sys/long").write_text("9" * 5000)  # past Python's int-string limit
    (tmp_path / "sys/u64").write_text("0xffffffffffffffff")
    tree = SysfsTree(str(tmp_path))
    assert tree.try_int("/sys/big").value is None and "64-bit" in tree.try_int("/sys/big").reason
    assert tree.try_int("/sys/long").value is None
    assert tree.try_int("/sys/u64").value == 2**64 - 1
    os.unlink(tmp_path / "sys/u64")
