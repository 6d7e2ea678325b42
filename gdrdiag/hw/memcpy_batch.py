"""``cuMemcpyBatchAsync`` called straight into libcuda through ctypes, its arrays built once.

copy-bench times one batched call of thousands of blocks. Through cuda-bindings each call takes
Python lists (of ``CUdeviceptr`` objects and ints) and converts them to C arrays before the
driver runs; the C loop (native/copy_loop.c) hands the driver arrays it already has. To time the
driver's call, and the same call from Python and from C, this module builds the three arrays
and the attribute set once, as ctypes objects, and calls the entry point the C loop calls.

Which entry point: the one a program compiled against ``cuda.h`` gets on this driver. CUDA 13.0's
``cuda.h`` maps ``cuMemcpyBatchAsync`` to ``cuMemcpyBatchAsync_v2`` (no ``failIdx`` argument);
CUDA 12.8 and 12.9 declare ``cuMemcpyBatchAsync`` with ``size_t *failIdx`` before ``hStream``
(CUDA Driver API, Memory Management:
https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__MEM.html and, for 12.8,
https://docs.nvidia.com/cuda/archive/12.8.0/cuda-driver-api/group__CUDA__MEM.html). libcuda
exports both symbols. So: a 13.0+ driver -> ``cuMemcpyBatchAsync_v2``, a 12.8/12.9 driver ->
``cuMemcpyBatchAsync``; older -> :class:`NotSupported`. native/copy_loop.c picks the same way.
"""

from __future__ import annotations

import ctypes
import threading
import time
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from gdrdiag.errors import HardwareError, NotSupported, UserInputError
from gdrdiag.hw.cuda import explain

CUDA_SUCCESS = 0
CUDA_ERROR_NOT_SUPPORTED = 801  # cuda.h: cudaError_enum
# cuda.h, CUmemcpySrcAccessOrder: the source is read in stream order.
SRC_ACCESS_ORDER_STREAM = 0x1
ABI_12_8 = 12080  # cuMemcpyBatchAsync(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, hStream)
ABI_13_0 = 13000  # cuMemcpyBatchAsync_v2(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, hStream)


class MemLocation(ctypes.Structure):
    """``CUmemLocation`` (cuda.h): a location type and an id; type 0 = INVALID (no hint)."""

    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class MemcpyAttributes(ctypes.Structure):
    """``CUmemcpyAttributes_v1`` (cuda.h, CUDA 12.8+): 24 bytes, as cuda-bindings lays it out."""

    _fields_ = [
        ("srcAccessOrder", ctypes.c_int),
        ("srcLocHint", MemLocation),
        ("dstLocHint", MemLocation),
        ("flags", ctypes.c_uint),
    ]


_PTRS = ctypes.POINTER(ctypes.c_ulonglong)  # CUdeviceptr * (unsigned long long, the _v2 ABI)
_SIZES = ctypes.POINTER(ctypes.c_size_t)
_HEAD = [_PTRS, _PTRS, _SIZES, ctypes.c_size_t, ctypes.POINTER(MemcpyAttributes), _SIZES, ctypes.c_size_t]


@dataclass(frozen=True)
class BatchEntry:
    """The resolved entry point: its exported name, the ABI it follows and the driver's version."""

    function: Any  # the ctypes function, argtypes set for its ABI
    name: str
    abi: int
    driver_version: int
    error_name: Any  # cuGetErrorName


_lock = threading.Lock()
_cached: Optional[tuple[Optional[BatchEntry], str]] = None


