"""Case identity: what makes two results measurements of the same thing.

A ``CaseId`` is the bench, the case key, the parameters that define the physics of the measurement
(memory kind, registration path, size, direction, QPs, record size, ...) and the provider that moved
the bytes. Run settings (iterations, seeds, which sweep produced the row), descriptive text (where
the memory lives) and facts of the machine (SM count, MPS) are *not* identity: two Reports that
differ only in those still pair every case. Status is not identity either: a case that is OK in one
Report and WAIVED in the other is one case with two outcomes.

Which parameters are identity is decided once, in ``model/params.py``: every params field is identity
unless marked ``IDENTITY_NO``; run settings live in their own record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

from gdrdiag.model.params import identity_items, identity_names, shown_items
from gdrdiag.model.results import BenchResult
from gdrdiag.model.vocabulary import Bench, Provider

Scalar = Union[str, int, float, bool, None]


@dataclass(frozen=True)
class CaseId:
    """Bench + key + physics parameters + provider; hashable, so it can key a dict."""

    bench: Bench
    key: str
    physics: tuple[tuple[str, Scalar], ...]
    provider: Optional[Provider]

    @classmethod
    def of(cls, result: BenchResult) -> "CaseId":
        """The identity of one result (parameters in a stable order)."""
        return cls(result.bench, result.key, identity_items(result.settled_params), result.provider_kind)

    def without_provider(self) -> tuple:
        """The identity with the provider left out: finds the same physics measured by another provider."""
        return self.bench, self.key, self.physics

    @property
    def label(self) -> str:
        """``key name=value ...`` for tables."""
        return " ".join([self.key, *(f"{k}={v}" for k, v in self.physics)])


def run_settings(result: BenchResult) -> dict[str, Scalar]:
    """What a result records beside its identity: run settings and descriptive parameters.

    Identity fields are left out whatever their value, an implied one (GPU 0) included.
    """
    described = dict(shown_items(result.params))
    for name in identity_names(type(result.params)):
        described.pop(name, None)
    return {**described, **dict(shown_items(result.settings))}
