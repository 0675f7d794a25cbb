#!/usr/bin/env bash
# Installs what is missing, then serves the page at http://127.0.0.1:8080 with the shipped
# pretrained weights. Extra arguments go to `trunk serve`.
#
# On a fresh clone the page comes first: Trunk builds and serves the page alone (draw, read
# the story, load weights: the page's own binary), and then, while it is served, the workers
# that train and explain (the page: 779 s from a fresh clone on a 2-core machine, setup
# included; the workers' build after it is not yet timed to its end there). A reload once they are built brings
# training and the experiments. That first run does not rebuild on changes; every later run
# is `trunk serve` itself, with its live reload.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
scripts/setup.sh
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
say() { printf '\033[1mserve:\033[0m %s (%s s)\n' "$*" $(($(date +%s) - started)); }

# The workers' wasm as cargo left it: there, Trunk.toml's `trunk serve` (the release page)
# builds everything in a minute or two.
if [[ -f target/wasm32-unknown-unknown/web/worker.wasm && -f target/wasm32-unknown-unknown/web/worker_fma.wasm ]]; then
  exec trunk serve "$@"
fi

# The page first: index.html without the workers' two links, served as soon as it is built,
# watching only itself, so that the full build below is never overwritten.
page_first=.page-first.html
sed '/data-bin="worker/d' index.html >"$page_first"
if grep -q 'data-bin="worker' "$page_first"; then
  echo "serve.sh: index.html's worker links were not taken out" >&2
  exit 1
fi
log=$(mktemp)
say "a fresh clone: building the page first, then the workers while it is served"
# stamp.sh (the build's hook) leaves the workers alone where this says they are not built.
VITLAB_PAGE_FIRST=1 trunk serve "$page_first" --watch "$page_first" "$@" > >(tee "$log") 2>&1 &
serving=$!
trap 'kill "$serving" 2>/dev/null || true; rm -f "$log"' EXIT
until grep -q "server listening at" "$log"; do
  kill -0 "$serving" 2>/dev/null || { echo "serve.sh: trunk serve ended before the page was served" >&2; exit 1; }
  sleep 2
done
if ! compgen -G "dist/vitlab-*_bg.wasm" >/dev/null; then
  echo "serve.sh: the page did not build (above)" >&2
  exit 1
fi
# Until they are, the workers' scripts say so: the page shows why Train or an explanation
# stopped (trunk serve would answer index.html for a missing script, which fails as a syntax
# error). The service worker fetches these names from the network first, so the real ones
# replace them at the first reload after the build.
for loader in worker_loader.js worker_fma_loader.js; do
  echo 'throw new Error("the workers that train and explain are still being built by scripts/serve.sh: reload the page when it says everything is built");' >"dist/$loader"
done
say "the page is served; Train and the experiments wait for the workers, building now"
# The whole of index.html into dist, beside the server: the page, its workers, the service
# worker's list of what it keeps.
if ! trunk build --quiet; then
  echo "serve.sh: the workers did not build (above); the page alone is still served" >&2
  wait "$serving"
  exit 1
fi
say "everything is built: reload the page for Train and the experiments. This first run does not rebuild on changes; run scripts/serve.sh again for Trunk's live reload"
wait "$serving"
