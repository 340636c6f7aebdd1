#!/usr/bin/env bash
# README command 2: installs what is missing, then runs every test
# (Rust unit, snapshot, property and end-to-end tests; the Python-side tests).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
source scripts/env.sh
cargo test --workspace --release
