#!/usr/bin/env bash
# The paper's inductive-bias claim on MNIST: the seed ViT and the seed CNN (the same size,
# ~204k parameters) trained on the first 1k, 5k, 15k and 60k training images, each run seeing
# the same number of images (--budget, 150,000 unless told: 2.5 epochs of the full split,
# 150 of 1k), one recipe for both models, the test set scored once at the end of each run
# (nothing is chosen by it). Prints a Markdown table and writes the figures as JSON
# (OUT/data-scaling.json; the page charts pretrained/data-scaling.json). About 25 minutes on
# 2 cores at the default budget.
#   scripts/data-scaling.sh [--sizes "1000 5000"] [--budget IMAGES] [--out DIR] [--threads N]
set -euo pipefail
cd "$(dirname "$0")/.."
sizes="1000 5000 15000 60000"
budget=150000
out=target/data-scaling
threads=()
while (($#)); do
  case $1 in
    --sizes) sizes=${2:?--sizes needs a list}; shift 2 ;;
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    --threads) threads=(--threads "${2:?--threads needs a number}"); shift 2 ;;
    --budget) budget=${2:?--budget needs a number}; shift 2 ;;
    *) echo "data-scaling.sh: unknown option $1 (--sizes LIST, --budget N, --out DIR, --threads N)" >&2; exit 2 ;;
  esac
done
cargo build --release --bin vit
mkdir -p "$out"

# One recipe for both models: AdamW 1e-3, weight decay 0.05, 5 % warm-up then cosine,
# batch 64, augmentation; no label smoothing.
recipe() {
  local size=$1 epochs=$((budget / $1))
  echo --limit "$size" --epochs "$epochs" --eval-every "$epochs" --batch-size 64 --lr 1e-3 \
    --weight-decay 0.05 --warmup-epochs "$(awk "BEGIN { print $epochs * 0.05 }")" --augment \
    --seed 5 --val 0
}

json="["
for model in vit cnn; do
  for size in $sizes; do
    file="$out/$model-$size.safetensors"
    log="$out/$model-$size.log"
    # shellcheck disable=SC2046 # the recipe is a list of words
    ./target/release/vit train --model "$model" $(recipe "$size") "${threads[@]}" --out "$file" >"$log"
    accuracy=$(./target/release/vit eval --weights "$file" --json | tail -1 |
      python3 -c 'import json, sys; print(json.load(sys.stdin)["accuracy"])')
    seconds=$(grep -o 'weights written to .* (\([0-9]*\) s of training)' "$log" | grep -o '([0-9]*' | tr -d '(')
    echo "$model $size: test accuracy $accuracy (${seconds}s)" >&2
    json+="{\"model\":\"$model\",\"images\":$size,\"budget\":$budget,\"test_accuracy\":$accuracy,\"seconds\":$seconds},"
  done
done
json="${json%,}]"
echo "$json" >"$out/data-scaling.json"
python3 - "$out/data-scaling.json" <<'EOF'
import json, sys
rows = json.load(open(sys.argv[1]))
sizes = sorted({r["images"] for r in rows})
cell = {(r["model"], r["images"]): r for r in rows}
print("| training images | " + " | ".join(f"{s:,}" for s in sizes) + " |")
print("| --- " * (len(sizes) + 1) + "|")
for model, name in [("vit", "ViT (seed, 204,810 parameters)"), ("cnn", "CNN (seed, 204,330 parameters)")]:
    print(f"| {name} | " + " | ".join(
        f"{100 * cell[(model, s)]['test_accuracy']:.2f} %" if (model, s) in cell else "" for s in sizes) + " |")
EOF
