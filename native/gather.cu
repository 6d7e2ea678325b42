// Zero-copy gather kernels for gather-bench (gdrdiag/bench/gather.py).
//
// Workload (a KV-offload operator): copy n records of R bytes from a table of slots in mapped
// pinned host memory into device memory: record i goes from table slot sidx[i] (at
// table + sidx[i] * stride) to destination slot didx[i] (at dst + didx[i] * dst_stride). The GPU
// reads host memory directly over PCIe (UVA); no copy engine is involved.
//
// The kernels form a ladder; each rung explains where bandwidth comes from (docs/gather-bench.md
// has the measured numbers and the PCIe model behind them):
//
//   gather_byte        a thread per record, byte loads. Each warp load instruction touches 32
//                      different records, so it becomes 32 separate sysmem requests carrying 1
//                      useful byte each: the link is busy with headers and wasted sectors.
//   gather_vec16       a thread per record, 16-byte loads: 16x fewer requests per byte, but still
//                      32 records (32 lines) per instruction and each 32-B sector fetched for 16
//                      useful bytes; requests stay small and scattered.
//   gather_warp        a warp per record, 16 B per lane: one instruction reads 512 contiguous
//                      bytes, which the coalescer turns into whole 128-B line requests
//                      (nvbandwidth's SM copy kernels use the same 16-B lanes: github.com/NVIDIA/nvbandwidth).
//   gather_warp_ilp    as warp, but every load of a record (up to 4 KiB per pass) is issued
//                      before the first store, so a warp waits one PCIe round trip per record
//                      instead of one per 512 B (Little's law: bandwidth = bytes in flight / round trip).
//   gather_persistent  warp_ilp's body in a grid-stride loop over one CTA per SM, so the number
//                      of SMs is a knob (--sm-limit); bytes in flight per SM is what matters.
//   gather_lines       the fastest SIMT design: persistent; each warp takes 8 records at a
//                      time and issues all their loads (up to 8 x 512 B) before storing; loads
//                      are line-aware: lane l of instruction t reads line-space chunk 32t + l
//                      measured from the 128-B line below the record, so no 128-B line is
//                      split between two instructions (two requests for one line, EMOGI /
//                      DGL trick: github.com/illinois-impact/EMOGI, dmlc/dgl array_index_select_uvm.cu); and records whose source slots are
//                      consecutive (sorted indices, runs) are read as one contiguous range, so
//                      neighbours share their boundary lines instead of fetching them twice.
//   gather_lines_l2pf  gather_lines with non-caching ".nc.L1::no_allocate.L2::256B" loads: tests
//                      whether the L2 prefetch-size hint turns into larger sysmem reads (it does
//                      not on H200: same GB/s as gather_lines at 656 B, docs/gather-bench.md).
//   sorted-lines       (gather.py) sort_count, sort_scan_*, sort_scatter, then gather_lines:
//                      the index pairs are counting-sorted by source slot on the GPU inside the
//                      timed batch, so runs merge and repeated slots are read once (L1 hits).
//   planned-lines /    (gather.py) the sort made once and reused across batches of one index
//   planned-flat       set; each repeated slot crosses PCIe once. planned-lines plans its reads
//                      per warp step (segments, shuffles, ballots); planned-flat gives each thread
//                      one 16-B chunk of the sorted records at a time (gather_flat_dedupe), which
//                      costs fewer instructions per byte for records of 16-256 B.
//   gather_bulk        Hopper (sm_90+) bulk asynchronous copies (cp.async.bulk, the TMA unit):
//                      one instruction per record copies it into shared memory, completion is
//                      tracked by an mbarrier, and each warp keeps `depth` records in flight.
//                      Whether the TMA issues larger PCIe read requests than SM loads (and so
//                      gets larger completions, PCIe Base Spec r5.0 sec. 2.2.1 and 3.6) is what it measures.
//
// Correctness for every layout: the fast paths need 16-byte aligned source records (table base,
// stride); any other layout (odd record sizes, odd offsets) takes a general path that loads the
// 16-byte aligned chunks covering the record and funnel-shifts them into place. Destinations
// are 16-byte aligned (dst_stride is R rounded up to 16); a record's last partial chunk is
// stored byte by byte, so bytes past R are never written (gather.py checks they stay poisoned).
// Chunk loads may read up to 15 bytes past a record's ends; gather.py pads the table allocation.
//
// All kernels share one signature so gather.py launches them the same way:
//   (dst, table, sidx, didx, n, R, stride, dst_stride, sm_ids, depth)
// sm_ids (may be null): persistent kernels write each CTA's %smid there, so the bench can count
// the SMs a --sm-limit run really used. depth: records in flight per warp (gather_bulk only).

typedef unsigned long long u64;

#define FULL_MASK 0xffffffffu

// ------------------------------------------------------------------------------------------
// Loads and stores
// ------------------------------------------------------------------------------------------

// Plain 16-byte load of mapped host memory (a generic/global ld.v4).
__device__ __forceinline__ uint4 ld16(const unsigned char *p)
{
    return *reinterpret_cast<const uint4 *>(p);
}

