"""Buffers of every memory kind gdrdiag measures, with one read/write interface.

Kinds and the driver call behind each (CUDA driver API reference, "Memory Management"):

==============  ==========================================  ==================================
kind            allocated by                                where the bytes live
==============  ==========================================  ==================================
device          cuMemAlloc                                  GPU memory
managed         cuMemAllocManaged(CU_MEM_ATTACH_GLOBAL)     migrates; host DRAM until the GPU
                                                            touches it
pinned          cuMemHostAlloc(PORTABLE | DEVICEMAP)        host DRAM, page-locked, GPU-mapped
pinned-wc       cuMemHostAlloc(... | WRITECOMBINED)         host DRAM, page-locked, write-
                                                            combined (not snooped; slow CPU reads)
registered      posix_memalign + cuMemHostRegister          host DRAM, page-locked after the fact
                (PORTABLE | DEVICEMAP)
pageable        posix_memalign                              host DRAM, pageable
==============  ==========================================  ==================================

Every buffer has an explicit ``alignment`` and start ``offset`` (the usable range starts
``offset`` bytes after an ``alignment``-aligned address), because alignment sweeps and RDMA
registration (64 KiB GPU pages) need to control both. ``write``/``read``/``fill`` work for
every kind, so one payload check covers them all. Buffers are context managers with an
idempotent ``close()``; a ``weakref.finalize`` is the last safety net.
"""

from __future__ import annotations

import ctypes
import os
import weakref
from dataclasses import dataclass
from typing import Any, Optional

from gdrdiag.errors import HardwareError, NotSupported, UserInputError
from gdrdiag.hw import cuda
from gdrdiag.model.vocabulary import MemoryKind
from gdrdiag.model.words import parse_memory_kind  # noqa: F401 - the old home

_libc = ctypes.CDLL(None, use_errno=True)
_libc.posix_memalign.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_size_t]
_libc.posix_memalign.restype = ctypes.c_int
_libc.free.argtypes = [ctypes.c_void_p]
_libc.free.restype = None

GPU_PAGE = 64 * 1024  # GPUDirect RDMA pins GPU memory in 64 KiB pages (NVIDIA GPUDirect RDMA guide).
HOST_PAGE = os.sysconf("SC_PAGE_SIZE")


def host_available_bytes() -> int:
    """Physical memory the kernel reports as available (sysconf, no /proc parsing)."""
    return os.sysconf("SC_AVPHYS_PAGES") * HOST_PAGE


def check_fits(device_bytes: int, host_bytes: int, gpu: Optional[cuda.GpuContext]) -> None:
    """Refuse a run whose buffers *together* exceed what is free, before any is allocated.

    Each Buffer checks its own size, but a run allocates several: checked one at a time, the
    first ones are allocated (and a pinned table filled) before a later one fails, which on an
    80-GB GPU beside 128 GiB of host memory took minutes and ended in the OOM killer.
    Pinned memory from cuMemHostAlloc is not charged to RLIMIT_MEMLOCK (the driver pins it
    itself), so available physical memory is the host limit here; ibv_reg_mr's memlock limit is
    checked where memory regions are registered (hw/verbs_pyverbs.py).
    """
    if device_bytes > 0 and gpu is not None:
        free, _total = gpu.free_memory()
        if device_bytes > free:
            raise UserInputError(
                f"this run needs {device_bytes} bytes of device memory but only {free} are free on "
                f"GPU {gpu.ordinal}: use fewer records or a smaller record size"
            )
    if host_bytes > 0 and host_bytes > host_available_bytes():
        raise UserInputError(
            f"this run needs {host_bytes} bytes of pinned host memory but only "
            f"{host_available_bytes()} are available: use fewer slots or a smaller record size"
        )


def _align_up(value: int, alignment: int) -> int:
    return (value + alignment - 1) // alignment * alignment


@dataclass
class _Allocation:
    """The raw allocation behind a Buffer; freed exactly once by ``release``."""

    kind: MemoryKind
    raw: int
    raw_size: int
    registered: bool = False
    freed: bool = False

    def release(self) -> None:
        if self.freed:
            return
        self.freed = True
        drv_calls = []
        if self.kind in (MemoryKind.DEVICE, MemoryKind.MANAGED):
            drv_calls.append((cuda.driver().cuMemFree, self.raw))
        elif self.kind in (MemoryKind.PINNED, MemoryKind.PINNED_WC):
            drv_calls.append((cuda.driver().cuMemFreeHost, self.raw))
        elif self.kind is MemoryKind.REGISTERED and self.registered:
            drv_calls.append((cuda.driver().cuMemHostUnregister, self.raw))
        for fn, arg in drv_calls:
            cuda.call(fn, arg)
        if self.kind in (MemoryKind.REGISTERED, MemoryKind.PAGEABLE):
            _libc.free(self.raw)


