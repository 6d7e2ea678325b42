"""Run benchmark cases one by one; a failure becomes a WAIVED or ERROR result, never a crash.

A case is any callable returning a ``BenchResult`` (or a list of them). ``NotSupported``
becomes WAIVED with its reason; a ``GdrdiagError`` or any other exception becomes ERROR with
the message, so one broken case never hides the others. ``UserInputError`` and Ctrl-C are
not cases' business: they propagate so the CLI can stop with the right exit code, after the
cases' own context managers have released their resources.

Every result that comes out of ``run_case`` is also noted in the innermost active
``keep_partial()`` block, so a command stopped by Ctrl-C can still write and show what was
measured before it (the points already measured were lost).
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Optional, Union

from gdrdiag.errors import NotSupported, UserInputError
from gdrdiag.model.machine import MachineInfo
from gdrdiag.model.params import COPY_MODE_TOGETHER, NumaPlacement
from gdrdiag.model.results import BenchResult
from gdrdiag.model.vocabulary import Bench

CaseOutput = Union[BenchResult, list]
ProgressFn = Optional[Callable[[str], None]]


@dataclass
class PartialResults:
    """The results produced so far inside one ``keep_partial()`` block, each once, in order."""

    results: list[BenchResult] = field(default_factory=list)
    _seen: set[int] = field(default_factory=set, repr=False)

    def add(self, results: Iterable[BenchResult]) -> None:
        """Note results; one already noted (a bench's list passed up by an outer case) is skipped."""
        for r in results:
            if id(r) not in self._seen:  # the list holds r, so its id stays unique
                self._seen.add(id(r))
                self.results.append(r)

    def replace(self, old: Iterable[BenchResult], new: Iterable[BenchResult]) -> None:
        """Put each of ``new`` where the matching one of ``old`` was noted (one not noted is added)."""
        for o, n in zip(old, new, strict=True):
            at = next((i for i, r in enumerate(self.results) if r is o), None)
            if at is None:
                self.add([n])
                continue
            self._seen.discard(id(o))
            self._seen.add(id(n))
            self.results[at] = n


_ACTIVE: contextvars.ContextVar[Optional[PartialResults]] = contextvars.ContextVar(
    "gdrdiag_partial", default=None
)


@contextlib.contextmanager
def keep_partial() -> Iterator[PartialResults]:
    """Collect every result ``run_case`` returns in this block (for a Ctrl-C part way through)."""
    partial = PartialResults()
    token = _ACTIVE.set(partial)
    try:
        yield partial
    finally:
        _ACTIVE.reset(token)


def note_partial(results: Iterable[BenchResult]) -> None:
    """Note results a case has measured so far (a size sweep's points), before the case returns.

    A Ctrl-C part way through a sweep then keeps the sizes already measured (only the
    WAIVED cases were kept of ~21 measured sizes). Noting a result twice keeps it once.
    """
    partial = _ACTIVE.get()
    if partial is not None:
        partial.add(results)


def replace_partial(old: Iterable[BenchResult], new: Iterable[BenchResult]) -> None:
    """Note that ``new`` supersede the noted ``old`` (a fit over a finished sweep added to its points).

    A Ctrl-C after the sweep then keeps the points with the fit, once each.
    """
    partial = _ACTIVE.get()
    if partial is not None:
        partial.replace(old, new)


def run_case(key: str, case: Callable[[], CaseOutput], **result_fields) -> list[BenchResult]:
    """Run one case and always return results."""
    try:
        out = case()
    except (UserInputError, KeyboardInterrupt):
        raise
    except NotSupported as exc:
        results = [BenchResult.waived(key, exc.reason, **result_fields)]
    except Exception as exc:  # noqa: BLE001 - isolate the failure into the result
        results = [BenchResult.error(key, f"{type(exc).__name__}: {exc}", **result_fields)]
    else:
        results = list(out) if isinstance(out, list) else [out]
    partial = _ACTIVE.get()
    if partial is not None:
        partial.add(results)
    return results


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


def on_gpu(
    results: Iterable[BenchResult], ordinal: int, uses_gpu: Callable[[BenchResult], bool] = lambda r: True
) -> list[BenchResult]:
    """``results`` with the CUDA ordinal they ran on in their params (``gpu``), where ``uses_gpu``.

    The path model judges a row against this GPU's link (gdrdiag/pathmodel/rows.py); results whose
    params have no ``gpu`` field (peer-bench names its pair itself) are left as they are.
    """
    return [
        dataclasses.replace(r, params=dataclasses.replace(r.params, gpu=ordinal))  # type: ignore[type-var]
        if getattr(r.params, "gpu", ordinal) is None and uses_gpu(r)
        else r
        for r in results
    ]


def with_gpu_addresses(results: list[BenchResult], machine: MachineInfo) -> list[BenchResult]:
    """``results`` with ``settings.gpu_bdf``/``gpu_uuid`` of the GPU each per-GPU row ran on.

    The ordinal alone is CUDA's numbering in that process (``CUDA_VISIBLE_DEVICES`` renumbers it), so a
    row names its GPU the way the machine facts, ``nvidia-smi`` and another node's Report can.
    """
    by_ordinal = {g.cuda_ordinal: g for g in machine.gpus if g.cuda_ordinal is not None}
    out = []
    for r in results:
        ordinal = getattr(r.params, "gpu", None) if r.bench in (Bench.COPY, Bench.GATHER, Bench.MR) else None
        if getattr(r.params, "mode", None) == COPY_MODE_TOGETHER:
            ordinal = None  # every GPU at once: no one GPU's row
        elif r.bench in (Bench.COPY, Bench.GATHER) and ordinal is None:
            ordinal = 0  # their implied GPU (params.py: the benches' default)
        gpu = by_ordinal.get(ordinal) if ordinal is not None else None
        if gpu is not None and r.settings.gpu_bdf is None:
            settings = dataclasses.replace(r.settings, gpu_bdf=gpu.bdf, gpu_uuid=gpu.uuid)
            r = dataclasses.replace(r, settings=settings)
        out.append(r)
    return out