// Read-only, no L1 allocation: sysmem data is used once (CUDA Best Practices, Zero Copy: "read
// once, coalesced"; SGLang's HiCache kernels use L1::no_allocate: github.com/sgl-project/sglang sgl-kernel).
__device__ __forceinline__ uint4 ld16_stream(const unsigned char *p)
{
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

// Same with the L2 prefetch-size hint (PTX ISA "ld", .level::prefetch_size, sm_75+).
__device__ __forceinline__ uint4 ld16_l2pf(const unsigned char *p)
{
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

enum LoadKind { LOAD_PLAIN = 0, LOAD_STREAM = 1, LOAD_L2PF = 2 };

template <int L>
__device__ __forceinline__ uint4 load16(const unsigned char *p)
{
    if (L == LOAD_STREAM) {
        return ld16_stream(p);
    } else if (L == LOAD_L2PF) {
        return ld16_l2pf(p);
    }
    return ld16(p);
}

__device__ __forceinline__ unsigned word_of(const uint4 &v, unsigned i)
{
    return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// Store the first `nbytes` (1..16) of v at a 16-byte aligned d: one 16-B store when whole,
// else byte stores, so nothing past the record is written.
__device__ __forceinline__ void store16(unsigned char *d, const uint4 &v, unsigned nbytes)
{
    if (nbytes >= 16) {
        *reinterpret_cast<uint4 *>(d) = v;
        return;
    }
    for (unsigned k = 0; k < nbytes; ++k) {
        d[k] = (unsigned char)(word_of(v, k >> 2) >> (8 * (k & 3)));
    }
}

// Bytes [sh, sh + 16) of the 32-byte little-endian concatenation (a, b), sh in 0..15.
// Selects are compile-time indexed, so everything stays in registers.
__device__ __forceinline__ uint4 shift_bytes(const uint4 &a, const uint4 &b, unsigned sh)
{
    if (sh == 0) {
        return a;
    }
    const unsigned w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
    const unsigned q = sh >> 2;
    const unsigned r = (sh & 3) * 8;
    unsigned o[5];
#pragma unroll
    for (int i = 0; i < 5; ++i) {
        o[i] = q == 0 ? w[i] : q == 1 ? w[i + 1] : q == 2 ? w[i + 2] : w[i + 3];
    }
    uint4 out;
    out.x = __funnelshift_r(o[0], o[1], r);
    out.y = __funnelshift_r(o[1], o[2], r);
    out.z = __funnelshift_r(o[2], o[3], r);
    out.w = __funnelshift_r(o[3], o[4], r);
    return out;
}

__device__ __forceinline__ unsigned min_u(u64 a, u64 b)
{
    return (unsigned)(a < b ? a : b);
}

// ------------------------------------------------------------------------------------------
// Rung 1: a thread per record, byte copies
// ------------------------------------------------------------------------------------------

extern "C" __global__ void gather_byte(unsigned char *__restrict__ dst, const unsigned char *__restrict__ table,
                                       const unsigned *__restrict__ sidx, const unsigned *__restrict__ didx,
                                       u64 n, u64 R, u64 stride, u64 dst_stride, int *sm_ids, unsigned depth)
{
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    const unsigned char *s = table + (u64)sidx[i] * stride;
    unsigned char *d = dst + (u64)didx[i] * dst_stride;
    for (u64 k = 0; k < R; ++k) {
        d[k] = s[k];
    }
}

// ------------------------------------------------------------------------------------------
// Rung 2: a thread per record, 16-byte loads
// ------------------------------------------------------------------------------------------

// One thread copies one record with 16-B loads of the aligned chunks covering it; `prev`
// carries the previous chunk for the funnel shift when the source is not 16-B aligned.
extern "C" __global__ void gather_vec16(unsigned char *__restrict__ dst, const unsigned char *__restrict__ table,
                                        const unsigned *__restrict__ sidx, const unsigned *__restrict__ didx,
                                        u64 n, u64 R, u64 stride, u64 dst_stride, int *sm_ids, unsigned depth)
{
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    const unsigned char *s = table + (u64)sidx[i] * stride;
    unsigned char *d = dst + (u64)didx[i] * dst_stride;
    const unsigned sh = (unsigned)((u64)s & 15);
    const unsigned char *a = s - sh;
    const u64 nc = (sh + R + 15) / 16;  // aligned source chunks
    const u64 no = (R + 15) / 16;       // destination chunks
    uint4 cur = ld16(a);
    for (u64 j = 0; j < no; ++j) {
        uint4 nxt = make_uint4(0, 0, 0, 0);
        if (sh != 0 && j + 1 < nc) {
            nxt = ld16(a + 16 * (j + 1));
        }
        store16(d + 16 * j, shift_bytes(cur, nxt, sh), min_u(16, R - 16 * j));
        cur = (sh != 0) ? nxt : (j + 1 < nc ? ld16(a + 16 * (j + 1)) : nxt);
    }
}

// ------------------------------------------------------------------------------------------
// Rungs 3-5: a warp per record (K = 1: load, store, load, store...; K = 8: all loads first)
// ------------------------------------------------------------------------------------------

// The whole warp copies one record. Lane l owns destination chunks l, l + 32, ...; a pass holds
// K chunks per lane (32 * K * 16 bytes) in registers: every load of the pass is issued before
// its first store.
template <int K, int L>
__device__ __forceinline__ void warp_record_aligned(unsigned char *d, const unsigned char *s, u64 R, unsigned lane)
{
    const u64 no = (R + 15) / 16;
    for (u64 base = 0; base < no; base += 32 * K) {
        uint4 v[K];
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const u64 j = base + 32 * k + lane;
            if (j < no) {
                v[k] = load16<L>(s + 16 * j);
            }
        }
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const u64 j = base + 32 * k + lane;
            if (j < no) {
                store16(d + 16 * j, v[k], min_u(16, R - 16 * j));
            }
        }
    }
}

// Unaligned source (sh = s % 16 != 0): each destination chunk j is bytes sh..sh+15 of the
// aligned source chunks j and j+1. Correct for every layout; not tuned (one chunk per lane in
// flight, so the fast paths keep their registers).
template <int K, int L>
__device__ __forceinline__ void warp_record_shifted(unsigned char *d, const unsigned char *s, u64 R, unsigned lane)
{
    const unsigned sh = (unsigned)((u64)s & 15);
    const unsigned char *a = s - sh;
    const u64 nc = (sh + R + 15) / 16;
    const u64 no = (R + 15) / 16;
    for (u64 base = 0; base < no; base += 32 * K) {
        uint4 v[K];
        uint4 w[K];
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const u64 j = base + 32 * k + lane;
            v[k] = j < nc ? load16<L>(a + 16 * j) : make_uint4(0, 0, 0, 0);
            w[k] = j + 1 < nc ? load16<L>(a + 16 * (j + 1)) : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const u64 j = base + 32 * k + lane;
            if (j < no) {
                store16(d + 16 * j, shift_bytes(v[k], w[k], sh), min_u(16, R - 16 * j));
            }
        }
    }
}

