"""CUDA layers on a real GPU: every memory kind, NVRTC images, release on every path."""

import pytest

from gdrdiag.errors import UserInputError
from gdrdiag.hw import cuda, memory, nvrtc
from gdrdiag.hw.memory import MemoryKind

pytestmark = pytest.mark.gpu


@pytest.fixture
def gpu():
    with cuda.GpuContext(0) as ctx:
        yield ctx


def test_device_facts_have_the_gpudirect_attributes():
    facts = cuda.device_facts(0)
    assert facts.multiprocessor_count > 0
    for name in ("GPU_DIRECT_RDMA_SUPPORTED", "DMA_BUF_SUPPORTED", "UNIFIED_ADDRESSING"):
        assert name in facts.attributes
    assert facts.pci_bus_id.count(":") == 2


@pytest.mark.parametrize("kind", list(MemoryKind))
@pytest.mark.parametrize("alignment,offset", [(4096, 0), (65536, 16), (128, 112)])
def test_every_kind_round_trips_with_alignment_and_offset(gpu, kind, alignment, offset):
    with memory.allocate(kind, 3 * 65536 + 7, alignment=alignment, offset=offset, gpu=gpu) as buf:
        assert buf.ptr % alignment == offset % alignment
        data = memory.pattern(buf.size, seed=kind.value.__len__())
        buf.write(data)
        assert memory.first_mismatch(buf.read_array(), data) is None
        buf.fill(0x3C, 100, 50)
        assert buf.read(100, 50) == b"\x3c" * 100
        assert (buf.device_ptr is None) == (kind is MemoryKind.PAGEABLE)
    assert buf.closed
    buf.close()  # idempotent


def test_device_memory_is_released(gpu):
    free_before, _ = gpu.free_memory()
    bufs = [memory.allocate("device", 256 << 20, gpu=gpu) for _ in range(4)]
    assert gpu.free_memory()[0] < free_before - (900 << 20)
    for b in bufs:
        b.close()
    assert gpu.free_memory()[0] > free_before - (64 << 20)


def test_larger_than_free_device_memory_is_a_user_error(gpu):
    free, _ = gpu.free_memory()
    with pytest.raises(UserInputError, match="free"):
        memory.allocate("device", free + (1 << 30), gpu=gpu)


def test_nvrtc_builds_a_cubin_for_this_gpu(gpu):
    image = nvrtc.compile_source("copy", gpu.arch, use_cache=False)
    assert image.kind == "cubin" and image.arch == gpu.arch
    with nvrtc.Module(image) as mod:
        assert mod.function("copy_blocks") is not None
