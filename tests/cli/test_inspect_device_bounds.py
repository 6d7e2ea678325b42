"""A bundle listing more GPUs or RDMA devices than a node has is refused before any pair is built.

``inspect`` builds one topology pair per GPU x RDMA device (and one peer pair per two GPUs): a small
bundle naming thousands of devices made a million pairs and used gigabytes. The counts are checked
as the bundle is read: one line on stderr, exit 2, nothing on stdout.
"""

from __future__ import annotations

import json
import os
import shutil
import tarfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gdrdiag.cli import app
from gdrdiag.inspect.collect import MAX_GPUS, MAX_RDMA_DEVICES

from ..conftest import FIXTURES

HGX = FIXTURES / "machines" / "c_baremetal_hgx_h100_cx7"
_SWITCH = "devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0"


def _bundle(root: Path, gpus: int = 0, nics: int = 0) -> Path:
    """The HGX fixture with ``gpus`` more GPU functions under its first switch and ``nics`` more
    RDMA devices in its verbs facts."""
    shutil.copytree(HGX, root, symlinks=True)
    sysfs = root / "fs" / "sys"
    gpu = sysfs / _SWITCH / "0000:18:00.0"
    for i in range(gpus):
        bdf = f"0001:{i // 32:02x}:{i % 32:02x}.0"
        shutil.copytree(gpu, sysfs / _SWITCH / bdf, symlinks=True)
        os.symlink(f"../../../{_SWITCH}/{bdf}", sysfs / "bus" / "pci" / "devices" / bdf)
    verbs = json.loads((root / "facts" / "verbs.json").read_text())
    for i in range(nics):
        verbs["devices"][f"extra_{i}"] = {"fw_ver": "1", "phys_port_cnt": 1}
    (root / "facts" / "verbs.json").write_text(json.dumps(verbs))
    return root


def _refused(result, words: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.stdout[-500:], result.stderr)
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and words in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_a_bundle_with_more_gpus_than_a_node_has_is_refused(tmp_path):
    root = _bundle(tmp_path / "b", gpus=MAX_GPUS)  # the fixture's own 4 GPUs put it over
    res = CliRunner().invoke(app, ["inspect", "--bundle", str(root), "--brief"])
    _refused(res, f"{MAX_GPUS + 4} GPUs")
    check = CliRunner().invoke(app, ["inspect", "--bundle", str(root), "--check"])
    _refused(check, f"{MAX_GPUS + 4} GPUs")


def test_a_packed_bundle_with_more_rdma_devices_than_a_node_has_is_refused(tmp_path):
    root = _bundle(tmp_path / "b", nics=MAX_RDMA_DEVICES)  # 4 of its own: over the limit
    packed = tmp_path / "b.tar.gz"
    with tarfile.open(packed, "w:gz") as tf:
        tf.add(root, arcname="gdrdiag-bundle")
    res = CliRunner().invoke(app, ["inspect", "--bundle", str(packed), "--brief"])
    _refused(res, f"{MAX_RDMA_DEVICES + 4} RDMA devices")


@pytest.mark.parametrize("gpus, nics", [(MAX_GPUS - 4, 0), (0, MAX_RDMA_DEVICES - 4)])
def test_a_bundle_at_the_limits_is_read(tmp_path, gpus, nics):
    root = _bundle(tmp_path / "b", gpus=gpus, nics=nics)
    res = CliRunner().invoke(app, ["--json", "inspect", "--bundle", str(root)])
    assert res.exit_code in (0, 1), res.stderr
    machine = json.loads(res.stdout)["machine"]
    assert len(machine["gpus"]) == 4 + gpus and len(machine["nics"]) == 4 + nics
