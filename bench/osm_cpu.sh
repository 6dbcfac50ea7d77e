#!/usr/bin/env bash
# bench/osm_cpu.sh -- CPU time (user + sys, best of N) and peak RSS of `psdl osm X.osm` for
# some extracts, in this tree and optionally in another checkout (the "before" code), the
# two alternating run by run so that both see the same load. Also the Lua VM instructions
# of one run each (bench/vm_count.lua: load-independent).
#
#   bench/osm_cpu.sh [-n N] [-b OTHER_TREE] extract.osm...
#
# OTHER_TREE is a source tree with its own build/ (e.g. `git archive main | tar -x -C DIR`
# and a cmake build there). Prints one line per extract and tree: CPU best / median, RSS, M
# instructions; and the load average before and after.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
n=5
other=""
while [ $# -gt 0 ]; do
    case "$1" in
        -n) n="$2"; shift 2 ;;
        -b) other="$2"; shift 2 ;;
        *) break ;;
    esac
done
[ $# -gt 0 ] || { echo "usage: bench/osm_cpu.sh [-n N] [-b OTHER_TREE] extract.osm..." >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
trees="$here"
[ -n "$other" ] && trees="$other $here"
for f in "$@"; do
    name=$(basename "$f" .osm)
    for t in $trees; do : > "$tmp/$(echo "$t" | md5sum | cut -c1-8)"; done
    for _ in $(seq "$n"); do
        for t in $trees; do
            key=$(echo "$t" | md5sum | cut -c1-8)
            /usr/bin/time -f "%U %S %M" -o "$tmp/one" lua5.4 "$t/scripts/psdl" osm "$f" -o "$tmp/out.psdl" -q \
                >/dev/null 2>&1 || echo "$name: failed in $t" >&2
            awk '{ printf "%.2f %d\n", $1 + $2, $3 }' "$tmp/one" >> "$tmp/$key"
        done
    done
    for t in $trees; do
        key=$(echo "$t" | md5sum | cut -c1-8)
        label=$([ "$t" = "$here" ] && echo this || echo other)
        instr=$(cd "$t" && lua5.4 "$here/bench/vm_count.lua" "$t" osm "$f" -o "$tmp/out.psdl" -q 2>&1 | tail -n 1)
        sort -n "$tmp/$key" | awk -v name="$name" -v label="$label" -v instr="$instr" '
            { c[NR] = $1; if ($2 > rss) rss = $2 }
            END { printf "%-28s %-5s CPU best %.2f s, median %.2f s (%d runs), peak RSS %.0f MB, %s M VM instructions\n",
                  name, label, c[1], c[int((NR + 1) / 2)], NR, rss / 1024, instr }'
    done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
