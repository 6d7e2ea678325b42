"""Ctrl-C during ``inspect``: one line on stderr and exit 130, whichever phase it lands in.

Before: 5 runs in 8 exited 130 without a word. A Ctrl-C while typer parsed the options became a
silent exit 130 (typer's own handler), one while a dataclass was being built during a lazy import
was wrapped into a RuntimeError (swallowed by the collectors that record failures as facts, or a
traceback), and the interpreter killed itself with SIGINT at exit after a Ctrl-C that landed in an
``exec`` of a source string, or in its own shutdown.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gdrdiag import entry
from gdrdiag.cli import app

ROOT = Path(__file__).resolve().parents[2]


def _interrupt(*_args, **_kwargs):
    raise KeyboardInterrupt


def _wrapped_interrupt(*_args, **_kwargs):
    """What Python 3.11 raises when a Ctrl-C lands in a dataclass field's ``__set_name__``."""
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt as exc:
        raise RuntimeError("Error calling __set_name__ on 'Field' instance 'grid' in 'PeerParams'") from exc


def _gpu_on_the_bus(monkeypatch) -> None:
    """Every PCI function counts as a GPU, so inspect asks NVML (this machine may have none)."""
    from gdrdiag.inspect import virt

    monkeypatch.setattr(virt, "is_gpu", lambda f: True)


# phase -> (module[:class], attribute, replacement, extra set-up)
PHASES = {
    "reading sysfs": ("gdrdiag.inspect.pci", "scan", _interrupt, None),
    "reading PCI config space": ("gdrdiag.hw.pciconfig", "read_config", _interrupt, None),
    "listing RDMA devices": ("gdrdiag.hw.verbs_providers", "list_device_names", _interrupt, None),
    "RDMA devices, wrapped": ("gdrdiag.hw.verbs_providers", "list_device_names", _wrapped_interrupt, None),
    "CUDA init": ("gdrdiag.hw.cuda", "init", _interrupt, None),
    "CUDA init, wrapped": ("gdrdiag.hw.cuda", "init", _wrapped_interrupt, None),
    "NVML queries": ("gdrdiag.hw.nvml", "gpu_facts", _interrupt, _gpu_on_the_bus),
    "diagnosing": ("gdrdiag.diagnose", "diagnose_machine", _interrupt, None),
    "rendering": ("gdrdiag.render.machine_table", "render_inspect", _interrupt, None),
    "importing a command module, wrapped": (
        "gdrdiag.cli.reporting",
        "results_report",
        _wrapped_interrupt,
        None,
    ),
    "parsing the options": ("gdrdiag.cli:GdrdiagGroup", "resolve_command", _interrupt, None),
}


MODES = (["inspect"], ["inspect", "--check"], ["--json", "inspect"])
CASES = [(p, m) for p in PHASES for m in MODES if p != "rendering" or m == ["inspect"]]  # text only renders


@pytest.mark.parametrize("phase, argv", CASES, ids=[f"{p} ({' '.join(m)})" for p, m in CASES])
def test_ctrl_c_in_every_phase_is_one_line_and_exit_130(monkeypatch, phase, argv):
    import importlib

    where, name, replacement, setup = PHASES[phase]
    module_name, _, cls = where.partition(":")
    target = importlib.import_module(module_name)
    monkeypatch.setattr(getattr(target, cls) if cls else target, name, replacement)
    if setup is not None:
        setup(monkeypatch)
    res = CliRunner().invoke(app, argv)
    err = res.stderr.strip().splitlines()
    assert res.exit_code == 130, (phase, res.exit_code, res.output[-400:])
    assert len(err) == 1 and err[0].startswith("gdrdiag: interrupted"), (phase, res.stderr)
    assert "Traceback" not in res.output and res.stdout == ""


def _patched_entry(monkeypatch):
    """SIGINT left alone (this is the test process); returns the signals entry blocks before exiting."""
    blocked: list[int] = []
    monkeypatch.setattr(entry.signal, "signal", lambda *a: None)
    monkeypatch.setattr(entry.signal, "pthread_sigmask", lambda how, sigs: blocked.extend(sigs))
    return blocked


