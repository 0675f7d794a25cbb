#!/usr/bin/env bash
# Side-by-side CPU benchmark of the seed preset: vitlab (its own CPU kernels, and Burn's ops
# as before them: `vit bench --cpu-kernels composed`) and the seed's PyTorch code, on the same
# MNIST chunk, with 1 and 2 threads, and with 2 threads while a busy loop holds
# one core (how each degrades when its threads compete with other work). Installs PyTorch
# from PyPI into .venv-bench the first time (not part of the tests). Run on a quiet machine:
# other work skews both. `--steps N` and `--inferences N` go to both sides, so that they
# always measure the same work.
set -euo pipefail
cd "$(dirname "$0")/.."
same_work=()
while (($#)); do
  case $1 in
    --steps | --inferences) same_work+=("$1" "${2:?$1 needs a number}"); shift 2 ;;
    *) echo "bench.sh: unknown option $1 (only --steps N and --inferences N)" >&2; exit 2 ;;
  esac
done
if [[ ! -x .venv-bench/bin/python ]]; then
  python3 -m venv .venv-bench || {
    echo "bench.sh: python3 -m venv failed; on Debian install python3-venv" >&2
    exit 1
  }
fi
# Quick when already satisfied; also brings an older .venv-bench up to tools/requirements.txt.
.venv-bench/bin/pip install --quiet -r tools/requirements.txt
cargo build --release --bin vit

# Prints "setting NAME", then one JSON line from each implementation.
run_pair() {
  local setting=$1 threads=$2
  echo "setting $setting"
  ./target/release/vit bench --threads "$threads" "${same_work[@]}" | tail -1
  ./target/release/vit bench --threads "$threads" --cpu-kernels composed "${same_work[@]}" | tail -1
  .venv-bench/bin/python tools/bench_torch.py --threads "$threads" "${same_work[@]}" | tail -1
}

busy_pid=""
trap '[[ -n $busy_pid ]] && kill "$busy_pid" 2>/dev/null; true' EXIT
{
  run_pair "1 thread" 1
  run_pair "2 threads" 2
  (while :; do :; done) &
  busy_pid=$!
  run_pair "2 threads, 1 core busy" 2
  kill "$busy_pid"
  busy_pid=""
} | tee /dev/stderr | .venv-bench/bin/python tools/bench_table.py
