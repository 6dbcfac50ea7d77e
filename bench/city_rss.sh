#!/usr/bin/env bash
# bench/city_rss.sh -- peak RSS of city builds with buildings in fresh processes (issue 13:
# <= 20 MiB per 1,000 rooms): `/usr/bin/time -f %M lua5.4 bench/city_growth.lua --once N`
# for several N (best of R runs each), then the slope of a least-squares line through
# (rooms, RSS): MiB per 1,000 rooms, and its intercept (the process without a city).
#
#   bench/city_rss.sh [-r R] [--no-buildings] [--psdl-heap] [N...]   (default N: 6 10 19 30 45)
#
# --psdl-heap: the process's heap set up as `psdl` does (heap reserve, the Lua heap in
# mimalloc; bench/city_growth.lua).
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
r=3
flags=""
sizes=""
while [ $# -gt 0 ]; do
    case "$1" in
        -r) r="$2"; shift 2 ;;
        --no-buildings) flags="$flags --no-buildings"; shift ;;
        --psdl-heap) flags="$flags --psdl-heap"; shift ;;
        *) sizes="$sizes $1"; shift ;;
    esac
done
[ -n "$sizes" ] || sizes="6 10 19 30 45"
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.t"' EXIT
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for n in $sizes; do
    best=""
    for _ in $(seq "$r"); do
        rooms=$(/usr/bin/time -f "%M" -o "$tmp.t" lua5.4 "$here/city_growth.lua" --once "$n" $flags)
        kb=$(cat "$tmp.t")
        if [ -z "$best" ] || [ "$kb" -lt "$best" ]; then best=$kb; fi
    done
    echo "$n $rooms $best" >> "$tmp"
    printf 'N = %3d: %6d rooms, peak RSS %7.1f MiB\n' "$n" "$rooms" "$(echo "$best / 1024" | bc -l)"
done
awk '{ x[NR] = $2; y[NR] = $3 / 1024; sx += x[NR]; sy += y[NR] }
     END { mx = sx / NR; my = sy / NR
           for (i = 1; i <= NR; i++) { sxy += (x[i] - mx) * (y[i] - my); sxx += (x[i] - mx) ^ 2 }
           b = sxy / sxx; a = my - b * mx
           printf "fit: %.1f MiB + %.2f MiB per 1,000 rooms (target <= 20)\n", a, b * 1000 }' "$tmp"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
