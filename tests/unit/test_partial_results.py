"""bench.runner.keep_partial: what was measured before a Ctrl-C is still there to write."""

from __future__ import annotations

import pytest

from gdrdiag.bench import runner
from gdrdiag.errors import NotSupported
from gdrdiag.model.results import BenchResult, Status


def _waived(key: str) -> BenchResult:
    raise NotSupported(f"{key}: not here")


def test_results_before_an_interrupt_are_kept_in_order():
    def interrupted():
        raise KeyboardInterrupt

    cases = [
        ("a", lambda: _waived("a"), {}),
        ("b", lambda: BenchResult.error("b", "broken"), {}),
        ("c", interrupted, {}),
        ("d", lambda: _waived("d"), {}),
    ]
    with runner.keep_partial() as partial:
        with pytest.raises(KeyboardInterrupt):
            runner.run_cases(cases)
    assert [r.key for r in partial.results] == ["a", "b"]
    assert [r.status for r in partial.results] == [Status.WAIVED, Status.ERROR]


def test_a_bench_run_inside_an_outer_case_is_noted_once():
    def bench():  # a whole bench as one case of `report`: its own cases go through run_case too
        return runner.run_case("inner1", lambda: _waived("x")) + runner.run_case(
            "inner2", lambda: _waived("y")
        )

    with runner.keep_partial() as partial:
        out = runner.run_case("outer", bench)
    assert [r.key for r in out] == ["inner1", "inner2"]
    assert [r.key for r in partial.results] == ["inner1", "inner2"]


def test_outside_a_block_nothing_is_collected():
    with runner.keep_partial() as partial:
        pass
    runner.run_case("late", lambda: _waived("late"))
    assert partial.results == []
