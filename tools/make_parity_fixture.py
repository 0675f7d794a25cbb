"""Makes tests/fixtures/parity.*: seed-preset weights drawn by PyTorch, a few MNIST test images,
and the logits the seed's model computes for them in eval mode; with `--model cnn`,
tests/fixtures/parity-cnn.* for the reference CNN of tools/seed_cnn.py. With `--weights FILE`
(a shipped file, such as pretrained/vit-lab.safetensors), tests/fixtures/parity-lab.json alone:
the logits the seed's code computes with that file's weights and config, and the file's
SHA-256; the test reads the weights from where they ship rather than from a copy.

    python tools/make_parity_fixture.py --idx ../shared/data/mnist [--model cnn]
    python tools/make_parity_fixture.py --idx ../shared/data/mnist --weights pretrained/vit-lab.safetensors

Needs torch, safetensors and numpy (pip). The output is committed; CI does not run this.
"""

import argparse
import gzip
import hashlib
import json
import pathlib

import numpy as np
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

import seed_cnn
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


def load_weights(path):
    """A vitlab weights file as the seed's PyTorch model of its config (metadata
    `vitlab.config`), every name and shape checked, in eval mode."""
    with safe_open(path, "pt") as f:
        metadata = f.metadata() or {}
    config = json.loads(metadata.get("vitlab.config", "{}"))
    if "cnn" in config:
        model = seed_cnn.from_config(config["cnn"])
    else:
        model = vit_from_config(config)
    model.load_state_dict(load_file(path), strict=True)
    return model.eval()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--idx", type=pathlib.Path, required=True)
    parser.add_argument("--count", type=int, default=8)
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "tests" / "fixtures")
    parser.add_argument("--model", choices=["vit", "cnn"], default="vit")
    parser.add_argument("--weights", type=pathlib.Path, help="a shipped weights file, not copied")
    args = parser.parse_args()
    if args.weights is not None:
        shipped_fixture(args)
        return

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


def shipped_fixture(args):
    """parity-NAME.json for pretrained/vit-NAME.safetensors: its path from the repository root,
    its SHA-256 (a retrained file must come with a new fixture), images and PyTorch's logits."""
    weights = args.weights.resolve()
    model = load_weights(weights)
    stem = "parity-" + weights.stem.removeprefix("vit-")
    images = read_idx_images(args.idx / "t10k-images-idx3-ubyte.gz", args.count)
    labels = read_idx_labels(args.idx / "t10k-labels-idx1-ubyte.gz", args.count)
    with torch.no_grad():
        logits = model(normalize(images))
    fixture = {
        "torch_version": torch.__version__,
        "weights": weights.relative_to(ROOT).as_posix(),
        "weights_sha256": hashlib.sha256(weights.read_bytes()).hexdigest(),
        "images": images.reshape(args.count, 784).tolist(),
        "labels": labels.tolist(),
        "logits": logits.tolist(),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{stem}.json").write_text(json.dumps(fixture) + "\n")
    print(f"wrote the logits of {args.count} images with {fixture['weights']} to {args.out / stem}.json")


if __name__ == "__main__":
    main()
