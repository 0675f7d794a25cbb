"""Makes tests/fixtures/parity.*: seed-preset weights drawn by PyTorch, a few MNIST test images,
and the logits the seed's model computes for them in eval mode; with `--model cnn`,
tests/fixtures/parity-cnn.* for the reference CNN of tools/seed_cnn.py.

    python tools/make_parity_fixture.py --idx ../shared/data/mnist [--model cnn]

Needs torch, safetensors and numpy (pip). The output is committed; CI does not run this.
"""

import argparse
import gzip
import json
import pathlib

import numpy as np
import torch
from safetensors.torch import save_file

from seed_cnn import CNN
from seed_vit import ViT, normalize

ROOT = pathlib.Path(__file__).resolve().parent.parent


def read_idx_images(path, count):
    with gzip.open(path, "rb") as f:
        data = f.read()
    assert int.from_bytes(data[:4], "big") == 2051
    return np.frombuffer(data, dtype=np.uint8, offset=16)[: count * 784].reshape(count, 28, 28)


def read_idx_labels(path, count):
    with gzip.open(path, "rb") as f:
        data = f.read()
    assert int.from_bytes(data[:4], "big") == 2049
    return np.frombuffer(data, dtype=np.uint8, offset=8)[:count]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--idx", type=pathlib.Path, required=True)
    parser.add_argument("--count", type=int, default=8)
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "tests" / "fixtures")
    parser.add_argument("--model", choices=["vit", "cnn"], default="vit")
    args = parser.parse_args()

    torch.manual_seed(20210503)
    model = (ViT() if args.model == "vit" else CNN()).eval()
    stem = "parity" if args.model == "vit" else "parity-cnn"
    images = read_idx_images(args.idx / "t10k-images-idx3-ubyte.gz", args.count)
    labels = read_idx_labels(args.idx / "t10k-labels-idx1-ubyte.gz", args.count)
    with torch.no_grad():
        logits = model(normalize(images))

    args.out.mkdir(parents=True, exist_ok=True)
    # No vitlab metadata on purpose: such a file must be read as the seed preset (the seed
    # CNN for a CNN's names).
    state = {name: tensor.contiguous() for name, tensor in model.state_dict().items()}
    save_file(state, args.out / f"{stem}.safetensors", metadata={"format": "pt"})
    fixture = {
        "torch_version": torch.__version__,
        "images": images.reshape(args.count, 784).tolist(),
        "labels": labels.tolist(),
        "logits": logits.tolist(),
    }
    (args.out / f"{stem}.json").write_text(json.dumps(fixture) + "\n")
    print(f"wrote {len(state)} tensors and {args.count} images to {args.out}")


if __name__ == "__main__":
    main()
