#!/usr/bin/env bash
# Fetches the xterm.js files that `pyaichat serve` embeds, at the versions
# cmd/pyaichat/serve/package-lock.json pins, from the npm registry (npm ci),
# and copies them into cmd/pyaichat/serve/web/vendor/ (gitignored), where
# go:embed finds them. make build, vet and test run it when they are
# missing or older than the lock file.
set -euo pipefail
cd "$(dirname "$0")/../cmd/pyaichat/serve"
command -v npm >/dev/null || { echo "web-assets: no npm; run scripts/deps.sh (it installs nodejs and npm)" >&2; exit 1; }
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2 || { echo "web-assets: npm ci failed (is the npm registry reachable?)" >&2; exit 1; }
mkdir -p web/vendor
cp node_modules/@xterm/xterm/lib/xterm.js node_modules/@xterm/xterm/css/xterm.css \
  node_modules/@xterm/addon-fit/lib/addon-fit.js node_modules/@xterm/addon-unicode11/lib/addon-unicode11.js \
  node_modules/@xterm/addon-web-links/lib/addon-web-links.js node_modules/@xterm/addon-search/lib/addon-search.js \
  node_modules/@xterm/addon-image/lib/addon-image.js \
  web/vendor/
touch web/vendor/.stamp
