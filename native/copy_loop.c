/*
 * copy_loop.c - copy-bench's per-block copy loops in C, to separate the CUDA driver's per-call
 * cost from the Python binding's.
 *
 * Loaded with ctypes by gdrdiag/hw/copy_native.py; built by scripts/build_native.sh into
 * build/native/libgdr_copy.so. It needs no CUDA headers and no CUDA at build time: the driver
 * is opened at run time with dlopen("libcuda.so.1") and the few entry points are declared
 * below from the CUDA Driver API reference (docs.nvidia.com/cuda/cuda-driver-api, "Memory
 * Management" and "Stream Management"; types from cuda.h: CUresult is an int enum, CUdeviceptr
 * is unsigned long long since CUDA 3.2 (the _v2 ABI), CUstream and CUcontext are pointers).
 *
 * The caller (Python, cuda-python) owns the context, the stream and the memory and passes them
 * as integers; this file only issues copies and times them with CLOCK_MONOTONIC.
 *
 * Return values: 0, a positive errno value, or GC_ECUDA (result->cu_error holds the CUresult
 * and result->cu_name its name) / GC_ENOTSUP; the message goes into (err, errlen). Nothing here
 * exits or prints.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GC_ABI_VERSION 2
#define GC_ECUDA 2001
#define GC_ENOTSUP 2002

typedef int CUresult;                   /* cuda.h: enum cudaError_enum; CUDA_SUCCESS = 0 */
typedef unsigned long long CUdeviceptr; /* cuda.h: CUdeviceptr_v2 */
typedef void *CUstream;                 /* cuda.h: struct CUstream_st * */
typedef void *CUcontext;                /* cuda.h: struct CUctx_st * */

/* cuda.h (12.8+): CUmemLocation and CUmemcpyAttributes_v1, for cuMemcpyBatchAsync. */
typedef struct {
	int type; /* CUmemLocationType; 0 = CU_MEM_LOCATION_TYPE_INVALID (no hint) */
	int id;
} gc_mem_location;

typedef struct {
	int src_access_order; /* CUmemcpySrcAccessOrder */
	gc_mem_location src_loc_hint;
	gc_mem_location dst_loc_hint;
	unsigned int flags; /* CUmemcpyFlags; 0 = CU_MEMCPY_FLAG_DEFAULT */
} gc_memcpy_attributes;

#define CU_MEMCPY_SRC_ACCESS_ORDER_STREAM 0x1 /* source read in stream order */
#define CUDA_ERROR_NOT_SUPPORTED 801

/*
 * Exported driver symbols. The unversioned C names in cuda.h are macros for versioned ones:
 * cuMemcpyHtoDAsync -> cuMemcpyHtoDAsync_v2, cuCtxPushCurrent -> cuCtxPushCurrent_v2,
 * cuCtxPopCurrent -> cuCtxPopCurrent_v2 (the _v2 ABI with 64-bit CUdeviceptr). cuMemcpyAsync
 * and cuStreamSynchronize have one version. cuMemcpyBatchAsync is the CUDA 12.8 ABI (with
 * failIdx); CUDA 13.0's cuda.h maps cuMemcpyBatchAsync to cuMemcpyBatchAsync_v2, without it,
 * and libcuda keeps the 12.8 symbol for binaries built against 12.8. Both are resolved; a batch
 * calls the one a program built against this driver's cuda.h calls: _v2 on a 13.0+ driver, the
 * 12.8 symbol on 12.8/12.9 (gdrdiag/hw/memcpy_batch.py picks the same way for the Python row).
 */
struct gc_driver {
	void *lib;
	int version;
	CUresult (*driver_get_version)(int *);
	CUresult (*get_error_name)(CUresult, const char **);
	CUresult (*ctx_get_current)(CUcontext *);
	CUresult (*ctx_push)(CUcontext);
	CUresult (*ctx_pop)(CUcontext *);
	CUresult (*memcpy_htod_async)(CUdeviceptr, const void *, size_t, CUstream);
	CUresult (*memcpy_async)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
	CUresult (*stream_sync)(CUstream);
	CUresult (*memcpy_batch_async)(CUdeviceptr *, CUdeviceptr *, size_t *, size_t,
				       gc_memcpy_attributes *, size_t *, size_t, size_t *, CUstream);
	CUresult (*memcpy_batch_async_v2)(CUdeviceptr *, CUdeviceptr *, size_t *, size_t,
					  gc_memcpy_attributes *, size_t *, size_t, CUstream);
};

static struct gc_driver drv;

