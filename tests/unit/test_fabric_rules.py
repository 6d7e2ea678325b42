"""NVSwitch fabric registration per GPU: read from NVML, kept on GpuInfo, judged by the inventory rules.

The machine is the 8-GPU fixture (tests/fixtures/machines/g_8gpu_8nic_two_odd), copied and given the
fabric facts a DGX H100 would record in facts/nvml.json: every GPU registered in clique 7 of one
cluster, then one GPU edited per case (not started, in progress, an error status, another clique).
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from gdrdiag.diagnose.machine import diagnose_machine
from gdrdiag.hw import nvml as nvml_mod
from gdrdiag.hw.bundle import open_bundle
from gdrdiag.inspect.collect import inspect_source
from gdrdiag.model.findings import Severity
from gdrdiag.model.machine import FabricState, MachineInfo
from gdrdiag.model.report import Report
from gdrdiag.render.machine_table import render_peer_matrix

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
NODE = FIXTURES / "machines" / "g_8gpu_8nic_two_odd"
CLUSTER = "6f1c2a3b-0000-4000-8000-00000000beef"
REGISTERED = {"state": 3, "status": 0, "status_name": "SUCCESS", "cluster_uuid": CLUSTER, "clique_id": 7}


def _node(tmp_path: Path, edit: dict[int, dict] | None = None, base: dict | None = REGISTERED) -> MachineInfo:
    """The fixture with each GPU's fabric facts ``base``, edited per GPU index (0-7, CUDA's order)."""
    root = tmp_path / "node"
    shutil.copytree(NODE, root, symlinks=True)
    path = root / "facts" / "nvml.json"
    nvml = json.loads(path.read_text())
    for i, bdf in enumerate(sorted(nvml["gpus"])):
        if base is not None:
            nvml["gpus"][bdf]["fabric"] = {**base, **(edit or {}).get(i, {})}
    path.write_text(json.dumps(nvml))
    with open_bundle(str(root)) as source:
        return inspect_source(source)


def _found(m: MachineInfo, code: str):
    return [f for f in diagnose_machine(m) if f.code == code]


def _bdf(m: MachineInfo, ordinal: int) -> str:
    return next(g.bdf for g in m.gpus if g.cuda_ordinal == ordinal)


def test_a_fully_registered_node_is_silent_and_the_facts_are_typed(tmp_path):
    m = _node(tmp_path)
    assert {g.fabric.state for g in m.gpus} == {FabricState.COMPLETED}
    assert {(g.fabric.cluster_uuid, g.fabric.clique_id, g.fabric.status) for g in m.gpus} == {(CLUSTER, 7, 0)}
    assert _found(m, "GPU-FABRIC-NOT-READY") == [] and _found(m, "GPU-FABRIC-SPLIT") == []
    text = render_peer_matrix(m, None)
    assert f"GPU 0 ({_bdf(m, 0)}) NVLinks: none; NVSwitch fabric: completed, clique 7" in text


@pytest.mark.parametrize(
    "edit, words",
    [
        ({"state": 1}, "NOT_STARTED"),
        ({"state": 2}, "IN_PROGRESS"),
        ({"status": 27, "status_name": "ERROR_NOT_READY"}, "error ERROR_NOT_READY"),
    ],
)
def test_the_one_unregistered_gpu_is_named_by_ordinal_and_address(tmp_path, edit, words):
    m = _node(tmp_path, {3: edit})
    (f,) = _found(m, "GPU-FABRIC-NOT-READY")
    bdf = _bdf(m, 3)
    assert f.severity is Severity.WARN and f.subject == bdf
    assert f.title.startswith(f"GPU 3 ({bdf})") and words in f.title
    assert "nvidia-fabricmanager" in f.advice and "driver" in f.advice
    assert "fabric-manager-user-guide" in f.reference
    assert not any(_bdf(m, o) in " ".join((f.title, *f.evidence)) for o in range(8) if o != 3)


def test_fabric_manager_down_names_every_gpu(tmp_path):
    m = _node(tmp_path, base={"state": 1, "status": 0, "cluster_uuid": None, "clique_id": 0})
    assert sorted(f.subject for f in _found(m, "GPU-FABRIC-NOT-READY")) == sorted(g.bdf for g in m.gpus)


def test_a_status_is_read_only_once_registration_completed(tmp_path):
    """NVML: the status "must be checked only if state returns complete"."""
    m = _node(tmp_path, {2: {"state": 2, "status": 27}})
    (f,) = _found(m, "GPU-FABRIC-NOT-READY")
    assert "IN_PROGRESS" in f.title and "error" not in f.title


def test_a_node_without_nvswitch_is_silent(tmp_path):
    m = _node(tmp_path, base={"state": 0, "status": 3, "cluster_uuid": None, "clique_id": 0})
    assert {g.fabric.applies for g in m.gpus} == {False}
    assert _found(m, "GPU-FABRIC-NOT-READY") == [] and _found(m, "GPU-FABRIC-SPLIT") == []


def test_a_gpu_in_another_clique_is_named_and_no_other(tmp_path):
    m = _node(tmp_path, {6: {"clique_id": 9}})
    (f,) = _found(m, "GPU-FABRIC-SPLIT")
    assert f.subject == _bdf(m, 6) and f.title.startswith(f"GPU 6 ({_bdf(m, 6)})")
    assert "clique 9" in f.title and "other 7 registered GPU(s) are in clique 7" in f.title
    other_cluster = _node(tmp_path / "b", {1: {"cluster_uuid": CLUSTER.replace("beef", "cafe")}})
    assert [f.subject for f in _found(other_cluster, "GPU-FABRIC-SPLIT")] == [_bdf(other_cluster, 1)]


def test_a_bundle_without_fabric_facts_reads_not_readable(tmp_path):
    m = _node(tmp_path, base=None)
    assert all(g.fabric is None and "nvml.fabric" in g.unknown for g in m.gpus)
    assert _found(m, "GPU-FABRIC-NOT-READY") == []


@pytest.mark.parametrize("bad", ["completed", {"state": 9}, {"state": True}, {"state": 3, "clique_id": "x"}])
def test_a_hostile_fabric_record_is_unknown_or_its_bad_field_dropped(tmp_path, bad):
    root = tmp_path / "node"
    shutil.copytree(NODE, root, symlinks=True)
    path = root / "facts" / "nvml.json"
    nvml = json.loads(path.read_text())
    for bdf in nvml["gpus"]:
        nvml["gpus"][bdf]["fabric"] = bad
    path.write_text(json.dumps(nvml))
    with open_bundle(str(root)) as source:
        m = inspect_source(source)
    for g in m.gpus:
        assert g.fabric is None or (g.fabric.state is FabricState.COMPLETED and g.fabric.clique_id is None)


def test_a_report_with_fabric_round_trips_and_an_old_report_without_it_loads(tmp_path):
    m = _node(tmp_path, {4: {"state": 2}})
    report = Report(tool_version="t", created_utc="2026-11-28T00:00:00Z", command="t", machine=m)
    again = Report.from_json(report.to_json())
    assert again.machine.gpus == m.gpus
    old = gzip.decompress((FIXTURES / "reports" / "node" / "h200x4-quick-a.json.gz").read_bytes()).decode()
    assert '"fabric"' not in old
    loaded = Report.from_json(old)
    assert len(loaded.machine.gpus) == 4 and all(g.fabric is None for g in loaded.machine.gpus)


class _FakeNvml:
    """The few NVML calls fabric_facts makes, as cuda.bindings.nvml 13.5 shapes them."""

    class Return(int):
        @property
        def name(self):
            return {0: "SUCCESS", 27: "ERROR_NOT_READY"}[int(self)]

    def __init__(self, v=None, old=None):
        if v is not None:
            self.device_get_gpu_fabric_info_v = v
        if old is not None:
            self.device_get_gpu_fabric_info = old


def _info(**kw):
    base = dict(state=3, status=0, clique_id=7, cluster_uuid=list(range(16)), health_mask=0)
    return SimpleNamespace(**{**base, **kw})


def test_fabric_facts_reads_the_v_call_and_falls_back_to_the_old_one():
    facts = nvml_mod.fabric_facts(_FakeNvml(v=lambda h: _info(status=27)), object())
    assert facts["state"] == 3 and facts["status_name"] == "ERROR_NOT_READY" and facts["clique_id"] == 7
    assert facts["cluster_uuid"] == "00010203-0405-0607-0809-0a0b0c0d0e0f" and facts["health_mask"] == 0

    def unsupported(h):
        raise RuntimeError("NotSupportedError")

    old = nvml_mod.fabric_facts(_FakeNvml(v=unsupported, old=lambda h: _info(health_mask=None)), object())
    assert old["state"] == 3 and old["health_mask"] is None
    with pytest.raises(LookupError):
        nvml_mod.fabric_facts(_FakeNvml(), object())
    with pytest.raises(RuntimeError):
        nvml_mod.fabric_facts(_FakeNvml(v=unsupported), object())


# NVML health mask fields (nvml.h NVML_GPU_FABRIC_HEALTH_MASK_*): 1 = TRUE, 2 = FALSE per 2-bit field;
# configuration (bits 8-11) 1 = none wrong. A healthy H200 reads 0 (no field supported) on the
# device machine; a GB200-class GPU reports every field FALSE and configuration NONE.
ALL_CLEAR = 2 | 2 << 2 | 2 << 4 | 2 << 6 | 1 << 8


def test_a_health_mask_with_every_field_clear_or_unsupported_is_silent(tmp_path):
    for mask in (0, ALL_CLEAR):
        m = _node(tmp_path / str(mask), base={**REGISTERED, "health_mask": mask})
        assert _found(m, "GPU-FABRIC-UNHEALTHY") == []


def test_a_degraded_route_names_its_gpu_and_what_the_mask_says(tmp_path):
    degraded = (ALL_CLEAR & ~0x3) | 1  # bandwidth degraded
    unhealthy = (ALL_CLEAR & ~(0x3 << 4) & ~(0xF << 8)) | 1 << 4 | 5 << 8  # route unhealthy, few NVLinks
    m = _node(
        tmp_path,
        {3: {"health_mask": degraded}, 5: {"health_mask": unhealthy}},
        {**REGISTERED, "health_mask": ALL_CLEAR},
    )
    found = _found(m, "GPU-FABRIC-UNHEALTHY")
    assert [f.subject for f in found] == [_bdf(m, 3), _bdf(m, 5)]
    assert found[0].severity is Severity.WARN and found[0].title.endswith("bandwidth degraded")
    assert "route unhealthy" in found[1].title and "insufficient NVLinks" in found[1].title
    assert _found(m, "GPU-FABRIC-NOT-READY") == [] and _found(m, "GPU-FABRIC-SPLIT") == []
