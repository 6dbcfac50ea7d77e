#!/bin/bash
# Package every example and every OpenStreetMap extract of a folder with `psdl package`, then
# `psdl validate` each .ar; one table row per input (markdown): rooms, AI roads,
# intersections, dead-end intersections, the validator's verdict, wall seconds.
#
#   bash bench/package_all.sh [OSM_FOLDER] [OUT_DIR]
#
# OSM_FOLDER defaults to ../shared/data/osm beside the repository; OUT_DIR to a fresh temporary
# folder (kept: the .ar files and the logs). Exit status 1 when any input fails or has errors.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
osm=${1:-$here/../shared/data/osm}
out=${2:-$(mktemp -d)}
mkdir -p "$out"
psdl() { lua5.4 "$here/scripts/psdl" "$@"; }
count=$(mktemp --suffix=.lua)
trap 'rm -f "$count"' EXIT
cat > "$count" <<'LUA'
local here = arg[1]
package.path = here .. "/lua/?.lua;" .. here .. "/lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("PSDL_BUILD_DIR") or here .. "/build") .. "/?.so;" .. package.cpath
local f = assert(io.open(arg[2], "rb"))
local c = assert(require("psdl.package.archive").read(f:read("a"), arg[2]))
f:close()
local dead = 0
for _, it in ipairs(c.bai and c.bai.intersections or {}) do if #it.roads == 1 then dead = dead + 1 end end
io.write(string.format("%d | %d | %d | %d", #c.doc.rooms, c.bai and #c.bai.roads or 0,
  c.bai and #c.bai.intersections or 0, dead))
LUA
status=0
echo "| input | rooms | AI roads | intersections | dead ends | psdl validate | s |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for f in "$here"/examples/*.lua "$osm"/*.osm; do
  [ -e "$f" ] || continue
  n=$(basename "$f"); n=${n%.*}
  s=$(date +%s)
  if ! psdl package "$f" -o "$out/$n.ar" -q > "$out/$n.package.log" 2>&1; then
    echo "| $n | package failed: $(tail -1 "$out/$n.package.log") | | | | | |"
    status=1
    continue
  fi
  psdl validate "$out/$n.ar" > "$out/$n.validate.log" 2>&1 || status=1
  e=$(date +%s)
  echo "| $n | $(lua5.4 "$count" "$here" "$out/$n.ar") | $(tail -1 "$out/$n.validate.log" | sed 's/.*: //') | $((e - s)) |"
done
echo "(.ar files and logs in $out)" >&2
exit $status
