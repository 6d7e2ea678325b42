"""Finding, version-checking and caching the C libraries (hw/native_lib.py), on tiny real .so files."""

from __future__ import annotations

import ctypes
import shutil
import subprocess

import pytest

from gdrdiag.hw import native_lib

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="needs cc to build test libraries")


@pytest.fixture
def lib_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("GDRDIAG_NATIVE_DIR", str(tmp_path))
    return tmp_path


def _build(lib_dir, name: str, source: str) -> None:
    src = lib_dir / f"{name}.c"
    src.write_text(source)
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(lib_dir / name), str(src)], check=True)


def test_a_library_with_the_expected_abi_opens_and_declares(lib_dir):
    _build(lib_dir, "libt.so", "int t_abi(void) { return 3; }\nint t_add(int a, int b) { return a + b; }\n")
    lib, why = native_lib.open_library("libt.so", "test loop", "t_abi", 3)
    assert lib is not None and why == f"test loop: {lib_dir / 'libt.so'}"
    native_lib.declare(lib, {"t_add": [ctypes.c_int]}, [ctypes.c_int])
    assert lib.t_add(2, 40) == 42


def test_another_abi_is_refused_in_one_line(lib_dir):
    _build(lib_dir, "libt.so", "int t_abi(void) { return 2; }\n")
    lib, why = native_lib.open_library("libt.so", "test loop", "t_abi", 3)
    assert lib is None
    assert why == "test loop unavailable: libt.so has ABI 2, this gdrdiag needs 3 (re-run scripts/setup.sh)"


def test_a_library_without_the_abi_symbol_is_refused(lib_dir):
    _build(lib_dir, "libt.so", "int other(void) { return 0; }\n")
    lib, why = native_lib.open_library("libt.so", "test loop", "t_abi", 3)
    assert lib is None and "lacks t_abi" in why and "\n" not in why


def test_a_missing_library_names_the_builds_own_reason(lib_dir):
    (lib_dir / "libt.status").write_text("no compiler: cc not found\n")
    lib, why = native_lib.open_library("libt.so", "test loop", "t_abi", 3)
    assert lib is None
    assert why == "test loop unavailable: libt.so not built: no compiler: cc not found"


def test_a_file_that_is_not_a_library_is_refused(lib_dir):
    (lib_dir / "libt.so").write_text("not an ELF file")
    lib, why = native_lib.open_library("libt.so", "test loop", "t_abi", 3)
    assert lib is None and why.startswith("test loop unavailable: cannot load")


def test_the_cache_loads_once_until_forgotten():
    calls = []

    def load():
        calls.append(1)
        return None, f"load {len(calls)}"

    cached = native_lib.CachedLoad(load)
    assert cached.get() == (None, "load 1")
    assert cached.get() == (None, "load 1")
    cached.forget()
    assert cached.get() == (None, "load 2")
    assert len(calls) == 2