template <int K, int L>
__device__ __forceinline__ void warp_record(unsigned char *d, const unsigned char *s, u64 R, unsigned lane)
{
    if (((u64)s & 15) == 0) {
        warp_record_aligned<K, L>(d, s, R, lane);
    } else {
        warp_record_shifted<1, L>(d, s, R, lane);
    }
}

template <int K>
__device__ __forceinline__ void warp_per_record(unsigned char *dst, const unsigned char *table, const unsigned *sidx,
                                                const unsigned *didx, u64 n, u64 R, u64 stride, u64 dst_stride)
{
    const u64 warp = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const unsigned lane = threadIdx.x & 31;
    if (warp >= n) {
        return;
    }
    warp_record<K, LOAD_PLAIN>(dst + (u64)didx[warp] * dst_stride, table + (u64)sidx[warp] * stride, R, lane);
}

extern "C" __global__ void gather_warp(unsigned char *__restrict__ dst, const unsigned char *__restrict__ table,
                                       const unsigned *__restrict__ sidx, const unsigned *__restrict__ didx,
                                       u64 n, u64 R, u64 stride, u64 dst_stride, int *sm_ids, unsigned depth)
{
    warp_per_record<1>(dst, table, sidx, didx, n, R, stride, dst_stride);
}

extern "C" __global__ void gather_warp_ilp(unsigned char *__restrict__ dst, const unsigned char *__restrict__ table,
                                           const unsigned *__restrict__ sidx, const unsigned *__restrict__ didx,
                                           u64 n, u64 R, u64 stride, u64 dst_stride, int *sm_ids, unsigned depth)
{
    warp_per_record<8>(dst, table, sidx, didx, n, R, stride, dst_stride);
}

__device__ __forceinline__ void note_sm(int *sm_ids)
{
    if (sm_ids != nullptr && threadIdx.x == 0) {
        unsigned smid;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
        sm_ids[blockIdx.x] = (int)smid;
    }
}

// Grid-stride over records; gather.py launches one CTA per SM (grid = --sm-limit).
extern "C" __global__ void __launch_bounds__(1024, 1)
gather_persistent(unsigned char *__restrict__ dst, const unsigned char *__restrict__ table,
                  const unsigned *__restrict__ sidx, const unsigned *__restrict__ didx,
                  u64 n, u64 R, u64 stride, u64 dst_stride, int *sm_ids, unsigned depth)
{
    note_sm(sm_ids);
    const unsigned lane = threadIdx.x & 31;
    const u64 warps = (u64)gridDim.x * blockDim.x / 32;
    for (u64 r = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / 32; r < n; r += warps) {
        warp_record<8, LOAD_PLAIN>(dst + (u64)didx[r] * dst_stride, table + (u64)sidx[r] * stride, R, lane);
    }
}

// ------------------------------------------------------------------------------------------
// Rung 6: line-aware, several records per warp in flight, contiguous slots merged
// ------------------------------------------------------------------------------------------

#define LINES_M 8  // records a warp takes at a time (lanes 0..M-1 hold their indices)
#define LINES_K 8  // 512-B load instructions in flight per warp (K x 16 B per lane in registers)
#define TAG_NONE 0xffffffffu

__device__ __forceinline__ u64 shfl64(u64 v, unsigned src)
{
    const unsigned lo = __shfl_sync(FULL_MASK, (unsigned)v, src);
    const unsigned hi = __shfl_sync(FULL_MASK, (unsigned)(v >> 32), src);
    return ((u64)hi << 32) | lo;
}

