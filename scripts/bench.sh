#!/usr/bin/env bash
# Side-by-side CPU benchmark of the seed preset: vitlab (Burn) and the seed's PyTorch code,
# on the same MNIST chunk, 1 and 2 threads. Installs PyTorch from PyPI into .venv-bench the
# first time (not part of the tests). Run on a quiet machine: other work skews both.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -x .venv-bench/bin/python ]]; then
  python3 -m venv .venv-bench
  .venv-bench/bin/pip install --quiet torch numpy
fi
cargo build --release --bin vit
{
  for threads in 1 2; do
    ./target/release/vit bench --threads "$threads" "$@" | tail -1
    .venv-bench/bin/python tools/bench_torch.py --threads "$threads" | tail -1
  done
} | tee /dev/stderr | .venv-bench/bin/python tools/bench_table.py
