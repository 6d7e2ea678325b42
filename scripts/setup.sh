#!/usr/bin/env bash
# One-time set-up on a fresh Debian 12 machine (run as root; as another user it needs sudo, which
# the Debian image does not have).
#
# Installs:
#   - rdma-core, libibverbs and Debian's python3-pyverbs (44.0). PyPI's pyverbs 59 needs
#     rdma-core 59's libibverbs (symbol IBVERBS_PRIVATE_59), which Debian 12 does not ship,
#     so the Debian build is the one that really imports here.
#   - pciutils (lspci, for users who cross-check our register decoding).
#   - a virtual environment in .venv built on the *system* Python 3.11 with
#     --system-site-packages, so that the Debian pyverbs is importable inside it.
#   - gdrdiag itself (editable) with its development extras from PyPI.
#   - gcc and libibverbs-dev, then the C loops (scripts/build_native.sh -> build/native/*.so):
#     the native RDMA provider and the C copy loop. If they cannot be installed or built, set-up
#     says so in one line and carries on; gdrdiag then uses its Python paths and shows why.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != "0" ]; then
    if ! command -v sudo >/dev/null 2>&1; then
        echo "set-up: apt-get needs root and there is no sudo here; run: bash scripts/setup.sh as root" >&2
        exit 2
    fi
    SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
# On a fresh VM unattended-upgrades often holds apt's lock for minutes: wait for it (apt's own lock
# timeout) instead of failing at once with exit 100, and say so in one line.
APT_WAIT_S=900
apt_get() { $SUDO apt-get -o DPkg::Lock::Timeout="$APT_WAIT_S" -o Acquire::Lock::Timeout="$APT_WAIT_S" "$@"; }
# (pgrep matches at most 15 characters of a process name, so each name is looked up on its own)
apt_busy() { for name in apt apt-get dpkg unattended-upgr; do pgrep -x "$name" >/dev/null && return 0; done; return 1; }
if command -v pgrep >/dev/null 2>&1 && apt_busy; then
    echo "set-up: another apt/dpkg (e.g. unattended-upgrades) is running; waiting up to $((APT_WAIT_S / 60)) min for apt's lock"
fi
apt_get update -qq
apt_get install -y -qq --no-install-recommends \
    python3 python3-venv python3-dev python3-pyverbs rdma-core ibverbs-providers \
    libibverbs1 pciutils ca-certificates >/dev/null

if [ ! -x .venv/bin/python ]; then
    /usr/bin/python3 -m venv --system-site-packages .venv
fi
# pip and setuptools talk a lot (the editable-install banner): keep it in a log, show it on failure.
PIP_LOG="$(mktemp)"
trap 'rm -f "$PIP_LOG"' EXIT
if ! { .venv/bin/python -m pip install -q --upgrade pip && .venv/bin/python -m pip install -q -e '.[dev]'; } >"$PIP_LOG" 2>&1; then
    cat "$PIP_LOG" >&2
    echo "set-up: pip could not install gdrdiag (its output is above)" >&2
    exit 1
fi
if ! apt_get install -y -qq --no-install-recommends gcc libc6-dev libibverbs-dev >/dev/null; then
    echo "set-up: could not install gcc/libibverbs-dev; the C loops will not be built (Python paths are used)"
fi
bash scripts/build_native.sh
echo "set-up done: $(.venv/bin/gdrdiag --version)"