/* Result of one timed loop. */
struct gc_result {
	uint64_t issue_ns; /* CLOCK_MONOTONIC around the issuing calls only */
	uint64_t total_ns; /* issue + cuStreamSynchronize (0 when not synchronised) */
	uint64_t calls;    /* driver calls issued */
	int32_t cu_error;  /* CUresult of the failing call */
	int32_t pad;
	uint64_t fail_index; /* the block whose copy failed */
	char cu_name[64];
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int gc_abi_version(void)
{
	return GC_ABI_VERSION;
}

static void *sym(const char *name)
{
	return dlsym(drv.lib, name);
}

/*
 * dlopen the driver and resolve the entry points (idempotent). ENOENT: no libcuda.so.1 (no
 * NVIDIA driver); ENOSYS: a required symbol is missing. cuMemcpyBatchAsync is optional.
 */
int gc_load(int *driver_version, char *err, size_t errlen)
{
	void *lib;

	if (drv.lib) {
		*driver_version = drv.version;
		return 0;
	}
	lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		const char *why = dlerror();

		set_err(err, errlen, "cannot load the CUDA driver (libcuda.so.1): %s",
			why ? why : "not found");
		return ENOENT;
	}
	drv.lib = lib;
	*(void **)&drv.driver_get_version = sym("cuDriverGetVersion");
	*(void **)&drv.get_error_name = sym("cuGetErrorName");
	*(void **)&drv.ctx_get_current = sym("cuCtxGetCurrent");
	*(void **)&drv.ctx_push = sym("cuCtxPushCurrent_v2");
	*(void **)&drv.ctx_pop = sym("cuCtxPopCurrent_v2");
	*(void **)&drv.memcpy_htod_async = sym("cuMemcpyHtoDAsync_v2");
	*(void **)&drv.memcpy_async = sym("cuMemcpyAsync");
	*(void **)&drv.stream_sync = sym("cuStreamSynchronize");
	*(void **)&drv.memcpy_batch_async = sym("cuMemcpyBatchAsync");
	*(void **)&drv.memcpy_batch_async_v2 = sym("cuMemcpyBatchAsync_v2");
	if (!drv.driver_get_version || !drv.get_error_name || !drv.ctx_get_current ||
	    !drv.ctx_push || !drv.ctx_pop || !drv.memcpy_htod_async || !drv.memcpy_async ||
	    !drv.stream_sync) {
		set_err(err, errlen, "libcuda.so.1 lacks a required entry point (driver too old?)");
		dlclose(lib);
		memset(&drv, 0, sizeof(drv));
		return ENOSYS;
	}
	if (drv.driver_get_version(&drv.version) != 0)
		drv.version = 0;
	*driver_version = drv.version;
	return 0;
}

/* The batch ABI a batch uses on this driver: 13000 (_v2), 12080 (the 12.8 symbol) or 0 (none). */
int gc_batch_abi(void)
{
	if (drv.version >= 13000 && drv.memcpy_batch_async_v2)
		return 13000;
	/* The driver API added cuMemcpyBatchAsync in CUDA 12.8 (driver version 12080). */
	if (drv.version >= 12080 && drv.memcpy_batch_async)
		return 12080;
	return 0;
}

/* 0 when cuMemcpyBatchAsync can be called; GC_ENOTSUP with the reason otherwise. */
int gc_batch_supported(char *err, size_t errlen)
{
	if (!drv.lib) {
		set_err(err, errlen, "the CUDA driver is not loaded (call gc_load first)");
		return EINVAL;
	}
	if (!gc_batch_abi()) {
		set_err(err, errlen,
			"cuMemcpyBatchAsync is not in this driver (version %d.%d; needs CUDA 12.8+)",
			drv.version / 1000, drv.version % 1000 / 10);
		return GC_ENOTSUP;
	}
	return 0;
}

static int cuda_fail(CUresult e, const char *call, uint64_t index, struct gc_result *r, char *err,
		     size_t errlen)
{
	const char *name = NULL;

	if (drv.get_error_name(e, &name) != 0 || !name)
		name = "CUDA_ERROR_UNKNOWN";
	r->cu_error = e;
	r->fail_index = index;
	snprintf(r->cu_name, sizeof(r->cu_name), "%s", name);
	set_err(err, errlen, "%s failed at block %llu: %s", call, (unsigned long long)index, name);
	return e == CUDA_ERROR_NOT_SUPPORTED ? GC_ENOTSUP : GC_ECUDA;
}

/* Make `ctx` current for this thread if it is not; *pushed says whether to pop afterwards. */
static int enter_ctx(uint64_t ctx, int *pushed, struct gc_result *r, char *err, size_t errlen)
{
	CUcontext cur = NULL;
	CUresult e;

	*pushed = 0;
	if (!ctx)
		return 0;
	e = drv.ctx_get_current(&cur);
	if (e)
		return cuda_fail(e, "cuCtxGetCurrent", 0, r, err, errlen);
	if ((uint64_t)(uintptr_t)cur == ctx)
		return 0;
	e = drv.ctx_push((CUcontext)(uintptr_t)ctx);
	if (e)
		return cuda_fail(e, "cuCtxPushCurrent", 0, r, err, errlen);
	*pushed = 1;
	return 0;
}

static void leave_ctx(int pushed)
{
	CUcontext popped;

	if (pushed)
		drv.ctx_pop(&popped);
}

/*
 * One driver call per block: block i copies `block` bytes from src + i*block to dst + i*block.
 * method 0: cuMemcpyHtoDAsync (src is host memory); method 1: cuMemcpyAsync (unified
 * addressing: either side may be host or device; the driver infers the direction).
 * sync: also cuStreamSynchronize and report total_ns.
 */
