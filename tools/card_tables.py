"""Prints the model card's per-class accuracy and confusion matrix tables (Markdown) from the
last line of `vit eval --weights FILE --json`, read on standard input."""

import json
import sys

summary = json.loads(sys.stdin.read().strip().splitlines()[-1])
classes = range(len(summary["per_class_accuracy"]))
header = "| digit | " + " | ".join(str(c) for c in classes) + " |"
print(f"{summary.get('split', 'test')} accuracy {100 * summary['accuracy']:.2f} % "
      f"({summary['correct']:,} / {summary['examples']:,})")
print()
print(header)
print("| --- " * (len(classes) + 1) + "|")
print("| accuracy % | " + " | ".join(f"{100 * a:.2f}" for a in summary["per_class_accuracy"]) + " |")
print()
print("Confusion matrix (rows: true digit, columns: predicted):")
print()
print("| | " + " | ".join(str(c) for c in classes) + " |")
print("| --- " * (len(classes) + 1) + "|")
for c, row in zip(classes, summary["confusion"]):
    print(f"| **{c}** | " + " | ".join(str(v) for v in row) + " |")
