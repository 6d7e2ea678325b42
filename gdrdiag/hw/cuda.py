"""CUDA driver access through cuda-python (``cuda.bindings.driver``).

Every driver call goes through :func:`check` (most through :func:`call`, which takes the binding
itself), turning cuda-python's ``(CUresult, *values)`` tuples into values or a
:class:`~gdrdiag.errors.HardwareError` naming the call, the numeric code, the symbolic name and an
explanation: the driver's text, then the entry of :data:`CU_RESULT_EXPLANATIONS` (what the code
usually means here). No GPU or no driver is a normal state: :func:`init` raises
:class:`~gdrdiag.errors.NotSupported` with the reason, and commands report WAIVED.

The driver API is used directly (not the runtime) because it is what cuda-python exposes
without a toolkit install, and because it makes contexts explicit: gdrdiag retains each
device's *primary* context (the one the runtime, CuPy and PyTorch share), so our buffers and
theirs live in the same address space and reference copies by another library are fair.
"""

from __future__ import annotations

import ctypes
import functools
import os
import threading
from typing import Any, Callable, Iterable, Optional, Sequence

from gdrdiag.errors import HardwareError, NotSupported
from gdrdiag.model.machine import CudaDeviceFacts

# The GPUDirect-related attributes inspect reports (the CUdevice_attribute values the GPUDirect RDMA
# guide names, https://docs.nvidia.com/cuda/gpudirect-rdma/index.html) plus the ones
# the benches need. Names are CUdevice_attribute members without the CU_DEVICE_ATTRIBUTE_ prefix.
REPORTED_ATTRIBUTES = (
    "GPU_DIRECT_RDMA_SUPPORTED",
    "GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS",
    "GPU_DIRECT_RDMA_WRITES_ORDERING",
    "GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED",
    "DMA_BUF_SUPPORTED",
    "HOST_ALLOC_DMA_BUF_SUPPORTED",
    "UNIFIED_ADDRESSING",
    "CAN_MAP_HOST_MEMORY",
    "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM",
    "PAGEABLE_MEMORY_ACCESS",
    "PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES",
    "CONCURRENT_MANAGED_ACCESS",
    "HOST_REGISTER_SUPPORTED",
    "READ_ONLY_HOST_REGISTER_SUPPORTED",
    "ASYNC_ENGINE_COUNT",
    "PCI_DOMAIN_ID",
    "PCI_BUS_ID",
    "PCI_DEVICE_ID",
    "MULTIPROCESSOR_COUNT",
    "MAX_THREADS_PER_MULTIPROCESSOR",
    "L2_CACHE_SIZE",
    "CLOCK_RATE",
    "MEMORY_CLOCK_RATE",
    "GLOBAL_MEMORY_BUS_WIDTH",
)

_init_lock = threading.Lock()
_init_error: Optional[NotSupported] = None
_initialised = False


@functools.lru_cache(maxsize=1)
def driver() -> Any:
    """The ``cuda.bindings.driver`` module, imported on first use (keeps ``--help`` fast)."""
    try:
        from cuda.bindings import driver as drv
    except ImportError as exc:  # pragma: no cover - dependency is declared
        raise NotSupported(f"cuda-python (cuda-bindings) is not installed: {exc}") from None
    return drv


