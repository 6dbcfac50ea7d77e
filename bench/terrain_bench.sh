#!/usr/bin/env bash
# bench/terrain_bench.sh -- peak memory (maximum resident set, /usr/bin/time -v) and wall time
# of `psdl terrain info` and `psdl terrain import` on a 2048 x 2048 16-bit PNG heightmap and
# on an NHTG of 2047 x 2047 tiles (2048 x 2048 points), the largest heightmap psdlkit accepts.
#
#   bench/terrain_bench.sh [N]      N: points a side (default 2048)
#
# The inputs are made by bench/terrain_inputs.lua (rolling hills plus noise, so that the PNG
# does not compress to nothing) in a temporary folder, removed at the end.
# Environment: PSDL_BUILD_DIR (default ./build).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2048}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export PSDL_BUILD_DIR=${PSDL_BUILD_DIR:-./build}
lua5.4 bench/terrain_inputs.lua "$n" "$dir/hood.png" "$dir/hood.nhtg"
ls -l "$dir/hood.png" "$dir/hood.nhtg" | awk '{print $5, $9}'

measure() { # label, command...
  local label=$1
  shift
  /usr/bin/time -v "$@" >"$dir/out" 2>"$dir/time" || { cat "$dir/out" "$dir/time"; exit 1; }
  local rss wall
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$dir/time")
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$dir/time")
  printf '%-32s peak %6.1f MB   wall %s\n' "$label" "$(echo "$rss / 1024" | bc -l)" "$wall"
}

measure "terrain info PNG" scripts/psdl terrain info "$dir/hood.png"
measure "terrain info NHTG" scripts/psdl terrain info "$dir/hood.nhtg"
measure "terrain import PNG -> .nhtg" scripts/psdl terrain import "$dir/hood.png" -o "$dir/a.nhtg"
measure "terrain import NHTG -> .nhtg" scripts/psdl terrain import "$dir/hood.nhtg" -o "$dir/b.nhtg"
measure "terrain export NHTG -> PNG" scripts/psdl terrain export "$dir/hood.nhtg" -o "$dir/c.png"
measure "lua5.4 -e '' (baseline)" lua5.4 -e ''