// Records first .. first+M-1 (those < n). Fast path only: every source record 16-B aligned.
// A "segment" is a run of records whose source slots are consecutive and packed (stride == R,
// R % 16 == 0, so 16-B chunks never straddle two records); random indices give segments of one
// record. Each segment is read as a byte range [a, a + len) with instructions that each cover
// 512 bytes starting at a 128-B line boundary (line-aware), numbered across segments; the warp
// issues LINES_K instructions, then stores them, then the next LINES_K. M (records per step) is
// LINES_M for gather_lines; the planned kernel takes 32 for small records (gather.py), so one
// step's index loads, shuffles and round trip serve 32 records instead of 8.
//
// DEDUPE (gather_lines_dedupe, for pairs sorted by source slot, so equal slots are adjacent):
// a run of records with the same source slot is read once, by the warp whose group holds the
// run's first record (its "owner" lane), and every chunk is stored to each destination of the
// run, including records past this warp's group (their destinations are read from didx). A
// record equal to its predecessor is a duplicate and reads nothing; so is lane 0 when record
// first-1 has the same slot (the previous group's warp owns that run). Every slot therefore
// crosses PCIe once per batch whatever the L1 does, which is what the model's planned read plan
// counts (gather.planned_read_plan). The boundary indices (first-1, first+M) are loaded with
// the group's own, so no dependent load delays the step's PCIe reads.
template <int L, bool DEDUPE, int M>
__device__ __forceinline__ void lines_step(unsigned char *dst, const unsigned char *table, const unsigned *sidx,
                                           const unsigned *didx, u64 first, u64 n, u64 R, u64 stride,
                                           u64 dst_stride, bool can_merge, unsigned lane)
{
    const u64 rec = first + lane;
    const bool inb = lane < M && rec < n;
    const unsigned s = inb ? sidx[rec] : 0u;
    const unsigned dslot = inb ? didx[rec] : 0u;
    unsigned s_before = 0u, s_after = TAG_NONE;
    if (DEDUPE && lane == 0 && first > 0) {
        s_before = sidx[first - 1];
    }
    if (DEDUPE && lane == M - 1 && first + M < n) {
        s_after = sidx[first + M];
    }
    unsigned sprev = __shfl_up_sync(FULL_MASK, s, 1);
    bool dup = false;
    if (DEDUPE) {
        if (lane == 0) {
            sprev = s_before;
        }
        dup = inb && (lane > 0 || first > 0) && s == sprev;
    }
    const bool valid = inb && !dup;  // owners: the lanes that read their slot
    const unsigned valid_mask = __ballot_sync(FULL_MASK, valid);
    // A merge needs an owner below in this warp (with DEDUPE lane 0 may be another warp's run).
    const bool owner_below = (valid_mask & ((1u << lane) - 1u)) != 0u;
    const bool cont = valid && lane > 0 && owner_below && can_merge && s == sprev + 1u;
    const bool head = valid && !cont;
    const unsigned head_mask = __ballot_sync(FULL_MASK, head);
    // A head's segment runs to the next head; its last owner gives its length in slots.
    const unsigned above = lane == 31 ? 0u : (head_mask & ~((2u << lane) - 1u));
    const unsigned end_lane = above ? (unsigned)(__ffs(above) - 1) : 32u;
    const unsigned below_end = valid_mask & (end_lane == 32u ? FULL_MASK : ((1u << end_lane) - 1u));
    const unsigned last_owner = below_end ? (unsigned)(31 - __clz(below_end)) : lane;
    const unsigned s_last = __shfl_sync(FULL_MASK, s, last_owner);
    const unsigned seg_len = head ? (s_last - s + 1u) * (unsigned)R : 0u;  // < 2^27 (gather.py caps R)
    // DEDUPE: an owner's run ends (relative to first) at the next owner, else at the group's
    // end, else (its slot goes on past the group) where the slot changes.
    unsigned run_end = lane + 1u, dup_in_group = 0u, max_dup = 0u;
    if (DEDUPE) {
        const unsigned after = __shfl_sync(FULL_MASK, s_after, M - 1);
        const unsigned group_end = (unsigned)min_u(M, n - first);
        if (valid) {
            const unsigned nxt = lane == 31 ? 0u : (valid_mask & ~((2u << lane) - 1u));
            run_end = nxt ? (unsigned)(__ffs(nxt) - 1) : group_end;
            if (!nxt && group_end == M && after == s) {  // rare: the slot goes on past the group
                u64 r = first + M + 1;
                while (r < n && sidx[r] == s) {
                    ++r;
                }
                run_end = (unsigned)(r - first);
            }
            dup_in_group = min_u(run_end, group_end) - lane - 1u;
        }
        max_dup = __reduce_max_sync(FULL_MASK, dup_in_group);
    }
    const u64 seg_addr = (u64)(table + (u64)s * stride);
    const unsigned lead = (unsigned)(seg_addr & 127);
    const unsigned ninstr = head ? (lead + seg_len + 511) / 512 : 0u;
    // Exclusive prefix sum of instruction counts over the lanes (segment heads).
    unsigned incl = ninstr;
#pragma unroll
    for (unsigned off = 1; off < 32; off <<= 1) {
        const unsigned t = __shfl_up_sync(FULL_MASK, incl, off);
        if (lane >= off) {
            incl += t;
        }
    }
    const unsigned excl = incl - ninstr;
    const unsigned total = __shfl_sync(FULL_MASK, incl, 31);

    for (unsigned i0 = 0; i0 < total; i0 += LINES_K) {
        uint4 v[LINES_K];
        unsigned tag[LINES_K];  // (owner lane << 27) | byte offset in record, or TAG_NONE
#pragma unroll
        for (int k = 0; k < LINES_K; ++k) {
            const unsigned i = i0 + k;
            tag[k] = TAG_NONE;
            v[k] = make_uint4(0, 0, 0, 0);
            if (i < total) {  // warp-uniform
                const unsigned hm = __ballot_sync(FULL_MASK, head && excl <= i);
                const unsigned h = 31 - __clz(hm);
                const unsigned t = i - __shfl_sync(FULL_MASK, excl, h);
                const u64 a = shfl64(seg_addr, h);
                const unsigned len = __shfl_sync(FULL_MASK, seg_len, h);
                const long long o = (long long)t * 512 + 16 * (long long)lane - (long long)(a & 127);
                if (o >= 0 && o < (long long)len) {
                    v[k] = load16<L>(reinterpret_cast<const unsigned char *>(a + o));
                    const u64 m = (u64)o / R;  // m-th slot of the segment
                    unsigned owner = h + (unsigned)m;
                    if (DEDUPE) {  // the m-th owner lane from h (duplicates sit between owners)
                        unsigned om = valid_mask & ~((1u << h) - 1u);
                        for (u64 j = 0; j < m; ++j) {
                            om &= om - 1u;
                        }
                        owner = (unsigned)(__ffs(om) - 1);
                    }
                    tag[k] = (owner << 27) | (unsigned)((u64)o - m * R);
                }
            }
        }
#pragma unroll
        for (int k = 0; k < LINES_K; ++k) {
            const unsigned m = tag[k] == TAG_NONE ? 0u : (tag[k] >> 27);
            const unsigned slot = __shfl_sync(FULL_MASK, dslot, m);
            const unsigned r = tag[k] & ((1u << 27) - 1);
            const unsigned nb = tag[k] == TAG_NONE ? 0u : min_u(16, R - r);
            if (tag[k] != TAG_NONE) {
                store16(dst + (u64)slot * dst_stride + r, v[k], nb);
            }
            if (DEDUPE) {
                // The run's other destinations get the same bytes: duplicates in the group by
                // shuffle (a warp-uniform loop), any past the group from didx.
                const unsigned rend = __shfl_sync(FULL_MASK, run_end, m);
                for (unsigned q = 1; q <= max_dup; ++q) {
                    const unsigned dq = __shfl_sync(FULL_MASK, dslot, min(m + q, 31u));
                    if (tag[k] != TAG_NONE && m + q < rend && m + q < (unsigned)M) {
                        store16(dst + (u64)dq * dst_stride + r, v[k], nb);
                    }
                }
                if (tag[k] != TAG_NONE) {
                    for (unsigned q = M; q < rend; ++q) {
                        store16(dst + (u64)didx[first + q] * dst_stride + r, v[k], nb);
                    }
                }
            }
        }
    }
}

