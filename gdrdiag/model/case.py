"""Case identity: what makes two results measurements of the same thing.

A ``CaseId`` is the bench, the case key, the parameters that define the physics of the measurement
(memory kind, registration path, size, direction, QPs, record size, ...) and the provider that moved
the bytes. Run settings (iterations, seeds, which sweep produced the row), descriptive text (where
the memory lives) and facts of the machine (SM count, MPS) are *not* identity: two Reports that
differ only in those still pair every case. Status is not identity either: a case that is OK in one
Report and WAIVED in the other is one case with two outcomes.

Every parameter name a bench writes is classified below, once; a test fails on a name that is in
neither list, so a new parameter cannot silently split or merge cases.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

from gdrdiag.model.results import BenchResult
from gdrdiag.model.vocabulary import Bench, Provider

Scalar = Union[str, int, float, bool, None]

# Parameters that define what was measured, per bench.
PHYSICS_PARAMS: dict[Bench, frozenset[str]] = {
    Bench.COPY: frozenset(
        {"kind", "direction", "mode", "size", "layers", "chunk", "streams", "block_size", "blocks", "library"}
    ),
    Bench.GATHER: frozenset(
        {"kernel", "record_bytes", "stride", "base_offset", "pattern", "slots", "records", "nbytes",
         "sm_limit", "dst_stride", "threads", "depth"}
    ),
    Bench.MR: frozenset(
        {"memory", "src_memory", "reg_path", "size", "qps", "tx_depth", "post_list", "offset", "ro", "mode",
         "role", "depth", "inline", "signal_every_wrs", "opcode", "access", "blocks", "variant",
         "write_with_imm"}
    ),
    Bench.IMPORTED: frozenset({"tool", "test", "size", "qps", "post_list", "tx_depth", "direction", "memory",
                               "use_cuda", "use_dmabuf", "ro"}),
}

# Parameters that describe a run or the machine, never the case: shown when they differ, not matched.
SETTING_PARAMS: frozenset[str] = frozenset(
    {
        "iterations", "repeats", "warmup", "seed", "sweep", "device", "device_name", "ro_ab",
        "location", "lands_in", "landing", "topology", "provider_note", "sms_total", "mps", "mrrs",
        "rcb", "link_params", "link", "grid", "port", "duration_s", "link_gbps",
    }
)


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
        bench = Bench.of_key(result.key)
        physics_names = PHYSICS_PARAMS[bench]
        physics = tuple(sorted((k, v) for k, v in result.params.items() if k in physics_names))
        return cls(bench, result.key, physics, Provider.parse(result.provider))

    def without_provider(self) -> tuple:
        """The identity with the provider left out: finds the same physics measured by another provider."""
        return self.bench, self.key, self.physics

    @property
    def label(self) -> str:
        """``key name=value ...`` for tables."""
        return " ".join([self.key, *(f"{k}={v}" for k, v in self.physics)])


def run_settings(result: BenchResult) -> dict[str, Scalar]:
    """The parameters of a result that are not identity (run settings, descriptions, machine facts)."""
    physics_names = PHYSICS_PARAMS[Bench.of_key(result.key)]
    return {k: v for k, v in result.params.items() if k not in physics_names}


def unclassified_params(result: BenchResult) -> set[str]:
    """Parameter names that are neither physics nor a setting: a bug in the bench that wrote them."""
    physics_names = PHYSICS_PARAMS[Bench.of_key(result.key)]
    return {k for k in result.params if k not in physics_names and k not in SETTING_PARAMS}
