"""SysfsTree: soft vs loud reads, confinement of captured trees, recording for collect."""

from __future__ import annotations

import os

import pytest

from gdrdiag.hw.sysfs import SysfsError, SysfsTree


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "sys/bus/pci").mkdir(parents=True)
    (tmp_path / "sys/bus/pci/vendor").write_text("0x10de\n")
    (tmp_path / "sys/bus/pci/bad").write_text("zzz\n")
    os.symlink("../../../../etc", tmp_path / "sys/bus/pci/escape")
    return SysfsTree(str(tmp_path))


def test_soft_and_loud_reads(tree):
    assert tree.try_int("/sys/bus/pci/vendor", 16).value == 0x10DE
    missing = tree.try_text("/sys/bus/pci/nope")
    assert missing.value is None and "not in the captured tree" in missing.reason
    bad = tree.try_int("/sys/bus/pci/bad")
    assert bad.value is None and "not an integer" in bad.reason
    with pytest.raises(SysfsError):
        tree.read_text("/sys/bus/pci/nope")


def test_captured_tree_is_confined(tree):
    with pytest.raises(SysfsError, match="leaves the captured tree"):
        tree.read_text("/sys/bus/pci/escape/passwd")
    assert tree.try_text("/sys/../../etc/passwd").value is None
    assert tree.realpath("/sys/bus/pci/escape") is None


def test_recording_and_failure_replay(tmp_path):
    (tmp_path / "sys").mkdir()
    (tmp_path / "sys/a").write_text("1\n")
    rec = SysfsTree(str(tmp_path), record=True)
    rec.read_text("/sys/a")
    rec.listdir("/sys")
    assert rec.files == {"/sys/a": b"1\n"} and rec.listed == {"/sys"}
    replay = SysfsTree(str(tmp_path), failures={"/sys/a": "Permission denied"}, sizes={"/sys/a": 4096})
    assert replay.try_text("/sys/a").reason == "cannot read /sys/a: Permission denied"
    assert replay.file_size("/sys/a") == 4096
