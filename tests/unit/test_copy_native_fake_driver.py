"""native/copy_loop.c against a stand-in libcuda.so.1, on any machine with a C compiler.

The real driver is only on the GPU machine (tests/hw/test_copy_native_gpu.py). Here a tiny fake
``libcuda.so.1`` (compiled by the test; its copies are plain memcpy on host memory) is put first
on LD_LIBRARY_PATH of a child process, so the C loop's own logic runs for real: dlopen and
symbol resolution, block addressing, the batch's pointer arrays and attributes, pushing the
caller's context only when another one is current, error codes and names, and the CUDA 12.8
check for cuMemcpyBatchAsync. It says nothing about CUDA's performance.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gdrdiag.hw import copy_native
from gdrdiag.hw.cuda import CU_RESULT_EXPLANATIONS

ROOT = Path(__file__).resolve().parents[2]
CC = shutil.which(os.environ.get("CC", "cc"))

FAKE_CUDA = r"""
#include <stdlib.h>
#include <string.h>
typedef unsigned long long CUdeviceptr;
typedef struct { int order; int t1, i1, t2, i2; unsigned flags; } attrs_t;
static void *current;
int pushes, pops, htod_calls, any_calls, syncs, batch_calls, batch_v2_calls, last_order;
int cuDriverGetVersion(int *v) {
    const char *e = getenv("FAKE_CUDA_VERSION"); *v = e ? atoi(e) : 12080; return 0; }
int cuGetErrorName(int e, const char **s) {
    *s = e == 1 ? "CUDA_ERROR_INVALID_VALUE" : e == 801 ? "CUDA_ERROR_NOT_SUPPORTED" : "CUDA_ERROR_UNKNOWN";
    return 0; }
int cuCtxGetCurrent(void **c) { *c = current; return 0; }
int cuCtxPushCurrent_v2(void *c) { pushes++; current = c; return 0; }
int cuCtxPopCurrent_v2(void **c) { pops++; *c = current; current = 0; return 0; }
static int bad(CUdeviceptr d) { return (d & 0xffff0000ull) == 0xdead0000ull; }
int cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, void *st) {
    (void)st; htod_calls++; if (bad(d)) return 1; memcpy((void *)d, s, n); return 0; }
int cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, void *st) {
    (void)st; any_calls++; if (bad(d)) return 1; memcpy((void *)d, (void *)s, n); return 0; }
int cuStreamSynchronize(void *st) { (void)st; syncs++; return 0; }
/* 0xbeef0000 destinations: the copy kind this "driver" does not support. */
static int batch(CUdeviceptr *d, CUdeviceptr *s, size_t *n, size_t count, attrs_t *a,
                 size_t *idx, size_t na, size_t *fail) {
    last_order = a[0].order;
    if (na != 1 || idx[0] != 0) return 1;
    for (size_t i = 0; i < count; i++) {
        if ((d[i] & 0xffff0000ull) == 0xbeef0000ull) return 801;
        if (bad(d[i])) { *fail = i; return 1; }
        memcpy((void *)d[i], (void *)s[i], n[i]);
    }
    return 0;
}
/* CUDA 12.8's cuMemcpyBatchAsync (failIdx before the stream) and CUDA 13's _v2 (no failIdx). */
int cuMemcpyBatchAsync(CUdeviceptr *d, CUdeviceptr *s, size_t *n, size_t count, attrs_t *a,
                       size_t *idx, size_t na, size_t *fail, void *st) {
    (void)st; batch_calls++; return batch(d, s, n, count, a, idx, na, fail); }
int cuMemcpyBatchAsync_v2(CUdeviceptr *d, CUdeviceptr *s, size_t *n, size_t count, attrs_t *a,
                          size_t *idx, size_t na, void *st) {
    size_t fail; (void)st; batch_v2_calls++; return batch(d, s, n, count, a, idx, na, &fail); }
