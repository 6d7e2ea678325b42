"""Where the host time of one cuMemcpyBatchAsync goes, from Python and from C.

copy-bench's batched row from Python was up to 7x slower than the same call from C at 2-16 KiB
blocks. This probe times, for a few block sizes and batch lengths, each way of making the call, in
interleaved rounds (host time: perf_counter around the call only; GPU time: events around it), with
the stream idle when the call is made and with work queued ahead of it, and a few calls back to back
as copy-bench's samples were made:

  binding     cuda-bindings' cuMemcpyBatchAsync, CUdeviceptr lists built once (the old Python row)
  ctypes      gdrdiag/hw/memcpy_batch.BatchCopy: the entry point by driver version, arrays built once
  ctypes_v1   libcuda's cuMemcpyBatchAsync (CUDA 12.8 ABI, failIdx), arrays built once
  ctypes_v2   libcuda's cuMemcpyBatchAsync_v2 (CUDA 13.0 ABI), arrays built once
  c           native/copy_loop.c's gc_batch (its own clock around the driver call)
  binding_reject / ctypes_reject: the same arguments with srcAccessOrder INVALID, which the driver
              refuses before copying: what is left of the bindings' call is its argument conversion

It also prints the function pointers: what the bindings resolved against what dlsym gives.

Usage (GPU machine, after scripts/build_native.sh):
    PYTHONPATH=. python3 scripts/probes/batch_copy_probe.py OUT.json
"""

from __future__ import annotations

import ctypes
import json
import statistics
import sys
import time
from typing import Any, Callable, Optional

from gdrdiag.hw import copy_native, cuda, memcpy_batch, memory
from gdrdiag.hw.memory import MemoryKind

SIZES = (2048, 16384, 65536)
COUNTS = (1000, 10000)
ROUNDS = 5
B2B_CALLS = 6
PRIMER = 1 << 30  # the busy state's copy queued ahead of the call


def _pointers(drv) -> dict:
    """The bindings' resolved pointer for the batch call vs dlsym of each exported symbol."""
    out: dict = {}
    lib = ctypes.CDLL("libcuda.so.1")
    for name in ("cuMemcpyBatchAsync", "cuMemcpyBatchAsync_v2", "cuMemcpyBatchAsync_ptsz"):
        fn = getattr(lib, name, None)
        out[f"dlsym {name}"] = hex(ctypes.cast(fn, ctypes.c_void_p).value or 0) if fn is not None else None
    for version in (12080, 13000):
        try:
            err, pfn, status = drv.cuGetProcAddress(b"cuMemcpyBatchAsync", version, 0)
            out[f"cuGetProcAddress(cuMemcpyBatchAsync, {version})"] = [int(err), hex(int(pfn)), str(status)]
        except Exception as exc:  # a bindings version without this signature
            out[f"cuGetProcAddress {version}"] = repr(exc)
    for mod in ("cuda.bindings._internal.driver", "cuda.bindings._bindings.cydriver"):
        try:
            m = __import__(mod, fromlist=["_inspect_function_pointers"])
            table = m._inspect_function_pointers()
            out[f"{mod} pointers"] = {k: hex(v) for k, v in table.items() if "BatchAsync" in k}
        except Exception as exc:
            out[f"{mod} pointers"] = repr(exc)
    return out


def _timed(fn: Callable[[], Any]) -> tuple[float, int]:
    t0 = time.perf_counter()
    err = fn()
    return time.perf_counter() - t0, int(err)


def _ways(drv, stream, h: int, d: int, size: int, count: int, fns: tuple) -> dict[str, Callable]:
    """Each way of issuing one batch of ``count`` blocks of ``size`` bytes: () -> (host seconds, error)."""
    v1, v2 = fns
    sh = int(stream.handle)
    dl = [d + i * size for i in range(count)]
    sl = [h + i * size for i in range(count)]
    zl = [size] * count
    bd = [drv.CUdeviceptr(p) for p in dl]
    bs = [drv.CUdeviceptr(p) for p in sl]
    attrs = drv.CUmemcpyAttributes()
    attrs.srcAccessOrder = drv.CUmemcpySrcAccessOrder.CU_MEMCPY_SRC_ACCESS_ORDER_STREAM
    bad = drv.CUmemcpyAttributes()  # srcAccessOrder INVALID (0): refused by the driver
    batch = memcpy_batch.BatchCopy(dl, sl, zl)
    arrs = (
        (ctypes.c_ulonglong * count)(*dl),
        (ctypes.c_ulonglong * count)(*sl),
        (ctypes.c_size_t * count)(*zl),
    )
    good_attr = memcpy_batch.MemcpyAttributes(srcAccessOrder=1)
    bad_attr = memcpy_batch.MemcpyAttributes(srcAccessOrder=0)
    idx, fail = (ctypes.c_size_t * 1)(0), ctypes.c_size_t(0)
    good, rejected = ctypes.byref(good_attr), ctypes.byref(bad_attr)

    def c_loop() -> tuple[float, int]:
        t = copy_native.batch(stream=stream.handle, dst=d, src=h, block=size, count=count)
        return t.issue_seconds, 0

    return {
        "binding": lambda: _timed(
            lambda: drv.cuMemcpyBatchAsync(bd, bs, zl, count, [attrs], [0], 1, stream.handle)[0]
        ),
        "ctypes": lambda: (batch.issue(sh), 0),
        "ctypes_v1": lambda: _timed(lambda: v1(*arrs, count, good, idx, 1, ctypes.byref(fail), sh)),
        "ctypes_v2": lambda: _timed(lambda: v2(*arrs, count, good, idx, 1, sh)),
        "c": c_loop,
        "binding_reject": lambda: _timed(
            lambda: drv.cuMemcpyBatchAsync(bd, bs, zl, count, [bad], [0], 1, stream.handle)[0]
        ),
        "ctypes_reject": lambda: _timed(lambda: v2(*arrs, count, rejected, idx, 1, sh)),
    }


