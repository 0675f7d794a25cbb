#!/usr/bin/env bash
# The model on a real GPU: on a Linux machine with an NVIDIA GPU and nothing else prepared,
# brings the Vulkan loader where it is missing, builds `vit` with the GPU features (or takes
# the one given), and prints `vit bench --device gpu`: kernel dispatches per training step and
# per drawing, batch-1 latency, and training images/s at batch 64 and 512.
#
#   scripts/gpu-bench.sh [--vit PATH] [--steps N]
#
# --vit PATH uses a `vit` built elsewhere (`cargo build --release --features fusion --bin vit`)
# for a machine without Rust or a network. Needs MNIST's chunks in www/mnist (in the clone).
set -euo pipefail
cd "$(dirname "$0")/.."

vit=""
steps=40
while (($#)); do
  case "$1" in
    --vit) vit="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    *) echo "usage: $0 [--vit PATH] [--steps N]" >&2; exit 2 ;;
  esac
done
say() { printf '\033[1mgpu-bench:\033[0m %s\n' "$*"; }

# The Vulkan loader: the system's, or Debian's package unpacked beside the project.
if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1'; then
  loader_dir="$PWD/target/vulkan-loader"
  if [[ ! -e "$loader_dir/usr/lib/x86_64-linux-gnu/libvulkan.so.1" ]]; then
    say "no Vulkan loader: fetching Debian's libvulkan1"
    mkdir -p "$loader_dir"
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
      apt-get install -y -qq libvulkan1 >/dev/null && loader_dir=""
    else
      (cd "$loader_dir" && apt-get download libvulkan1 >/dev/null && dpkg -x libvulkan1_*.deb .)
    fi
  fi
  if [[ -n "$loader_dir" ]]; then
    export LD_LIBRARY_PATH="$loader_dir/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
fi
# NVIDIA's Vulkan driver manifest, where a container keeps it off the usual paths.
if ! ls /usr/share/vulkan/icd.d/nvidia* /etc/vulkan/icd.d/nvidia* >/dev/null 2>&1; then
  for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/local/nvidia/icd.d/nvidia_icd.json; do
    [[ -e "$icd" ]] && export VK_DRIVER_FILES="$icd" VK_ICD_FILENAMES="$icd" && break
  done
fi
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/gpu-bench: GPU /'

if [[ -z "$vit" ]]; then
  if ! command -v cargo >/dev/null; then
    say "installing Rust (rustup, minimal profile)"
    curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal >/dev/null
    # shellcheck disable=SC1091
    source "$HOME/.cargo/env"
  fi
  say "building vit with the GPU features"
  cargo build --quiet --release --features fusion --bin vit
  vit=target/release/vit
fi

for batch in 64 512; do
  say "batch $batch"
  "$vit" bench --device gpu --preset lab --batch-size "$batch" --steps "$steps" --inferences 200 --data www/mnist
done
