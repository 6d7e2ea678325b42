// Copy and compute kernels for copy-bench (bench/copy.py).
//
// copy_blocks: move `nblocks` blocks of `block_bytes` each from `src` (mapped pinned host
// memory or device memory) to `dst`. One CTA walks blocks in grid-stride order; threads
// move 16-byte words (uint4) when both pointers and the block size are 16-byte aligned,
// else bytes. This is the "(d) an NVRTC copy kernel" column of the block sweep: a GPU-
// initiated copy pays no per-block API call, only PCIe request overhead.
//
// busy_compute: a compute-bound stand-in for a layer of work in the overlap pipeline. It
// reads each element once, does `iters` dependent FMAs and writes the result, so its run
// time is set by `iters`, not by memory bandwidth.

extern "C" __global__ void copy_blocks(unsigned char *__restrict__ dst,
                                       const unsigned char *__restrict__ src,
                                       unsigned long long block_bytes,
                                       unsigned long long nblocks)
{
    const bool vec = ((reinterpret_cast<unsigned long long>(dst) |
                       reinterpret_cast<unsigned long long>(src) | block_bytes) & 15ull) == 0;
    for (unsigned long long b = blockIdx.x; b < nblocks; b += gridDim.x) {
        const unsigned long long base = b * block_bytes;
        if (vec) {
            const uint4 *s = reinterpret_cast<const uint4 *>(src + base);
            uint4 *d = reinterpret_cast<uint4 *>(dst + base);
            const unsigned long long words = block_bytes / 16;
            for (unsigned long long i = threadIdx.x; i < words; i += blockDim.x) {
                d[i] = s[i];
            }
        } else {
            for (unsigned long long i = threadIdx.x; i < block_bytes; i += blockDim.x) {
                dst[base + i] = src[base + i];
            }
        }
    }
}

extern "C" __global__ void busy_compute(float *__restrict__ data, unsigned long long n, int iters)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        float x = data[i];
        float a = 1.0001f, b = 0.9999f;
        for (int k = 0; k < iters; ++k) {
            x = fmaf(x, a, b);
            a = fmaf(a, b, 1e-7f);
        }
        data[i] = x;
    }
}
