#!/usr/bin/env bash
# README command 1: installs what is missing, then runs the main job on an
# example kernel. Extra arguments are passed to tenslift.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
source scripts/env.sh
exec target/release/tenslift lift benchmarks/polybench/gemm.c --target numpy "$@"
