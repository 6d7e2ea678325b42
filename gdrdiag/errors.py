"""The exception tree every layer raises, and the CLI maps to exit codes.

- ``UserInputError``: the user asked for something invalid (bad flag value, size, file). Exit 2.
- ``NotSupported``: this machine cannot do what was asked (no GPU, no RDMA device, an old
  driver). Benchmarks turn it into a WAIVED result carrying ``reason``.
- ``HardwareError``: a driver or library call failed. It names the call, the numeric code,
  the symbolic name and a human explanation, so a report can be acted on without a debugger.
"""

from __future__ import annotations


class GdrdiagError(Exception):
    """Base class of every error gdrdiag raises on purpose."""


class UserInputError(GdrdiagError):
    """Invalid input from the user: the CLI prints one line and exits with code 2."""


class NotSupported(GdrdiagError):
    """The machine lacks a capability; results that hit this become WAIVED with ``reason``."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class HardwareError(GdrdiagError):
    """A hardware-facing call failed (a CUresult, an NVRTC result or an errno)."""

    def __init__(self, call: str, code: int, name: str, explanation: str = ""):
        self.call = call
        self.code = int(code)
        self.name = name
        self.explanation = explanation
        detail = f" ({explanation})" if explanation else ""
        super().__init__(f"{call} failed: {name} [{code}]{detail}")


def caused_by_interrupt(exc: BaseException) -> bool:
    """True when ``exc`` is a Ctrl-C, or an error raised because of one (its cause or context chain).

    Python wraps an exception raised in ``__set_name__`` (a dataclass field's, during a lazy import)
    into a RuntimeError (Python 3.11 "Error calling __set_name__"; https://docs.python.org/3.11/
    reference/datamodel.html#object.__set_name__), so a Ctrl-C landing there reaches the handlers
    as a RuntimeError whose cause is the KeyboardInterrupt.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(seen) < 32:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def reraise_interrupt(exc: BaseException) -> None:
    """In a handler that records failures as facts (``except Exception``): a Ctrl-C behind ``exc`` goes on.

    Without this, a Ctrl-C wrapped into another error (see :func:`caused_by_interrupt`) while a
    collector runs became "CUDA query failed: RuntimeError ..." and the run went on.
    """
    if caused_by_interrupt(exc):
        raise KeyboardInterrupt from exc
