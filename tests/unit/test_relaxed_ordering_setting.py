"""Relaxed ordering is one setting: the CLI folds its three spellings into one value.

``--relaxed-ordering/--no-relaxed-ordering``, ``--ro-ab`` (and ``--matrix``) and ``relaxed_ordering`` in
``--access`` become one ``RelaxedOrdering`` plus access flags without the RO bit; the benches only ask
``cfg.ro.access(cfg.access)``.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from gdrdiag.bench.mr_config import DEFAULT_ACCESS, MrBenchConfig
from gdrdiag.cli.mr_bench_cmd import relaxed_ordering_setting
from gdrdiag.errors import UserInputError
from gdrdiag.model.vocabulary import AccessFlags, RelaxedOrdering

RO = AccessFlags.RELAXED_ORDERING
PLAIN = "local_write,remote_write"
WITH_RO = "local_write,remote_write,relaxed_ordering"


@pytest.mark.parametrize(
    "flag,ro_ab,matrix,access,expected",
    [
        (None, False, False, PLAIN, RelaxedOrdering.OFF),
        (False, False, False, PLAIN, RelaxedOrdering.OFF),
        (True, False, False, PLAIN, RelaxedOrdering.ON),
        (None, False, False, WITH_RO, RelaxedOrdering.ON),
        (True, False, False, WITH_RO, RelaxedOrdering.ON),  # the same thing said twice: no conflict
        (None, True, False, PLAIN, RelaxedOrdering.AB),
        (None, False, True, PLAIN, RelaxedOrdering.AB),
    ],
)
def test_every_spelling_maps_to_one_setting(flag, ro_ab, matrix, access, expected):
    ro, base = relaxed_ordering_setting(flag, ro_ab, matrix, access)
    assert ro is expected
    assert base == DEFAULT_ACCESS and not base & RO  # the RO bit never stays in the access flags


@pytest.mark.parametrize(
    "flag,ro_ab,matrix,access,needle",
    [
        (False, False, False, WITH_RO, "--no-relaxed-ordering contradicts relaxed_ordering in --access"),
        (True, True, False, PLAIN, "--ro-ab runs RO off and on itself; drop --relaxed-ordering"),
        (False, True, False, PLAIN, "drop --no-relaxed-ordering"),
        (
            None,
            True,
            False,
            WITH_RO,
            "--ro-ab runs RO off and on itself; drop relaxed_ordering from --access",
        ),
        (True, False, True, PLAIN, "--matrix runs RO off and on itself"),
        (None, False, True, WITH_RO, "--matrix runs RO off and on itself"),
    ],
)
def test_contradictions_are_refused(flag, ro_ab, matrix, access, needle):
    with pytest.raises(UserInputError, match=re.escape(needle)):
        relaxed_ordering_setting(flag, ro_ab, matrix, access)


def test_the_config_holds_one_setting_and_derives_each_arm():
    fields = {f.name for f in dataclasses.fields(MrBenchConfig)}
    assert "ro" in fields and not fields & {"relaxed_ordering", "ro_ab"}
    assert MrBenchConfig(ro=RelaxedOrdering.OFF).arm_access == (DEFAULT_ACCESS,)
    assert MrBenchConfig(ro=RelaxedOrdering.ON).arm_access == (DEFAULT_ACCESS | RO,)
    ab = MrBenchConfig(ro=RelaxedOrdering.AB)
    assert ab.arm_access == (DEFAULT_ACCESS, DEFAULT_ACCESS | RO) and ab.single_access == DEFAULT_ACCESS


def test_a_config_carrying_the_ro_bit_in_access_is_refused():
    with pytest.raises(UserInputError, match="ro setting"):
        MrBenchConfig(access=DEFAULT_ACCESS | RO).validate()


# Re-deriving RO downstream: a bool flag, the old fields, or OR-ing the RO bit into access by hand.
REDERIVES = re.compile(
    r"\.relaxed_ordering\b|\bro_ab\b(?!=)|access_mask|\|\s*(v\.ACCESS|AccessFlags\.)RELAXED"
)


def test_no_bench_module_re_derives_relaxed_ordering():
    bench = Path(__file__).resolve().parents[2] / "gdrdiag" / "bench"
    offenders = [
        f"{path.name}:{n}: {line.strip()}"
        for path in sorted(bench.glob("mr*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if REDERIVES.search(line)
    ]
    assert offenders == []
