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
