#!/usr/bin/env bash
# The type checker's two gates (mypy, configured in pyproject.toml [tool.mypy]):
#   1. gdrdiag/model, gdrdiag/pathmodel and gdrdiag/diagnose: no error at all;
#   2. the whole of gdrdiag: no more errors than scripts/mypy-ratchet.txt holds. The count may only
#      go down: when it is lower, this says so and asks for the file to be lowered in the same commit.
# Run from anywhere; uses the checkout's .venv (scripts/setup.sh installs mypy with the dev extras),
# or $MYPY when set. Exit 0: both gates pass; 1: a gate failed; 2: mypy could not run.
set -euo pipefail
cd "$(dirname "$0")/.."

MYPY="${MYPY:-.venv/bin/mypy}"
RATCHET_FILE=scripts/mypy-ratchet.txt
STRICT_PACKAGES=(gdrdiag/model gdrdiag/pathmodel gdrdiag/diagnose)

if ! "$MYPY" --version >/dev/null 2>&1; then
    echo "typecheck: $MYPY cannot run; install the dev extras (bash scripts/setup.sh)" >&2
    exit 2
fi

# 1. the strict packages: every error is shown and fails the gate.
if ! "$MYPY" "${STRICT_PACKAGES[@]}"; then
    echo "typecheck: ${STRICT_PACKAGES[*]} must have no mypy errors (see above)" >&2
    exit 1
fi

# 2. the whole package against the ratchet. mypy exits 1 when it found errors, 2 when it crashed
#    or was misconfigured: only the first is a count.
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
rc=0
"$MYPY" gdrdiag >"$out" 2>&1 || rc=$?
if [ "$rc" -gt 1 ]; then
    cat "$out" >&2
    echo "typecheck: mypy failed on gdrdiag (exit $rc)" >&2
    exit 2
fi
count="$(grep -c ': error: ' "$out" || true)"
allowed="$(tr -d '[:space:]' <"$RATCHET_FILE")"
if [ "$count" -gt "$allowed" ]; then
    grep ': error: ' "$out" | cut -d: -f1 | sort | uniq -c | sort -rn | head -20 >&2
    echo "typecheck: gdrdiag has $count mypy errors, more than the $allowed in $RATCHET_FILE." >&2
    echo "typecheck: fix the new ones (run: $MYPY gdrdiag); the count may only go down." >&2
    echo "typecheck: (a mypy or dependency version other than the one counted with may also count differently)" >&2
    exit 1
fi
if [ "$count" -lt "$allowed" ]; then
    echo "typecheck: gdrdiag has $count mypy errors, fewer than the $allowed in $RATCHET_FILE:" \
        "write $count there in this commit so the ratchet holds the gain."
else
    echo "typecheck: ${STRICT_PACKAGES[*]} clean; gdrdiag at its ratchet ($count mypy errors)"
fi