template <int L, bool DEDUPE, int M>
__device__ __forceinline__ void lines_kernel(unsigned char *dst, const unsigned char *table, const unsigned *sidx,
                                             const unsigned *didx, u64 n, u64 R, u64 stride, u64 dst_stride,
                                             int *sm_ids)
{
    note_sm(sm_ids);
    const unsigned lane = threadIdx.x & 31;
    const u64 warps = (u64)gridDim.x * blockDim.x / 32;
    const u64 warp = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const bool aligned = (((u64)table | stride) & 15) == 0;
    const bool can_merge = aligned && stride == R && (R & 15) == 0;
    for (u64 first = warp * M; first < n; first += warps * M) {
        if (aligned) {
            lines_step<L, DEDUPE, M>(dst, table, sidx, didx, first, n, R, stride, dst_stride, can_merge, lane);
        } else {
            // General layouts (odd sizes or offsets): correct, not tuned. Plain loads: the
            // shifted path reads each chunk twice (as chunk j+1, then as chunk j), and only a
            // cached load lets the second read hit L1 instead of crossing PCIe again (measured:
            // 20.6 GB/s with L1::no_allocate vs 34.2 GB/s plain at R = 100 on H200).
            for (u64 r = first; r < first + M && r < n; ++r) {
                warp_record<1, LOAD_PLAIN>(dst + (u64)didx[r] * dst_stride, table + (u64)sidx[r] * stride, R, lane);
            }
        }
    }
}

extern "C" __global__ void __launch_bounds__(1024, 1)
gather_lines(unsigned char *__restrict__ dst, const unsigned char *__restrict__ table,
             const unsigned *__restrict__ sidx, const unsigned *__restrict__ didx,
             u64 n, u64 R, u64 stride, u64 dst_stride, int *sm_ids, unsigned depth)
{
    // Plain (L1-allocating) loads: a record that several warps of one SM read at about the same
    // time (duplicate or neighbouring slots in sorted indices) is then fetched over PCIe once.
    lines_kernel<LOAD_PLAIN, false, LINES_M>(dst, table, sidx, didx, n, R, stride, dst_stride, sm_ids);
}

