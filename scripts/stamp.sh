#!/usr/bin/env sh
# Trunk's post-build hook (Trunk.toml). Shrinks the workers' wasm, points the page's loader at the
# module its compiling worker makes, then writes into the built drawer.js the page's
# content-named script and wasm (the drawing worker runs the page's own binary), and into the
# built sw.js the files it keeps for offline use (SHELL: the page, its icons and app manifest, both binaries, the
# drawing worker's script, the style, the data's manifest and the default weights) and a
# VERSION made of their hashes, so that each build's service worker differs from the last
# exactly when what it serves does.
set -eu
cd "${TRUNK_STAGING_DIR:?run by trunk build as a hook}"
# The workers' duplicate functions merged (binaryen 132, from scripts/setup.sh; index.html says
# why this pass alone), three times over (a merge makes callers alike that the next merges:
# 16 kB gzip more than one pass, in ~15 s more), both at once, before anything is hashed.
command -v wasm-opt >/dev/null || { echo "wasm-opt is missing: run scripts/setup.sh" >&2; exit 1; }
features="--enable-simd --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext
  --enable-mutable-globals --enable-multivalue --enable-reference-types"
merge="--duplicate-function-elimination --duplicate-function-elimination --duplicate-function-elimination"
# scripts/serve.sh's first build on a fresh clone is the page alone (VITLAB_PAGE_FIRST=1):
# no workers to shrink; any other build without them is broken.
if [ "${VITLAB_PAGE_FIRST:-}" != 1 ]; then
  # shellcheck disable=SC2086
  wasm-opt $merge $features worker_bg.wasm -o worker_bg.wasm &
  plain=$!
  # shellcheck disable=SC2086
  wasm-opt $merge $features --enable-relaxed-simd worker_fma_bg.wasm -o worker_fma_bg.wasm
  wait "$plain"
fi
# The shipped models as the page fetches them (src/shipped.rs): static hosts send a
# .safetensors file uncompressed, and gzip takes 7.6 % off (the first load's weights 826 -> 763 kB).
gzip -9 -n -k -f pretrained/*.safetensors
page_js=$(ls vitlab-*.js | grep -v '_bg' | head -1)
page_wasm=$(ls vitlab-*_bg.wasm | head -1)
sed -i \
  -e "s|\"\./vitlab\.js\"|\"./$page_js\"|" \
  -e "s|\"\./vitlab_bg\.wasm\"|\"./$page_wasm\"|" \
  drawer.js
grep -q "\"./$page_js\"" drawer.js
grep -q "\"./$page_wasm\"" drawer.js
# The page's loader takes the module compiled by index.html's worker (www/compiler.js), which
# fetches the wasm itself: its preload would fetch it a second time.
sed -i \
  -e "s|\"\./vitlab_bg\.wasm\"|\"./$page_wasm\"|" \
  -e "s|module_or_path: '\./$page_wasm'|module_or_path: await window.vitlabModule|" \
  -e "s|<link rel=\"preload\" href=\"\./$page_wasm\"[^>]*>||" \
  index.html
grep -q "var url = \"./$page_wasm\";" index.html
grep -q "module_or_path: await window.vitlabModule" index.html
if grep -q "rel=\"preload\" href=\"./$page_wasm\"" index.html; then
  echo "stamp.sh: the page's wasm is still preloaded" >&2
  exit 1
fi
shell=$(ls index.html favicon.svg manifest.webmanifest ./*.png ./*.js ./*.wasm ./*.css mnist/manifest.json pretrained/vit-lab.safetensors.gz \
  | sed 's|^\./||' | grep -vx 'sw.js' | sort)
version=$(sha256sum $shell | sha256sum | cut -c1-16)
list=$(printf '"%s", ' $shell | sed 's/, $//')
sed -i \
  -e "s|^const VERSION = .*|const VERSION = \"$version\";|" \
  -e "s|^const SHELL = .*|const SHELL = [$list];|" \
  sw.js
grep -q "^const VERSION = \"$version\";" sw.js
