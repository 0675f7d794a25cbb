"""Reads the JSON lines of `vit bench` and tools/bench_torch.py and prints one table."""

import json
import sys

rows = [json.loads(line) for line in sys.stdin if line.startswith("{")]
ours = {r["threads"]: r for r in rows if r["implementation"].startswith("vitlab")}
theirs = {r["threads"]: r for r in rows if not r["implementation"].startswith("vitlab")}
print()
print("| threads | measure | vitlab (Burn) | seed PyTorch | vitlab / PyTorch |")
print("| --- | --- | --- | --- | --- |")
for threads in sorted(ours):
    a, b = ours[threads], theirs.get(threads)
    for key, label, unit in [
        ("train_images_per_s", "training, batch 64", "images/s"),
        ("latency_p50_ms", "batch-1 latency p50", "ms"),
        ("latency_p95_ms", "batch-1 latency p95", "ms"),
        ("peak_memory_mb", "peak memory", "MB"),
    ]:
        ours_value = a.get(key)
        theirs_value = b.get(key) if b else None
        ratio = f"{ours_value / theirs_value:.2f}×" if ours_value and theirs_value else "–"
        fmt = lambda v: "–" if v is None else f"{v:.1f} {unit}"
        print(f"| {threads} | {label} | {fmt(ours_value)} | {fmt(theirs_value)} | {ratio} |")
