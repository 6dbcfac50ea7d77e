/* lpsdl_heap.c -- core.heap_reserve: the heap reserve of a short-lived psdl process
 * (psdl_heap.h; called by scripts/psdl before any command runs). */
#include "lpsdl.h"
#include "psdl_heap.h"

/* core.heap_reserve(mb) -> boolean: grow the C heap by `mb` MiB once and advise it for
 * transparent huge pages (psdl_heap_reserve); true when advised, false when not (not
 * glibc/Linux, `ulimit -v`/`-d` in force, already done). Raises for `mb` that is not an
 * integer from 16 to 512. */
static int l_heap_reserve(lua_State *L) {
    lua_Integer mb = luaL_checkinteger(L, 1);
    luaL_argcheck(L, mb >= 16 && mb <= (lua_Integer)(PSDL_HEAP_MAX_RESERVE >> 20), 1,
                  "MiB from 16 to 512 expected");
    lua_pushboolean(L, psdl_heap_reserve((size_t)mb << 20));
    return 1;
}

static const luaL_Reg funcs[] = {
    {"heap_reserve", l_heap_reserve},
    {NULL, NULL},
};

void lpsdl_open_heap(lua_State *L) { luaL_setfuncs(L, funcs, 0); }
