#!/usr/bin/env sh
# Trunk's post-build hook (Trunk.toml): writes into the built sw.js the files it keeps for
# offline use (SHELL: the page, both binaries, the style, the data's manifest and the default
# weights) and a VERSION made of their hashes, so that each build's service worker differs
# from the last exactly when what it serves does.
set -eu
cd "${TRUNK_STAGING_DIR:?run by trunk build as a hook}"
shell=$(ls index.html ./*.js ./*.wasm ./*.css mnist/manifest.json pretrained/vit-lab.safetensors \
  | sed 's|^\./||' | grep -vx 'sw.js' | sort)
version=$(sha256sum $shell | sha256sum | cut -c1-16)
list=$(printf '"%s", ' $shell | sed 's/, $//')
sed -i \
  -e "s|^const VERSION = .*|const VERSION = \"$version\";|" \
  -e "s|^const SHELL = .*|const SHELL = [$list];|" \
  sw.js
grep -q "^const VERSION = \"$version\";" sw.js
