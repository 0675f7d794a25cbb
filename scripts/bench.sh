#!/usr/bin/env bash
# Side-by-side CPU benchmark of the seed preset: vitlab (Burn) and the seed's PyTorch code,
# on the same MNIST chunk, with 1 and 2 threads, and with 2 threads while a busy loop holds
# one core (how each degrades when its threads compete with other work). Installs PyTorch
# from PyPI into .venv-bench the first time (not part of the tests). Run on a quiet machine:
# other work skews both. Extra arguments go to `vit bench` (e.g. --steps 100).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -x .venv-bench/bin/python ]]; then
  python3 -m venv .venv-bench
fi
# Quick when already satisfied; also brings an older .venv-bench up to tools/requirements.txt.
.venv-bench/bin/pip install --quiet -r tools/requirements.txt
cargo build --release --bin vit

# Prints "setting NAME", then one JSON line from each implementation.
run_pair() {
  local setting=$1 threads=$2
  shift 2
  echo "setting $setting"
  ./target/release/vit bench --threads "$threads" "$@" | tail -1
  .venv-bench/bin/python tools/bench_torch.py --threads "$threads" | tail -1
}

busy_pid=""
trap '[[ -n $busy_pid ]] && kill "$busy_pid" 2>/dev/null; true' EXIT
{
  run_pair "1 thread" 1 "$@"
  run_pair "2 threads" 2 "$@"
  (while :; do :; done) &
  busy_pid=$!
  run_pair "2 threads, 1 core busy" 2 "$@"
  kill "$busy_pid"
  busy_pid=""
} | tee /dev/stderr | .venv-bench/bin/python tools/bench_table.py
