#!/usr/bin/env bash
# Install the Debian packages listed in scripts/debian-packages.txt. Idempotent: when every package is
# already installed it does nothing (no apt-get update); otherwise it updates the package lists once and
# installs only the missing packages.
set -euo pipefail
cd "$(dirname "$0")/.."

list=scripts/debian-packages.txt
mapfile -t packages < <(sed -e 's/#.*//' "$list" | tr -s ' \t' '\n\n' | sed -e '/^$/d')

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "setup: dpkg-query not found (not a Debian system); make sure these are installed: ${packages[*]}" >&2
  exit 0
fi

missing=()
for pkg in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done

if ((${#missing[@]} == 0)); then
  echo "setup: Debian packages already installed (${packages[*]})"
  exit 0
fi

sudo=()
if ((EUID != 0)); then
  if command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
  else
    echo "setup: missing Debian packages (${missing[*]}) and not root, no sudo: install them as root" >&2
    exit 1
  fi
fi

echo "setup: installing Debian packages: ${missing[*]}"
"${sudo[@]}" apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
