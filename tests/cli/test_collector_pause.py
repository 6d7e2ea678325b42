"""The compare command runs with the cyclic garbage collector paused, and gives it back."""

import gc

import pytest

from gdrdiag.cli.collector import pauses_collector


def test_collector_is_off_inside_and_back_on_after_a_return_or_an_error():
    seen = []

    @pauses_collector
    def command(fail: bool) -> str:
        seen.append(gc.isenabled())
        if fail:
            raise ValueError("boom")
        return "done"

    assert gc.isenabled()
    assert command(False) == "done"
    assert gc.isenabled()
    with pytest.raises(ValueError):
        command(True)
    assert gc.isenabled() and seen == [False, False]


def test_collector_left_off_when_it_was_off():
    gc.disable()
    try:
        pauses_collector(lambda: None)()
        assert not gc.isenabled()
    finally:
        gc.enable()
