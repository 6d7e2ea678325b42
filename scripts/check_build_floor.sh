#!/usr/bin/env bash
# Build the gdrdiag wheel with the lowest setuptools pyproject.toml allows (the build-system floor),
# and fail on any setuptools warning about the project metadata (license format, deprecations).
#   scripts/check_build_floor.sh [PYTHON]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${1:-python3}
FLOOR=$(sed -n 's/^requires = \["setuptools>=\([0-9.]*\)"\]/\1/p' pyproject.toml)
[ -n "$FLOOR" ] || { echo "no setuptools>=X floor in pyproject.toml" >&2; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$PY" -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q "setuptools==$FLOOR"
"$WORK/venv/bin/pip" wheel -v --no-deps --no-build-isolation -w "$WORK/dist" . > "$WORK/log" 2>&1 || { cat "$WORK/log"; exit 1; }
if grep -E "SetuptoolsDeprecationWarning|SetuptoolsWarning|_DeprecatedConfig" "$WORK/log"; then echo "setuptools $FLOOR warns (above)" >&2; exit 1; fi
META=$(unzip -p "$WORK"/dist/gdrdiag-*.whl '*/METADATA')
echo "$META" | grep -q '^License-Expression: Apache-2.0$' || { echo "no License-Expression in METADATA" >&2; exit 1; }
echo "ok: built with setuptools $FLOOR, License-Expression: Apache-2.0, no warnings"
