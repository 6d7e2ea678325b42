"""User words -> the vocabulary: the values the CLI parses from its options (memory kinds, --numa, --access).

Parsing what a user typed belongs with the vocabulary it names, so ``cli`` imports ``hw`` only to
open the live machine. A word that names nothing raises :class:`WordError` (a ``ValueError``) with
the one-line message; the CLI reports it as a usage error (exit 2). model/ imports nothing else of
gdrdiag, so the exception is its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

from gdrdiag.model.vocabulary import AccessFlags, MemoryKind


class WordError(ValueError):
    """A word the user typed names nothing in the vocabulary (the message says what would)."""


def parse_memory_kind(text: str) -> MemoryKind:
    """Parse a user-typed kind name; WordError lists the allowed names."""
    try:
        return MemoryKind(text.strip().lower())
    except ValueError:
        allowed = ", ".join(k.value for k in MemoryKind)
        raise WordError(f"unknown memory kind {text[:40]!r} (choose from: {allowed})") from None


NUMA_HELP = (
    "CPU/memory placement: auto (the NUMA node of the measured device), none (leave it to the OS), "
    "or a node number."
)


@dataclass(frozen=True)
class NumaRequest:
    """What ``--numa`` asked for: ``auto``, ``none``, or ``node`` with its number."""

    mode: str = "auto"
    node: Optional[int] = None

    @property
    def text(self) -> str:
        """The request as the user typed it (``auto``, ``none``, ``1``)."""
        return str(self.node) if self.mode == "node" else self.mode


AUTO = NumaRequest()


def parse_numa(text: str) -> NumaRequest:
    """``auto`` | ``none`` | a node number -> NumaRequest; anything else is a WordError."""
    value = text.strip().lower()
    if value in ("auto", "none"):
        return NumaRequest(value)
    if value.isdigit() and len(value) <= 4:
        return NumaRequest("node", int(value))
    raise WordError(f"--numa {text[:40]!r}: expected auto, none or a NUMA node number")


#: ``--access`` words -> the ``ibv_access_flags`` bit each names (local_write, remote_write, ...).
ACCESS_WORDS: dict[str, AccessFlags] = {flag.name.lower(): flag for flag in AccessFlags}  # type: ignore[union-attr]


def parse_access(words: Iterable[str] | str) -> AccessFlags:
    """``--access`` (``"local_write,remote_write"`` or a list of names) -> the access flags it names.

    Accepts ``ibv_access_flags`` names with or without the ``IBV_ACCESS_`` prefix, any case, ``-``
    or ``_``; empty names are skipped. An unknown name is a WordError listing the known ones.
    """
    if isinstance(words, str):
        words = words.split(",")
    flags = AccessFlags(0)
    for raw in words:
        name = raw.strip().lower().replace("-", "_")
        if name.startswith("ibv_access_"):
            name = name[len("ibv_access_") :]
        if not name:
            continue
        if name not in ACCESS_WORDS:
            allowed = ", ".join(ACCESS_WORDS)
            raise WordError(f"unknown access flag {raw.strip()[:40]!r} (known: {allowed})")
        flags |= ACCESS_WORDS[name]
    return flags
