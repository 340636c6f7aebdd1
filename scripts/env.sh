# Sourced by the scripts: where libclang lives and which Python runs emitted code.
export LIBCLANG_PATH=/usr/lib/llvm-19/lib
export TENSLIFT_PYTHON="${TENSLIFT_PYTHON:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.venv/bin/python}"
