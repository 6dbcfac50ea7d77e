#!/usr/bin/env bash
# bench/fuzz_companion.sh [seconds-per-target] (env FUZZ_MAX_LEN, default 4096) -- run the libFuzzer target of every companion
# decoder (tests/c/fuzz_companion.c) for a capped time each, seeded with the byte vectors of
# spec/companion_vectors.lua. Needs clang. Crashing inputs land in /tmp/psdl-companion-fuzz/
# artifacts; copy each into tests/c/crashers/<format>-<what>.bin (psdl_ctest_companion then
# replays it) and note it in tests/c/README.md.
set -eu
secs="${1:-60}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
work=/tmp/psdl-companion-fuzz
mkdir -p "$work/artifacts"
CC=clang cmake -S . -B build-fuzz -DPSDL_LUA=OFF -DPSDL_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j2 --target psdl_fuzz_bai psdl_fuzz_cpvs psdl_fuzz_inst psdl_fuzz_pathset \
  psdl_fuzz_pkg psdl_fuzz_tex >/dev/null
lua5.4 - "$work" <<'LUA'
package.path = "./spec/?.lua;" .. package.path
local V = require "companion_vectors"
local work = arg[1]
local seeds = { bai = { V.bai_example() }, cpvs = { V.cpvs_example }, inst = { V.inst_example, V.inst_full },
  pathset = { V.pathset_example }, pkg = { V.pkg_example() }, tex = { V.tex_example() } }
for fmt, list in pairs(seeds) do
  os.execute("mkdir -p " .. work .. "/corpus-" .. fmt)
  for i, bytes in ipairs(list) do
    local f = assert(io.open(("%s/corpus-%s/seed%d"):format(work, fmt, i), "wb"))
    f:write(bytes)
    f:close()
  end
end
LUA
for fmt in bai cpvs inst pathset pkg tex; do
  echo "== psdl_fuzz_$fmt for ${secs}s"
  build-fuzz/psdl_fuzz_$fmt -max_total_time="$secs" -max_len="${FUZZ_MAX_LEN:-4096}" -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/$fmt-" "$work/corpus-$fmt" 2>&1 | grep -E "stat::number_of_executed_units|stat::peak_rss|ERROR|SUMMARY|Test unit written" || true
done
