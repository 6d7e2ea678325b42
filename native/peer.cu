// GPU<->GPU kernels for peer-bench (bench/peer.py, peer_blocks.py, peer_latency.py).
//
// peer_copy: copy `words` 16-byte words from `src` to `dst`, grid-stride, four independent
// 16-byte loads in flight per thread before their stores (memory-level parallelism: a peer's
// memory is a microsecond away over NVLink, and Little's law needs bytes in flight to cover it).
// The same kernel is the SM read (launched on the destination GPU, `src` is the peer's memory
// reached through UVA) and the SM write (launched on the source GPU, `dst` is the peer's memory).
// Peer access must be enabled from the launching GPU's context to the peer's.

extern "C" __global__ void peer_copy(uint4 *__restrict__ dst, const uint4 *__restrict__ src,
                                     unsigned long long words)
{
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    for (; i + 3 * stride < words; i += 4 * stride) {
        const uint4 a = src[i];
        const uint4 b = src[i + stride];
        const uint4 c = src[i + 2 * stride];
        const uint4 d = src[i + 3 * stride];
        dst[i] = a;
        dst[i + stride] = b;
        dst[i + 2 * stride] = c;
        dst[i + 3 * stride] = d;
    }
    for (; i < words; i += stride) {
        dst[i] = src[i];
    }
}

// peer_gather_blocks: the gather kernel of peer-bench's many-small-blocks sweep
// (bench/peer_blocks.py). Block b (of `nblocks`, each `words_per_block` 16-byte words) is read
// from slot slots[b] of `src` (slot k starts at k * words_per_block words: the blocks sit scattered
// over a region, in random order) and written to `dst` at b * words_per_block, packed. Launched on
// the destination GPU, `src` being the peer's memory through UVA and `slots` in local memory. The
// work is flattened to words so every block size keeps all threads busy (a 128-byte block is 8
// words); four independent loads in flight per thread, as in peer_copy. `shift` is
// log2(words_per_block) when that is a power of two (the sweep's sizes), else -1 (a division).
extern "C" __global__ void peer_gather_blocks(uint4 *__restrict__ dst, const uint4 *__restrict__ src,
                                              const unsigned long long *__restrict__ slots,
                                              unsigned long long words_per_block,
                                              unsigned long long nblocks, int shift)
{
    const unsigned long long total = words_per_block * nblocks;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    for (; i + 3 * stride < total; i += 4 * stride) {
        uint4 v[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const unsigned long long w = i + k * stride;
            const unsigned long long b = shift >= 0 ? (w >> shift) : (w / words_per_block);
            v[k] = src[slots[b] * words_per_block + (w - b * words_per_block)];
        }
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            dst[i + k * stride] = v[k];
        }
    }
    for (; i < total; i += stride) {
        const unsigned long long b = shift >= 0 ? (i >> shift) : (i / words_per_block);
        dst[i] = src[slots[b] * words_per_block + (i - b * words_per_block)];
    }
}

// peer_chase: the SM round-trip latency case (bench/peer_latency.py). One thread follows `hops`
// pointers, each 8-byte word holding the address of the next, starting from the address in
// *cursor and leaving the last one there (so the next launch continues around the ring instead of
// revisiting the same lines). Every load depends on the one before, so the kernel's time over
// `hops` is one load's round trip to wherever the ring lives: the peer's memory through UVA.
// The loads are volatile: ld.volatile is ld.relaxed.sys on sm_70+ (PTX ISA, "ld", and the memory
// consistency model: https://docs.nvidia.com/cuda/parallel-thread-execution/), a load that must see
// other agents' stores, so the SM's non-coherent L1 cannot serve it; the ring spans more than the
// L2, and each launch starts where the previous one stopped.
extern "C" __global__ void peer_chase(unsigned long long *cursor, unsigned long long hops)
{
    if (blockIdx.x != 0 || threadIdx.x != 0) {
        return;
    }
    const volatile unsigned long long *p = (const volatile unsigned long long *)(*cursor);
    for (unsigned long long h = 0; h < hops; ++h) {
        p = (const volatile unsigned long long *)(*p);
    }
    *cursor = (unsigned long long)p;
}
