// GPU<->GPU kernels for peer-bench (bench/peer.py).
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