def _one(way: Callable, stream: Any, primer: Optional[Callable[[], None]]) -> tuple[float, float, int]:
    """One call: (host seconds, GPU seconds between events around it, error), then the stream drained."""
    if primer is not None:
        primer()  # ~19 ms of copies queued ahead: the call is made while the stream is busy
    with cuda.Event() as e0, cuda.Event() as e1:
        e0.record(stream)
        secs, err = way()
        e1.record(stream)
        stream.synchronize()
        return secs, cuda.elapsed_ms(e0, e1) / 1e3, err


def _back_to_back(way: Callable, stream: Any) -> list[float]:
    """B2B_CALLS calls in a row from a drained stream, as copy-bench's samples were: host ms of each."""
    stream.synchronize()
    times = [way()[0] * 1e3 for _ in range(B2B_CALLS)]
    stream.synchronize()
    return times


def _row(size: int, count: int, name: str, state: str, samples: list, err: int) -> dict:
    host = statistics.median(s[0] for s in samples)
    gpu = statistics.median(s[1] for s in samples)
    return {
        "size": size,
        "count": count,
        "way": name,
        "state": state,
        "err": err,
        "host_ms": host * 1e3,
        "host_ms_min": min(s[0] for s in samples) * 1e3,
        "host_us_per_copy": host / count * 1e6,
        "gpu_ms": gpu * 1e3,
        "gbps": size * count / gpu / 1e9 if not name.endswith("reject") else None,
    }


def main() -> int:
    out_path = sys.argv[1]
    cuda.init()
    drv = cuda.driver()
    report: dict = {"driver_version": int(cuda.call(cuda.driver().cuDriverGetVersion))}
    import cuda.bindings as cb

    report["bindings"] = cb.__version__
    report["pointers"] = _pointers(drv)
    report["entry"] = memcpy_batch.entry().name
    report["c_batch_abi"] = copy_native.batch_abi()
    lib = ctypes.CDLL("libcuda.so.1")
    v1, v2 = lib.cuMemcpyBatchAsync, lib.cuMemcpyBatchAsync_v2  # a CUDA 13 driver exports both
    head = memcpy_batch._HEAD
    v1.argtypes, v1.restype = [*head, memcpy_batch._SIZES, ctypes.c_void_p], ctypes.c_int
    v2.argtypes, v2.restype = [*head, ctypes.c_void_p], ctypes.c_int
    report["method"] = (
        "idle: the stream drained before each call; busy: a 1 GiB host->device copy queued just before "
        "the call (about 19 ms of work ahead of it); b2b: calls in a row from a drained stream, as "
        "copy-bench's samples were made. Host time: perf_counter around the driver call (the C loop: "
        "its own clock); GPU time: events around the call."
    )
    rows: list = []
    region = max(SIZES) * max(COUNTS)
    with cuda.GpuContext(0) as gpu, cuda.Stream() as stream:
        with (
            memory.allocate(MemoryKind.PINNED, region, alignment=65536, gpu=gpu) as host,
            memory.allocate(MemoryKind.DEVICE, region, alignment=65536, gpu=gpu) as dev,
            memory.allocate(MemoryKind.PINNED, PRIMER, alignment=65536, gpu=gpu) as big_host,
            memory.allocate(MemoryKind.DEVICE, PRIMER, alignment=65536, gpu=gpu) as big_dev,
        ):
            host.write(memory.pattern(region))

            def primer() -> None:
                cuda.call(cuda.driver().cuMemcpyAsync, big_dev.ptr, big_host.ptr, PRIMER, stream.handle)

            for size in SIZES:
                for count in COUNTS:
                    ways = _ways(drv, stream, host.ptr, dev.ptr, size, count, (v1, v2))
                    for state, prime in (("idle", None), ("busy", primer)):
                        samples: dict = {k: [] for k in ways if state == "idle" or "reject" not in k}
                        errs: dict = {}
                        for rnd in range(ROUNDS + 1):  # round 0 is a warm-up
                            for name in samples:
                                try:
                                    h, g, err = _one(ways[name], stream, prime)
                                except Exception as exc:  # one way failing must not hide the others
                                    report.setdefault("failures", {})[name] = repr(exc)
                                    stream.synchronize()
                                    continue
                                errs[name] = int(err)
                                if rnd:
                                    samples[name].append((h, g))
                        rows += [_row(size, count, n, state, v, errs[n]) for n, v in samples.items() if v]
                        print(
                            f"{size:>6} B x {count:>5} {state}: "
                            + "  ".join(
                                f"{r['way']} {r['host_ms']:.2f}/{r['gpu_ms']:.2f}"
                                for r in rows
                                if (r["size"], r["count"], r["state"]) == (size, count, state)
                            ),
                            flush=True,
                        )
                    if count == max(COUNTS):
                        b2b = {n: _back_to_back(ways[n], stream) for n in ("binding", "ctypes", "c")}
                        rows.append({"size": size, "count": count, "state": "b2b", "host_ms_each": b2b})
                        print(
                            f"{size:>6} B x {count:>5} b2b host ms: "
                            + "  ".join(f"{n} {[round(t, 1) for t in v]}" for n, v in b2b.items()),
                            flush=True,
                        )
    report["rows"] = rows
    with open(out_path, "w") as f:
        json.dump(report, f, indent=1)
    print(json.dumps({k: v for k, v in report.items() if k != "rows"}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
