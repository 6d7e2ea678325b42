"""The C copy loop (native/copy_loop.c) on a real GPU: bytes land, timings are sane, errors name the call.

Run on the GPU machine after set-up (which builds build/native/libgdr_copy.so):
``.venv/bin/python -m pytest -q tests/hw/test_copy_native_gpu.py``.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from gdrdiag.bench import copy as copy_bench
from gdrdiag.hw import copy_native, cuda, memory
from gdrdiag.hw.memory import MemoryKind
from gdrdiag.model.results import Status

pytestmark = pytest.mark.gpu
BLOCK = 4096
COUNT = 256
N = BLOCK * COUNT


@pytest.fixture(scope="module", autouse=True)
def _library():
    loaded, why = copy_native.availability()
    if loaded is None:
        pytest.skip(why)


@pytest.fixture
def rig():
    with cuda.GpuContext(0) as gpu, cuda.Stream() as stream:
        with (
            memory.allocate(MemoryKind.PINNED, N, alignment=65536, gpu=gpu) as host,
            memory.allocate(MemoryKind.DEVICE, N, alignment=65536, gpu=gpu) as dev,
        ):
            data = memory.pattern(N, seed=11)
            host.write(data)
            dev.fill(0xA5)
            yield dict(gpu=gpu, stream=stream, host=host, dev=dev, data=data)


def _landed(rig) -> bool:
    return bool(np.array_equal(rig["dev"].read_array(N), rig["data"]))


def test_driver_loads_and_reports_its_version():
    _, version = copy_native.driver()
    assert version >= 11000


@pytest.mark.parametrize("method", [copy_native.METHOD_HTOD, copy_native.METHOD_ANY])
def test_one_call_per_block_from_c_moves_every_byte(rig, method):
    t = copy_native.per_block(
        stream=rig["stream"].handle,
        dst=rig["dev"].ptr,
        src=rig["host"].ptr,
        block=BLOCK,
        count=COUNT,
        method=method,
        sync=True,
    )
    assert t.calls == COUNT
    assert 0 < t.issue_seconds <= t.total_seconds < 10
    assert 0 < t.issue_us_per_call < 1000
    assert _landed(rig)


def test_context_is_pushed_for_a_thread_without_one(rig):
    out: dict = {}

    def worker():
        try:
            out["t"] = copy_native.per_block(
                stream=rig["stream"].handle,
                dst=rig["dev"].ptr,
                src=rig["host"].ptr,
                block=BLOCK,
                count=COUNT,
                context=rig["gpu"].handle,
                sync=True,
            )
        except Exception as exc:  # reported below
            out["exc"] = exc

    th = threading.Thread(target=worker)
    th.start()
    th.join(30)
    assert "exc" not in out, out.get("exc")
    assert out["t"].calls == COUNT and _landed(rig)


def test_batched_copy_from_c_moves_every_byte_or_says_why(rig):
    why = copy_native.batch_supported()
    if why is not None:
        pytest.skip(why)
    t = copy_native.batch(
        stream=rig["stream"].handle,
        dst=rig["dev"].ptr,
        src=rig["host"].ptr,
        block=BLOCK,
        count=COUNT,
        sync=True,
    )
    assert t.calls == 1 and t.total_seconds >= t.issue_seconds > 0
    assert _landed(rig)


def test_batched_copy_from_python_through_ctypes_moves_every_byte(rig):
    """hw/memcpy_batch.py on the real driver: blocks in reverse order, the C loop's entry point."""
    from gdrdiag.errors import NotSupported
    from gdrdiag.hw import memcpy_batch

    order = list(range(COUNT))[::-1]
    try:
        batch = memcpy_batch.BatchCopy(
            [rig["dev"].ptr + i * BLOCK for i in order],
            [rig["host"].ptr + i * BLOCK for i in order],
            [BLOCK] * COUNT,
        )
    except NotSupported as exc:
        pytest.skip(exc.reason)
    assert batch.entry.abi == copy_native.batch_abi()
    seconds = batch.issue(int(rig["stream"].handle))
    rig["stream"].synchronize()
    assert 0 < seconds < 1
    assert _landed(rig)


def test_copy_bench_block_sweep_shows_c_beside_python():
    opts = copy_bench.CopyBenchOptions(
        parts=("blocks",), block_sizes=(4096, 65536), block_count=500, iterations=3, reference=False
    )
    results = copy_bench.run_copy_bench(opts)
    by_key: dict = {}
    for r in results:
        by_key.setdefault(r.key, []).append(r)
    for key in ("copy_blocks_per_call", "copy_blocks_per_call_c"):
        rows = by_key[key]
        assert all(r.status is Status.OK and r.verified for r in rows), rows
        assert all(r.metrics.issue_us_per_call > 0 and r.metrics.us_per_block > 0 for r in rows)
    for key in ("copy_blocks_batched", "copy_blocks_batched_c", "copy_blocks_batched_binding"):
        for r in by_key[key]:
            assert r.status in (Status.OK, Status.WAIVED), r
            if r.status is Status.OK:
                assert r.verified and r.metrics.issue_us_per_call > 0
    # The Python row and the C row make the same driver call (the entry point is in both descriptions).
    py, c = by_key["copy_blocks_batched"][0], by_key["copy_blocks_batched_c"][0]
    if py.status is Status.OK and c.status is Status.OK:
        entry = "cuMemcpyBatchAsync_v2" if copy_native.batch_abi() == 13000 else "cuMemcpyBatchAsync"
        assert f"one {entry} for all" in py.description and f"one {entry} for all" in c.description
    (summary,) = by_key["copy_blocks_summary"]
    # The summary covers the C rows: a half-bandwidth size where they reach half the coalesced rate,
    # unknown (None, never a made-up size) where no measured block size gets there.
    half = summary.metrics.half_bandwidth_block_bytes_per_call_c
    if half is None:
        assert all(r.metrics.ratio_to_coalesced < 0.5 for r in by_key["copy_blocks_per_call_c"])
    else:
        assert min(r.params.block_bytes for r in by_key["copy_blocks_per_call_c"]) <= half


# The error path (a failing call -> HardwareError naming it, the block index) is tested against a
# stand-in driver in tests/unit/test_copy_native_fake_driver.py: provoking a copy-engine fault on a
# real GPU could poison the context for every GPU test after this one.
