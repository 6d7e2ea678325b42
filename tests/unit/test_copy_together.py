"""Every GPU at once: the ratio to the GPUs alone, and the row is no one GPU's (never judged as GPU 0)."""

from __future__ import annotations

import pytest

from gdrdiag.bench.copy_together import with_sum_alone
from gdrdiag.diagnose.node_rules import sibling_rows, split_by_gpu
from gdrdiag.model.params import COPY_MODE_TOGETHER, CopyParams
from gdrdiag.model.vocabulary import Direction, MemoryKind
from gdrdiag.pathmodel.rows import path_of
from tests.unit.diagnosis_scenarios import ok

MiB = 1 << 20


def alone(gpu, gbps, direction=Direction.H2D, size=256 * MiB):
    p = CopyParams(memory=MemoryKind.PINNED, direction=direction, mode="async", size_bytes=size, gpu=gpu)
    return ok(f"copy_{direction.value}_pinned", gbps, "GB/s", p)


def together(gbps, n, direction=Direction.H2D, size=256 * MiB):
    p = CopyParams(
        memory=MemoryKind.PINNED, direction=direction, mode=COPY_MODE_TOGETHER, size_bytes=size, streams=n
    )
    return ok(f"copy_{direction.value}_pinned_together", gbps, "GB/s", p)


def test_the_ratio_is_the_total_over_the_sum_of_the_gpus_alone():
    rows = [alone(0, 55.0), alone(1, 54.0), alone(2, 56.0), together(110.0, 3)]
    out = with_sum_alone(rows)
    assert out[-1].metrics.ratio_to_sum_alone == pytest.approx(110.0 / 165.0)
    assert out[:3] == rows[:3]


def test_a_gpu_missing_its_alone_row_leaves_the_ratio_unknown():
    out = with_sum_alone([alone(0, 55.0), together(80.0, 2)])
    assert out[-1].metrics.ratio_to_sum_alone is None
    other_size = with_sum_alone(
        [alone(0, 55.0, size=64 * MiB), alone(1, 55.0, size=64 * MiB), together(80.0, 2)]
    )
    assert other_size[-1].metrics.ratio_to_sum_alone is None


def test_the_together_row_is_no_one_gpus():
    t = together(110.0, 3)
    path, reason = path_of(t)
    assert path is None and "every GPU copying at once" in reason
    rows = [alone(0, 55.0), alone(1, 54.0), alone(2, 56.0), t]
    assert all(len(r.by_gpu) == 3 for r in sibling_rows(rows))
    assert sum(len(s.results) for s in split_by_gpu(rows, ())) == 3