# What the common CUresult codes mean for gdrdiag's calls and where to look next, keyed by the
# symbolic name. The meanings follow the CUresult reference of the CUDA driver API
# (https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html, enum cudaError_enum).
# Every HardwareError and NotSupported built from a CUresult carries the entry after the driver's
# own cuGetErrorString text (which is empty where the driver cannot be loaded); the C and ctypes
# copy paths (copy_native.py, memcpy_batch.py) use the same table through :func:`explain`.
CU_RESULT_EXPLANATIONS: dict[str, str] = {
    "CUDA_ERROR_INVALID_VALUE": "an argument is outside what this call accepts (size, pointer, flag, count)",
    "CUDA_ERROR_OUT_OF_MEMORY": (
        "the allocation does not fit: another process may hold GPU memory (nvidia-smi), "
        "or ask for a smaller size"
    ),
    "CUDA_ERROR_NOT_INITIALIZED": "cuInit has not succeeded in this process",
    "CUDA_ERROR_DEINITIALIZED": "the driver is shutting down (a call made while the process exits)",
    "CUDA_ERROR_NO_DEVICE": (
        "the driver sees no CUDA-capable GPU: check nvidia-smi, the driver install and CUDA_VISIBLE_DEVICES"
    ),
    "CUDA_ERROR_INVALID_DEVICE": (
        "no such GPU ordinal in this process (CUDA_VISIBLE_DEVICES hides and renumbers GPUs)"
    ),
    "CUDA_ERROR_DEVICE_UNAVAILABLE": (
        "the GPU is busy or unavailable: exclusive-process compute mode with another process on it, "
        "or a MIG/vGPU setting (nvidia-smi -q -d COMPUTE)"
    ),
    "CUDA_ERROR_INVALID_CONTEXT": "no valid CUDA context is current on this thread",
    "CUDA_ERROR_CONTEXT_IS_DESTROYED": "the context this call used has been destroyed",
    "CUDA_ERROR_INVALID_HANDLE": "a stream, event, module or function handle is not valid (destroyed?)",
    "CUDA_ERROR_NOT_PERMITTED": "the driver does not permit this operation in the current configuration",
    "CUDA_ERROR_NOT_SUPPORTED": "this GPU, driver or platform does not support the operation",
    "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH": (
        "the user-mode driver (libcuda) and the kernel module are different versions: reinstall "
        "or reboot after a driver update"
    ),
    "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE": (
        "a CUDA forward-compatibility libcuda is in use on a GPU it does not support"
    ),
    "CUDA_ERROR_SYSTEM_NOT_READY": (
        "the system is not ready for CUDA: on NVSwitch systems check that nvidia-fabricmanager is running"
    ),
    "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED": (
        "these two GPUs cannot map each other's memory: no P2P path between them (IOMMU or ACS "
        "redirect, different root complexes, or a virtual machine)"
    ),
    "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED": "peer access between these contexts is already enabled",
    "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED": "peer access between these contexts has not been enabled",
    "CUDA_ERROR_TOO_MANY_PEERS": "the hardware resources for another peer mapping are exhausted on this GPU",
    "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED": "this host range (or part of it) is already registered",
    "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED": "this host range is not registered with CUDA",
    "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES": (
        "the launch needs more registers, threads or shared memory per block than the GPU has"
    ),
    "CUDA_ERROR_LAUNCH_TIMEOUT": "the kernel ran past the display watchdog's limit",
    "CUDA_ERROR_LAUNCH_FAILED": (
        "a kernel failed while running; the context is unusable and the process must restart"
    ),
    "CUDA_ERROR_ILLEGAL_ADDRESS": (
        "a kernel or copy touched an address outside any valid allocation; the context is unusable "
        "and the process must restart"
    ),
    "CUDA_ERROR_MISALIGNED_ADDRESS": (
        "a kernel accessed a misaligned address; the context is unusable and the process must restart"
    ),
    "CUDA_ERROR_ILLEGAL_INSTRUCTION": (
        "a kernel executed an illegal instruction; the context is unusable and the process must restart"
    ),
    "CUDA_ERROR_ECC_UNCORRECTABLE": (
        "the GPU reported an uncorrectable ECC error (nvidia-smi -q -d ECC); the GPU may need a reset"
    ),
    "CUDA_ERROR_NVLINK_UNCORRECTABLE": "an uncorrectable NVLink error was detected (nvidia-smi nvlink -e)",
    "CUDA_ERROR_UNSUPPORTED_PTX_VERSION": (
        "the PTX is newer than this driver's JIT accepts: update the driver (gdrdiag compiles CUBIN "
        "where NVRTC can target the GPU)"
    ),
    "CUDA_ERROR_INVALID_PTX": "the driver's JIT could not compile the PTX",
    "CUDA_ERROR_NO_BINARY_FOR_GPU": "the module has no code for this GPU's architecture",
    "CUDA_ERROR_NOT_FOUND": "a named symbol (a kernel or global) is not in the module",
    "CUDA_ERROR_OPERATING_SYSTEM": "an operating-system call made by the driver failed (see dmesg)",
    "CUDA_ERROR_UNKNOWN": "the driver gave no specific reason (see dmesg for Xid messages)",
}


