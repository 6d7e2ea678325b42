"""``--gpus``: which of this node's GPUs a bench measures, and running a bench on each in turn.

An operator checking a node of 8 GPUs wants every GPU measured the same way and the results side by
side, so the one that is slower than its siblings stands out (``diagnose/node_rules.py`` names it).
The GPUs run one after another, never at once: each GPU's number is then its own path's, not a share
of a host bridge or of host memory that the others also use.

``--gpus`` takes ``all``, a list (``0,2,5``) or ranges (``0-3,6``); ordinals are CUDA's, as
``--device`` takes them (``CUDA_VISIBLE_DEVICES`` renumbers them, and ``inspect`` names any GPU it
hides).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from gdrdiag.bench.runner import on_gpu
from gdrdiag.errors import GdrdiagError, UserInputError
from gdrdiag.model.results import BenchResult

GPUS_HELP = (
    "Measure these GPUs one after another: all, or CUDA ordinals such as 0,2 or 0-3; "
    "one verdict per GPU and a table of the GPUs side by side."
)
MAX_ORDINAL = 1023  # far above any node (CUDA enumerates a few dozen devices at most)


@dataclass(frozen=True)
class GpuChoice:
    """What ``--gpus`` asked for: every GPU CUDA lists, or these ordinals (in the order given)."""

    every: bool = False
    ordinals: tuple[int, ...] = ()

    @property
    def text(self) -> str:
        """The choice as a user would write it."""
        return "all" if self.every else ",".join(str(o) for o in self.ordinals)


def parse_gpus(text: str) -> GpuChoice:
    """Parse ``--gpus``: ``all``, ``0,2,5`` or ``0-3,6``; duplicates kept once. Bad input: UserInputError."""
    words = [w.strip() for w in text.split(",") if w.strip()]
    if not words:
        raise UserInputError("--gpus is empty: give all, or CUDA ordinals such as 0,2 or 0-3")
    if [w.lower() for w in words] == ["all"]:
        return GpuChoice(every=True)
    ordinals: list[int] = []
    for word in words:
        first, dash, last = word.partition("-")
        try:
            low = int(first)
            high = int(last) if dash else low
        except ValueError:
            raise UserInputError(
                f"--gpus {text[:60]!r}: {word[:20]!r} is not a CUDA ordinal or a range such as 0-3"
            ) from None
        if low < 0 or high < low or high > MAX_ORDINAL:
            raise UserInputError(
                f"--gpus {text[:60]!r}: {word[:20]!r} is not an ordinal range (0-{MAX_ORDINAL})"
            )
        ordinals += [o for o in range(low, high + 1) if o not in ordinals]
    return GpuChoice(ordinals=tuple(ordinals))


def resolve(choice: GpuChoice, count: Optional[int]) -> tuple[int, ...]:
    """The ordinals to measure, given how many GPUs CUDA lists (``None``: CUDA unusable here).

    With no usable CUDA the first ordinal is kept (every case of it is WAIVED with the driver's reason,
    as a one-GPU run is); an ordinal CUDA does not list is refused before any work.
    """
    if count is None:
        return (choice.ordinals[0],) if choice.ordinals else (0,)
    if choice.every:
        return tuple(range(count)) or (0,)
    missing = [o for o in choice.ordinals if o >= count]
    if missing:
        listed = f"0-{count - 1}" if count > 1 else "0" if count == 1 else "none"
        raise UserInputError(
            f"--gpus {choice.text}: GPU {missing[0]} is not listed by CUDA here ({count} GPU(s): {listed})"
        )
    return choice.ordinals


def cuda_gpu_count() -> Optional[int]:
    """How many GPUs CUDA lists in this process, or None when CUDA cannot be used here."""
    from gdrdiag.hw import cuda

    try:
        cuda.init()
        return cuda.device_count()
    except GdrdiagError:
        return None


def choose_gpus(
    text: Optional[str], device: Optional[int] = None, one_gpu_only: Optional[str] = None
) -> Optional[tuple[int, ...]]:
    """The ordinals ``--gpus`` names on this machine, or None when it was not given.

    ``--device``/``--gpu`` (one GPU) and ``--gpus`` ask the same thing two ways: both given is refused,
    as is ``--gpus`` for a mode that runs on one GPU by nature (``one_gpu_only`` says why).
    """
    if text is None:
        return None
    if device is not None:
        raise UserInputError("give --gpus (several GPUs) or a single GPU ordinal, not both")
    if one_gpu_only:
        raise UserInputError(f"--gpus: {one_gpu_only}; drop --gpus (or name one GPU)")
    return resolve(parse_gpus(text), cuda_gpu_count())


@dataclass
class GpuLoop:
    """Runs one bench on each GPU in turn and knows which GPU is running (for a Ctrl-C part way)."""

    ordinals: tuple[int, ...]
    # which results used the GPU (mr-bench: GPU memory only; a host-memory row ran on no GPU)
    uses_gpu: Callable[[BenchResult], bool] = lambda r: True
    current: Optional[int] = None

    def run(self, run_one: Callable[[int], list[BenchResult]]) -> list[BenchResult]:
        """``run_one(ordinal)`` for each GPU; every result that used a GPU records which."""
        results: list[BenchResult] = []
        for ordinal in self.ordinals:
            self.current = ordinal
            results += on_gpu(run_one(ordinal), ordinal, self.uses_gpu)
        self.current = None
        return results

    def tag_partial(self, partial: list[BenchResult]) -> list[BenchResult]:
        """Results kept at a Ctrl-C: those of the GPU that was running get its ordinal."""
        if self.current is None:
            return list(partial)
        return on_gpu(partial, self.current, self.uses_gpu)
