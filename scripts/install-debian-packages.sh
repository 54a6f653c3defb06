#!/usr/bin/env bash
# Install the Debian packages listed in scripts/debian-packages.txt. Idempotent: when every package is
# already installed it does nothing (no apt-get update); otherwise it updates the package lists once and
# installs only the missing packages.
#   --without GROUP[,GROUP]  skip the lines tagged [build] or [test] (the Dockerfile's runtime image: --without build,test)
#   --list                   print the selected package names, one a line, and install nothing
set -euo pipefail
cd "$(dirname "$0")/.."

without=()
list_only=0
usage="usage: $0 [--without build,test] [--list]"
while (($#)); do
  case "$1" in
    --without)
      IFS=, read -ra groups <<<"${2:-}"
      without+=("${groups[@]}")
      shift 2 || { echo "$usage" >&2; exit 2; }
      ;;
    --list) list_only=1; shift ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done

# One or more package names per line, then an optional [group] tag; untagged lines are needed at run time.
list=scripts/debian-packages.txt
packages=()
while IFS= read -r line || [[ -n "$line" ]]; do
  line=${line%%#*}
  group=run
  if [[ "$line" =~ \[([a-z]+)\] ]]; then
    group=${BASH_REMATCH[1]}
    line=${line/"[$group]"/}
  fi
  for skip in "${without[@]}"; do [[ "$skip" == "$group" ]] && continue 2; done
  read -ra names <<<"$line"
  packages+=("${names[@]}")
done <"$list"

if ((list_only)); then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

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

# Some packages (nginx) would start and enable a system service on install; setup installs them as tools only.
# A policy-rc.d answering 101 keeps every service from starting during the install (Debian's documented switch);
# one that is already there (as in container images) is left alone.
policy=/usr/sbin/policy-rc.d
if [[ ! -e "$policy" ]]; then
  "${sudo[@]}" sh -c "printf '#!/bin/sh\\n# parlance setup: no service starts while it installs packages\\nexit 101\\n' > $policy && chmod 755 $policy"
  trap '"${sudo[@]}" rm -f "$policy"' EXIT
fi

echo "setup: installing Debian packages: ${missing[*]}"
"${sudo[@]}" apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"

# Tools whose package enables a boot-time service: disable it when this run installed them (the tests start
# their own nginx in a temporary directory, and their own PostgreSQL and Redis when none listens: Debian's
# PostgreSQL service would ask the tests for a password). A machine that had them before keeps its setup.
for pkg in "${missing[@]}"; do
  case "$pkg" in
    nginx | nginx-light | caddy | postgresql | redis-server)
      unit=${pkg%-light}.service
      if command -v systemctl >/dev/null 2>&1; then "${sudo[@]}" systemctl disable --now "$unit" >/dev/null 2>&1 || true; fi
      ;;
  esac
done
