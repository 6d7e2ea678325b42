"""hw.memory.check_fits: a run's buffers are checked together before any is allocated."""

from __future__ import annotations

import pytest

from gdrdiag.errors import UserInputError
from gdrdiag.hw import memory


class _FakeGpu:
    ordinal = 0

    def __init__(self, free: int) -> None:
        self._free = free

    def free_memory(self) -> tuple[int, int]:
        return self._free, 2 * self._free


def test_device_total_over_free_is_refused_with_both_numbers():
    with pytest.raises(
        UserInputError, match=r"needs 2000 bytes of device memory but only 1000 are free on GPU 0"
    ):
        memory.check_fits(2000, 0, _FakeGpu(1000))


def test_host_total_over_available_is_refused(monkeypatch):
    monkeypatch.setattr(memory, "host_available_bytes", lambda: 4096)
    with pytest.raises(UserInputError, match="needs 8192 bytes of pinned host memory but only 4096"):
        memory.check_fits(0, 8192, None)


def test_what_fits_passes(monkeypatch):
    monkeypatch.setattr(memory, "host_available_bytes", lambda: 1 << 30)
    memory.check_fits(1000, 1 << 20, _FakeGpu(1000))
    memory.check_fits(0, 0, None)
