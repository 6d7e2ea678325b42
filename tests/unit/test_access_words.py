"""``--access`` words -> typed AccessFlags, parsed in model/words.py (hw/verbs.py parsed them).

The parser keeps the spelling rules and the message it had in hw/verbs.py; it returns the typed
``AccessFlags`` the bench configuration holds, and hw/ only turns those into the provider's bits.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from gdrdiag.model.vocabulary import AccessFlags
from gdrdiag.model.words import ACCESS_WORDS, WordError, parse_access

# The message hw/verbs.py gave, word for word.
KNOWN = (
    "known: local_write, remote_write, remote_read, remote_atomic, mw_bind, zero_based, on_demand, hugetlb, "
    "flush_global, flush_persistent, relaxed_ordering"
)


@pytest.mark.parametrize(
    "words, flags",
    [
        ("local_write,remote_write", AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE),
        (
            ["IBV_ACCESS_RELAXED_ORDERING", "Remote-Read"],
            AccessFlags.RELAXED_ORDERING | AccessFlags.REMOTE_READ,
        ),
        (" local_write , ,REMOTE_WRITE ", AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE),
        ("ibv_access_on_demand", AccessFlags.ON_DEMAND),
        ("", AccessFlags(0)),
    ],
)
def test_any_spelling_gives_the_typed_flags(words, flags):
    got = parse_access(words)
    assert type(got) is AccessFlags and got == flags


def test_the_values_are_libibverbs_bits():
    """``ibv_access_flags`` (rdma-core libibverbs/verbs.h): LOCAL_WRITE 1, REMOTE_WRITE 2, RO 1 << 20."""
    assert int(parse_access("local_write,remote_write")) == 3
    assert int(parse_access("relaxed_ordering,remote_read")) == (1 << 20) | 4


def test_every_flag_has_its_word():
    assert set(ACCESS_WORDS.values()) == set(AccessFlags)  # type: ignore[arg-type]
    for word, flag in ACCESS_WORDS.items():
        assert parse_access(word) is flag or parse_access(word) == flag


def test_an_unknown_word_is_a_word_error_listing_the_known_ones():
    with pytest.raises(WordError) as exc:
        parse_access("local_write,relaxed_ordring")
    assert str(exc.value) == f"unknown access flag 'relaxed_ordring' ({KNOWN})"


def test_mr_bench_refuses_an_unknown_word_in_one_line_with_exit_2():
    from gdrdiag.cli import app

    res = CliRunner().invoke(app, ["mr-bench", "--provider", "soft", "--access", "local_write,remote_wrte"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert res.stderr.strip().splitlines() == [f"gdrdiag: error: unknown access flag 'remote_wrte' ({KNOWN})"]


def test_hw_verbs_parses_no_user_words():
    from gdrdiag.hw import verbs

    assert not hasattr(verbs, "parse_access")