extern "C" __global__ void __launch_bounds__(1024, 1)
gather_lines_l2pf(unsigned char *__restrict__ dst, const unsigned char *__restrict__ table,
                  const unsigned *__restrict__ sidx, const unsigned *__restrict__ didx,
                  u64 n, u64 R, u64 stride, u64 dst_stride, int *sm_ids, unsigned depth)
{
    lines_kernel<LOAD_L2PF, false, LINES_M>(dst, table, sidx, didx, n, R, stride, dst_stride, sm_ids);
}

// Batches that reuse one plan (planned-lines, planned-flat) run back to back in a stream, and each
// launch costs a ramp (the first indices from HBM, then one PCIe round trip before the first
// completion) and a tail (the last completions and stores, then the next launch): about 4-6 us
// per batch on the H100, 1-1.5% of a 128-B random batch (docs/benchmarks.md).
// gather.py launches batches 2..N with programmatic dependent launch (sm_90+; CUDA Programming
// Guide, "Programmatic Dependent Launch and Synchronization"; PTX ISA "griddepcontrol"): every
// CTA lets the next batch's grid launch as soon as it starts, so the next batch's CTA takes an
// SM the moment this one's leaves it, and waits for the previous batch only at its very end, so
// batch k still completes after batch k-1 (the event after the last batch closes all of them).
// Batches over one plan read the same sorted pairs and write the same bytes to the same places,
// so nothing a batch reads is written by the batch before it. Without the launch attribute both
// instructions return at once.
__device__ __forceinline__ void let_next_batch_launch()
{
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ __forceinline__ void wait_for_previous_batch()
{
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// planned-lines (gather.py): gather_lines over pairs already sorted by source slot (the plan,
// made by the sort kernels below once per index set and reused for the next batches over the
// same indices), with each repeated slot read once and stored to all its destinations
// (lines_step DEDUPE). Plain loads, as gather_lines. depth = records per warp step: 32 (gather.py
// picks it for records up to 128 B) or anything else for LINES_M.
extern "C" __global__ void __launch_bounds__(1024, 1)
gather_lines_dedupe(unsigned char *__restrict__ dst, const unsigned char *__restrict__ table,
                    const unsigned *__restrict__ sidx, const unsigned *__restrict__ didx,
                    u64 n, u64 R, u64 stride, u64 dst_stride, int *sm_ids, unsigned depth)
{
    let_next_batch_launch();
    if (depth == 32) {
        lines_kernel<LOAD_PLAIN, true, 32>(dst, table, sidx, didx, n, R, stride, dst_stride, sm_ids);
    } else {
        lines_kernel<LOAD_PLAIN, true, LINES_M>(dst, table, sidx, didx, n, R, stride, dst_stride, sm_ids);
    }
    wait_for_previous_batch();
}

// planned-flat (gather.py): the same plan as planned-lines (pairs sorted by source slot), read
// one 16-B chunk per thread: chunk t is part t % C of sorted record t / C (C = R / 16), so the 32
// lanes of a warp load 512 contiguous bytes of the sorted records and the coalescer merges the
// chunks of neighbouring slots into line requests. A record whose slot equals the record before
// it (a duplicate) loads nothing; the first record of a run stores its chunk to every record of
// the run, so each slot crosses PCIe once. Each thread keeps FLAT_F chunks in flight (all loads,
// then all stores). No ballots, shuffles or per-step planning: at 64-B random records this
// measured 1.03-1.05x gather_lines_dedupe on the H100 (docs/benchmarks.md).
// gather.py launches it only for 16-B aligned tables and records that divide 512 B (16..512 B,
// powers of two), so C is a power of two and a warp load holds whole records, which is what
// the model's read plan for it assumes (gather_layout.planned_read_plan, group = 512 / R).
#define FLAT_F 4

extern "C" __global__ void __launch_bounds__(1024, 1)
gather_flat_dedupe(unsigned char *__restrict__ dst, const unsigned char *__restrict__ table,
                   const unsigned *__restrict__ sidx, const unsigned *__restrict__ didx,
                   u64 n, u64 R, u64 stride, u64 dst_stride, int *sm_ids, unsigned depth)
{
    let_next_batch_launch();
    note_sm(sm_ids);
    const unsigned shift = (unsigned)(__ffsll((long long)(R >> 4)) - 1);  // C = R / 16 = 2^shift
    const u64 part_mask = (R >> 4) - 1;
    const u64 total = n << shift;
    const u64 nthreads = (u64)gridDim.x * blockDim.x;
    for (u64 base = (u64)blockIdx.x * blockDim.x + threadIdx.x; base < total; base += FLAT_F * nthreads) {
        uint4 v[FLAT_F];
        u64 rec[FLAT_F];
        unsigned slot[FLAT_F], part[FLAT_F];
        bool owner[FLAT_F];
#pragma unroll
        for (int f = 0; f < FLAT_F; ++f) {
            const u64 t = base + f * nthreads;
            rec[f] = t >> shift;
            part[f] = (unsigned)(t & part_mask);
            owner[f] = false;
            if (t < total) {
                slot[f] = sidx[rec[f]];
                owner[f] = rec[f] == 0 || sidx[rec[f] - 1] != slot[f];
                if (owner[f]) {
                    v[f] = ld16(table + (u64)slot[f] * stride + 16u * part[f]);
                }
            }
        }
#pragma unroll
        for (int f = 0; f < FLAT_F; ++f) {
            if (owner[f]) {
                u64 i = rec[f];
                do {
                    *reinterpret_cast<uint4 *>(dst + (u64)didx[i] * dst_stride + 16u * part[f]) = v[f];
                    ++i;
                } while (i < n && sidx[i] == slot[f]);
            }
        }
    }
    wait_for_previous_batch();
}

// ------------------------------------------------------------------------------------------
// Sort-first (gather_sorted_lines = these three + gather_lines, one batch, timed together)
// ------------------------------------------------------------------------------------------
//
// A counting sort of the (source, destination) pairs by source slot, on the GPU, before the
// line-aware gather (GraphBolt sorts its indices first with CUB: dmlc/dgl graphbolt/src/cuda/index_select_impl.cu). In slot order
// consecutive slots become runs that gather_lines reads as one range (whole lines instead of one
// partial line per record, pcie_model "runs"), and a slot that appears twice is read by the same
// warp back to back, so the second read hits L1 instead of crossing PCIe. The pairs move
// together, so every destination still gets its own record. Cost: one pass over the indices
// for counts, a three-step scan over the slots, one scattering pass.

extern "C" __global__ void sort_count(const unsigned *__restrict__ sidx, u64 n, unsigned *__restrict__ counts)
{
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        atomicAdd(&counts[sidx[i]], 1u);
    }
}

// Exclusive prefix sum of counts[0..slots) in place, in three steps so every load is coalesced
// and every CTA short (a single CTA walking 300,000 counts serially measured ~0.3 ms per batch):
//   sort_scan_blocks (one CTA per 1024 counts): scan the tile in place, tile total -> sums[b];
//   sort_scan        (one CTA): exclusive scan of the tile totals;
//   sort_scan_add    (one CTA per tile): add the tile's offset.

// Block-wide exclusive scan of one value per thread (1024 threads); returns this thread's
// exclusive prefix and writes the block total to *total.
__device__ __forceinline__ unsigned block_exclusive_scan(unsigned v, unsigned *total)
{
    __shared__ unsigned warp_sums[32];
    const unsigned t = threadIdx.x, lane = t & 31, w = t >> 5;
    unsigned incl = v;
#pragma unroll
    for (unsigned off = 1; off < 32; off <<= 1) {
        const unsigned x = __shfl_up_sync(FULL_MASK, incl, off);
        if (lane >= off) {
            incl += x;
        }
    }
    if (lane == 31) {
        warp_sums[w] = incl;
    }
    __syncthreads();
    if (w == 0) {
        const unsigned ws = lane < blockDim.x / 32 ? warp_sums[lane] : 0u;
        unsigned wincl = ws;
#pragma unroll
        for (unsigned off = 1; off < 32; off <<= 1) {
            const unsigned x = __shfl_up_sync(FULL_MASK, wincl, off);
            if (lane >= off) {
                wincl += x;
            }
        }
        warp_sums[lane] = wincl - ws;
        if (lane == 31) {
            *total = wincl;
        }
    }
    __syncthreads();
    const unsigned out = warp_sums[w] + incl - v;
    __syncthreads();  // warp_sums is reused by the next call
    return out;
}

extern "C" __global__ void __launch_bounds__(1024) sort_scan_blocks(unsigned *__restrict__ counts, u64 slots,
                                                                     unsigned *__restrict__ sums)
{
    __shared__ unsigned total;
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned v = i < slots ? counts[i] : 0u;
    const unsigned ex = block_exclusive_scan(v, &total);
    if (i < slots) {
        counts[i] = ex;
    }
    if (threadIdx.x == 0) {
        sums[blockIdx.x] = total;
    }
}

// Exclusive scan of n values in place with one CTA of 1024 threads; tiles of 1024 with a carry.
extern "C" __global__ void __launch_bounds__(1024) sort_scan(unsigned *__restrict__ vals, u64 n)
{
    __shared__ unsigned total;
    unsigned carry = 0;
    for (u64 base = 0; base < n; base += blockDim.x) {
        const u64 i = base + threadIdx.x;
        const unsigned v = i < n ? vals[i] : 0u;
        const unsigned ex = block_exclusive_scan(v, &total);
        if (i < n) {
            vals[i] = carry + ex;
        }
        carry += total;  // every thread reads the same total after the scan's barrier
        __syncthreads();
    }
}

extern "C" __global__ void sort_scan_add(unsigned *__restrict__ counts, u64 slots, const unsigned *__restrict__ sums)
{
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < slots) {
        counts[i] += sums[blockIdx.x];
    }
}

