#!/usr/bin/env bash
# Installs everything tenslift needs, idempotently: Debian packages, the
# Python venv (.venv) and the release build. Safe to run again and again;
# each step is skipped when it is already satisfied.
set -euo pipefail
cd "$(dirname "$0")/.."

# slurm-wlm and munge: tests/slurm_e2e.rs starts a one-node cluster with
# scripts/slurm/local-cluster.sh.
apt_packages=(clang-19 libclang-19-dev libz3-dev z3 libomp-19-dev gcc python3-venv pkg-config slurm-wlm munge)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q "${missing[@]}"
fi

# The venv is rebuilt only when requirements.txt changed since it was made.
stamp=.venv/.requirements.sha256
want=$(sha256sum scripts/requirements.txt | cut -d' ' -f1)
if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: creating the Python venv (.venv)" >&2
  python3 -m venv .venv
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -r scripts/requirements.txt
  echo "$want" > "$stamp"
fi

export LIBCLANG_PATH=/usr/lib/llvm-19/lib
cargo build --release --quiet
