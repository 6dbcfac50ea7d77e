#!/usr/bin/env bash
# bench/terrain_outputs.sh -- SHA-256 of the outputs of every terrain-based example and of
# `psdl terrain info|export|import` on the terrain fixtures and a generated 300 x 300 hood
# (stdout and stderr of each command, and every file written). Run it before and after a
# change to the terrain code and diff the two listings: they must be identical.
#
#   bench/terrain_outputs.sh > before.txt; ...; bench/terrain_outputs.sh | diff before.txt -
set -euo pipefail
cd "$(dirname "$0")/.."
export PSDL_BUILD_DIR=${PSDL_BUILD_DIR:-./build}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fx=spec/fixtures/terrain
n=0
clean() { sed -e "s#$dir#DIR#g" -e 's/built in [0-9.]* s.*/built in (time)/' "$1"; }
run() { # every command's output, with the temporary folder's name and timings taken out
  n=$((n + 1))
  local rc=0
  "$@" >"$dir/o" 2>"$dir/e" || rc=$?
  printf '%03d rc=%d out=%s err=%s  %s\n' "$n" "$rc" \
    "$(clean "$dir/o" | sha256sum | cut -c1-16)" "$(clean "$dir/e" | sha256sum | cut -c1-16)" "$(echo "$*" | sed "s#$dir#DIR#g")"
}
files() { # digests of the files written so far
  (cd "$dir" && find . -type f ! -name o ! -name e ! -name tc2.txt | sort | xargs sha256sum | cut -c1-16,65-)
}
lua5.4 bench/terrain_inputs.lua 300 "$dir/gen.png" "$dir/gen.nhtg"
# the example, built by psdl build and run directly
run scripts/psdl build examples/terrain_city.lua -o "$dir/tc.psdl" --preview "$dir/tc.png"
(cd "$dir" && PSDL_BUILD_DIR="$OLDPWD/$PSDL_BUILD_DIR" lua5.4 "$OLDPWD/examples/terrain_city.lua" "$dir/tc2.psdl") \
  >"$dir/tc2.txt" 2>&1 || true
for f in "$fx"/*.nhtg "$fx"/*.png "$fx"/*.pgm "$fx"/*.package "$dir/gen.png" "$dir/gen.nhtg" "$dir/tc.psdl"; do
  run scripts/psdl terrain info "$f"
  run scripts/psdl terrain info --json "$f"
done
k=0
for f in "$fx"/*.nhtg "$fx"/*.png "$fx"/*.pgm "$fx"/hood_plain.package "$dir/gen.png" "$dir/gen.nhtg" "$dir/tc.psdl"; do
  k=$((k + 1))
  run scripts/psdl terrain export "$f" -o "$dir/x$k.png"
  run scripts/psdl terrain export "$f" -o "$dir/x$k.pgm" --bits 8
  run scripts/psdl terrain export "$f" -o "$dir/x$k-o.pgm" --offset 100 --scale 0.5
  run scripts/psdl terrain export "$f" -o "$dir/x$k.nhtg"
  run scripts/psdl terrain export "$f" -o "$dir/x$k-c5.png" --cell-size 5
done
for f in "$fx"/*.png "$fx"/*.pgm "$fx"/*.nhtg "$dir/gen.png" "$dir/gen.nhtg"; do
  k=$((k + 1))
  run scripts/psdl terrain import "$f" -o "$dir/i$k.nhtg"
  run scripts/psdl terrain import "$f" -o "$dir/j$k.nhtg" --offset 5 --scale 2 --type Desert --water 300
  cp "$fx/hood_plain.package" "$dir/p$k.package"
  run scripts/psdl terrain import "$f" -o "$dir/p$k.package" --resize
done
files
echo "direct run: $(clean "$dir/tc2.txt" | sha256sum | cut -c1-16)"
