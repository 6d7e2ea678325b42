"""Shared test set-up: hardware markers skip with a reason where the hardware is absent."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@functools.lru_cache(maxsize=None)
def gpu_absent_reason() -> str | None:
    """None when a CUDA GPU is usable, else why not."""
    try:
        from gdrdiag.hw import cuda

        cuda.init()
        if cuda.device_count() == 0:
            return "CUDA driver present but no GPU"
    except Exception as exc:  # any failure means "no usable GPU here"
        return f"no usable GPU: {exc}"
    return None


@functools.lru_cache(maxsize=None)
def gpu_count() -> int:
    """How many GPUs CUDA lists here (0 where CUDA cannot be used)."""
    try:
        from gdrdiag.hw import cuda

        cuda.init()
        return cuda.device_count()
    except Exception:  # any failure means "no usable GPU here"
        return 0


def rdma_absent_reason() -> str | None:
    """None when pyverbs lists at least one RDMA device, else why not."""
    try:
        from gdrdiag.hw import verbs_providers

        names = verbs_providers.list_device_names()
    except Exception as exc:
        text = str(exc)
        return text if text.startswith("no RDMA devices") else f"no RDMA devices: {text}"
    return None if names else "no RDMA devices"


@functools.lru_cache(maxsize=None)
def native_absent_reason() -> str | None:
    """None when the native verbs library (build/native/libgdr_verbs.so) loads, else why not."""
    from gdrdiag.hw import verbs_native

    loaded, why = verbs_native.availability()
    return None if loaded is not None else why


@functools.lru_cache(maxsize=None)
def native_rdma_absent_reason() -> str | None:
    """For tests marked both ``rdma`` and ``native``: the native library and a device it lists."""
    reason = native_absent_reason()
    if reason:
        return reason
    from gdrdiag.hw import verbs_native

    try:
        verbs_native.list_device_names()
    except Exception as exc:
        return str(exc)
    return None


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "gpu" in item.keywords:
            reason = gpu_absent_reason()
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))
        if "rdma" in item.keywords and "native" in item.keywords:
            # The native provider finds devices itself (libibverbs through its C library).
            reason = native_rdma_absent_reason()
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))
        elif "rdma" in item.keywords:
            reason = rdma_absent_reason()
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))
        elif "native" in item.keywords:
            reason = native_absent_reason()
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES
