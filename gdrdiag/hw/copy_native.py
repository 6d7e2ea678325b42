"""ctypes over ``native/copy_loop.c``: copy-bench's per-block copy loops issued from C.

copy-bench measures one ``cuMemcpyHtoDAsync`` per block from Python; this module issues the
same calls from a C loop (and one ``cuMemcpyBatchAsync``), so the per-call cost of the CUDA
driver can be told apart from the cost of the Python binding. The context, stream and
pointers come from the Python side (cuda-python handles as integers); the C side dlopens
``libcuda.so.1`` itself and needs no CUDA headers.

The only module that loads ``build/native/libgdr_copy.so``. Missing library, missing driver or
a driver without ``cuMemcpyBatchAsync`` -> :class:`NotSupported` with the reason in one line.
"""

from __future__ import annotations

import ctypes
import errno
from dataclasses import dataclass
from typing import Any, Optional

from gdrdiag.errors import HardwareError, NotSupported, UserInputError
from gdrdiag.hw.cuda import explain
from gdrdiag.hw.native_lib import CachedLoad, Loaded, declare, open_library

ABI_VERSION = 2  # 2: the batch calls cuMemcpyBatchAsync_v2 on CUDA 13 drivers; gc_batch_abi
LIB_NAME = "libgdr_copy.so"
GC_ECUDA = 2001
GC_ENOTSUP = 2002
_ERRLEN = 512
METHOD_HTOD = 0  # cuMemcpyHtoDAsync (host source)
METHOD_ANY = 1  # cuMemcpyAsync (unified addressing)


class CopyResult(ctypes.Structure):
    """``struct gc_result``."""

    _fields_ = [
        ("issue_ns", ctypes.c_uint64),
        ("total_ns", ctypes.c_uint64),
        ("calls", ctypes.c_uint64),
        ("cu_error", ctypes.c_int32),
        ("pad", ctypes.c_int32),
        ("fail_index", ctypes.c_uint64),
        ("cu_name", ctypes.c_char * 64),
    ]


_U64 = ctypes.c_uint64
_ERR = [ctypes.c_char_p, ctypes.c_size_t]
_SIGNATURES: dict[str, list] = {
    "gc_load": [ctypes.POINTER(ctypes.c_int)],
    "gc_batch_supported": [],
    "gc_per_block": [
        _U64,
        _U64,
        _U64,
        _U64,
        _U64,
        _U64,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.POINTER(CopyResult),
    ],
    "gc_batch": [_U64, _U64, _U64, _U64, _U64, _U64, ctypes.c_int, ctypes.POINTER(CopyResult)],
}


def _load() -> Loaded:
    lib, why = open_library(LIB_NAME, "C copy loop", "gc_abi_version", ABI_VERSION)
    if lib is None:
        return None, why
    try:
        declare(lib, _SIGNATURES, _ERR)
        lib.gc_batch_abi.argtypes, lib.gc_batch_abi.restype = [], ctypes.c_int
    except AttributeError as exc:
        return None, f"C copy loop unavailable: {LIB_NAME} lacks a symbol ({exc}); re-run set-up"
    return lib, why


_cached = CachedLoad(_load)


def availability() -> Loaded:
    """(the library or None, one-line reason), cached per process."""
    return _cached.get()


def _reset_for_tests() -> None:
    """Forget the cached load (tests point GDRDIAG_NATIVE_DIR elsewhere)."""
    _cached.forget()


def driver() -> tuple[ctypes.CDLL, int]:
    """The library with the CUDA driver loaded, and the driver version (e.g. 12080)."""
    lib, why = availability()
    if lib is None:
        raise NotSupported(why)
    version = ctypes.c_int(0)
    err = ctypes.create_string_buffer(_ERRLEN)
    rc = lib.gc_load(ctypes.byref(version), err, _ERRLEN)
    if rc:
        raise NotSupported(f"C copy loop: {err.value.decode(errors='replace')}")
    return lib, version.value


