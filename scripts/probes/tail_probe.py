"""Probe: where planned-flat loses its last 1-1.5% at 128-B records.

Run G's JSON (H100) puts planned-flat 5-7 us per batch above its ceiling at 128 B in both
patterns, against 1.7 us for `warp`: a cost per launch, not per byte, which weighs 1.5x more in
the random pattern because its batch is 1.5x shorter (a third of its reads are deduplicated).
This probe separates the candidates on one index set per (R, pattern, N), interleaved, 32
launches back-to-back per sample as gather-bench's planned kernels run:

- flat:       planned-flat as shipped (gather_flat_dedupe, one 1024-thread CTA per SM, each
              thread FLAT_F chunks per step; a static share of the work per SM);
- flat-grid:  the same kernel on a grid of 256-thread CTAs, one step each (the block scheduler
              hands out work as SMs free up, so no SM's share decides the tail);
- flat-pdl:   flat with programmatic dependent launch (Hopper): each CTA lets the next batch's
              grid launch as soon as it starts and waits for the previous batch only at its end,
              so the next batch's CTAs take an SM the moment this batch's CTA there exits;
- grid-pdl:   flat-grid with the same launch attribute;
- warp:       the `warp` kernel (a warp per record, reads every record: the reference whose gap
              to its ceiling is 1.7 us);
- ce:         a copy-engine copy of the same output bytes (one copy per sample).

Slopes over N (131072 .. 1048576 records) give the per-byte rate; intercepts the per-launch
cost. Prints GB/s of output per variant and each variant's ratio to the 128-B ceiling (distinct
lines x 150 B on a wire CE moves at 128 B/0.9267 per line... see pcie_model). GPU only (cupy
and cuda.bindings); every variant's output checked against numpy.

The run recorded in docs/benchmarks.md (22:48 UTC) used a copy of gather_flat_dedupe with the
griddepcontrol instructions added; the shipped kernel now has them (they do nothing in a plain
launch), so the probe launches the shipped kernel both ways.
"""

import ctypes
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import cupy as cp
import numpy as np
from cuda.bindings import driver as drv

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from gdrdiag.hw import cuda  # noqa: E402

VP, U64 = ctypes.c_void_p, ctypes.c_ulonglong


def _launch(fn, grid: int, block: int, args: tuple, stream: int, pdl: bool) -> None:
    """The launch of hw/cuda.py (plain or PDL), on cupy's function and stream handles."""
    handle = SimpleNamespace(handle=drv.CUstream(stream))
    cuda.launch(drv.CUfunction(fn.kernel.ptr), grid, block, args, handle, overlap_previous=pdl)


def _sorted_pairs(sidx: np.ndarray, didx: np.ndarray):
    order = np.argsort(sidx, kind="stable")
    return cp.asarray(sidx[order].astype(np.uint32)), cp.asarray(didx[order].astype(np.uint32))


def _time(launch_batch, reps: int, batches: int) -> list:
    e0, e1 = cp.cuda.Event(), cp.cuda.Event()
    out = []
    for _ in range(reps):
        e0.record()
        launch_batch()
        e1.record()
        e1.synchronize()
        out.append(cp.cuda.get_elapsed_time(e0, e1) / 1e3 / batches)
    return out


LINE_RATIO = 0.9266666666666666  # pcie_model: 128-B reads move at this fraction of CE's byte rate


