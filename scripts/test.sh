#!/usr/bin/env bash
# README command 2: installs what is missing, then runs every test:
# the Rust unit, snapshot, property and end-to-end tests of the workspace,
# then the Python-side tests (corpus, C reference driver).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
source scripts/env.sh
if cargo nextest --version > /dev/null 2>&1; then
  # Machines of this kind ship cargo-nextest: it runs the tests of every
  # binary side by side, where `cargo test` leaves a core idle while one
  # binary's last long test runs (tests: 606 s -> 517 s on 2 cores). It
  # runs no doctests, so they follow. Without nextest, plain cargo test.
  cargo nextest run --workspace --release --no-fail-fast
  cargo test --workspace --release --doc
else
  cargo test --workspace --release
fi
if [ -d tests/python ]; then
  # -n auto: most Python tests wait on one child (a compile, a lift), so a
  # worker per core halves their time (pytest-xdist, in the venv).
  "$TENSLIFT_PYTHON" -m pytest -q -n auto tests/python
fi
