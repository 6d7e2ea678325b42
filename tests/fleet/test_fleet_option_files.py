"""fleet's option files (--baseline, --expect-hosts, --inventory) are checked before they are read.

``/dev/zero`` used to be read until memory ran out and a FIFO blocked forever. Each file must be a
regular file no larger than its limit: anything else is one line on stderr and exit 2, at once.
The command runs in a child process with a memory cap and a timeout, so a regression fails the
test instead of taking the machine down or hanging it.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import pytest

from gdrdiag.fleet import MAX_BASELINE_CHARS

OPTIONS = ("--baseline", "--expect-hosts", "--inventory")


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def _fleet(tmp_path, *args: str) -> subprocess.CompletedProcess:
    records = tmp_path / "records"
    records.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "gdrdiag", "fleet", str(records), *args],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_cap_memory,
    )


def _refused(res: subprocess.CompletedProcess, words: str) -> None:
    assert res.returncode == 2, (res.returncode, res.stderr[-400:])
    assert res.stdout == "" and res.stderr.count("\n") == 1 and words in res.stderr, res.stderr
    assert "Traceback" not in res.stderr


@pytest.mark.parametrize("option", OPTIONS)
def test_a_device_is_refused_before_it_is_read(tmp_path, option):
    _refused(_fleet(tmp_path, option, "/dev/zero"), "not a regular file")


@pytest.mark.parametrize("option", OPTIONS)
def test_a_fifo_is_refused_without_blocking(tmp_path, option):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    _refused(_fleet(tmp_path, option, str(fifo)), "not a regular file")


@pytest.mark.parametrize("option, limit", [("--baseline", MAX_BASELINE_CHARS), ("--expect-hosts", 16 << 20)])
def test_a_file_over_the_limit_is_refused_before_it_is_read(tmp_path, option, limit):
    big = tmp_path / "big"
    with open(big, "wb") as f:
        f.truncate(limit + 1)  # sparse: nothing to read, only the size says it is too large
    _refused(_fleet(tmp_path, option, str(big)), "larger than")