@pytest.mark.parametrize("raised", [_interrupt, _wrapped_interrupt], ids=["plain", "wrapped"])
def test_ctrl_c_while_typer_builds_the_command_is_one_line_and_exit_130(monkeypatch, capsys, raised):
    """``app()`` builds typer's command before any handler of the CLI runs: a traceback before."""
    import gdrdiag.cli

    blocked = _patched_entry(monkeypatch)
    monkeypatch.setattr(gdrdiag.cli, "main", raised)
    with pytest.raises(SystemExit) as exc:
        entry.main()
    assert exc.value.code == 130 and blocked == [signal.SIGINT]
    assert capsys.readouterr().err == "gdrdiag: interrupted\n"


def _child(block_in: str) -> list[str]:
    """A ``gdrdiag inspect`` process that says ``blocked`` and waits inside ``block_in`` for a Ctrl-C."""
    module, name = block_in.rsplit(".", 1)
    code = (
        "import importlib, sys, time\n"
        f"m = importlib.import_module({module!r})\n"
        "def wait(*a, **k):\n"
        "    sys.stderr.write('blocked\\n'); sys.stderr.flush(); time.sleep(60)\n"
        f"setattr(m, {name!r}, wait)\n"
        "sys.argv = ['gdrdiag', 'inspect']\n"
        "from gdrdiag.entry import main\n"
        "main()\n"
    )
    return [sys.executable, "-c", code]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.mark.parametrize(
    "block_in",
    [
        "gdrdiag.hw.pciconfig.read_config",
        "gdrdiag.hw.verbs_providers.list_device_names",
        "gdrdiag.hw.cuda.init",
        "gdrdiag.render.machine_table.render_inspect",
    ],
)
def test_a_real_sigint_while_a_collector_runs_is_one_line_and_exit_130(block_in):
    proc = subprocess.Popen(
        _child(block_in), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(), cwd=ROOT
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert line == b"blocked\n", line
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, (proc.returncode, err)
    assert err.decode().splitlines() == ["gdrdiag: interrupted; resources released"] and out == b""


def test_a_real_sigint_at_any_moment_is_one_line_and_130_or_a_finished_run():
    """SIGINT at ten moments spread over a whole run (start-up to after its output).

    A run is either interrupted (exit 130, one line on stderr, no output) or had finished (its exit
    code, its whole output, nothing on stderr); never killed by the signal, silent or a traceback.
    The clock starts once the console script's import of ``gdrdiag.entry`` is done (a Ctrl-C during
    Python's own start-up, before any of gdrdiag runs, is the interpreter's to report).
    """
    go = "from gdrdiag.entry import main; import sys; sys.argv = ['gdrdiag', 'inspect']\n"
    cmd = [sys.executable, "-c", go + "sys.stderr.write('go\\n'); sys.stderr.flush(); main()\n"]
    start = time.monotonic()
    full = subprocess.run(cmd, capture_output=True, env=_env(), cwd=ROOT, timeout=120)
    took = time.monotonic() - start
    assert full.returncode in (0, 1) and full.stderr == b"go\n", full.stderr
    seen = set()
    for k in range(10):
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(), cwd=ROOT)
        assert proc.stderr is not None and proc.stderr.readline() == b"go\n"
        time.sleep(took * k / 8)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        if proc.returncode == 130:
            assert err.decode().splitlines()[:1] in (
                ["gdrdiag: interrupted"],
                ["gdrdiag: interrupted; resources released"],
            ), err
            assert len(err.splitlines()) == 1 and out == b"", (k, err, out[-200:])
            seen.add("interrupted")
        else:
            assert proc.returncode == full.returncode and err == b"", (k, proc.returncode, err)
            assert out.count(b"\n") == full.stdout.count(b"\n")
            seen.add("finished")
    assert "interrupted" in seen