"""

CHILD = textwrap.dedent(
    """
    import ctypes, json, sys
    from gdrdiag.errors import HardwareError, NotSupported
    from gdrdiag.hw import copy_native as cn

    fake = ctypes.CDLL("libcuda.so.1")
    counter = lambda name: ctypes.c_int.in_dll(fake, name).value
    out = {}
    n, block = 64, 1000
    src = (ctypes.c_ubyte * (n * block))(*[(i * 7) % 251 for i in range(n * block)])
    dst = (ctypes.c_ubyte * (n * block))()
    a_src, a_dst = ctypes.addressof(src), ctypes.addressof(dst)
    out["version"] = cn.driver()[1]
    t = cn.per_block(stream=1, dst=a_dst, src=a_src, block=block, count=n, sync=True)
    out["htod"] = [t.calls, bytes(dst) == bytes(src), counter("htod_calls"), counter("syncs"),
                   t.total_seconds >= t.issue_seconds > 0]
    ctypes.memset(dst, 0, n * block)
    t = cn.per_block(stream=1, dst=a_dst, src=a_src, block=block, count=n, method=cn.METHOD_ANY)
    out["any"] = [t.calls, bytes(dst) == bytes(src), counter("any_calls"), t.total_seconds]
    cn.per_block(stream=1, dst=a_dst, src=a_src, block=block, count=2, context=0x1234)
    out["push"] = [counter("pushes"), counter("pops")]
    ctypes.memset(dst, 0, n * block)
    out["batch_supported"] = cn.batch_supported()
    out["batch_abi"] = cn.batch_abi()
    try:
        t = cn.batch(stream=1, dst=a_dst, src=a_src, block=block, count=n, sync=True)
        out["batch"] = [t.calls, bytes(dst) == bytes(src), counter("batch_calls"),
                        counter("batch_v2_calls"), counter("last_order")]
    except NotSupported as exc:
        out["batch"] = str(exc)
    try:
        cn.batch(stream=1, dst=0xDEAD0000, src=a_src, block=block, count=3)
    except HardwareError as exc:
        out["batch_error"] = [exc.call, exc.name, str(exc)]
    except NotSupported as exc:
        out["batch_error"] = str(exc)
    try:
        cn.per_block(stream=1, dst=0xDEAD0000, src=a_src, block=block, count=3)
    except HardwareError as exc:
        out["error"] = [exc.call, exc.name, exc.code, str(exc)]
    try:
        cn.per_block(stream=1, dst=a_dst, src=a_src, block=0, count=3)
    except Exception as exc:
        out["bad_args"] = [type(exc).__name__, str(exc)]
    print(json.dumps(out))
    """
)


@pytest.fixture(scope="module")
def fake_driver(tmp_path_factory):
    if CC is None:
        pytest.skip("needs a C compiler")
    loaded, why = copy_native.availability()
    if loaded is None:
        pytest.skip(why)
    d = tmp_path_factory.mktemp("fakecuda")
    (d / "fake.c").write_text(FAKE_CUDA)
    subprocess.run([CC, "-shared", "-fPIC", "-o", str(d / "libcuda.so.1"), str(d / "fake.c")], check=True)
    return d


def _child(fake_dir: Path, **env: str) -> dict:
    import json

    full = {
        **os.environ,
        "LD_LIBRARY_PATH": f"{fake_dir}:{os.environ.get('LD_LIBRARY_PATH', '')}",
        "PYTHONPATH": str(ROOT),
        **env,
    }
    res = subprocess.run([sys.executable, "-c", CHILD], env=full, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_per_block_batch_context_and_errors_through_the_c_loop(fake_driver):
    out = _child(fake_driver)
    assert out["version"] == 12080
    assert out["htod"] == [64, True, 64, 1, True]  # one call per block, every byte, one sync
    assert out["any"] == [64, True, 64, None]  # cuMemcpyAsync path; not synchronised -> no total
    assert out["push"] == [1, 1]  # a context that is not current is pushed, and popped after
    assert out["batch_supported"] is None
    assert out["batch_abi"] == 12080  # a 12.8 driver: the 12.8 symbol, with failIdx
    assert out["batch"] == [1, True, 1, 0, 1]  # one call; source read in stream order (1)
    call, name, text = out["batch_error"]
    assert (call, name) == ("cuMemcpyBatchAsync", "CUDA_ERROR_INVALID_VALUE")
    assert "failed at block 0" in text  # failIdx names the copy
    call, name, code, text = out["error"]
    assert (call, name, code) == ("cuMemcpyHtoDAsync", "CUDA_ERROR_INVALID_VALUE", 1)
    assert "failed at block 0" in text
    assert (
        CU_RESULT_EXPLANATIONS["CUDA_ERROR_INVALID_VALUE"] in text
    )  # hw/cuda.py's table, as check() uses it
    assert out["bad_args"][0] == "UserInputError" and "must be non-zero" in out["bad_args"][1]


def test_batch_before_cuda_12_8_is_not_supported_with_the_reason(fake_driver):
    out = _child(fake_driver, FAKE_CUDA_VERSION="12040")
    assert "needs CUDA 12.8+" in out["batch_supported"] and "12.4" in out["batch_supported"]
    assert "needs CUDA 12.8+" in out["batch"]
    assert out["htod"][:2] == [64, True]  # the per-call loop does not depend on 12.8


def test_a_cuda_13_driver_gets_the_v2_batch_without_fail_idx(fake_driver):
    """CUDA 13.0's cuda.h maps cuMemcpyBatchAsync to cuMemcpyBatchAsync_v2 (no failIdx argument)."""
    out = _child(fake_driver, FAKE_CUDA_VERSION="13000")
    assert out["batch_abi"] == 13000
    assert out["batch"] == [1, True, 0, 1, 1]  # _v2 called, the 12.8 symbol not
    call, name, text = out["batch_error"]
    assert (call, name) == ("cuMemcpyBatchAsync_v2", "CUDA_ERROR_INVALID_VALUE")
    assert "a batch of 3 copies" in text and "failed at block" not in text


