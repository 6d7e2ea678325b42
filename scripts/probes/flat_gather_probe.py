"""Probe: planned-lines' kernel vs flat one-chunk-per-thread kernels, interleaved.

Same sorted pairs, same buffers, GPU only (cupy); prints one table row per (R, pattern). Kept as
the record of the A/B behind planned-flat (docs/benchmarks.md): gather_flat compacts the owners
first, gather_flatn (what planned-flat became) reads the sorted pairs as they are.

The plan (sorted pairs, owners = first record of each run of one slot) is built with cupy here:
only the gather kernels are compared, so plan cost is out of both numbers.
"""

import sys
import time
from pathlib import Path

import cupy as cp
import numpy as np

REPO = Path(__file__).resolve().parents[2]
FLAT = r"""
// One thread per 16-B chunk of each distinct slot (owner), F chunks in flight per thread; every
// chunk stored to the owner's destination and to each duplicate's (records i0+1 .. i1-1).
template <int F>
__device__ __forceinline__ void flat_body(unsigned char *dst, const unsigned char *table,
    const unsigned *owner_slot, const unsigned *owner_start, const unsigned *dsorted,
    unsigned U, unsigned C, unsigned long long stride, unsigned long long dst_stride, int L)
{
    const unsigned total = U * C;
    const unsigned nthreads = gridDim.x * blockDim.x;
    for (unsigned base = blockIdx.x * blockDim.x + threadIdx.x; base < total; base += F * nthreads) {
        uint4 v[F];
        unsigned u[F], p[F];
#pragma unroll
        for (int f = 0; f < F; ++f) {
            const unsigned t = base + f * nthreads;
            u[f] = t / C;
            p[f] = t - u[f] * C;
            if (t < total) {
                const unsigned char *src = table + (unsigned long long)owner_slot[u[f]] * stride + p[f] * 16u;
                if (L) v[f] = ld16_stream(src); else v[f] = ld16(src);
            }
        }
#pragma unroll
        for (int f = 0; f < F; ++f) {
            const unsigned t = base + f * nthreads;
            if (t < total) {
                const unsigned i0 = owner_start[u[f]], i1 = owner_start[u[f] + 1];
                for (unsigned i = i0; i < i1; ++i) {
                    unsigned char *d = dst + (unsigned long long)dsorted[i] * dst_stride + p[f] * 16u;
                    *reinterpret_cast<uint4 *>(d) = v[f];
                }
            }
        }
    }
}
extern "C" __global__ void __launch_bounds__(1024, 1)
gather_flat(unsigned char *dst, const unsigned char *table,
    const unsigned *owner_slot, const unsigned *owner_start, const unsigned *dsorted,
    const unsigned *num_owners,
    unsigned C, unsigned long long stride, unsigned long long dst_stride, int F, int L)
{
    const unsigned U = *num_owners;
    if (F == 4) flat_body<4>(dst, table, owner_slot, owner_start, dsorted, U, C, stride, dst_stride, L);
    else if (F == 8) flat_body<8>(dst, table, owner_slot, owner_start, dsorted, U, C, stride, dst_stride, L);
    else flat_body<2>(dst, table, owner_slot, owner_start, dsorted, U, C, stride, dst_stride, L);
}
// No compaction: one thread per chunk of every sorted record; a duplicate (same slot as the
// record before it) skips; an owner stores to its run's later records.
extern "C" __global__ void __launch_bounds__(1024, 1)
gather_flatn(unsigned char *dst, const unsigned char *table,
    const unsigned *ss, const unsigned *ds, unsigned n, unsigned C, unsigned long long stride,
    unsigned long long dst_stride)
{
    const unsigned total = n * C;
    const unsigned nthreads = gridDim.x * blockDim.x;
    constexpr int F = 4;
    for (unsigned base = blockIdx.x * blockDim.x + threadIdx.x; base < total; base += F * nthreads) {
        uint4 v[F];
        unsigned rec[F], p[F], s[F];
        bool own[F];
#pragma unroll
        for (int f = 0; f < F; ++f) {
            const unsigned t = base + f * nthreads;
            rec[f] = t / C;
            p[f] = t - rec[f] * C;
            own[f] = false;
            if (t < total) {
                s[f] = ss[rec[f]];
                own[f] = rec[f] == 0 || ss[rec[f] - 1] != s[f];
                if (own[f]) v[f] = ld16(table + (unsigned long long)s[f] * stride + p[f] * 16u);
            }
        }
#pragma unroll
        for (int f = 0; f < F; ++f) {
            if (own[f]) {
                unsigned i = rec[f];
                do {
                    unsigned char *d = dst + (unsigned long long)ds[i] * dst_stride + p[f] * 16u;
                    *reinterpret_cast<uint4 *>(d) = v[f];
                    ++i;
                } while (i < n && ss[i] == s[f]);
            }
        }
    }
}
"""