def _case(mod, sms: int, stream: int, host, hptr: int, slots: int, R: int, n: int, pattern: str, rng) -> None:
    """Time every variant on one index set, interleaved; print a row per variant."""
    reps, batches = 7, 32
    flat = mod.get_function("gather_flat_dedupe")  # plain, or with the PDL attribute
    f_warp = mod.get_function("gather_warp")
    dst, ce_dst = cp.empty(n * R, dtype=cp.uint8), cp.empty(n * R, dtype=cp.uint8)
    sidx = rng.permutation(slots)[:n] if pattern == "unique" else rng.integers(0, slots, n)
    didx = rng.permutation(n)
    ss, ds = _sorted_pairs(sidx, didx)
    raw_s, raw_d = cp.asarray(sidx.astype(np.uint32)), cp.asarray(didx.astype(np.uint32))
    distinct = int(np.unique(sidx).size)
    sizes = ((n, U64), (R, U64), (R, U64), (R, U64))
    tail = (*sizes, (0, VP), (0, ctypes.c_uint))  # no sm_ids, depth 0: every gather kernel's last
    flat_args = ((dst.data.ptr, VP), (hptr, VP), (ss.data.ptr, VP), (ds.data.ptr, VP), *tail)
    warp_args = ((dst.data.ptr, VP), (hptr, VP), (raw_s.data.ptr, VP), (raw_d.data.ptr, VP), *tail)
    fine = -(-n * (R // 16) // (256 * 4))

    def batch(fn, grid, block, args, pdl, k=batches):
        return lambda: [_launch(fn, grid, block, args, stream, pdl) for _ in range(k)]

    variants = {
        "flat": batch(flat, sms, 1024, flat_args, False),
        "flat-grid": batch(flat, fine, 256, flat_args, False),
        "flat-pdl": batch(flat, sms, 1024, flat_args, True),
        "grid-pdl": batch(flat, fine, 256, flat_args, True),
        "warp": batch(f_warp, -(-n // 8), 256, warp_args, False, 1),
        "ce": lambda: cp.cuda.runtime.memcpyAsync(ce_dst.data.ptr, hptr, n * R, 1, stream),
    }
    per_batch = {"warp": 1, "ce": 1}
    expect = host[: slots * R].reshape(slots, R)[sidx]
    ok = {}
    for name, run in variants.items():
        if name != "ce":
            dst.fill(0xA5)
            run()
            cp.cuda.Device().synchronize()
            ok[name] = bool(np.array_equal(cp.asnumpy(dst).reshape(n, R)[didx], expect))
    times = {k: [] for k in variants}
    for _ in range(reps):
        for name, run in variants.items():
            times[name] += _time(run, 1, per_batch.get(name, batches))
    med = {k: float(np.median(v)) for k, v in times.items()}
    ce_gbps = n * R / med["ce"] / 1e9
    for name in variants:
        gbps = n * R / med[name] / 1e9
        vs = ""
        if R >= 128 and name != "ce":  # one 128-B line per slot: the ceiling reads each line read once
            read = n if name == "warp" else distinct
            ceiling_s = read * R / (LINE_RATIO * ce_gbps * 1e9)
            vs = f" of-ceiling {ceiling_s / med[name]:.4f} gap-us {(med[name] - ceiling_s) * 1e6:.2f}"
        spread = (max(times[name]) - min(times[name])) / min(times[name])
        print(
            f"R={R} {pattern} n={n} distinct={distinct} {name}: {med[name] * 1e6:.2f} us/batch "
            f"{gbps:.2f} GB/s x CE {gbps / ce_gbps:.4f}{vs} spread {spread:.3f} verified {ok.get(name, '-')}",
            flush=True,
        )


def main() -> int:
    mod = cp.RawModule(code=(REPO / "native/gather.cu").read_text(), options=("-std=c++17",))
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    rng = np.random.default_rng(20251121)
    sizes = [int(a) for a in (sys.argv[1] if len(sys.argv) > 1 else "128").split(",")]
    ns = [int(a) for a in (sys.argv[2] if len(sys.argv) > 2 else "131072,262144,1048576").split(",")]
    stream = cp.cuda.get_current_stream().ptr
    print(f"device {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()} sms {sms}")
    for R in sizes:
        for n in ns:
            slots = n * 300000 // 262144
            table_bytes = slots * R + 64
            hptr = cp.cuda.runtime.hostAlloc(table_bytes, 2)  # cudaHostAllocMapped
            try:
                host = np.ctypeslib.as_array((ctypes.c_ubyte * table_bytes).from_address(hptr))
                host[:] = rng.integers(0, 256, table_bytes, dtype=np.uint8)
                for pattern in ("unique", "random"):
                    _case(mod, sms, stream, host, hptr, slots, R, n, pattern, rng)
            finally:
                cp.cuda.runtime.freeHost(hptr)
    return 0


if __name__ == "__main__":
    t0 = time.time()
    rc = main()
    print(f"took {time.time() - t0:.1f} s")
    sys.exit(rc)