extern "C" __global__ void sort_scatter(const unsigned *__restrict__ sidx, const unsigned *__restrict__ didx, u64 n,
                                        unsigned *__restrict__ offsets, unsigned *__restrict__ out_s,
                                        unsigned *__restrict__ out_d)
{
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        const unsigned s = sidx[i];
        const unsigned pos = atomicAdd(&offsets[s], 1u);
        out_s[pos] = s;
        out_d[pos] = didx[i];
    }
}

// ------------------------------------------------------------------------------------------
// Rung 7: Hopper bulk asynchronous copies (TMA), sm_90+
// ------------------------------------------------------------------------------------------
//
// PTX ISA 8.0: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes needs 16-B
// aligned addresses and a size that is a multiple of 16, so each record's aligned cover
// [floor16(s), ceil16(s + R)) is copied; the mbarrier's transaction count tracks the bytes.
// Each warp owns `depth` slots (a ring); lane 0 issues, all lanes wait on the slot's mbarrier
// (phase parity), copy shared -> dst, and lane 0 refills the slot with the warp's next record.
// Launched with dynamic shared memory = warps * depth * slot_bytes + warps * depth * 8.

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ unsigned smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_expect_tx(unsigned bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity)
{
    // The loop form CUTLASS uses (ClusterBarrier::wait); labels are scoped by the braces.
    asm volatile(
        "{\n"
        ".reg .pred P1;\n"
        "LAB_WAIT:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
        "@P1 bra DONE;\n"
        "bra LAB_WAIT;\n"
        "DONE:\n"
        "}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
}

__device__ __forceinline__ void bulk_g2s(unsigned dst_smem, const void *src, unsigned bytes, unsigned bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(dst_smem), "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}

__device__ __forceinline__ void bulk_issue(unsigned slot_smem, unsigned bar, const unsigned char *s, u64 R)
{
    const u64 a = (u64)s & ~15ull;
    const u64 e = ((u64)s + R + 15) & ~15ull;
    mbar_expect_tx(bar, (unsigned)(e - a));
    bulk_g2s(slot_smem, reinterpret_cast<const void *>(a), (unsigned)(e - a), bar);
}
#endif

extern "C" __global__ void __launch_bounds__(1024, 1)
gather_bulk(unsigned char *__restrict__ dst, const unsigned char *__restrict__ table,
            const unsigned *__restrict__ sidx, const unsigned *__restrict__ didx,
            u64 n, u64 R, u64 stride, u64 dst_stride, int *sm_ids, unsigned depth)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    extern __shared__ __align__(128) unsigned char smem[];
    note_sm(sm_ids);
    const unsigned lane = threadIdx.x & 31;
    const unsigned wib = threadIdx.x / 32;  // warp in block
    const unsigned wpb = blockDim.x / 32;
    const u64 slot_bytes = ((R + 15 + 15) / 16 * 16 + 127) / 128 * 128;
    unsigned char *slots = smem + (u64)wib * depth * slot_bytes;
    unsigned long long *bars =
        reinterpret_cast<unsigned long long *>(smem + (u64)wpb * depth * slot_bytes) + (u64)wib * depth;
    const u64 warps = (u64)gridDim.x * wpb;
    const u64 warp = (u64)blockIdx.x * wpb + wib;

    if (lane == 0) {
        for (unsigned i = 0; i < depth; ++i) {
            mbar_init(smem_addr(&bars[i]), 1);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        for (unsigned i = 0; i < depth; ++i) {
            const u64 r = warp + (u64)i * warps;
            if (r < n) {
                bulk_issue(smem_addr(slots + i * slot_bytes), smem_addr(&bars[i]), table + (u64)sidx[r] * stride, R);
            }
        }
    }
    __syncwarp();

    const u64 no = (R + 15) / 16;
    u64 k = 0;
    for (u64 r = warp; r < n; r += warps, ++k) {
        const unsigned i = (unsigned)(k % depth);
        const unsigned parity = (unsigned)((k / depth) & 1);
        mbar_wait(smem_addr(&bars[i]), parity);
        const unsigned char *s = table + (u64)sidx[r] * stride;
        const unsigned sh = (unsigned)((u64)s & 15);
        const unsigned char *slot = slots + i * slot_bytes;
        unsigned char *d = dst + (u64)didx[r] * dst_stride;
        for (u64 j = lane; j < no; j += 32) {
            const uint4 v0 = *reinterpret_cast<const uint4 *>(slot + 16 * j);
            uint4 v1 = make_uint4(0, 0, 0, 0);
            if (sh != 0 && 16 * (j + 1) < sh + R) {
                v1 = *reinterpret_cast<const uint4 *>(slot + 16 * (j + 1));
            }
            store16(d + 16 * j, shift_bytes(v0, v1, sh), min_u(16, R - 16 * j));
        }
        __syncwarp();
        if (lane == 0) {
            // Order this warp's generic-proxy reads of the slot before the async-proxy refill.
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            const u64 next = r + (u64)depth * warps;
            if (next < n) {
                bulk_issue(smem_addr(slots + i * slot_bytes), smem_addr(&bars[i]), table + (u64)sidx[next] * stride,
                           R);
            }
        }
        __syncwarp();
    }
#else
    // No bulk asynchronous copies before sm_90: gather.py never launches this there.
    __trap();
#endif
}
