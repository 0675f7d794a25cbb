"""The seed's PyTorch code, timed the way `vit bench` times ours: training throughput
(Adam, batch 64, cross-entropy) and batch-1 inference latency, on the same MNIST chunk.

    python tools/bench_torch.py --threads 1 [--steps 60] [--inferences 300]

Prints one JSON line.
"""

import argparse
import json
import pathlib
import resource
import time
import zlib

import numpy as np
import torch
import torch.nn as nn

from seed_vit import ViT, normalize

ROOT = pathlib.Path(__file__).resolve().parent.parent


def read_chunk(path):
    """Decodes one of vitlab's chunks: raw deflate, then magic, count, side, labels, images."""
    raw = zlib.decompress(path.read_bytes(), -15)
    assert raw[:4] == b"VMN1"
    count = int.from_bytes(raw[4:8], "little")
    labels = np.frombuffer(raw, dtype=np.uint8, count=count, offset=12)
    images = np.frombuffer(raw, dtype=np.uint8, count=count * 784, offset=12 + count)
    return images.reshape(count, 28, 28).copy(), labels.astype(np.int64)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--inferences", type=int, default=300)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    images, labels = read_chunk(ROOT / "www" / "mnist" / "train-000.bin")
    batch, warmup = 64, 5
    model = ViT()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    model.train()
    start = time.perf_counter()
    for i in range(warmup + args.steps):
        if i == warmup:
            start = time.perf_counter()
        at = (i * batch) % (len(images) - batch)
        x = normalize(images[at : at + batch])
        y = torch.as_tensor(labels[at : at + batch])
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        loss.item()
    train_rate = args.steps * batch / (time.perf_counter() - start)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    model.eval()
    latencies = []
    with torch.no_grad():
        for i in range(warmup + args.inferences):
            start = time.perf_counter()
            model(normalize(images[i % len(images) : i % len(images) + 1])).numpy()
            if i >= warmup:
                latencies.append((time.perf_counter() - start) * 1e3)
    latencies.sort()
    pick = lambda q: latencies[round((len(latencies) - 1) * q)]
    print(json.dumps({
        "implementation": f"seed PyTorch {torch.__version__}",
        "threads": args.threads,
        "train_images_per_s": train_rate,
        "latency_p50_ms": pick(0.5),
        "latency_p95_ms": pick(0.95),
        "peak_memory_mb": peak,
    }))


if __name__ == "__main__":
    main()
