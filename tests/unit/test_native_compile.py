"""Every native/*.cu compiles with NVRTC for sm_80 and sm_90 (no GPU needed)."""

import pytest

from gdrdiag.hw import nvrtc

SOURCES = sorted(p.name for p in nvrtc.NATIVE_DIR.glob("*.cu"))


def test_sources_exist():
    assert "gather.cu" in SOURCES and "spin_gate.cu" in SOURCES


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("source", SOURCES)
def test_compiles_to_cubin(source, arch, tmp_path, monkeypatch):
    monkeypatch.setenv("GDRDIAG_CACHE_DIR", str(tmp_path))
    img = nvrtc.compile_source(source, arch, use_cache=False)
    assert img.kind == "cubin" and img.arch == arch
    assert img.image[:4] == b"\x7fELF"


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_gather_kernels_are_all_exported(arch):
    from gdrdiag.bench.gather import KERNELS

    img = nvrtc.compile_source("gather.cu", arch, use_cache=False)
    for spec in KERNELS.values():
        assert spec.function.encode() in img.image, spec.function