def _resolve() -> tuple[Optional[BatchEntry], str]:
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError as exc:
        return None, f"cannot load the CUDA driver (libcuda.so.1): {exc}"
    version = ctypes.c_int(0)
    try:
        get_version = lib.cuDriverGetVersion
        error_name = lib.cuGetErrorName
    except AttributeError as exc:
        return None, f"libcuda.so.1 lacks a required entry point ({exc})"
    get_version.argtypes, get_version.restype = [ctypes.POINTER(ctypes.c_int)], ctypes.c_int
    error_name.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    error_name.restype = ctypes.c_int
    if get_version(ctypes.byref(version)) != CUDA_SUCCESS:
        return None, "cuDriverGetVersion failed"
    v = version.value
    for name, abi in (("cuMemcpyBatchAsync_v2", ABI_13_0), ("cuMemcpyBatchAsync", ABI_12_8)):
        if v < abi:
            continue
        fn = getattr(lib, name, None)
        if fn is None:
            continue
        fn.argtypes = _HEAD + ([_SIZES] if abi == ABI_12_8 else []) + [ctypes.c_void_p]
        fn.restype = ctypes.c_int
        return BatchEntry(fn, name, abi, v, error_name), f"{name} (CUDA {abi // 1000}.{abi % 1000 // 10} ABI)"
    return None, (
        f"cuMemcpyBatchAsync is not in this driver (version {v // 1000}.{v % 1000 // 10}; needs CUDA 12.8+)"
    )


def entry() -> BatchEntry:
    """The entry point for this driver, resolved once per process; NotSupported with the reason."""
    global _cached
    with _lock:
        if _cached is None:
            _cached = _resolve()
        found, why = _cached
    if found is None:
        raise NotSupported(why)
    return found


def _reset_for_tests() -> None:
    """Resolve again next time (tests swap the driver library)."""
    global _cached
    with _lock:
        _cached = None


class BatchCopy:
    """One batch of copies (block i: ``srcs[i]`` -> ``dsts[i]``, ``sizes[i]`` bytes), ready to issue.

    The arrays, one attribute set (source read in stream order, no location hints, no flags; the
    attribute set the C loop passes) and the argument tuple are built here, once: :meth:`issue`
    is one ctypes call into the driver.
    """

    def __init__(self, dsts: Sequence[int], srcs: Sequence[int], sizes: Sequence[int]) -> None:
        count = len(sizes)
        if not count or len(dsts) != count or len(srcs) != count:
            raise UserInputError("a batch needs as many destinations and sources as sizes, at least one")
        self.entry = entry()
        self.count = count
        self._dsts = (ctypes.c_ulonglong * count)(*dsts)
        self._srcs = (ctypes.c_ulonglong * count)(*srcs)
        self._sizes = (ctypes.c_size_t * count)(*sizes)
        self._attrs = MemcpyAttributes(srcAccessOrder=SRC_ACCESS_ORDER_STREAM)
        self._attr_idx = (ctypes.c_size_t * 1)(0)
        self._fail_idx = ctypes.c_size_t(0)
        head = (self._dsts, self._srcs, self._sizes, count, ctypes.byref(self._attrs), self._attr_idx, 1)
        self._args = head + ((ctypes.byref(self._fail_idx),) if self.entry.abi == ABI_12_8 else ())

    def issue(self, stream: int) -> float:
        """Queue the batch on ``stream`` (a CUstream as an int); host seconds spent in the driver call.

        A failing call raises HardwareError naming it (and, on the 12.8 ABI, the failing copy);
        CUDA_ERROR_NOT_SUPPORTED raises NotSupported.
        """
        fn = self.entry.function
        t0 = time.perf_counter()
        err = fn(*self._args, stream)
        seconds = time.perf_counter() - t0
        if err != CUDA_SUCCESS:
            self._raise(err)
        return seconds

    def _raise(self, err: int) -> None:
        name = ctypes.c_char_p()
        if self.entry.error_name(err, ctypes.byref(name)) != CUDA_SUCCESS or not name.value:
            label = "CUDA_ERROR_UNKNOWN"
        else:
            label = name.value.decode(errors="replace")
        call = self.entry.name
        if err == CUDA_ERROR_NOT_SUPPORTED:
            raise NotSupported(f"{call}: {label} on this driver")
        where = ""
        if self.entry.abi == ABI_12_8 and self._fail_idx.value < self.count:  # SIZE_MAX: no one copy
            where = f"; copy {self._fail_idx.value} failed"
        raise HardwareError(call, err, label, explain(label, f"a batch of {self.count} copies{where}"))
