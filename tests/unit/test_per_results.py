"""diagnose's per_results: one answer per results tuple, recomputed for anything else, never shared."""

from __future__ import annotations

from gdrdiag.diagnose._common import per_results


def _counting():
    calls = []

    @per_results
    def rows(results):
        calls.append(results)
        return [x * 2 for x in results]

    return rows, calls


def test_the_same_tuple_is_computed_once():
    rows, calls = _counting()
    results = (1, 2, 3)
    assert rows(results) == [2, 4, 6]
    assert rows(results) == [2, 4, 6]
    assert len(calls) == 1


def test_an_equal_but_different_tuple_or_a_list_is_computed_again():
    rows, calls = _counting()
    rows((1, 2))
    rows(tuple([1, 2]))  # equal, another object: identity decides, not equality
    rows([1, 2])
    rows([1, 2])
    assert len(calls) == 4


def test_callers_get_their_own_list():
    rows, _ = _counting()
    results = (1, 2)
    first = rows(results)
    first.append(99)
    assert rows(results) == [2, 4]


def test_a_new_report_replaces_the_remembered_one():
    rows, calls = _counting()
    a, b = (1,), (2,)
    assert rows(a) == [2] and rows(b) == [4] and rows(a) == [2]
    assert len(calls) == 3