def explain(name: str, detail: str = "") -> str:
    """The explanation for CUresult ``name``: ``detail``, then gdrdiag's table entry.

    ``detail`` is the driver's own text (cuGetErrorString) or what the failing call knows. Either
    part may be missing (the driver cannot be asked where libcuda is unusable; the table covers the
    common codes only); an unknown code with no detail explains as "".
    """
    ours = CU_RESULT_EXPLANATIONS.get(name, "")
    if detail and ours:
        return f"{detail}; {ours}"
    return detail or ours


def _error_text(drv: Any, err: Any) -> tuple[str, str]:
    """(symbolic name, explanation) of CUresult ``err``; the driver's text where it can give it."""
    name = getattr(err, "name", str(err))
    try:
        res, desc = drv.cuGetErrorString(err)
        driver_text = desc.decode() if isinstance(desc, bytes) else str(desc)
    except Exception:  # the driver may be unusable; keep the name
        driver_text = ""
    return name, explain(name, driver_text)


def check(result: Sequence[Any] | Any, call: str) -> Any:
    """Unwrap a cuda-python result tuple.

    Returns ``None`` for calls with no outputs, the single value for one output, or a tuple.
    Raises ``HardwareError(call, code, name, explanation)`` when the CUresult is not SUCCESS.
    """
    drv = driver()
    if isinstance(result, tuple):
        err, values = result[0], result[1:]
    else:
        err, values = result, ()
    if int(err) != int(drv.CUresult.CUDA_SUCCESS):
        name, explanation = _error_text(drv, err)
        raise HardwareError(call, int(err), name, explanation)
    if not values:
        return None
    return values[0] if len(values) == 1 else values


def call(fn: Callable[..., Any], *args: Any) -> Any:
    """Call the driver binding ``fn`` with ``args`` through :func:`check`.

    Pass the function object, ``call(driver().cuMemAlloc, size)``, never its name as a string:
    grep and a type checker then see which driver function each site calls, and
    tests/unit/test_driver_calls.py checks every such site against the installed bindings. The
    error names the call by ``fn.__name__``.
    """
    if isinstance(fn, str):  # a name in a string (the retired form) would dodge the checks above
        raise TypeError(f"cuda.call takes the driver function, not its name: call(driver().{fn}, ...)")
    return check(fn(*args), getattr(fn, "__name__", repr(fn)))


def init() -> None:
    """Initialise the driver once; raise NotSupported with the reason if there is no usable GPU."""
    global _initialised, _init_error
    with _init_lock:
        if _initialised:
            return
        if _init_error is not None:
            raise _init_error
        try:
            drv = driver()
            (err,) = drv.cuInit(0)
        except NotSupported as exc:
            _init_error = exc
            raise
        except Exception as exc:
            # cuda-pathfinder raises when libcuda.so.1 is absent (a machine with no NVIDIA driver).
            _init_error = NotSupported(f"no NVIDIA driver: {exc}")
            raise _init_error from None
        if int(err) != int(drv.CUresult.CUDA_SUCCESS):
            name, explanation = _error_text(drv, err)
            _init_error = NotSupported(f"cuInit failed: {name} ({explanation})")
            raise _init_error
        _initialised = True


def device_count() -> int:
    """Number of CUDA devices visible to this process (after :func:`init`)."""
    init()
    return int(call(driver().cuDeviceGetCount))


def driver_version() -> int:
    """Driver API version as an integer, e.g. 13000 for CUDA 13.0."""
    init()
    return int(call(driver().cuDriverGetVersion))


def get_device(ordinal: int = 0) -> Any:
    """The CUdevice handle of ``ordinal``; NotSupported when there is no such GPU."""
    n = device_count()
    if n == 0:
        raise NotSupported("the CUDA driver sees no GPU")
    if not 0 <= ordinal < n:
        raise NotSupported(f"GPU {ordinal} does not exist (this machine has {n})")
    return call(driver().cuDeviceGet, ordinal)


