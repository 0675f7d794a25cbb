"""Makes tests/fixtures/relevance-seed.json: for the shipped seed-recipe model
(pretrained/vit-seed.safetensors, read by the seed's own PyTorch code) and the parity
fixture's test images, the gradient-weighted attention relevance of Chefer, Gur & Wolf
(ICCV 2021, "generic attention explainability": per layer the heads' mean of
(dy_c/dA * A)+, R = I, R <- R + A_bar R; the class token's row over the patches), computed with
PyTorch's autograd, for the predicted class and for one other; and the logit lens (the final
LayerNorm and head applied to the class token after each block); and the logits with some
patches dropped from the sequence (their tokens removed after the position embedding).

    python tools/make_relevance_fixture.py

Needs torch, safetensors and numpy (pip). The output is committed; CI does not run this.
"""

import hashlib
import json
import pathlib

import torch
import torch.nn.functional as F

import seed_vit
from make_parity_fixture import load_weights
from seed_vit import normalize

ROOT = pathlib.Path(__file__).resolve().parent.parent
WEIGHTS = ROOT / "pretrained" / "vit-seed.safetensors"

ATTENTION = []


def attention_kept(self, x):
    """seed_vit.MultiHeadAttention.forward, keeping each attention map and its gradient."""
    B, N, C = x.shape
    qkv = self.qkv(x).reshape(B, N, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    attn = (q @ k.transpose(-2, -1)) * self.scale
    attn = F.softmax(attn, dim=-1)
    if attn.requires_grad:
        attn.retain_grad()
    ATTENTION.append(attn)
    attn = self.dropout(attn)
    x = (attn @ v).transpose(1, 2).reshape(B, N, C)
    x = self.proj(x)
    return self.dropout(x)


def relevance(model, image, target):
    """The relevance of each patch of `image` ([1, 1, 28, 28]) for class `target`."""
    ATTENTION.clear()
    logits = model(image)
    model.zero_grad()
    logits[0, target].backward()
    n = ATTENTION[0].shape[-1]
    r = torch.eye(n)
    for attn in ATTENTION:
        cam = (attn.grad[0] * attn[0]).clamp(min=0).mean(dim=0)
        r = r + cam @ r
    return r[0, 1:].detach()


def logit_lens(model, image):
    with torch.no_grad():
        x = model.patch_embed(image)
        lens = []
        for layer in model.layers:
            x = layer(x)
            lens.append(model.head(model.norm(x[:, 0]))[0].tolist())
    return lens


def kept_logits(model, image, kept):
    """The logits with only the patches in `kept` (row-major, from 0) left as tokens."""
    with torch.no_grad():
        x = model.patch_embed(image)
        x = x[:, [0] + [1 + p for p in kept]]
        for layer in model.layers:
            x = layer(x)
        return model.head(model.norm(x[:, 0]))[0].tolist()


def main():
    seed_vit.MultiHeadAttention.forward = attention_kept
    model = load_weights(WEIGHTS)
    parity = json.loads((ROOT / "tests" / "fixtures" / "parity.json").read_text())
    cases = []
    for pixels in parity["images"]:
        image = normalize(torch.tensor(pixels, dtype=torch.uint8).reshape(1, 28, 28).numpy())
        with torch.no_grad():
            predicted = int(model(image).argmax())
        other = (predicted + 3) % 10
        patches = model.patch_embed(image).shape[1] - 1
        kept = [p for p in range(patches) if p % 3 != 1]
        cases.append({
            "image": pixels,
            "predicted": predicted,
            "relevance": {str(c): relevance(model, image, c).tolist() for c in (predicted, other)},
            "logit_lens": logit_lens(model, image),
            "kept": kept,
            "kept_logits": kept_logits(model, image, kept),
        })
    fixture = {
        "torch_version": torch.__version__,
        "weights": WEIGHTS.relative_to(ROOT).as_posix(),
        "weights_sha256": hashlib.sha256(WEIGHTS.read_bytes()).hexdigest(),
        "cases": cases,
    }
    out = ROOT / "tests" / "fixtures" / "relevance-seed.json"
    out.write_text(json.dumps(fixture) + "\n")
    print(f"wrote relevance and logit lens for {len(cases)} images to {out}")


if __name__ == "__main__":
    main()
