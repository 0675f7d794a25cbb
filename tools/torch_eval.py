"""Evaluates a vitlab weights file with the seed's PyTorch code (tools/seed_cnn.py for a CNN):
proof that our files load into PyTorch with `load_state_dict(strict=True)` and compute the
same predictions.

    python tools/torch_eval.py --weights FILE --idx ../shared/data/mnist

with the packages of tools/requirements.txt (`scripts/bench.sh` installs them into
.venv-bench: `.venv-bench/bin/python tools/torch_eval.py …`).

Prints the test accuracy, to compare with `vit eval --weights FILE`.
"""

import argparse
import pathlib

import torch

from make_parity_fixture import load_weights, read_idx_images, read_idx_labels
from seed_vit import normalize


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--weights", type=pathlib.Path, required=True)
    parser.add_argument("--idx", type=pathlib.Path, required=True)
    args = parser.parse_args()

    model = load_weights(args.weights)
    images = read_idx_images(args.idx / "t10k-images-idx3-ubyte.gz", 10000)
    labels = torch.as_tensor(read_idx_labels(args.idx / "t10k-labels-idx1-ubyte.gz", 10000).copy())
    correct = 0
    with torch.no_grad():
        for start in range(0, 10000, 500):
            logits = model(normalize(images[start : start + 500].copy()))
            correct += (logits.argmax(1) == labels[start : start + 500].long()).sum().item()
    print(f"PyTorch test accuracy {100 * correct / 10000:.2f}% ({correct} / 10000)")


if __name__ == "__main__":
    main()