@dataclass(frozen=True)
class CopyTiming:
    """One C loop: host time to issue the calls, and issue + stream sync when synchronised."""

    calls: int
    issue_seconds: float
    total_seconds: Optional[float]

    @property
    def issue_us_per_call(self) -> float:
        """Microseconds of host time per driver call."""
        return self.issue_seconds / max(self.calls, 1) * 1e6


def _handle(x: Any) -> int:
    """cuda-python handle (CUstream, CUcontext, CUdeviceptr) or int -> int."""
    if x is None:
        return 0
    if isinstance(x, int):
        return x
    try:
        return int(x)
    except TypeError:
        getptr = getattr(x, "getPtr", None)
        if getptr is None:
            raise UserInputError(f"cannot turn {type(x).__name__} into a handle") from None
        return int(getptr())


def _check(rc: int, err: Any, r: CopyResult, call: str) -> None:
    if not rc:
        return
    msg = err.value.decode(errors="replace")
    if rc == GC_ENOTSUP:
        raise NotSupported(f"{call}: {msg}")
    if rc == GC_ECUDA:
        name = r.cu_name.decode(errors="replace") or "CUDA_ERROR"
        raise HardwareError(call, int(r.cu_error), name, explain(name, msg))
    if rc == errno.EINVAL:
        raise UserInputError(msg)
    raise HardwareError(call, rc, errno.errorcode.get(rc, "error"), msg)


def per_block(
    *,
    stream: Any,
    dst: int,
    src: int,
    block: int,
    count: int,
    context: Any = None,
    method: int = METHOD_HTOD,
    sync: bool = False,
) -> CopyTiming:
    """``count`` calls, one per block (block i: src + i*block -> dst + i*block), from C."""
    lib, _ = driver()
    r = CopyResult()
    err = ctypes.create_string_buffer(_ERRLEN)
    rc = lib.gc_per_block(
        _handle(context),
        _handle(stream),
        _handle(dst),
        _handle(src),
        block,
        count,
        method,
        int(sync),
        ctypes.byref(r),
        err,
        _ERRLEN,
    )
    _check(rc, err, r, "cuMemcpyHtoDAsync" if method == METHOD_HTOD else "cuMemcpyAsync")
    return CopyTiming(int(r.calls), r.issue_ns / 1e9, r.total_ns / 1e9 if sync else None)


def batch(
    *, stream: Any, dst: int, src: int, block: int, count: int, context: Any = None, sync: bool = False
) -> CopyTiming:
    """One ``cuMemcpyBatchAsync`` for ``count`` blocks, from C (NotSupported before CUDA 12.8)."""
    lib, _ = driver()
    r = CopyResult()
    err = ctypes.create_string_buffer(_ERRLEN)
    rc = lib.gc_batch(
        _handle(context),
        _handle(stream),
        _handle(dst),
        _handle(src),
        block,
        count,
        int(sync),
        ctypes.byref(r),
        err,
        _ERRLEN,
    )
    _check(rc, err, r, "cuMemcpyBatchAsync_v2" if lib.gc_batch_abi() == 13000 else "cuMemcpyBatchAsync")
    return CopyTiming(int(r.calls), r.issue_ns / 1e9, r.total_ns / 1e9 if sync else None)


def batch_abi() -> int:
    """The C batch's entry point on this driver: 13000 (``_v2``), 12080 (the 12.8 symbol) or 0 (neither).

    The same choice gdrdiag/hw/memcpy_batch.py makes for the Python row.
    """
    lib, _ = driver()
    return int(lib.gc_batch_abi())


def batch_supported() -> Optional[str]:
    """None when cuMemcpyBatchAsync can be called from C here, else why not."""
    try:
        lib, _ = driver()
    except NotSupported as exc:
        return exc.reason
    err = ctypes.create_string_buffer(_ERRLEN)
    return None if lib.gc_batch_supported(err, _ERRLEN) == 0 else err.value.decode(errors="replace")
