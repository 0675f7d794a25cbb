"""Reads the output of scripts/bench.sh ("setting NAME" lines, each followed by the JSON lines
of `vit bench` and tools/bench_torch.py) and prints one table."""

import json
import sys

MEASURES = [
    ("train_images_per_s", "training, batch 64", "images/s", 0),
    ("latency_p50_ms", "batch-1 latency p50", "ms", 2),
    ("latency_p95_ms", "batch-1 latency p95", "ms", 2),
    ("peak_memory_mb", "peak memory (RSS)", "MB", 0),
]

settings = {}
setting = None
for line in sys.stdin:
    if line.startswith("setting "):
        setting = line.removeprefix("setting ").strip()
        settings[setting] = {}
    elif line.startswith("{"):
        row = json.loads(line)
        side = "ours" if row["implementation"].startswith("vitlab") else "theirs"
        settings.setdefault(setting or f'{row["threads"]} threads', {})[side] = row

print()
print("| setting | measure | vitlab (Burn) | seed PyTorch | vitlab / PyTorch |")
print("| --- | --- | --- | --- | --- |")
for name, sides in settings.items():
    ours, theirs = sides.get("ours", {}), sides.get("theirs", {})
    for key, label, unit, digits in MEASURES:
        a, b = ours.get(key), theirs.get(key)
        ratio = f"{a / b:.2f}×" if a and b else "–"
        fmt = lambda v: "–" if v is None else f"{v:.{digits}f} {unit}"
        print(f"| {name} | {label} | {fmt(a)} | {fmt(b)} | {ratio} |")
