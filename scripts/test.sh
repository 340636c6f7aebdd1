#!/usr/bin/env bash
# README command 2: installs what is missing, then runs every test:
# the Rust unit, snapshot, property and end-to-end tests of the workspace,
# then the Python-side tests (corpus, C reference driver).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
source scripts/env.sh
cargo test --workspace --release
if [ -d tests/python ]; then
  # -n auto: most Python tests wait on one child (a compile, a lift), so a
  # worker per core halves their time (pytest-xdist, in the venv).
  "$TENSLIFT_PYTHON" -m pytest -q -n auto tests/python
fi