def device_attribute(dev: Any, name: str) -> Optional[int]:
    """One CUdevice_attribute by short name; None if this driver does not know it."""
    drv = driver()
    enum_name = f"CU_DEVICE_ATTRIBUTE_{name}"
    attr = getattr(drv.CUdevice_attribute, enum_name, None)
    if attr is None:
        return None
    err, value = drv.cuDeviceGetAttribute(attr, dev)
    if int(err) != int(drv.CUresult.CUDA_SUCCESS):
        return None  # an attribute newer than the driver reads as unknown, not as 0
    return int(value)


def device_name(dev: Any) -> str:
    """Marketing name of the GPU."""
    raw = call(driver().cuDeviceGetName, 256, dev)
    return raw.split(b"\0", 1)[0].decode(errors="replace")


def compute_capability(dev: Any) -> tuple[int, int]:
    """(major, minor) compute capability."""
    major = device_attribute(dev, "COMPUTE_CAPABILITY_MAJOR")
    minor = device_attribute(dev, "COMPUTE_CAPABILITY_MINOR")
    return int(major or 0), int(minor or 0)


def device_facts(ordinal: int = 0) -> CudaDeviceFacts:
    """A plain-data snapshot of one GPU for inspect and for Reports."""
    dev = get_device(ordinal)
    attrs = {name: device_attribute(dev, name) for name in REPORTED_ATTRIBUTES}
    bus_id = call(driver().cuDeviceGetPCIBusId, 32, dev)
    bus_id = bus_id.split(b"\0", 1)[0].decode() if isinstance(bus_id, bytes) else str(bus_id)
    return CudaDeviceFacts(
        ordinal=ordinal,
        name=device_name(dev),
        pci_bus_id=bus_id.lower(),
        compute_capability=compute_capability(dev),
        total_memory=int(call(driver().cuDeviceTotalMem, dev)),
        multiprocessor_count=int(attrs.get("MULTIPROCESSOR_COUNT") or 0),
        attributes=attrs,
    )


def all_device_facts() -> list[CudaDeviceFacts]:
    """Facts for every visible GPU (empty when the driver sees none)."""
    return [device_facts(i) for i in range(device_count())]


