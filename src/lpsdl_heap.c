/* lpsdl_heap.c -- the heap of a psdl process from Lua: control.heap_reserve, control.heap_keep
 * (psdl_heap.h) and control.heap_allocator (psdl_alloc.h); scripts/psdl calls the first and
 * the last before any command runs, psdl.builder the second when a builder is made. */
#define _GNU_SOURCE /* dladdr, RTLD_NODELETE, RTLD_NOLOAD */
#include "lpsdl.h"
#include "psdl_alloc.h"
#include "psdl_heap.h"

#include <dlfcn.h>

/* control.heap_reserve(mb) -> boolean: grow the C heap by `mb` MiB once and advise it for
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

/* control.heap_keep() -> boolean: keep the C heap's freed memory for the next build
 * (psdl_heap_keep: allocations under 32 MiB from the heap, up to 64 MiB of free memory kept
 * at its top); true when set by this call, false when not glibc/Linux or already set (also
 * by control.heap_reserve). psdl.builder calls it when a builder is made. */
static int l_heap_keep(lua_State *L) {
    lua_pushboolean(L, psdl_heap_keep());
    return 1;
}

/* Keep this module (psdl/core.so) loaded until the process ends: a state whose allocator is
 * psdl_alloc's frees its last blocks through it while lua_close unloads the C libraries.
 * Returns 0 when that cannot be promised. */
static int keep_loaded(void) {
#if defined(RTLD_NODELETE) && defined(RTLD_NOLOAD)
    static int kept = 0; /* also the address dladdr looks up: it lies in this module */
    if (kept) return 1;
    Dl_info info;
    if (!dladdr(&kept, &info) || !info.dli_fname) return 0;
    void *h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    if (!h) return 0;
    kept = 1; /* the extra reference is never dropped: that is the point */
    return 1;
#else
    return 0;
#endif
}

/* control.heap_allocator() -> name | nil, reason: put the fast allocator (psdl_alloc.h:
 * mimalloc in its own address range) in front of this Lua state's allocator; returns its name
 * ("mimalloc") when the state uses it (also when it already did), or nil and a reason when
 * nothing changed: built without mimalloc, an address-space limit (`ulimit -v`), another
 * thread owns the fast allocator, the memory guard (control.memory_limit) is already in place
 * (choose the allocator first: the guard then counts through it), or the module cannot be
 * kept loaded. Blocks the state allocated before stay with its previous allocator and are
 * freed there. The state must be used from the thread that called this first in the process
 * for the speed-up (other threads' allocations go to the previous allocator). */
static int l_heap_allocator(lua_State *L) {
    void *ud;
    lua_Alloc f = lua_getallocf(L, &ud);
    const char *name = psdl_alloc_name();
    if (!name) {
        luaL_pushfail(L);
        lua_pushstring(L, psdl_alloc_reason(PSDL_ALLOC_UNAVAILABLE));
        return 2;
    }
    if (lua_getfield(L, LUA_REGISTRYINDEX, "psdl.memory_guard") != LUA_TNIL) {
        luaL_pushfail(L);
        lua_pushliteral(L, "the memory guard (control.memory_limit) is in place: choose the allocator before it");
        return 2;
    }
    lua_pop(L, 1);
    if (!keep_loaded()) {
        luaL_pushfail(L);
        lua_pushliteral(L, "psdl.core cannot be kept loaded (dlopen RTLD_NODELETE)");
        return 2;
    }
    psdl_alloc_fn nf;
    void *nud;
    int rc = psdl_alloc_wrap((psdl_alloc_fn)f, ud, &nf, &nud);
    if (rc != PSDL_ALLOC_OK) {
        luaL_pushfail(L);
        lua_pushstring(L, psdl_alloc_reason(rc));
        return 2;
    }
    lua_setallocf(L, (lua_Alloc)nf, nud);
    lua_pushstring(L, name);
    return 1;
}

/* control.heap_allocator_counts() -> fast, passed: allocations of the process's Lua states
 * served by the fast allocator, and those passed to the previous allocator (the range full
 * or a move out of it) on the owning thread (psdl_alloc_counts); 0, 0 without it. */
static int l_heap_allocator_counts(lua_State *L) {
    size_t fast, passed;
    psdl_alloc_counts(&fast, &passed);
    lua_pushinteger(L, (lua_Integer)fast);
    lua_pushinteger(L, (lua_Integer)passed);
    return 2;
}

static const luaL_Reg funcs[] = {
    {"heap_reserve", l_heap_reserve},
    {"heap_keep", l_heap_keep},
    {"heap_allocator", l_heap_allocator},
    {"heap_allocator_counts", l_heap_allocator_counts},
    {NULL, NULL},
};

void lpsdl_open_heap(lua_State *L) { luaL_setfuncs(L, funcs, 0); }