def _settle() -> None:
    """Wait until a pattern write or poison fill into GPU memory has landed.

    Both are issued on the legacy default stream, and neither is ordered with the benches' streams,
    which are created non-blocking: cuMemsetD8 into device memory is asynchronous with respect to the
    host, and cuMemcpyHtoD from pageable memory may return before the DMA to the device completes
    (CUDA driver API, "API synchronization behavior",
    https://docs.nvidia.com/cuda/cuda-driver-api/api-sync-behavior.html). On an idle GPU they finish
    first by luck; on a GPU another process keeps busy they landed after the timed copies had begun,
    and payload checks failed on bytes that were right. Synchronising the current context settles them.
    """
    cuda.call(cuda.driver().cuCtxSynchronize)


class Buffer:
    """``size`` usable bytes of one memory kind; see the module docstring.

    ``ptr`` is the address to hand to a kernel, a copy or an RDMA registration: the device
    pointer for device/managed memory (equal to its UVA), the host address otherwise.
    ``device_ptr`` is the GPU's mapping of the range (None for pageable memory).
    """

    def __init__(
        self,
        kind: MemoryKind,
        size: int,
        *,
        alignment: int = 4096,
        offset: int = 0,
        gpu: Optional[cuda.GpuContext] = None,
    ):
        if size <= 0:
            raise UserInputError(f"buffer size must be greater than 0, got {size}")
        if alignment <= 0 or alignment & (alignment - 1):
            raise UserInputError(f"alignment must be a power of two, got {alignment}")
        if offset < 0:
            raise UserInputError(f"offset must be >= 0, got {offset}")
        if kind.needs_gpu and gpu is None:
            raise NotSupported(f"{kind.value} memory needs a GPU context")
        self.kind = kind
        self.size = size
        self.alignment = alignment
        self.offset = offset
        self.gpu = gpu
        raw_size = size + alignment + offset
        self._check_capacity(raw_size)
        self._alloc = self._allocate(raw_size)
        self._finalizer = weakref.finalize(self, self._alloc.release)
        base = _align_up(self._alloc.raw, alignment) + offset
        self.ptr = base
        self.host_ptr: Optional[int] = base if kind.host_accessible else None
        self.device_ptr: Optional[int] = self._device_view(base)

    # -- allocation -------------------------------------------------------------------------
    def _check_capacity(self, raw_size: int) -> None:
        if self.kind in (MemoryKind.DEVICE,):
            free, _total = self.gpu.free_memory()  # type: ignore[union-attr]
            if raw_size > free:
                raise UserInputError(
                    f"{raw_size} bytes of device memory requested but only {free} are free on GPU "
                    f"{self.gpu.ordinal}"
                )  # type: ignore[union-attr]
        elif raw_size > host_available_bytes():
            raise UserInputError(
                f"{raw_size} bytes of {self.kind.value} host memory requested but only "
                f"{host_available_bytes()} are available"
            )

    def _allocate(self, raw_size: int) -> _Allocation:
        drv = cuda.driver() if self.kind.needs_gpu else None
        k = self.kind
        if k is MemoryKind.DEVICE:
            return _Allocation(k, int(cuda.call(cuda.driver().cuMemAlloc, raw_size)), raw_size)
        if k is MemoryKind.MANAGED:
            flags = int(drv.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL)
            return _Allocation(k, int(cuda.call(cuda.driver().cuMemAllocManaged, raw_size, flags)), raw_size)
        if k in (MemoryKind.PINNED, MemoryKind.PINNED_WC):
            flags = drv.CU_MEMHOSTALLOC_PORTABLE | drv.CU_MEMHOSTALLOC_DEVICEMAP
            if k is MemoryKind.PINNED_WC:
                flags |= drv.CU_MEMHOSTALLOC_WRITECOMBINED
            return _Allocation(k, int(cuda.call(cuda.driver().cuMemHostAlloc, raw_size, flags)), raw_size)
        # registered and pageable start as plain page-aligned host memory.
        out = ctypes.c_void_p()
        rc = _libc.posix_memalign(ctypes.byref(out), max(HOST_PAGE, 64), raw_size)
        if rc != 0 or not out.value:
            raise HardwareError("posix_memalign", rc, os.strerror(rc) if rc else "ENOMEM")
        alloc = _Allocation(k, int(out.value), raw_size)
        if k is MemoryKind.REGISTERED:
            flags = drv.CU_MEMHOSTREGISTER_PORTABLE | drv.CU_MEMHOSTREGISTER_DEVICEMAP
            try:
                cuda.call(cuda.driver().cuMemHostRegister, alloc.raw, raw_size, flags)
            except BaseException:
                alloc.release()
                raise
            alloc.registered = True
        return alloc

    def _device_view(self, base: int) -> Optional[int]:
        if self.kind in (MemoryKind.DEVICE, MemoryKind.MANAGED):
            return base
        if self.kind is MemoryKind.PAGEABLE:
            return None
        # Mapped host memory: with unified addressing the device pointer equals the host
        # pointer, but ask the driver rather than assume (CUDA Programming Guide, "Mapped Memory").
        return int(cuda.call(cuda.driver().cuMemHostGetDevicePointer, base, 0))

    # -- lifetime ---------------------------------------------------------------------------
    def close(self) -> None:
        """Free the memory (idempotent; safe on every exit path)."""
        self._finalizer()

    @property
    def closed(self) -> bool:
        """True once the memory has been freed."""
        return not self._finalizer.alive

    def __enter__(self) -> "Buffer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"Buffer({self.kind.value}, size={self.size}, ptr=0x{self.ptr:x}, "
            f"alignment={self.alignment}, offset={self.offset})"
        )

    # -- data access (one verification path for every kind) ----------------------------------
    def _check_range(self, nbytes: int, offset: int) -> None:
        if self.closed:
            raise UserInputError("buffer is closed")
        if offset < 0 or nbytes < 0 or offset + nbytes > self.size:
            raise UserInputError(f"range [{offset}, {offset + nbytes}) outside buffer of {self.size} bytes")

    def write(self, data: Any, offset: int = 0) -> None:
        """Copy ``data`` (bytes-like or numpy array) into the buffer at ``offset``."""
        import numpy as np

        src = np.ascontiguousarray(np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8))
        self._check_range(src.nbytes, offset)
        if self.kind.host_accessible and self.kind is not MemoryKind.MANAGED:
            ctypes.memmove(self.ptr + offset, src.ctypes.data, src.nbytes)
        else:
            cuda.call(cuda.driver().cuMemcpyHtoD, self.ptr + offset, src, src.nbytes)
            _settle()

    def read(self, nbytes: Optional[int] = None, offset: int = 0) -> bytes:
        """Return ``nbytes`` from ``offset`` as bytes (whole buffer by default)."""
        return self.read_array(nbytes, offset).tobytes()

    def read_array(self, nbytes: Optional[int] = None, offset: int = 0) -> Any:
        """Like :meth:`read` but returns a fresh numpy uint8 array (no extra copy)."""
        import numpy as np

        n = self.size - offset if nbytes is None else nbytes
        self._check_range(n, offset)
        out = np.empty(n, dtype=np.uint8)
        if self.kind.host_accessible and self.kind is not MemoryKind.MANAGED:
            ctypes.memmove(out.ctypes.data, self.ptr + offset, n)
        else:
            cuda.call(cuda.driver().cuMemcpyDtoH, out, self.ptr + offset, n)
        return out

    def fill(self, value: int, nbytes: Optional[int] = None, offset: int = 0) -> None:
        """Set bytes to ``value`` (used to poison destinations before a measured run)."""
        n = self.size - offset if nbytes is None else nbytes
        self._check_range(n, offset)
        if self.kind.host_accessible and self.kind is not MemoryKind.MANAGED:
            ctypes.memset(self.ptr + offset, value & 0xFF, n)
        else:
            cuda.call(cuda.driver().cuMemsetD8, self.ptr + offset, value & 0xFF, n)
            _settle()

    def prefer_host_residency(self) -> bool:
        """Ask the driver to keep managed pages in host DRAM, mapped for the GPU.

        Without this, the first GPU-side copy migrates managed pages to GPU memory and later
        "host-to-device" copies are really device-to-device (measured: ~2 TB/s on an H200).
        Uses CU_MEM_ADVISE_SET_PREFERRED_LOCATION = host and SET_ACCESSED_BY = this GPU (CUDA
        driver API, cuMemAdvise). Returns False where the driver refuses (then the report says
        the pages may have migrated).
        """
        if self.kind is not MemoryKind.MANAGED or self.gpu is None:
            return False
        drv = cuda.driver()
        host = drv.CUmemLocation()
        host.type = drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_HOST
        host.id = 0
        dev = drv.CUmemLocation()
        dev.type = drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
        dev.id = self.gpu.ordinal
        advice = drv.CUmem_advise
        try:
            cuda.call(
                cuda.driver().cuMemAdvise,
                self._alloc.raw,
                self._alloc.raw_size,
                advice.CU_MEM_ADVISE_SET_PREFERRED_LOCATION,
                host,
            )
            cuda.call(
                cuda.driver().cuMemAdvise,
                self._alloc.raw,
                self._alloc.raw_size,
                advice.CU_MEM_ADVISE_SET_ACCESSED_BY,
                dev,
            )
        except (HardwareError, TypeError):
            return False
        return True

    def set_sync_memops(self) -> None:
        """Set CU_POINTER_ATTRIBUTE_SYNC_MEMOPS on device memory.

        Required for GPUDirect RDMA targets so that CUDA memory operations on the range are
        synchronous with respect to RDMA (NVIDIA GPUDirect RDMA guide, "Synchronization and
        Memory Ordering").
        """
        if self.kind is not MemoryKind.DEVICE:
            return
        drv = cuda.driver()
        one = ctypes.c_uint(1)
        cuda.check(
            drv.cuPointerSetAttribute(
                one, drv.CUpointer_attribute.CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, self.ptr
            ),
            "cuPointerSetAttribute(SYNC_MEMOPS)",
        )


