"""CUDA dma-buf export for the ``dmabuf`` registration path: GPU pages as an fd for ibv_reg_dmabuf_mr."""

from __future__ import annotations

from dataclasses import dataclass

from gdrdiag.errors import HardwareError, NotSupported


@dataclass(frozen=True)
class DmabufExport:
    """A dma-buf fd covering ``[base_va, base_va + span)``; the buffer starts ``offset`` bytes in."""

    fd: int
    base_va: int
    span: int
    offset: int


def export_cuda_dmabuf(ptr: int, nbytes: int, page: int = 64 * 1024) -> DmabufExport:
    """Export the GPU pages under ``[ptr, ptr + nbytes)`` as a dma-buf fd.

    ``cuMemGetHandleForAddressRange`` needs a host-page aligned range; we round out to the
    64 KiB GPU page that GPUDirect pins, so the caller's allocation must extend that far.
    The caller closes ``fd`` (after registering: the MR keeps its own reference).
    """
    from gdrdiag.hw import cuda

    drv = cuda.driver()
    base = ptr - ptr % page
    end = -(-(ptr + nbytes) // page) * page
    try:
        fd = cuda.call(
            cuda.driver().cuMemGetHandleForAddressRange,
            base,
            end - base,
            drv.CUmemRangeHandleType.CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
            0,
        )
    except HardwareError as exc:
        if exc.name in ("CUDA_ERROR_NOT_SUPPORTED", "CUDA_ERROR_INVALID_VALUE"):
            raise NotSupported(
                f"CUDA cannot export this range as a dma-buf ({exc.name}): needs "
                f"DMA_BUF_SUPPORTED, the open NVIDIA kernel module and a CUDA >= 11.7 "
                f"driver"
            ) from None
        raise
    return DmabufExport(int(fd), base, end - base, ptr - base)
