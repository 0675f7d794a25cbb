"""Makes tests/fixtures/ablation-lab.json: for the shipped lab ViT
(pretrained/vit-lab.safetensors, read by the seed's own PyTorch code) and the parity
fixture's test images, the logits with attention heads switched off, both ways the page does
it: a head's output (its columns of the heads' outputs side by side, as `attn.proj` reads them)
replaced by zero, or by its mean over the fixture's images at each token position (taken in
the same PyTorch pass, with no head switched off). The heads are switched off through a forward
pre-hook on each layer's `attn.proj`, so the seed's model code runs unchanged.

    python tools/make_ablation_fixture.py

Needs torch, safetensors and numpy (pip). The output is committed; CI does not run this.
"""

import hashlib
import json
import pathlib

import torch

from make_parity_fixture import load_weights
from seed_vit import normalize

ROOT = pathlib.Path(__file__).resolve().parent.parent
WEIGHTS = ROOT / "pretrained" / "vit-lab.safetensors"

# (layer, head) pairs switched off together, from 0; one set a case.
HEAD_SETS = [[[0, 0]], [[2, 3]], [[1, 2], [4, 0], [4, 7]], [[5, h] for h in range(8)]]


def head_outputs(model, images):
    """Each layer's heads' outputs side by side as its `attn.proj` reads them: [B, N, D]."""
    seen = []
    hooks = [
        layer.attn.proj.register_forward_pre_hook(lambda _m, args: seen.append(args[0].detach()))
        for layer in model.layers
    ]
    with torch.no_grad():
        model(images)
    for hook in hooks:
        hook.remove()
    return seen


def ablated_logits(model, images, heads, replacement):
    """The logits with `heads` switched off: their columns set to `replacement[layer]`'s."""
    head_dim = model.layers[0].attn.proj.in_features // model.layers[0].attn.heads
    hooks = []
    for layer_index, layer in enumerate(model.layers):
        off = [h for (l, h) in heads if l == layer_index]
        if not off:
            continue

        def switch_off(_module, args, off=off, layer_index=layer_index):
            mixed = args[0].clone()
            for h in off:
                columns = slice(h * head_dim, (h + 1) * head_dim)
                mixed[:, :, columns] = replacement[layer_index][:, columns]
            return (mixed,)

        hooks.append(layer.attn.proj.register_forward_pre_hook(switch_off))
    with torch.no_grad():
        logits = model(images)
    for hook in hooks:
        hook.remove()
    return logits.tolist()


def main():
    model = load_weights(WEIGHTS)
    model.eval()
    parity = json.loads((ROOT / "tests" / "fixtures" / "parity.json").read_text())
    pixels = parity["images"]
    images = torch.cat([
        normalize(torch.tensor(p, dtype=torch.uint8).reshape(1, 28, 28).numpy()) for p in pixels
    ])
    means = [mixed.mean(dim=0) for mixed in head_outputs(model, images)]  # depth × [N, D]
    zeros = [torch.zeros_like(m) for m in means]
    with torch.no_grad():
        whole = model(images).tolist()
    cases = [
        {
            "heads": heads,
            "zero": ablated_logits(model, images, heads, zeros),
            "mean": ablated_logits(model, images, heads, means),
        }
        for heads in HEAD_SETS
    ]
    fixture = {
        "torch_version": torch.__version__,
        "weights": WEIGHTS.relative_to(ROOT).as_posix(),
        "weights_sha256": hashlib.sha256(WEIGHTS.read_bytes()).hexdigest(),
        "images": pixels,
        "logits": whole,
        "cases": cases,
    }
    out = ROOT / "tests" / "fixtures" / "ablation-lab.json"
    out.write_text(json.dumps(fixture) + "\n")
    print(f"wrote {len(cases)} sets of heads switched off, {len(pixels)} images, to {out}")


if __name__ == "__main__":
    main()
