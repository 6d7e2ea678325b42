"""Every copy, gather and MR row knows the CUDA ordinal it ran on, and is judged against that GPU.

A node whose GPU 1 sits on a narrower link than GPU 0: a copy on GPU 1 is expected at GPU 1's link,
never GPU 0's. Reports written before rows recorded their GPU (``gpu`` absent) read back unchanged
and are judged against GPU 0 as before; GPU 0 and "unset" are one case for ``compare``.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from gdrdiag.bench.copy import run_copy_bench
from gdrdiag.bench.copy_config import CopyBenchOptions
from gdrdiag.bench.mr_setup import uses_local_gpu
from gdrdiag.bench.runner import on_gpu
from gdrdiag.model.case import CaseId, run_settings
from gdrdiag.model.machine import MachineInfo, PcieLink
from gdrdiag.model.params import CopyParams, GatherParams, MrParams
from gdrdiag.model.path import Verdict
from gdrdiag.model.report import Report
from gdrdiag.model.results import BenchResult, Status
from gdrdiag.model.vocabulary import Direction, MemoryKind, RegPath
from gdrdiag.pathmodel.judge import judge
from gdrdiag.pathmodel.rows import path_of
from tests.unit.diagnosis_scenarios import machine, ok, report, write

MiB = 1 << 20

# PCIe Gen5 x8: half of Gen5 x16's 63.02 GB/s raw (PCIe Base Spec 5.0: 32 GT/s, 128b/130b).
GEN5_X8 = PcieLink(
    speed_gts=32.0,
    width=8,
    max_speed_gts=32.0,
    max_width=8,
    source="registers",
    raw_gbytes_per_s=31.51,
    max_raw_gbytes_per_s=31.51,
)


def two_gpus() -> MachineInfo:
    """An H100 node cut to two GPUs: GPU 0 at Gen5 x16, GPU 1 (another slot) trained and capable x8."""
    m = machine("baremetal_hgx")
    g0, g1 = m.gpus[0], m.gpus[1]
    assert g0.cuda_ordinal == 0 and g0.link is not None and g0.link.max_width == 16
    narrow = dataclasses.replace(g1, cuda_ordinal=1, link=GEN5_X8)
    return dataclasses.replace(m, gpus=(g0, narrow))


def _copy(gbytes: float, gpu, direction: Direction = Direction.H2D) -> BenchResult:
    key = f"copy_{direction.value}_pinned"
    p = CopyParams(memory=MemoryKind.PINNED, direction=direction, mode="async", size_bytes=256 * MiB, gpu=gpu)
    return ok(key, gbytes, "GB/s", p)


def test_a_copy_on_gpu_1_is_judged_against_gpu_1s_narrower_link():
    m = two_gpus()
    narrow_bdf = m.gpus[1].bdf
    # 28 GB/s: what Gen5 x8 carries (31.5 raw x ~0.92), half of what GPU 0's x16 would allow
    h2d, d2h = judge(report(m, [_copy(28.0, 1), _copy(28.5, 1, Direction.D2H)]).results, m)
    for j in (h2d, d2h):
        assert j.verdict is Verdict.OK, j
        assert 27.0 < j.expected_gbytes_per_s < 30.0
        assert narrow_bdf in j.bound and "x8" in j.bound


def test_the_same_copy_without_its_gpu_is_judged_against_gpu_0_as_before():
    m = two_gpus()
    (j,) = judge(report(m, [_copy(28.0, None)]).results, m)
    assert j.verdict is Verdict.LOST and j.expected_gbytes_per_s > 55
    assert m.gpus[0].bdf in j.bound and "x16" in j.bound


def test_gather_and_mr_rows_take_their_gpu_from_params():
    gather = ok(
        "gather_warp", 20.0, "GB/s", GatherParams(kernel="warp", record_bytes=256, slots=1 << 20, gpu=1)
    )
    reference = ok("gather_ce_reference", 28.0, "GB/s", GatherParams(copy_bytes=64 * MiB, gpu=1))
    mr = dataclasses.replace(write("device", 200.0, False))
    mr = dataclasses.replace(mr, params=dataclasses.replace(mr.params, gpu=1))
    for r in (gather, reference, mr):
        path, why = path_of(r, {})
        assert path is not None, why
        assert path.gpu == 1
        assert 1 in (path.source.index, path.destination.index)
    old, _ = path_of(write("device", 200.0, False))
    assert old is not None and old.gpu == 0 and old.destination.index == 0


def test_gpu_0_and_unset_are_one_case_other_gpus_are_not():
    unset, zero, one = (_copy(28.0, g) for g in (None, 0, 1))
    assert CaseId.of(unset) == CaseId.of(zero)
    assert CaseId.of(one) != CaseId.of(zero) and "gpu=1" in CaseId.of(one).label
    assert "gpu" not in run_settings(zero)  # identity, never shown as a differing run setting


def test_a_report_without_the_field_reads_back_unchanged():
    rep = report(machine("baremetal_hgx"), [_copy(55.0, None)])
    doc = json.loads(rep.to_json())
    params = doc["results"][0]["params"]
    params.pop("gpu", None)  # as written before rows recorded their GPU
    back = Report.from_json(json.dumps(doc))
    assert back.results[0].params.gpu is None
    assert Report.from_json(back.to_json()) == back
    on_one = report(machine("baremetal_hgx"), [_copy(55.0, 1)])
    assert Report.from_json(on_one.to_json()).results[0].params.gpu == 1


def test_on_gpu_stamps_copy_gather_and_gpu_memory_mr_rows_only():
    host_mr = write("pinned", 396.0, False)
    gpu_mr = write("device", 200.0, False)
    client_host_src = BenchResult(
        "rdma_write_device_mr",
        Status.OK,
        params=MrParams(
            memory=MemoryKind.DEVICE, src_memory=MemoryKind.PINNED, reg_path=RegPath.MR, role="client"
        ),
    )
    server_gpu = BenchResult(
        "rdma_write_device_mr",
        Status.OK,
        params=MrParams(memory=MemoryKind.DEVICE, reg_path=RegPath.MR, role="server"),
    )
    copy = _copy(28.0, None)
    already = _copy(28.0, 3)
    out = on_gpu([copy, already], 1) + on_gpu(
        [host_mr, gpu_mr, client_host_src, server_gpu], 2, uses_local_gpu
    )
    assert [r.params.gpu for r in out] == [1, 3, None, 2, None, 2]


def test_copy_bench_without_a_gpu_names_the_device_it_was_asked_for(monkeypatch):
    from gdrdiag.bench import copy as copy_mod
    from gdrdiag.errors import NotSupported

    def no_driver() -> None:
        raise NotSupported("no CUDA driver")

    monkeypatch.setattr(copy_mod.cuda, "init", no_driver)
    results = run_copy_bench(CopyBenchOptions(device=1, parts=("sweep",)))
    assert results and all(r.status is Status.WAIVED and r.params.gpu == 1 for r in results)


@pytest.mark.parametrize("gpu", [None, 0, 1])
def test_copy_rows_of_each_gpu_form_their_own_sweep(gpu):
    path, _ = path_of(_copy(28.0, gpu))
    assert path is not None and path.family[-1] == (gpu or 0)
