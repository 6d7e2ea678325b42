"""Run benchmark cases one by one; a failure becomes a WAIVED or ERROR result, never a crash.

A case is any callable returning a ``BenchResult`` (or a list of them). ``NotSupported``
becomes WAIVED with its reason; a ``GdrdiagError`` or any other exception becomes ERROR with
the message, so one broken case never hides the others. ``UserInputError`` and Ctrl-C are
not cases' business: they propagate so the CLI can stop with the right exit code, after the
cases' own context managers have released their resources.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Iterable, Optional, Union

from gdrdiag.errors import NotSupported, UserInputError
from gdrdiag.model.params import NumaPlacement
from gdrdiag.model.results import BenchResult

CaseOutput = Union[BenchResult, list]
ProgressFn = Optional[Callable[[str], None]]


def run_case(key: str, case: Callable[[], CaseOutput], **result_fields) -> list[BenchResult]:
    """Run one case and always return results."""
    try:
        out = case()
    except (UserInputError, KeyboardInterrupt):
        raise
    except NotSupported as exc:
        return [BenchResult.waived(key, exc.reason, **result_fields)]
    except Exception as exc:  # noqa: BLE001 - isolate the failure into the result
        return [BenchResult.error(key, f"{type(exc).__name__}: {exc}", **result_fields)]
    return list(out) if isinstance(out, list) else [out]


def run_cases(
    cases: Iterable[tuple[str, Callable[[], CaseOutput], dict]], progress: ProgressFn = None
) -> list[BenchResult]:
    """Run ``(key, case, result_fields)`` triples in order, reporting progress by key."""
    results: list[BenchResult] = []
    for key, case, fields in cases:
        if progress:
            progress(key)
        results.extend(run_case(key, case, **fields))
    return results


def with_placement(results: Iterable[BenchResult], placement: NumaPlacement) -> list[BenchResult]:
    """``results`` with the run's CPU/NUMA placement recorded in their run settings."""
    fields = placement.settings_fields()
    return [dataclasses.replace(r, settings=dataclasses.replace(r.settings, **fields)) for r in results]