def allocate(
    kind: MemoryKind | str,
    size: int,
    *,
    alignment: int = 4096,
    offset: int = 0,
    gpu: Optional[cuda.GpuContext] = None,
) -> Buffer:
    """Allocate a :class:`Buffer`; ``kind`` may be a MemoryKind or its user-facing name."""
    k = kind if isinstance(kind, MemoryKind) else parse_memory_kind(kind)
    return Buffer(k, size, alignment=alignment, offset=offset, gpu=gpu)


def copy_bytes(dst: int, src: int, nbytes: int, *, gpu_involved: bool) -> None:
    """Copy ``nbytes`` between two addresses of any kind.

    Host-only copies use memmove. Anything touching GPU or managed memory goes through
    cuMemcpy, which infers the direction from the pointers under unified addressing (CUDA
    driver API, cuMemcpy) and is synchronous.
    """
    if nbytes <= 0:
        return
    if gpu_involved:
        cuda.call(cuda.driver().cuMemcpy, dst, src, nbytes)
    else:
        ctypes.memmove(dst, src, nbytes)


# Period of the payload pattern: a prime, so a block shifted by any power-of-two amount (a
# page, a cache line, a record) never lines up with itself.
_PATTERN_PERIOD = 65521


def pattern(nbytes: int, seed: int = 0x5A) -> Any:
    """A deterministic, position-dependent byte pattern (numpy uint8) for payload checks.

    Bytes depend on their index (modulo a prime period) and the seed, so shifted, truncated
    or stale data is caught. Built by tiling one period, so 1 GiB takes well under a second.
    """
    import numpy as np

    idx = np.arange(min(nbytes, _PATTERN_PERIOD), dtype=np.uint64)
    period = ((idx * np.uint64(2654435761) >> np.uint64(7)) + np.uint64(seed)).astype(np.uint8)
    if nbytes <= period.size:
        return period
    out = np.empty(nbytes, dtype=np.uint8)
    out[: period.size] = period
    filled = period.size
    while filled < nbytes:  # doubling copies keep every chunk a whole number of periods
        step = min(filled, nbytes - filled)
        out[filled : filled + step] = out[:step]
        filled += step
    return out


def first_mismatch(actual: Any, expected: Any) -> Optional[int]:
    """Index of the first differing byte of two uint8 arrays, or None when they match."""
    import numpy as np

    if actual.shape != expected.shape:
        return 0
    if np.array_equal(actual, expected):
        return None
    chunk = 1 << 24  # locate the first difference without a full-size temporary
    for start in range(0, actual.size, chunk):
        diff = np.flatnonzero(actual[start : start + chunk] != expected[start : start + chunk])
        if diff.size:
            return start + int(diff[0])
    return None
