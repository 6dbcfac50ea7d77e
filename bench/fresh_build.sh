#!/usr/bin/env bash
# bench/fresh_build.sh -- CPU time (user + sys) and peak RSS of a fresh `psdl build` process
# (issue 13: the London-scale city in <= 0.2 s), in this tree and optionally in another
# checkout (the "before" code), the two alternating run by run so that both see the same
# load. Also checks that both trees wrote the same bytes (`cmp`).
#
#   bench/fresh_build.sh [-n N] [-b OTHER_TREE] [-a 'EXTRA BUILD ARGS'] [SCRIPT...]
#
# SCRIPT defaults to bench/london_city.lua and examples/downtown.lua. OTHER_TREE is a source
# tree with its own build/ (e.g. `git archive main | tar -x -C DIR` and a cmake build there).
# -a: words added to every `psdl build` (e.g. -a '--trust --timeout 0 --max-memory 0').
# Prints one line per script and tree: CPU best / median of N runs, peak RSS (largest), and
# the load average before and after.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
n=5
other=""
extra=()
scripts=()
while [ $# -gt 0 ]; do
    case "$1" in
        -n) n="$2"; shift 2 ;;
        -b) other="$(cd "$2" && pwd)"; shift 2 ;;
        -a) read -r -a extra <<< "$2"; shift 2 ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        *) scripts+=("$1"); shift ;;
    esac
done
[ ${#scripts[@]} -gt 0 ] || scripts=("$here/bench/london_city.lua" "$here/examples/downtown.lua")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
trees="$here"
[ -n "$other" ] && trees="$other $here"
for f in "${scripts[@]}"; do
    name=$(basename "$f" .lua)
    for t in $trees; do : > "$tmp/$(echo "$t" | md5sum | cut -c1-8)"; done
    for _ in $(seq "$n"); do
        for t in $trees; do
            key=$(echo "$t" | md5sum | cut -c1-8)
            /usr/bin/time -f "%U %S %M" -o "$tmp/one" lua5.4 "$t/scripts/psdl" build "$f" -o "$tmp/$key.psdl" -q \
                ${extra[@]+"${extra[@]}"} >/dev/null 2>"$tmp/err" || { echo "$name: failed in $t:" >&2; cat "$tmp/err" >&2; }
            awk '{ printf "%.3f %d\n", $1 + $2, $3 }' "$tmp/one" >> "$tmp/$key"
        done
    done
    for t in $trees; do
        key=$(echo "$t" | md5sum | cut -c1-8)
        label=$([ "$t" = "$here" ] && echo this || echo other)
        sort -n "$tmp/$key" | awk -v name="$name" -v label="$label" '
            { c[NR] = $1; if ($2 > rss) rss = $2 }
            END { printf "%-14s %-5s CPU best %.2f s, median %.2f s (%d runs), peak RSS %.0f MB\n",
                  name, label, c[1], c[int((NR + 1) / 2)], NR, rss / 1024 }'
    done
    if [ -n "$other" ]; then
        a="$tmp/$(echo "$other" | md5sum | cut -c1-8).psdl" b="$tmp/$(echo "$here" | md5sum | cut -c1-8).psdl"
        if cmp -s "$a" "$b"; then echo "$name: same bytes in both trees"; else echo "$name: OUTPUTS DIFFER"; fi
    fi
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
