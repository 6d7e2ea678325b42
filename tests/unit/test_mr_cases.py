"""mr-bench's case objects: keys and typed params agree, selection reads them, progress is their steps."""

from __future__ import annotations

import pytest

from gdrdiag.bench import mr
from gdrdiag.bench.mr_config import MrMode
from gdrdiag.bench.registry import mr_registry, mr_selection
from gdrdiag.cli.mr_bench_cmd import _Mode, planned_points
from gdrdiag.hw.memory import MemoryKind
from gdrdiag.model.params import MrParams
from gdrdiag.model.vocabulary import RegPath
from tests.conftest import gpu_absent_reason

PREFIXES = {
    MrMode.BW: "rdma_write",
    MrMode.LATENCY: "rdma_write_lat",
    MrMode.BLOCKS: "rdma_write_blocks",
    MrMode.REG: "mr_reg",
}
DEVICE, PINNED, PAGEABLE = MemoryKind.DEVICE, MemoryKind.PINNED, MemoryKind.PAGEABLE


def test_every_case_is_one_mode_kind_and_path_and_its_key_says_so():
    cases = [c for c in mr.CASES if c.key != "mr_loop_cost"]
    assert len(cases) == len(PREFIXES) * len(mr.MR_KINDS) * len(RegPath)
    assert len({c.key for c in mr.CASES}) == len(mr.CASES)
    for c in cases:
        kind, reg = mr.case_target(c)
        mode = MrMode(c.part)
        assert c.key == mr.case_key(PREFIXES[mode], kind, reg.value)
        assert isinstance(c.params, MrParams) and c.params.mode == (
            None if mode is MrMode.REG else mode.value
        )
    assert [c.key for c in mr.CASES][-1] == "mr_loop_cost"
    assert mr_registry().cases == mr.CASES


@pytest.mark.parametrize(
    ("selectors", "mode", "kinds", "regs"),
    [
        (["rdma_write_blocks_device_mr"], MrMode.BLOCKS, (DEVICE,), ("mr",)),
        (["rdma_write_lat_pinned"], MrMode.LATENCY, (PINNED, MemoryKind.PINNED_WC), ("mr", "dmabuf")),
        (["mr_reg_*_dmabuf"], MrMode.REG, mr.MR_KINDS, ("dmabuf",)),
        (
            ["rdma_write_pageable_mr", "rdma_write_device_dmabuf"],
            MrMode.BW,
            (DEVICE, PAGEABLE),
            ("dmabuf", "mr"),
        ),
        (["mr_loop_cost"], MrMode.LOOP, (), ()),
    ],
)
def test_a_selection_by_key_prefix_or_glob_sets_the_cases_typed_mode_kinds_and_paths(
    selectors, mode, kinds, regs
):
    chosen = mr_selection(mr_registry().select(selectors))
    assert chosen.mode is mode and chosen.kinds == kinds and chosen.reg_paths == regs


def _cfg(**kw) -> mr.MrBenchConfig:
    return mr.MrBenchConfig(provider="soft", **kw)


def _mode(**kw) -> _Mode:
    base = dict(
        latency=False, reg_cost=False, loop_cost=False, blocks=None, matrix=False, memory="", reg="mr"
    )
    base.update(kw)
    return _Mode(**base)


BOTH_KINDS = (DEVICE, PINNED, PAGEABLE)