class GpuContext:
    """Retain the primary context of one GPU and make it current for the calling thread.

    Use as a context manager; the primary context is released on exit (Ctrl-C included).
    Nesting is allowed: retain/release are reference counted by the driver.
    """

    def __init__(self, ordinal: int = 0):
        self.ordinal = ordinal
        self.device = get_device(ordinal)
        self.handle: Any = None

    def __enter__(self) -> "GpuContext":
        self.handle = call(driver().cuDevicePrimaryCtxRetain, self.device)
        call(driver().cuCtxSetCurrent, self.handle)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Release the primary context (idempotent)."""
        if self.handle is not None:
            self.handle = None
            call(driver().cuDevicePrimaryCtxRelease, self.device)

    def synchronize(self) -> None:
        """Wait for all work in the context."""
        call(driver().cuCtxSynchronize)

    def free_memory(self) -> tuple[int, int]:
        """(free, total) device memory in bytes."""
        free, total = call(driver().cuMemGetInfo)
        return int(free), int(total)

    @property
    def sm_count(self) -> int:
        """Streaming multiprocessors on this GPU."""
        return int(device_attribute(self.device, "MULTIPROCESSOR_COUNT") or 0)

    @property
    def arch(self) -> str:
        """The ``sm_XY`` name NVRTC compiles for."""
        major, minor = compute_capability(self.device)
        return f"sm_{major}{minor}"


class Stream:
    """A non-blocking CUDA stream, destroyed on exit."""

    def __init__(self) -> None:
        drv = driver()
        self.handle = call(driver().cuStreamCreate, int(drv.CUstream_flags.CU_STREAM_NON_BLOCKING))

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def synchronize(self) -> None:
        """Block until all work queued on the stream is done."""
        call(driver().cuStreamSynchronize, self.handle)

    def wait(self, event: "Event") -> None:
        """Make later work on this stream wait for ``event``."""
        call(driver().cuStreamWaitEvent, self.handle, event.handle, 0)

    def close(self) -> None:
        """Destroy the stream (idempotent)."""
        if self.handle is not None:
            handle, self.handle = self.handle, None
            call(driver().cuStreamDestroy, handle)


class Event:
    """A CUDA event with timing enabled (for :func:`elapsed_ms`)."""

    def __init__(self) -> None:
        drv = driver()
        self.handle = call(driver().cuEventCreate, int(drv.CUevent_flags.CU_EVENT_DEFAULT))

    def __enter__(self) -> "Event":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def record(self, stream: Stream) -> None:
        """Record the event on ``stream``."""
        call(driver().cuEventRecord, self.handle, stream.handle)

    def synchronize(self) -> None:
        """Wait until the event has completed."""
        call(driver().cuEventSynchronize, self.handle)

    def close(self) -> None:
        """Destroy the event (idempotent)."""
        if self.handle is not None:
            handle, self.handle = self.handle, None
            call(driver().cuEventDestroy, handle)


def elapsed_ms(start: Event, end: Event) -> float:
    """Milliseconds between two recorded events (GPU clock, ~0.5 us resolution)."""
    end.synchronize()
    return float(call(driver().cuEventElapsedTime, start.handle, end.handle))


def launch(
    function: Any,
    grid: int | tuple[int, int, int],
    block: int | tuple[int, int, int],
    args: Iterable[tuple[Any, Any]],
    stream: Stream,
    shared_mem: int = 0,
    overlap_previous: bool = False,
) -> None:
    """Launch a kernel; ``args`` are (value, ctypes type) pairs in parameter order.

    Pointers are passed as ints with ``ctypes.c_void_p`` (cuda-python's documented
    ``kernelParams=((values...), (types...))`` form).

    ``overlap_previous`` launches with programmatic dependent launch (CUDA 11.8+, compute
    capability 9.0+; CUDA Programming Guide, "Programmatic Dependent Launch and
    Synchronization"): the grid may start before the previous kernel in the stream has finished,
    as soon as every CTA of that kernel has executed ``griddepcontrol.launch_dependents`` or
    exited. The kernel itself must execute ``griddepcontrol.wait`` before it touches anything the
    previous kernel writes or reads back; the caller checks the device's compute capability.
    """
    g = (grid, 1, 1) if isinstance(grid, int) else grid
    b = (block, 1, 1) if isinstance(block, int) else block
    pairs = list(args)
    params = (tuple(v for v, _ in pairs), tuple(t for _, t in pairs))
    if not overlap_previous:
        call(driver().cuLaunchKernel, function, *g, *b, shared_mem, stream.handle, params, 0)
        return
    drv = driver()
    config = drv.CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = g
    config.blockDimX, config.blockDimY, config.blockDimZ = b
    config.sharedMemBytes = shared_mem
    config.hStream = stream.handle
    attr = drv.CUlaunchAttribute()
    attr.id = drv.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
    attr.value.programmaticStreamSerializationAllowed = 1
    config.attrs = [attr]
    config.numAttrs = 1
    call(driver().cuLaunchKernelEx, config, function, params, 0)


# Re-exported for kernel argument lists.
c_void_p = ctypes.c_void_p
c_int = ctypes.c_int
c_uint = ctypes.c_uint
c_longlong = ctypes.c_longlong
c_ulonglong = ctypes.c_ulonglong


def visible_devices() -> Optional[str]:
    """``CUDA_VISIBLE_DEVICES`` as this process has it: None when unset, "" when it hides every GPU.

    The driver enumerates only the GPUs it names, in its order, while NVML lists every GPU (CUDA C++
    Programming Guide, "CUDA Environment Variables",
    https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#cuda-environment-variables), so
    inspect can tell a hidden GPU from a missing one; a bundle records it with the CUDA facts.
    """
    return os.environ.get("CUDA_VISIBLE_DEVICES")
