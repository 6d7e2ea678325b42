"""Compile ``native/*.cu`` at run time with NVRTC and load the result into the current context.

Why CUBIN first: NVRTC from PyPI can be newer than the installed driver, and PTX it emits may
carry an ISA version the driver's JIT rejects (CUDA_ERROR_UNSUPPORTED_PTX_VERSION). A CUBIN
for the device's exact ``sm_XY`` needs no JIT, so it loads on any driver that supports the
GPU. PTX (``compute_XY``) is only a fallback, used when NVRTC cannot target the architecture.

Images are cached on disk, keyed by (source hash, arch, options, NVRTC version), under
``$GDRDIAG_CACHE_DIR`` or ``$XDG_CACHE_HOME/gdrdiag/nvrtc`` (``~/.cache/...``). A failed
compile raises :class:`NvrtcError` with the full NVRTC log and the options used.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

from gdrdiag.errors import HardwareError, NotSupported, UserInputError

NATIVE_DIR = Path(__file__).resolve().parents[2] / "native"
DEFAULT_OPTIONS = ("-std=c++17", "--use_fast_math", "-lineinfo")


class NvrtcError(HardwareError):
    """NVRTC failed; ``log`` holds the compiler output and ``options`` what was passed."""

    def __init__(self, call: str, code: int, name: str, log: str, options: Sequence[str]):
        self.log = log
        self.options = tuple(options)
        super().__init__(call, code, name, f"options: {' '.join(options)}\n{log}".rstrip())


@dataclass(frozen=True)
class CompiledImage:
    """A compiled kernel image and how it was produced."""

    source_name: str
    arch: str
    kind: str  # "cubin" or "ptx"
    image: bytes
    options: tuple[str, ...]
    nvrtc_version: tuple[int, int]
    from_cache: bool


@functools.lru_cache(maxsize=1)
def _nvrtc() -> Any:
    try:
        from cuda.bindings import nvrtc
    except ImportError as exc:  # pragma: no cover - declared dependency
        raise NotSupported(f"NVRTC bindings are not installed: {exc}") from None
    return nvrtc


def _check(result: Any, call: str, prog: Any = None, options: Sequence[str] = ()) -> Any:
    nv = _nvrtc()
    err, *values = result if isinstance(result, tuple) else (result,)
    if int(err) != int(nv.nvrtcResult.NVRTC_SUCCESS):
        log = _program_log(prog) if prog is not None else ""
        raise NvrtcError(call, int(err), getattr(err, "name", str(err)), log, options)
    if not values:
        return None
    return values[0] if len(values) == 1 else tuple(values)


def _program_log(prog: Any) -> str:
    nv = _nvrtc()
    try:
        err, size = nv.nvrtcGetProgramLogSize(prog)
        buf = b" " * size
        nv.nvrtcGetProgramLog(prog, buf)
        return buf.rstrip(b"\0 ").decode(errors="replace")
    except Exception:
        return "(log unavailable)"


def version() -> tuple[int, int]:
    """NVRTC's (major, minor) version."""
    major, minor = _check(_nvrtc().nvrtcVersion(), "nvrtcVersion")
    return int(major), int(minor)


def supported_archs() -> list[int]:
    """SM versions this NVRTC can emit CUBIN for, e.g. [75, 80, ..., 120]."""
    return [int(a) for a in _check(_nvrtc().nvrtcGetSupportedArchs(), "nvrtcGetSupportedArchs")]


def cache_dir() -> Path:
    """Where compiled images are kept between runs."""
    env = os.environ.get("GDRDIAG_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gdrdiag" / "nvrtc"


def source_path(name: str) -> Path:
    """Path of ``native/<name>`` (``name`` with or without ``.cu``)."""
    file = name if name.endswith(".cu") else f"{name}.cu"
    path = NATIVE_DIR / file
    if not path.is_file():
        raise UserInputError(f"no kernel source {file!r} in {NATIVE_DIR}")
    return path


def compile_source(
    source_name: str, arch: str, options: Sequence[str] = DEFAULT_OPTIONS, *, use_cache: bool = True
) -> CompiledImage:
    """Compile ``native/<source_name>`` for ``arch`` (``"sm_90"``): CUBIN, else PTX fallback."""
    if not arch.startswith("sm_") or not arch[3:].isdigit():
        raise UserInputError(f"architecture must look like sm_90, got {arch!r}")
    path = source_path(source_name)
    source = path.read_bytes()
    nv_version = version()
    sm = int(arch[3:])
    kind = "cubin" if sm in supported_archs() else "ptx"
    target = f"--gpu-architecture={'sm' if kind == 'cubin' else 'compute'}_{sm}"
    all_options = (target, *options)
    key = hashlib.sha256(
        b"\0".join(
            [source, arch.encode(), kind.encode(), " ".join(all_options).encode(), f"{nv_version}".encode()]
        )
    ).hexdigest()[:32]
    cached = cache_dir() / f"{path.stem}-{arch}-{key}.{kind}"
    if use_cache and cached.is_file():
        return CompiledImage(path.name, arch, kind, cached.read_bytes(), all_options, nv_version, True)

    nv = _nvrtc()
    prog = _check(nv.nvrtcCreateProgram(source, path.name.encode(), 0, [], []), "nvrtcCreateProgram")
    try:
        opts = [o.encode() for o in all_options]
        _check(nv.nvrtcCompileProgram(prog, len(opts), opts), "nvrtcCompileProgram", prog, all_options)
        if kind == "cubin":
            size = _check(nv.nvrtcGetCUBINSize(prog), "nvrtcGetCUBINSize")
            image = b" " * size
            _check(nv.nvrtcGetCUBIN(prog, image), "nvrtcGetCUBIN")
        else:
            size = _check(nv.nvrtcGetPTXSize(prog), "nvrtcGetPTXSize")
            image = b" " * size
            _check(nv.nvrtcGetPTX(prog, image), "nvrtcGetPTX")
    finally:
        nv.nvrtcDestroyProgram(prog)
    if use_cache:
        _write_atomically(cached, image)
    return CompiledImage(path.name, arch, kind, image, all_options, nv_version, False)


def _write_atomically(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only home only costs a recompile next time


class Module:
    """A compiled image loaded into the current CUDA context; ``function(name)`` gets kernels."""

    def __init__(self, compiled: CompiledImage):
        from gdrdiag.hw import cuda

        self.compiled = compiled
        self._functions: dict[str, Any] = {}
        self.handle = cuda.call(cuda.driver().cuModuleLoadData, compiled.image)

    def function(self, name: str) -> Any:
        """The CUfunction for ``extern "C"`` kernel ``name``."""
        from gdrdiag.hw import cuda

        if name not in self._functions:
            self._functions[name] = cuda.call(cuda.driver().cuModuleGetFunction, self.handle, name.encode())
        return self._functions[name]

    def close(self) -> None:
        """Unload the module (idempotent)."""
        from gdrdiag.hw import cuda

        if self.handle is not None:
            handle, self.handle = self.handle, None
            self._functions.clear()
            cuda.call(cuda.driver().cuModuleUnload, handle)

    def __enter__(self) -> "Module":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def load(
    source_name: str,
    arch: str,
    options: Sequence[str] = DEFAULT_OPTIONS,
    extra_options: Optional[Sequence[str]] = None,
) -> Module:
    """Compile (or fetch from cache) and load ``native/<source_name>`` for ``arch``."""
    opts = tuple(options) + tuple(extra_options or ())
    return Module(compile_source(source_name, arch, opts))
