"""Reference host-to-device copies made by *another* library, for a fairness check.

copy-bench's pinned H2D number is only trustworthy if an independent implementation moving
the same bytes gets the same bandwidth in the same run. CuPy can copy between raw pointers,
so it copies *our* pinned buffer into *our* device buffer (same primary context). PyTorch
cannot take a raw host pointer, so it copies its own pinned tensor of the same size.
Both are optional: absent libraries make the reference WAIVED, never an error.
"""

from __future__ import annotations

from dataclasses import dataclass

from gdrdiag.errors import NotSupported


@dataclass(frozen=True)
class ReferenceTiming:
    """Seconds per copy of ``nbytes`` and what produced them."""

    library: str
    seconds: tuple[float, ...]
    same_buffers: bool
    method: str


def cupy_h2d(
    device_ordinal: int, dst: int, src: int, nbytes: int, *, iterations: int, warmup: int = 2
) -> ReferenceTiming:
    """Time ``cupy.cuda.runtime.memcpyAsync`` host->device between our own pointers."""
    try:
        import cupy
    except Exception as exc:  # ImportError, or a CuPy built for another CUDA
        raise NotSupported(f"CuPy is not usable here: {exc}") from None
    with cupy.cuda.Device(device_ordinal):
        stream = cupy.cuda.Stream(non_blocking=True)
        kind = cupy.cuda.runtime.memcpyHostToDevice
        for _ in range(warmup):
            cupy.cuda.runtime.memcpyAsync(dst, src, nbytes, kind, stream.ptr)
        stream.synchronize()
        samples = []
        for _ in range(iterations):
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            start.record(stream)
            cupy.cuda.runtime.memcpyAsync(dst, src, nbytes, kind, stream.ptr)
            end.record(stream)
            end.synchronize()
            samples.append(cupy.cuda.get_elapsed_time(start, end) / 1e3)
    return ReferenceTiming(
        f"cupy {cupy.__version__}",
        tuple(samples),
        True,
        "cupy.cuda.runtime.memcpyAsync on our pinned and device buffers; CUDA events "
        f"per copy; {warmup} warm-up, {iterations} samples, median",
    )


def torch_h2d(device_ordinal: int, nbytes: int, *, iterations: int, warmup: int = 2) -> ReferenceTiming:
    """Time ``tensor.copy_(pinned, non_blocking=True)`` with PyTorch's own pinned buffer."""
    try:
        import torch
    except Exception as exc:
        raise NotSupported(f"PyTorch is not usable here: {exc}") from None
    if not torch.cuda.is_available():
        raise NotSupported("PyTorch sees no CUDA device")
    dev = torch.device("cuda", device_ordinal)
    src = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    dst = torch.empty(nbytes, dtype=torch.uint8, device=dev)
    try:
        stream = torch.cuda.Stream(device=dev)
        with torch.cuda.stream(stream):
            for _ in range(warmup):
                dst.copy_(src, non_blocking=True)
            stream.synchronize()
            samples = []
            for _ in range(iterations):
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record(stream)
                dst.copy_(src, non_blocking=True)
                end.record(stream)
                end.synchronize()
                samples.append(start.elapsed_time(end) / 1e3)
    finally:
        del src, dst
    return ReferenceTiming(
        f"torch {torch.__version__}",
        tuple(samples),
        False,
        "torch Tensor.copy_(non_blocking=True) from its own pinned tensor of the same "
        f"size; CUDA events per copy; {warmup} warm-up, {iterations} samples, median",
    )


def cupy_peer(
    src_device: int, dst_device: int, dst: int, src: int, nbytes: int, *, iterations: int, warmup: int = 2
) -> ReferenceTiming:
    """Time ``cupy.cuda.runtime.memcpyPeerAsync`` between our own buffers on two GPUs.

    Issued on a CuPy stream of the source GPU, as gdrdiag issues its own. CuPy works in the same
    primary contexts, so peer access as gdrdiag set it applies to CuPy's copy too. The runtime
    leaves the source GPU's primary context current; the caller makes its own current again.
    """
    try:
        import cupy
    except Exception as exc:
        raise NotSupported(f"CuPy is not usable here: {exc}") from None
    with cupy.cuda.Device(src_device):
        stream = cupy.cuda.Stream(non_blocking=True)
        for _ in range(warmup):
            cupy.cuda.runtime.memcpyPeerAsync(dst, dst_device, src, src_device, nbytes, stream.ptr)
        stream.synchronize()
        samples = []
        for _ in range(iterations):
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            start.record(stream)
            cupy.cuda.runtime.memcpyPeerAsync(dst, dst_device, src, src_device, nbytes, stream.ptr)
            end.record(stream)
            end.synchronize()
            samples.append(cupy.cuda.get_elapsed_time(start, end) / 1e3)
    return ReferenceTiming(
        f"cupy {cupy.__version__}",
        tuple(samples),
        True,
        "cupy.cuda.runtime.memcpyPeerAsync on our buffers, a CuPy stream of the source GPU; CUDA "
        f"events per copy; {warmup} warm-up, {iterations} samples, median",
    )
