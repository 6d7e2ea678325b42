"""Inventory checks: GPUs on the PCI bus against those CUDA and NVML see, and NVLinks per GPU.

Built from the 4-GPU bare-metal fixture (tests/fixtures/machines/c_baremetal_hgx_h100_cx7, an HGX H100
board reduced from 8 GPUs), copied and edited the way each case would have recorded it: the bundle's
facts/cuda.json carries CUDA_VISIBLE_DEVICES, so ``inspect --bundle`` gives the live finding.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from gdrdiag.diagnose.machine import diagnose_machine
from gdrdiag.hw import bundle as bundle_mod
from gdrdiag.hw.bundle import open_bundle
from gdrdiag.inspect.collect import inspect_source
from gdrdiag.model.findings import Severity
from gdrdiag.model.machine import MachineInfo, NvLink

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "machines" / "c_baremetal_hgx_h100_cx7"
LAST = "0000:9f:00.0"  # the fixture's fourth GPU


def _bundle(tmp_path: Path, visible=None, drop_cuda: bool = True, drop_nvml: bool = False) -> MachineInfo:
    """The fixture with its last GPU left out of CUDA's list (and NVML's), CUDA_VISIBLE_DEVICES as given."""
    root = tmp_path / "node"
    shutil.copytree(FIXTURE, root, symlinks=True)
    facts = root / "facts"
    cuda = json.loads((facts / "cuda.json").read_text())
    if drop_cuda:
        cuda["devices"] = [d for d in cuda["devices"] if d["pci_bus_id"] != LAST]
    if visible is not None:
        cuda["visible_devices"] = visible
    (facts / "cuda.json").write_text(json.dumps(cuda))
    if drop_nvml:
        nvml = json.loads((facts / "nvml.json").read_text())
        nvml["gpus"][LAST] = {"unknown": {"handle": f"NVML: no handle for {LAST}: NotFound"}}
        (facts / "nvml.json").write_text(json.dumps(nvml))
    with open_bundle(str(root)) as source:
        return inspect_source(source)


def _codes(m: MachineInfo, code: str):
    return [f for f in diagnose_machine(m) if f.code == code]


def test_a_gpu_hidden_by_cuda_visible_devices_is_named_from_the_bundle(tmp_path):
    m = _bundle(tmp_path, visible="0,1,2")
    assert m.cuda_visible_devices == "0,1,2"
    (f,) = _codes(m, "GPU-NOT-VISIBLE")
    assert f.severity is Severity.INFO and f.subject == LAST
    assert LAST in f.title and "CUDA_VISIBLE_DEVICES='0,1,2'" in f.title
    assert "cuda_devices = 3 of 4 GPUs on the PCI bus" in f.evidence
    assert f"gpus[{LAST}].nvml = listed" in f.evidence
    assert "cuda-environment-variables" in f.reference


def test_a_gpu_a_container_did_not_pass_is_a_warning_naming_it(tmp_path):
    (f,) = _codes(_bundle(tmp_path, drop_nvml=True), "GPU-NOT-VISIBLE")
    assert f.severity is Severity.WARN and LAST in f.title and "CUDA_VISIBLE_DEVICES" not in f.title
    assert f"gpus[{LAST}].nvml = not listed" in f.evidence and "container" in f.advice


def test_an_empty_cuda_visible_devices_names_every_gpu_even_when_cuda_lists_none(tmp_path):
    m = _bundle(tmp_path, visible="")
    m = dataclasses.replace(
        m, cuda_devices=(), gpus=tuple(dataclasses.replace(g, cuda_ordinal=None) for g in m.gpus)
    )
    found = _codes(m, "GPU-NOT-VISIBLE")
    assert sorted(f.subject for f in found) == sorted(g.bdf for g in m.gpus)


def test_no_cuda_at_all_without_the_variable_is_left_to_the_other_rules(tmp_path):
    m = _bundle(tmp_path, drop_cuda=False)
    m = dataclasses.replace(
        m, cuda_devices=(), gpus=tuple(dataclasses.replace(g, cuda_ordinal=None) for g in m.gpus)
    )
    assert not _codes(m, "GPU-NOT-VISIBLE")


def test_bundles_without_the_field_and_whole_nodes_stay_silent():
    with open_bundle(str(FIXTURE)) as source:
        m = inspect_source(source)
    assert m.cuda_visible_devices is None
    assert not _codes(m, "GPU-NOT-VISIBLE") and not _codes(m, "GPU-NVLINK-FEWER")


def test_a_hostile_visible_devices_value_is_dropped_with_the_reason(tmp_path):
    m = _bundle(tmp_path, visible="\x1b[31m0\x1b[0m")
    assert m.cuda_visible_devices is None and "cuda.visible_devices" in m.unknown


def test_a_live_source_records_the_variable_whatever_cuda_says(monkeypatch):
    monkeypatch.setattr(bundle_mod, "_live_cuda", lambda: {"status": "unavailable", "reason": "x"})
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-1b2c3d4e-0000-0000-0000-000000000000,1")
    assert bundle_mod.LiveSource().cuda()["visible_devices"].startswith("GPU-1b2c")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert bundle_mod.LiveSource().cuda()["visible_devices"] is None


def _links(n_active: int, n_inactive: int = 0) -> tuple[NvLink, ...]:
    return tuple(NvLink(link=i, active=i < n_active, version=4) for i in range(n_active + n_inactive))


def _with_links(m: MachineInfo, *per_gpu: tuple[NvLink, ...]) -> MachineInfo:
    return dataclasses.replace(
        m, gpus=tuple(dataclasses.replace(g, nvlinks=links) for g, links in zip(m.gpus, per_gpu, strict=True))
    )


@pytest.fixture(scope="module")
def node() -> MachineInfo:
    with open_bundle(str(FIXTURE)) as source:
        return inspect_source(source)


def test_a_gpu_with_fewer_links_than_its_siblings_is_named(node):
    m = _with_links(node, _links(18), _links(18), _links(18), _links(16))
    (f,) = _codes(m, "GPU-NVLINK-FEWER")
    assert f.subject == LAST and "16 active NVLinks" in f.title and "have 18" in f.title
    assert f.severity is Severity.WARN and "nvidia-smi" in f.reference + f.advice


def test_links_listed_inactive_on_one_gpu_are_left_to_peer_nvlink_down(node):
    m = _with_links(node, _links(18), _links(18), _links(18), _links(16, 2))
    assert not _codes(m, "GPU-NVLINK-FEWER") and _codes(m, "PEER-NVLINK-DOWN")


def test_a_gpu_behind_siblings_that_also_miss_links_is_still_named(node):
    m = _with_links(node, _links(16, 2), _links(16, 2), _links(16, 2), _links(12, 6))
    (f,) = _codes(m, "GPU-NVLINK-FEWER")
    assert f.subject == LAST and "have 16" in f.title


def test_gpus_that_agree_are_silent(node):
    assert not _codes(_with_links(node, _links(18), _links(18), _links(18), _links(18)), "GPU-NVLINK-FEWER")