int gc_per_block(uint64_t ctx, uint64_t stream, uint64_t dst, uint64_t src, uint64_t block,
		 uint64_t count, int method, int sync, struct gc_result *r, char *err, size_t errlen)
{
	CUstream s = (CUstream)(uintptr_t)stream;
	uint64_t i, t0, t1;
	int pushed, rc;
	CUresult e = 0;

	memset(r, 0, sizeof(*r));
	if (!drv.lib) {
		set_err(err, errlen, "the CUDA driver is not loaded (call gc_load first)");
		return EINVAL;
	}
	if (!dst || !src || !block || !count || (method != 0 && method != 1)) {
		set_err(err, errlen, "bad arguments (dst, src, block and count must be non-zero; "
				     "method 0 or 1)");
		return EINVAL;
	}
	rc = enter_ctx(ctx, &pushed, r, err, errlen);
	if (rc)
		return rc;
	t0 = now_ns();
	if (method == 0) {
		for (i = 0; i < count; i++) {
			e = drv.memcpy_htod_async(dst + i * block,
						  (const void *)(uintptr_t)(src + i * block),
						  (size_t)block, s);
			if (e)
				break;
		}
	} else {
		for (i = 0; i < count; i++) {
			e = drv.memcpy_async(dst + i * block, src + i * block, (size_t)block, s);
			if (e)
				break;
		}
	}
	t1 = now_ns();
	r->calls = i;
	r->issue_ns = t1 - t0;
	if (e) {
		rc = cuda_fail(e, method == 0 ? "cuMemcpyHtoDAsync" : "cuMemcpyAsync", i, r, err,
			       errlen);
		goto out;
	}
	if (sync) {
		e = drv.stream_sync(s);
		r->total_ns = now_ns() - t0;
		if (e)
			rc = cuda_fail(e, "cuStreamSynchronize", count, r, err, errlen);
	}
out:
	leave_ctx(pushed);
	return rc;
}

/*
 * One cuMemcpyBatchAsync for all `count` blocks (one attribute set for all: source read in
 * stream order, no location hints), through the entry point gc_batch_abi() names. The pointer
 * arrays are built before the clock starts.
 */
int gc_batch(uint64_t ctx, uint64_t stream, uint64_t dst, uint64_t src, uint64_t block,
	     uint64_t count, int sync, struct gc_result *r, char *err, size_t errlen)
{
	CUstream s = (CUstream)(uintptr_t)stream;
	gc_memcpy_attributes attr;
	size_t attr_idx = 0, fail_idx = (size_t)-1;
	CUdeviceptr *dsts = NULL, *srcs = NULL;
	size_t *sizes = NULL;
	uint64_t i, t0;
	int pushed = 0, rc, v2;
	CUresult e;

	memset(r, 0, sizeof(*r));
	rc = gc_batch_supported(err, errlen);
	if (rc)
		return rc;
	v2 = gc_batch_abi() == 13000;
	if (!dst || !src || !block || !count) {
		set_err(err, errlen, "bad arguments (dst, src, block and count must be non-zero)");
		return EINVAL;
	}
	dsts = malloc(count * sizeof(*dsts));
	srcs = malloc(count * sizeof(*srcs));
	sizes = malloc(count * sizeof(*sizes));
	if (!dsts || !srcs || !sizes) {
		set_err(err, errlen, "out of memory for %llu batch entries", (unsigned long long)count);
		rc = ENOMEM;
		goto out;
	}
	for (i = 0; i < count; i++) {
		dsts[i] = dst + i * block;
		srcs[i] = src + i * block;
		sizes[i] = (size_t)block;
	}
	memset(&attr, 0, sizeof(attr));
	attr.src_access_order = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
	rc = enter_ctx(ctx, &pushed, r, err, errlen);
	if (rc)
		goto out;
	t0 = now_ns();
	if (v2)
		e = drv.memcpy_batch_async_v2(dsts, srcs, sizes, (size_t)count, &attr, &attr_idx, 1, s);
	else
		e = drv.memcpy_batch_async(dsts, srcs, sizes, (size_t)count, &attr, &attr_idx, 1,
					   &fail_idx, s);
	r->issue_ns = now_ns() - t0;
	r->calls = 1;
	if (e) {
		const char *call = v2 ? "cuMemcpyBatchAsync_v2" : "cuMemcpyBatchAsync";

		/* _v2 names no failing copy; the 12.8 call sets SIZE_MAX when none is to blame. */
		rc = cuda_fail(e, call, v2 ? count : fail_idx, r, err, errlen);
		if (v2 || fail_idx >= count)
			set_err(err, errlen, "%s failed for a batch of %llu copies: %s", call,
				(unsigned long long)count, r->cu_name);
		goto out;
	}
	if (sync) {
		e = drv.stream_sync(s);
		r->total_ns = now_ns() - t0;
		if (e)
			rc = cuda_fail(e, "cuStreamSynchronize", count, r, err, errlen);
	}
out:
	leave_ctx(pushed);
	free(dsts);
	free(srcs);
	free(sizes);
	return rc;
}
