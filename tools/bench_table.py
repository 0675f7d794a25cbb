"""Reads the output of scripts/bench.sh ("setting NAME" lines, each followed by the JSON lines
of `vit bench` (the model's own CPU kernels, then Burn's ops) and tools/bench_torch.py) and
prints one table, then issue 19's goals, each met or not."""

import json
import sys

MEASURES = [
    ("train_images_per_s", "training, batch 64", "images/s", 0),
    ("latency_p50_ms", "batch-1 latency p50", "ms", 2),
    ("latency_p95_ms", "batch-1 latency p95", "ms", 2),
    ("peak_memory_mb", "peak memory (RSS)", "MB", 0),
]


def side(row):
    if not row["implementation"].startswith("vitlab"):
        return "torch"
    return "burn_ops" if row.get("cpu_kernels") == "composed" else "ours"


settings = {}
setting = None
for line in sys.stdin:
    if line.startswith("setting "):
        setting = line.removeprefix("setting ").strip()
        settings[setting] = {}
    elif line.startswith("{"):
        row = json.loads(line)
        settings.setdefault(setting or f'{row["threads"]} threads', {})[side(row)] = row


def fmt(value, unit, digits):
    return "–" if value is None else f"{value:.{digits}f} {unit}"


print()
print("| setting | measure | vitlab | vitlab on Burn's ops (before) | seed PyTorch | vitlab / PyTorch |")
print("| --- | --- | --- | --- | --- | --- |")
for name, sides in settings.items():
    ours, before, torch = (sides.get(key, {}) for key in ("ours", "burn_ops", "torch"))
    for key, label, unit, digits in MEASURES:
        a, b, c = ours.get(key), before.get(key), torch.get(key)
        ratio = f"{a / c:.2f}×" if a and c else "–"
        print(f"| {name} | {label} | {fmt(a, unit, digits)} | {fmt(b, unit, digits)} | {fmt(c, unit, digits)} | {ratio} |")


def rate(setting, key):
    return settings.get(setting, {}).get(key, {}).get("train_images_per_s")


def goal(text, value, target):
    if value is None:
        print(f"- {text}: not measured")
    else:
        print(f"- {text}: {value:.2f} (goal {target:.2f}): {'met' if value >= target else 'NOT met'}")


print()
print("Goals (issue 19):")
for setting in ("1 thread", "2 threads"):
    ours, torch = rate(setting, "ours"), rate(setting, "torch")
    goal(f"training vs PyTorch, {setting}", ours / torch if ours and torch else None, 1.5)
one, two = rate("1 thread", "ours"), rate("2 threads", "ours")
goal("a second thread's gain (2 threads / 1 thread)", two / one if one and two else None, 1.4)
for setting in ("1 thread", "2 threads"):
    ours = settings.get(setting, {}).get("ours", {})
    before = settings.get(setting, {}).get("burn_ops", {})
    for key, label in (("latency_p50_ms", "batch-1 latency p50"), ("peak_memory_mb", "peak memory")):
        a, b = ours.get(key), before.get(key)
        if a and b:
            print(f"- {label}, {setting}: {a:.2f} against {b:.2f} before: {'no worse' if a <= b * 1.05 else 'WORSE'}")
