"""Evaluates a vitlab weights file with the seed's PyTorch code (tools/seed_cnn.py for a CNN):
proof that our files load into PyTorch with `load_state_dict(strict=True)` and compute the
same predictions.

    python tools/torch_eval.py --weights FILE --idx ../shared/data/mnist

with the packages of tools/requirements.txt (`scripts/bench.sh` installs them into
.venv-bench: `.venv-bench/bin/python tools/torch_eval.py …`).

Prints the test accuracy, to compare with `vit eval --weights FILE`.
"""

import argparse
import json
import pathlib

import torch
from safetensors import safe_open
from safetensors.torch import load_file

from make_parity_fixture import read_idx_images, read_idx_labels
import seed_cnn
from seed_vit import ViT, normalize


def vit_from_config(config):
    return ViT(
        image_size=config.get("image_size", 28),
        patch_size=config.get("patch_size", 7),
        channels=config.get("channels", 1),
        dim=config.get("dim", 64),
        depth=config.get("depth", 6),
        heads=config.get("heads", 8),
        mlp_dim=config.get("mlp_dim", 128),
        num_classes=config.get("num_classes", 10),
        dropout=config.get("dropout", 0.1),
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--weights", type=pathlib.Path, required=True)
    parser.add_argument("--idx", type=pathlib.Path, required=True)
    args = parser.parse_args()

    with safe_open(args.weights, "pt") as f:
        metadata = f.metadata() or {}
    config = json.loads(metadata.get("vitlab.config", "{}"))
    if "cnn" in config:
        model = seed_cnn.from_config(config["cnn"])
    else:
        model = vit_from_config(config)
    model.load_state_dict(load_file(args.weights), strict=True)
    model.eval()
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
