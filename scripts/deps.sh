# Sourced by scripts/run and scripts/test: install the Debian packages psdlkit needs when
# any is missing, then configure and build into ./build. Needs root (or sudo) on a fresh
# machine; does nothing when everything is already installed.
PSDL_PACKAGES="gcc make cmake lua5.4 liblua5.4-dev lua-busted lua-argparse lua-cjson lua-filesystem libpng-dev lua-socket lua-term lua-expat libzip-dev python3 unzip lua-zlib"

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
    $sudo apt-get update -qq || return 1
    $sudo apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 $missing >/dev/null || return 1
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
    $sudo apt-get update -qq || return 1
    $sudo apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 $missing >/dev/null || return 1
}

# psdl_build DIR [cmake args...]: configure (once) and build.
psdl_build() {
    local dir="$1"; shift
    cmake -S "$PSDL_ROOT" -B "$PSDL_ROOT/$dir" "$@" >/dev/null || return 1
    cmake --build "$PSDL_ROOT/$dir" -j "$(nproc 2>/dev/null || echo 2)" >/dev/null || return 1
}
