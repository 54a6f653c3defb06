#!/usr/bin/env bash
# Install node_modules from package-lock.json (npm ci) when they are missing or older than the lock file,
# make sure better-sqlite3's native binding exists and loads, then touch the stamp that `make` checks.
# A second run with nothing changed does no npm work at all.
set -euo pipefail
cd "$(dirname "$0")/.."

stamp=${1:-node_modules/.parlance-setup-stamp}
binding=node_modules/better-sqlite3/build/Release/better_sqlite3.node

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "setup: Node.js 20.19+ with npm is required (not found on PATH)" >&2
  exit 1
fi
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)'; then
  echo "setup: Node.js 20.19+ is required, found $(node --version)" >&2
  exit 1
fi

if [[ ! -f node_modules/.package-lock.json ]]; then
  why="node_modules is missing"
elif [[ package-lock.json -nt node_modules/.package-lock.json ]]; then
  why="package-lock.json changed"
else
  why=""
fi

if [[ -n "$why" ]]; then
  echo "setup: npm ci ($why; better-sqlite3 builds from source, about a minute)"
  npm ci --no-audit --no-fund
fi

binding_loads() {
  [[ -f "$binding" ]] && node -e 'new (require("better-sqlite3"))(":memory:").close()' >/dev/null 2>&1
}

if ! binding_loads; then
  echo "setup: better-sqlite3 native binding missing or not loadable; npm rebuild better-sqlite3"
  npm rebuild better-sqlite3
  if ! binding_loads; then
    echo "setup: $binding still missing or not loadable after npm rebuild (python3, make and g++ are needed)" >&2
    exit 1
  fi
fi

touch "$stamp"
