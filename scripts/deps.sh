# Sourced by scripts/run and scripts/test: install the Debian packages psdlkit needs when
# any is missing, then configure and build into ./build. Needs root (or sudo) on a fresh
# machine; does nothing when everything is already installed.
PSDL_PACKAGES="gcc make cmake lua5.4 liblua5.4-dev lua-busted lua-argparse lua-cjson lua-filesystem libpng-dev lua-socket lua-term lua-expat libzip-dev python3 unzip lua-zlib luarocks libmimalloc-dev"

psdl_install_deps() {
    local missing=""
    for p in $PSDL_PACKAGES; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
    done
    [ -z "$missing" ] && return 0
    echo "psdlkit: installing missing Debian packages:$missing"
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    psdl_apt $sudo update -qq || return 1
    psdl_apt $sudo install -y -qq --no-install-recommends $missing || return 1
}

# psdl_apt [sudo] ARGS...: apt-get ARGS, waiting while another apt or dpkg process holds
# the package lock (an unattended upgrade on a fresh machine), as Debian's own tools do:
# apt waits up to PSDL_APT_LOCK_WAIT seconds (default 600) for the dpkg lock itself
# (DPkg::Lock::Timeout), and a run that still fails on a lock (the lists lock of
# `apt-get update` has no timeout) is retried every 10 s until that time is up, with a
# message. Other failures are not retried.
psdl_apt() {
    local sudo=""
    if [ "${1:-}" = sudo ]; then sudo="sudo"; shift; fi
    local wait_max="${PSDL_APT_LOCK_WAIT:-600}" waited=0 out status
    while :; do
        out=$($sudo apt-get -o DPkg::Lock::Timeout="$wait_max" "$@" 2>&1)
        status=$?
        [ "$status" -eq 0 ] && return 0
        if printf '%s\n' "$out" | grep -qiE 'could not get lock|unable to acquire the dpkg frontend lock|unable to lock|is another process using it'; then
            if [ "$waited" -ge "$wait_max" ]; then
                printf '%s\n' "$out" >&2
                echo "psdlkit: another apt/dpkg process still holds the package lock after ${waited} s; try again later" >&2
                return 1
            fi
            echo "psdlkit: another apt/dpkg process holds the package lock; waiting (${waited} s so far)..." >&2
            sleep "${PSDL_APT_RETRY_SLEEP:-10}"
            waited=$((waited + ${PSDL_APT_RETRY_SLEEP:-10}))
            continue
        fi
        printf '%s\n' "$out" >&2
        return "$status"
    done
}

# psdl_install_viewer_deps: what `psdl view` and its browser tests need: node and npm (to
# bundle three.js from viewer/ at build time) and Debian's chromium (the tests drive it
# headless). node/npm may come from elsewhere (a NodeSource nodejs carries its own npm and
# conflicts with Debian's npm package), so they are looked up as commands first.
psdl_install_viewer_deps() {
    local missing=""
    if ! command -v node >/dev/null 2>&1; then missing="$missing nodejs"; fi
    if ! command -v npm >/dev/null 2>&1; then missing="$missing npm"; fi
    if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
        missing="$missing chromium"
    fi
    [ -z "$missing" ] && return 0
    echo "psdlkit: installing missing Debian packages for the viewer:$missing"
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    psdl_apt $sudo update -qq || return 1
    psdl_apt $sudo install -y -qq --no-install-recommends $missing || return 1
}

# psdl_build DIR [cmake args...]: configure (once) and build.
psdl_build() {
    local dir="$1"; shift
    cmake -S "$PSDL_ROOT" -B "$PSDL_ROOT/$dir" "$@" >/dev/null || return 1
    cmake --build "$PSDL_ROOT/$dir" -j "$(nproc 2>/dev/null || echo 2)" >/dev/null || return 1
}
