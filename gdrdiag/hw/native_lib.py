"""Finding and opening the C libraries set-up builds (``build/native/*.so``), once per process.

Both C sides (native/verbs_loop.c behind the native provider, native/copy_loop.c behind
copy-bench's C rows) are found, opened, version-checked and cached the same way; their
modules (hw/verbs_native_lib.py, hw/copy_native.py) declare their own signatures on top.
A library that cannot be used is never an error here: the caller gets ``None`` and one line
saying why (not built and the build's own reason, cannot load, another ABI).
"""

from __future__ import annotations

import ctypes
import os
import threading
from pathlib import Path
from typing import Callable, Optional

#: (the opened library or None, one line saying what was loaded or why not)
Loaded = tuple[Optional[ctypes.CDLL], str]


def native_dir() -> Path:
    """Where set-up puts the C libraries (``GDRDIAG_NATIVE_DIR`` overrides, for tests)."""
    env = os.environ.get("GDRDIAG_NATIVE_DIR")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "build" / "native"


def open_library(lib_name: str, what: str, abi_symbol: str, abi_version: int) -> Loaded:
    """Open ``native_dir()/lib_name`` and check the ABI its ``abi_symbol()`` reports.

    ``what`` names the feature in the reason ("native provider", "C copy loop"). A library
    from an older checkout answers with another ABI number and is refused, not half-used.
    """
    path = native_dir() / lib_name
    if not path.exists():
        status = path.with_suffix(".status")  # written by scripts/build_native.sh when it cannot build
        why = "run scripts/setup.sh (or scripts/build_native.sh)"
        if status.exists():
            why = status.read_text().strip()
        return None, f"{what} unavailable: {path.name} not built: {why}"
    try:
        lib = ctypes.CDLL(str(path))
    except OSError as exc:
        return None, f"{what} unavailable: cannot load {path} ({exc})"
    try:
        abi_fn = getattr(lib, abi_symbol)
    except AttributeError:
        return None, f"{what} unavailable: {path.name} lacks {abi_symbol} (re-run scripts/setup.sh)"
    abi_fn.restype = ctypes.c_int
    abi = abi_fn()
    if abi != abi_version:
        return None, (
            f"{what} unavailable: {path.name} has ABI {abi}, this gdrdiag needs {abi_version} "
            "(re-run scripts/setup.sh)"
        )
    return lib, f"{what}: {path}"


def declare(lib: ctypes.CDLL, signatures: dict[str, list], trailing: list) -> None:
    """Set argtypes (``args + trailing``, the error-buffer pair) and an int return on each function.

    Raises AttributeError when the library lacks one of them.
    """
    for name, args in signatures.items():
        fn = getattr(lib, name)
        fn.argtypes = args + trailing
        fn.restype = ctypes.c_int


class CachedLoad:
    """Runs a load function once per process (thread-safe) and keeps its answer."""

    def __init__(self, load: Callable[[], Loaded]) -> None:
        self._load = load
        self._lock = threading.Lock()
        self._value: Optional[Loaded] = None

    def get(self) -> Loaded:
        """The cached (library or None, reason), loading on first use."""
        with self._lock:
            if self._value is None:
                self._value = self._load()
            return self._value

    def forget(self) -> None:
        """Load again next time (tests point ``GDRDIAG_NATIVE_DIR`` elsewhere)."""
        with self._lock:
            self._value = None
