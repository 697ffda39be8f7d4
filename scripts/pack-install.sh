#!/usr/bin/env bash
# Packs js/ with `npm pack` and installs the tarball into a fresh project at
# $1, as a user would; copies the end-to-end suite and fault server next to
# it so runners import the package by its bare name.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dest=${1:?destination folder}
rm -rf "$dest" && mkdir -p "$dest"
mkdir -p "$dest" && dest=$(cd "$dest" && pwd)
tarball=$(cd js && npm pack --silent --pack-destination "$dest")
cd "$dest"
cat > package.json <<JSON
{ "name": "saferetry-consumer", "private": true, "type": "module" }
JSON
npm install --silent --no-audit --no-fund --offline "./$tarball"
cp "$root"/tests/e2e/*.mjs "$root"/www/server/fault-server.mjs .
node -e 'import("saferetry").then((m) => { for (const k of ["RetryPolicy", "retryFetch", "RetryError", "reportOf"]) if (!m[k]) throw new Error("missing export " + k); console.log("installed", process.argv[1], "exports ok") })' "$tarball"