@pytest.mark.parametrize(
    ("cfg", "mode", "with_gpu", "without_gpu"),
    [
        (_cfg(kinds=(DEVICE, PINNED)), _mode(), 2, 0),
        (_cfg(kinds=BOTH_KINDS, sizes=mr.SWEEP_SIZES), _mode(), 69, 23),  # -a
        (_cfg(kinds=BOTH_KINDS, reg_sizes=(4096, 65536)), _mode(reg_cost=True), 6, 2),  # --reg-cost
        (_cfg(kinds=BOTH_KINDS, blocks=64), _mode(blocks=64), 3 * mr.BLOCK_VARIANTS, mr.BLOCK_VARIANTS),
        (_cfg(kinds=BOTH_KINDS, sizes=(64, 4096), latency=True), _mode(latency=True), 6, 2),
        (
            _cfg(kinds=BOTH_KINDS, sizes=(64, 4096), only=frozenset({"rdma_write_lat_pageable_mr"})),
            _mode(latency=True),
            2,
            2,
        ),
        (_cfg(kinds=(DEVICE, PAGEABLE), sizes=(64, 4096)), _mode(), 4, 2),
    ],
)
def test_the_progress_total_is_the_sum_of_the_planned_cases_steps(cfg, mode, with_gpu, without_gpu):
    for gpu_here, total in ((True, with_gpu), (False, without_gpu)):
        plan = mr.MrPlan(cfg, mode.name, gpu_here)
        assert planned_points(cfg, mode, False, None, gpu_here=gpu_here) == total
        assert sum(c.steps(plan) for c in mr.planned_cases(plan)) == total
        assert mr_registry().steps(plan) == total


def test_runs_outside_the_cases_keep_their_own_totals():
    cfg = _cfg(kinds=(PAGEABLE,), repeats=4)
    assert planned_points(cfg, _mode(), True, None) is None  # --server: not known
    assert planned_points(cfg, _mode(), False, "host") == 4  # --connect: one per measured run
    assert planned_points(cfg, _mode(loop_cost=True), False, None) > 0


def test_the_run_order_is_the_options_order_of_kinds_and_paths():
    cfg = _cfg(kinds=(PAGEABLE, PINNED), reg_paths=("dmabuf", "mr"))
    keys = [c.key for c in mr.planned_cases(mr.MrPlan(cfg, MrMode.BW, waived_too=True))]
    assert keys == [
        "rdma_write_pageable_dmabuf",
        "rdma_write_pageable_mr",
        "rdma_write_pinned_dmabuf",
        "rdma_write_pinned_mr",
    ]
    # the progress plan leaves out what is WAIVED before its first step: dma-buf into host memory
    counted = [c.key for c in mr.planned_cases(mr.MrPlan(cfg, MrMode.BW))]
    assert counted == ["rdma_write_pageable_mr", "rdma_write_pinned_mr"]


@pytest.mark.parametrize(
    ("mode", "kw"),
    [
        (MrMode.BW, dict(sizes=(64, 4096))),
        (MrMode.BW, dict(sizes=(64, 4096), reg_paths=("dmabuf", "mr"))),  # dma-buf WAIVED, no step
        (MrMode.LATENCY, dict(sizes=(64, 4096), iterations=50, latency=True)),
        (MrMode.BLOCKS, dict(sizes=(256,), blocks=16, iterations=16)),
        (MrMode.REG, dict(reg_sizes=(4096, 65536), reg_iterations=2)),
    ],
)
def test_each_mode_steps_through_exactly_what_its_cases_count(mode, kw):
    """A soft run's progress labels: as many as the plan counted, each case's key in registry order."""
    gpu_here = gpu_absent_reason() is None
    base = dict(kinds=(PINNED, PAGEABLE), qps=1, iterations=64, repeats=1, timeout_s=5.0)
    cfg = _cfg(**{**base, **kw})
    labels: list[str] = []
    rows = mr.run(cfg, mode=mode, progress=labels.append)
    plan = mr.MrPlan(cfg, mode, gpu_here)
    assert len(labels) == mr.planned_steps(plan) > 0
    stepped = [c.key for c in mr.planned_cases(plan)]
    assert list(dict.fromkeys(label.split()[0] for label in labels)) == stepped
    assert {r.key for r in rows} >= set(stepped)
    # every named case gives its row, WAIVED ones included
    named = {c.key for c in mr.planned_cases(mr.MrPlan(cfg, mode, gpu_here, waived_too=True))}
    assert {r.key for r in rows} >= named