def _plan(sidx: np.ndarray, didx: np.ndarray) -> dict:
    """Sorted pairs and the owners (first record of each run of one slot), on the GPU."""
    n = sidx.size
    order = np.argsort(sidx, kind="stable")
    ss, ds = sidx[order].astype(np.uint32), didx[order].astype(np.uint32)
    flag = np.ones(n, bool)
    flag[1:] = ss[1:] != ss[:-1]
    starts = np.nonzero(flag)[0].astype(np.uint32)
    return {
        "ss": cp.asarray(ss),
        "ds": cp.asarray(ds),
        "owner_start": cp.asarray(np.append(starts, np.uint32(n))),
        "owner_slot": cp.asarray(ss[starts]),
        "num": cp.asarray(np.array([starts.size], np.uint32)),
        "owners": int(starts.size),
    }


def _variants(mod, sms: int, dst, ce_dst, hptr: int, plan: dict, n: int, R: int) -> dict:
    """Each variant by name: a function that launches it once on the current stream."""
    dedupe, flat, flatn = (
        mod.get_function(f) for f in ("gather_lines_dedupe", "gather_flat", "gather_flatn")
    )
    u64, u32 = np.uint64, np.uint32
    dedupe_args = (dst, u64(hptr), plan["ss"], plan["ds"], u64(n), u64(R), u64(R), u64(R), u64(0))
    depth = u32(32 if R <= 128 else 8)
    flat_args = (
        dst,
        u64(hptr),
        plan["owner_slot"],
        plan["owner_start"],
        plan["ds"],
        plan["num"],
        u32(R // 16),
    )
    flatn_args = (dst, u64(hptr), plan["ss"], plan["ds"], u32(n), u32(R // 16), u64(R), u64(R))
    out = {
        "ce": lambda: cp.cuda.runtime.memcpyAsync(ce_dst.data.ptr, hptr, n * R, 1, 0),
        "dedupe": lambda: dedupe((sms,), (1024,), (*dedupe_args, depth)),
        "fn": lambda: flatn((sms,), (1024,), flatn_args),
    }
    for name, f, plain in (("f2", 2, 1), ("f4", 4, 1), ("f8", 8, 1), ("fL4", 4, 0)):
        args = (*flat_args, u64(R), u64(R), np.int32(f), np.int32(plain))
        out[name] = lambda args=args: flat((sms,), (1024,), args)
    return out


def _median_gbps(variants: dict, nbytes: int, reps: int) -> dict:
    times: dict = {k: [] for k in variants}
    e0, e1 = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(reps):
        for name, launch in variants.items():
            e0.record()
            launch()
            e1.record()
            e1.synchronize()
            times[name].append(cp.cuda.get_elapsed_time(e0, e1) / 1e3)
    return {k: nbytes / float(np.median(v)) / 1e9 for k, v in times.items()}


def main() -> int:
    mod = cp.RawModule(code=(REPO / "native/gather.cu").read_text() + FLAT, options=("-std=c++17",))
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    n, slots, reps = 262144, 300000, 15
    rng = np.random.default_rng(20251121)
    sizes = [int(a) for a in (sys.argv[1] if len(sys.argv) > 1 else "64,128,256,656").split(",")]
    print(f"device {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()} sms {sms}")
    print(
        "R pattern | CE GB/s | dedupe | flat F2 | F4 | F8 | plain F4 | best flat / dedupe | verified | flatn"
    )
    for R in sizes:
        table_bytes = slots * R + 64
        hptr = cp.cuda.runtime.hostAlloc(table_bytes, 2)  # cudaHostAllocMapped
        host = np.ctypeslib.as_array((np.ctypeslib.ctypes.c_ubyte * table_bytes).from_address(hptr))
        host[:] = rng.integers(0, 256, table_bytes, dtype=np.uint8)
        dst, ce_dst = cp.empty(n * R, dtype=cp.uint8), cp.empty(n * R, dtype=cp.uint8)
        for pattern in ("unique", "random"):
            sidx = rng.permutation(slots)[:n] if pattern == "unique" else rng.integers(0, slots, n)
            didx = rng.permutation(n)
            plan = _plan(sidx, didx)
            variants = _variants(mod, sms, dst, ce_dst, hptr, plan, n, R)
            expect = host[: slots * R].reshape(slots, R)[sidx]
            verified = True
            for name, launch in variants.items():
                if name != "ce":
                    dst.fill(0xA5)
                    launch()
                    cp.cuda.Device().synchronize()
                    verified &= bool(np.array_equal(cp.asnumpy(dst).reshape(n, R)[didx], expect))
            g = _median_gbps(variants, n * R, reps)
            best = max(g[k] for k in ("f2", "f4", "f8", "fL4"))
            print(
                f"{R} {pattern} U={plan['owners']} | {g['ce']:.2f} | {g['dedupe']:.2f} | {g['f2']:.2f} | "
                f"{g['f4']:.2f} | {g['f8']:.2f} | {g['fL4']:.2f} | {best / g['dedupe']:.3f} | {verified} | "
                f"{g['fn']:.2f} = {g['fn'] / g['dedupe']:.3f} of dedupe",
                flush=True,
            )
        cp.cuda.runtime.freeHost(hptr)
    return 0


if __name__ == "__main__":
    t0 = time.time()
    rc = main()
    print(f"took {time.time() - t0:.1f} s")
    sys.exit(rc)
