"""scripts/build_native.sh: builds both C loops where it can, degrades to one clear line where not.

Builds into a temporary folder (GDRDIAG_NATIVE_OUT) so the set-up's own build/native is never
touched, and points gdrdiag at it (GDRDIAG_NATIVE_DIR) to check what the user then sees.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gdrdiag.errors import NotSupported
from gdrdiag.hw import copy_native, verbs_native, verbs_native_lib, verbs_providers

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "build_native.sh"
HAVE_CC = shutil.which(os.environ.get("CC", "cc")) is not None
HAVE_VERBS_H = Path("/usr/include/infiniband/verbs.h").exists()


def _build(out: Path, **env: str) -> subprocess.CompletedProcess:
    full = {**os.environ, "GDRDIAG_NATIVE_OUT": str(out), **env}
    return subprocess.run(
        ["bash", str(SCRIPT)], cwd=ROOT, env=full, capture_output=True, text=True, timeout=300
    )


@pytest.fixture
def native_dir(tmp_path, monkeypatch):
    """gdrdiag looks for its C libraries in tmp_path (caches reset before and after)."""
    monkeypatch.setenv("GDRDIAG_NATIVE_DIR", str(tmp_path))
    verbs_native_lib._reset_for_tests()
    copy_native._reset_for_tests()
    yield tmp_path
    monkeypatch.delenv("GDRDIAG_NATIVE_DIR")
    verbs_native_lib._reset_for_tests()
    copy_native._reset_for_tests()


def test_without_a_compiler_setup_says_so_and_gdrdiag_falls_back(native_dir):
    res = _build(native_dir, CC="/nonexistent/cc")
    assert res.returncode == 0, res.stderr
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("native:")]
    assert len(lines) == 2 and all("NOT built: no C compiler" in ln for ln in lines), res.stdout
    assert not list(native_dir.glob("*.so"))
    loaded, why = verbs_native_lib.availability()
    assert loaded is None and "no C compiler" in why and "\n" not in why
    provider, reason = verbs_providers.provider_choice("auto")
    assert provider == "pyverbs" and "no C compiler" in reason
    with pytest.raises(NotSupported, match="no C compiler"):
        verbs_providers.open_device("native")
    with pytest.raises(NotSupported, match="no C compiler"):
        verbs_native.null_loop(lists_total=1)
    with pytest.raises(NotSupported, match="no C compiler"):
        copy_native.driver()


def test_missing_verbs_headers_are_named(native_dir, tmp_path_factory):
    # A compiler that fails the way gcc does without libibverbs-dev.
    fake = tmp_path_factory.mktemp("cc") / "cc"
    fake.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do case $a in *verbs_loop.c) '
        "echo 'native/verbs_loop.c:30:10: fatal error: infiniband/verbs.h: No such file or directory' >&2; "
        'exit 1;; esac; done\nexec cc "$@"\n'
    )
    fake.chmod(0o755)
    res = _build(native_dir, CC=str(fake))
    assert res.returncode == 0
    status = (native_dir / "libgdr_verbs.status").read_text()
    assert status.startswith("libibverbs headers missing (install libibverbs-dev)")
    assert "libgdr_verbs NOT built: libibverbs headers missing" in res.stdout


@pytest.mark.skipif(not (HAVE_CC and HAVE_VERBS_H), reason="needs a C compiler and libibverbs-dev")
def test_both_libraries_build_warning_free_and_their_symbols_resolve(native_dir):
    res = _build(native_dir)
    assert res.returncode == 0 and "NOT built" not in res.stdout, res.stdout
    verbs = ctypes.CDLL(str(native_dir / "libgdr_verbs.so"))
    for name in [*verbs_native_lib._SIGNATURES, "gd_abi_version", "gd_wrlist_free"]:
        assert hasattr(verbs, name), name
    copy = ctypes.CDLL(str(native_dir / "libgdr_copy.so"))
    for name in [*copy_native._SIGNATURES, "gc_abi_version"]:
        assert hasattr(copy, name), name
    loaded, why = verbs_native_lib.availability()
    assert loaded is not None, why
    c_loaded, c_why = copy_native.availability()
    assert c_loaded is not None, c_why


@pytest.mark.skipif(not HAVE_CC, reason="needs a C compiler")
def test_copy_loop_needs_no_cuda_to_build_and_reports_a_missing_driver_in_one_line(native_dir):
    res = _build(native_dir)
    assert (native_dir / "libgdr_copy.so").exists(), res.stdout
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        with pytest.raises(NotSupported) as exc:
            copy_native.driver()
        assert "libcuda.so.1" in exc.value.reason and "\n" not in exc.value.reason
        assert copy_native.batch_supported() is not None
    else:
        _, version = copy_native.driver()
        assert version > 0
