#!/usr/bin/env bash
# Fleet checks for CI, run by .ci/run after set-up and the main test suite:
#   1. a real one-node Slurm on localhost (Debian's slurmctld/slurmd/munge) and the Slurm test;
#   2. the 10,000-record scale check (time, memory, detection, false positives).
# The Kubernetes manifest test and every other fleet test run in the main suite.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/fleet/slurm_setup.sh
GDRDIAG_REQUIRE_SLURM=1 .venv/bin/python -m pytest -q -m slurm tests/fleet
.venv/bin/python scripts/fleet/scale_check.py
