"""mr-bench on a real GPU with the soft provider: every memory kind registers, RDMA WRITE lands right.

Run on the GPU machine: ``PYTHONPATH=. python3 -m pytest -q tests/hw/test_mr_gpu.py``.
No NIC and no pyverbs are needed: the soft provider moves the bytes with cuMemcpy/memmove
through the same MR/QP/CQ interface, so this checks the CUDA side of every registration path
(allocation, 64 KiB alignment, SYNC_MEMOPS, dma-buf export) and the payload check for every kind.
"""

from __future__ import annotations

import contextlib

import pytest
from typer.testing import CliRunner

from gdrdiag.bench import mr
from gdrdiag.errors import NotSupported
from gdrdiag.hw import cuda, verbs_providers, verbs_soft
from gdrdiag.hw import verbs as v
from gdrdiag.hw.memory import GPU_PAGE, MemoryKind, first_mismatch, pattern
from gdrdiag.model.results import Status
from gdrdiag.model.vocabulary import RelaxedOrdering

pytestmark = pytest.mark.gpu
KINDS = list(MemoryKind)
RW = v.ACCESS_LOCAL_WRITE | v.ACCESS_REMOTE_WRITE


@pytest.fixture(autouse=True)
def no_leaks():
    yield
    assert verbs_soft.live_objects() == {}


@pytest.fixture
def gpus():
    scope = mr.GpuScope(0, True)
    assert scope.ctx is not None, scope.reason
    yield scope
    scope.close()


def _write_once(gpus, src_kind, dst_kind, reg_path="mr", nbytes=256 * 1024 + 13, offset=3, ro=False):
    access = RW | (v.ACCESS_RELAXED_ORDERING if ro else 0)
    with contextlib.ExitStack() as stack:
        dev = stack.enter_context(verbs_providers.open_device("soft"))
        pd = stack.enter_context(dev.alloc_pd())
        src = mr.allocate_region(stack, pd, gpus, src_kind, "mr", nbytes, access, offset)
        dst = mr.allocate_region(stack, pd, gpus, dst_kind, reg_path, nbytes, access, offset)
        assert src.buffer.ptr % GPU_PAGE == offset and dst.buffer.ptr % GPU_PAGE == offset
        cq = stack.enter_context(dev.create_cq(16))
        a = stack.enter_context(pd.create_rc_qp(cq, max_send_wr=8))
        b = stack.enter_context(pd.create_rc_qp(cq, max_send_wr=1))
        b.connect(a.info(), RW)
        a.connect(b.info(), v.ACCESS_LOCAL_WRITE)
        data = pattern(nbytes, seed=len(src_kind.value) * 7 + len(dst_kind.value))
        src.buffer.write(data)
        dst.buffer.fill(mr.POISON, nbytes)
        a.post_writes([v.WriteWR(1, src.addr(0), nbytes, src.mr.lkey, dst.addr(0), dst.mr.rkey, True)])
        (wc,) = cq.poll(4)
        assert wc.ok, v.CompletionError(wc)
        bad = first_mismatch(dst.buffer.read_array(nbytes), data)
        assert bad is None, f"{src_kind.value}->{dst_kind.value}: first bad byte {bad}"
        buffers = (src.buffer, dst.buffer)
        mrs = (src.mr, dst.mr)
    assert all(m.closed for m in mrs) and all(b.closed for b in buffers)


@pytest.mark.parametrize("kind", KINDS, ids=[k.value for k in KINDS])
def test_every_kind_registers_and_the_payload_lands(gpus, kind):
    _write_once(gpus, kind, kind)


@pytest.mark.parametrize("src", KINDS, ids=[k.value for k in KINDS])
@pytest.mark.parametrize("dst", KINDS, ids=[k.value for k in KINDS])
def test_payload_lands_across_kinds(gpus, src, dst):
    _write_once(gpus, src, dst, nbytes=64 * 1024 + 5, offset=0)


def test_relaxed_ordering_registration_of_device_memory(gpus):
    _write_once(gpus, MemoryKind.DEVICE, MemoryKind.DEVICE, ro=True)


def test_dmabuf_path_exports_device_memory(gpus):
    try:
        _write_once(gpus, MemoryKind.DEVICE, MemoryKind.DEVICE, reg_path="dmabuf", offset=4096 + 3)
    except NotSupported as exc:
        pytest.skip(f"dma-buf export not supported here: {exc.reason}")


def test_sync_memops_is_set_on_device_memory(gpus):
    drv = cuda.driver()
    with contextlib.ExitStack() as stack, verbs_providers.open_device("soft") as dev, dev.alloc_pd() as pd:
        reg = mr.allocate_region(stack, pd, gpus, MemoryKind.DEVICE, "mr", 4096, RW)
        value = cuda.call(
            cuda.driver().cuPointerGetAttribute,
            drv.CUpointer_attribute.CU_POINTER_ATTRIBUTE_SYNC_MEMOPS,
            reg.buffer.ptr,
        )
        assert bool(value)


def test_the_pipeline_over_every_kind_and_path_is_verified():
    free_before, _ = _free()
    cfg = mr.MrBenchConfig(
        provider="soft",
        kinds=tuple(MemoryKind),
        reg_paths=("mr", "dmabuf"),
        sizes=(1 << 20,),
        qps=2,
        iterations=64,
        repeats=2,
        ro=RelaxedOrdering.AB,
    )
    res = mr.run(cfg)
    by = {(r.params.memory, r.params.reg_path, r.params.relaxed_ordering): r for r in res}
    for kind in MemoryKind:
        for ro in (False, True):
            r = by[(kind.value, "mr", ro)]
            assert r.status is Status.OK and r.verified, (kind, r.reason)
    dm = by.get(("device", "dmabuf", False)) or by[("device", "dmabuf", None)]
    assert dm.status in (Status.OK, Status.WAIVED), dm.reason
    assert by[("managed", "mr", False)].params.landing == "host"
    assert by[("device", "mr", False)].params.landing == "gpu"
    free_after, _ = _free()
    assert free_after >= free_before - 64 * 1024 * 1024  # device memory went back


def test_latency_blocks_and_registration_cost_on_device_memory():
    cfg = mr.MrBenchConfig(
        provider="soft",
        kinds=(MemoryKind.DEVICE,),
        sizes=(64 * 1024,),
        iterations=100,
        repeats=1,
        blocks=256,
        reg_sizes=(4096, 1 << 20),
        reg_iterations=3,
    )
    for mode in ("latency", "blocks", "reg"):
        res = mr.run(cfg, mode=mode)
        assert res and all(r.status is Status.OK for r in res), [(r.key, r.reason) for r in res]


def test_cli_matrix_with_real_cuda_memory():
    from gdrdiag.cli import app

    res = CliRunner().invoke(
        app,
        ["mr-bench", "--provider", "soft", "--matrix", "-s", "256K", "-q", "2", "-n", "64", "--repeats", "1"],
    )
    assert res.exit_code == 0, res.output
    assert "SOFT PROVIDER" in res.output and "memory kind x registration path" in res.output
    for kind in MemoryKind:
        assert f"\n{kind.value} " in res.output


def _free():
    with cuda.GpuContext(0) as ctx:
        return ctx.free_memory()