PY_CHILD = textwrap.dedent(
    """
    import ctypes, json
    from gdrdiag.errors import HardwareError, NotSupported, UserInputError
    from gdrdiag.hw import memcpy_batch as mb

    fake = ctypes.CDLL("libcuda.so.1")
    counter = lambda name: ctypes.c_int.in_dll(fake, name).value
    out = {}
    n, block = 50, 700
    src = (ctypes.c_ubyte * (n * block))(*[(i * 13) % 251 for i in range(n * block)])
    dst = (ctypes.c_ubyte * (n * block))()
    a_src, a_dst = ctypes.addressof(src), ctypes.addressof(dst)
    # Blocks in reverse order: the batch is the arrays it is given, not a contiguous range.
    order = list(range(n))[::-1]
    try:
        b = mb.BatchCopy([a_dst + i * block for i in order], [a_src + i * block for i in order], [block] * n)
    except NotSupported as exc:
        print(json.dumps({"unsupported": str(exc)}))
        raise SystemExit(0)
    seconds = [b.issue(1), b.issue(1)]
    out["batch"] = [b.entry.name, b.entry.abi, bytes(dst) == bytes(src), counter("batch_calls"),
                    counter("batch_v2_calls"), counter("last_order"), all(s > 0 for s in seconds)]
    for label, d in (("error", 0xDEAD0000), ("unsupported_copy", 0xBEEF0000)):
        try:
            mb.BatchCopy([a_dst, d], [a_src, a_src], [block, block]).issue(1)
        except (HardwareError, NotSupported) as exc:
            out[label] = [type(exc).__name__, str(exc)]
    try:
        mb.BatchCopy([a_dst], [a_src, a_src], [block])
    except UserInputError as exc:
        out["mismatch"] = str(exc)
    print(json.dumps(out))
    """
)


@pytest.fixture(scope="module")
def fake_cuda_only(tmp_path_factory):
    """The stand-in libcuda.so.1 alone (the Python batch needs no C loop)."""
    if CC is None:
        pytest.skip("needs a C compiler")
    d = tmp_path_factory.mktemp("fakecuda_py")
    (d / "fake.c").write_text(FAKE_CUDA)
    subprocess.run([CC, "-shared", "-fPIC", "-o", str(d / "libcuda.so.1"), str(d / "fake.c")], check=True)
    return d


def _py_child(fake_dir: Path, version: str) -> dict:
    import json

    env = {
        **os.environ,
        "LD_LIBRARY_PATH": f"{fake_dir}:{os.environ.get('LD_LIBRARY_PATH', '')}",
        "PYTHONPATH": str(ROOT),
        "FAKE_CUDA_VERSION": version,
    }
    res = subprocess.run(
        [sys.executable, "-c", PY_CHILD], env=env, capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "version,name,abi,calls",
    [("13000", "cuMemcpyBatchAsync_v2", 13000, [0, 2]), ("12080", "cuMemcpyBatchAsync", 12080, [2, 0])],
)
def test_python_batch_calls_the_entry_point_of_the_driver_version(fake_cuda_only, version, name, abi, calls):
    """hw/memcpy_batch.py: the arrays built once, every byte moved, the entry point by driver version."""
    out = _py_child(fake_cuda_only, version)
    assert out["batch"] == [name, abi, True, *calls, 1, True]  # stream-ordered source (1)
    kind, text = out["error"]
    assert kind == "HardwareError" and name in text and "CUDA_ERROR_INVALID_VALUE" in text
    # The 12.8 call says which copy failed (failIdx); _v2 cannot.
    assert ("copy 1 failed" in text) == (abi == 12080)
    assert CU_RESULT_EXPLANATIONS["CUDA_ERROR_INVALID_VALUE"] in text
    assert (
        out["unsupported_copy"][0] == "NotSupported"
        and "CUDA_ERROR_NOT_SUPPORTED" in out["unsupported_copy"][1]
    )
    assert "as many destinations and sources as sizes" in out["mismatch"]


def test_python_batch_before_cuda_12_8_is_not_supported(fake_cuda_only):
    out = _py_child(fake_cuda_only, "12040")
    assert "needs CUDA 12.8+" in out["unsupported"] and "12.4" in out["unsupported"]
