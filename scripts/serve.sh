#!/usr/bin/env bash
# Installs what is missing, then serves the page at http://127.0.0.1:8080 with the shipped
# pretrained weights. Extra arguments go to `trunk serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
# Trunk.toml builds the release page: `trunk serve` alone serves the same.
exec trunk serve "$@"
