/* lpsdl_perims.c -- binding of the perimeter set of Builder:finish (src/psdl_perims.h):
 *
 *   core.perimeters([list])            -> psdl.Perimeters: a set holding the perimeters of
 *                                         list {{v, ...}, ...} (1-based vertex references;
 *                                         empty without a list)
 *   store:perimeters(order, outlines, vpool)  (lpsdl_store.c) -> the set of Builder:finish
 *   set:rooms()                        -> number of rooms
 *   set:get(i)                         -> {v, ...}: room i's perimeter (1-based references)
 *   set:set(i, list)                   replace room i's perimeter (drops the links)
 *   set:tjunctions(vpool [, eps])      -> {room, edge, vertex, ...} as core.tjunctions
 *   set:link(npoints)                  link the perimeters (core.link, §1.5)
 *   set:linked(i)                      -> {{vertex =, neighbour =}, ...}: room i's linked
 *                                         perimeter, as core.link gives it
 *   set:height_mismatches(vpool, kinds, eps, gap)
 *                                      -> {block, edge, road, dy, ...} as
 *                                         core.height_mismatches over the linked perimeters
 *
 * Rooms are 1-based positions in the set. A bad argument raises naming it; the links are
 * asked for before set:link raises "not linked". Lua allocations may run finalizers that
 * change the set or the pool, so every method takes its Lua memory first and reads the set
 * and the pool after it (or copies out of them before making tables). */
#include <stdlib.h>
#include <string.h>

#include "lpsdl.h"
#include "psdl_geom.h"
#include "psdl_perims.h"

#define PERIMS "psdl.Perimeters"

typedef struct perims_box {
    psdl_perims *p;
    /* the vertex pool's points as doubles for the kernels, in C memory (a megabyte of Lua
     * memory per call would make the collector pay for it); refilled right before each
     * kernel call, with no Lua allocation in between */
    double *pts;
    size_t ptscap;
} perims_box;

static int perims_gc(lua_State *L) {
    perims_box *b = (perims_box *)luaL_checkudata(L, 1, PERIMS);
    psdl_perims_free(b->p);
    b->p = NULL;
    free(b->pts);
    b->pts = NULL;
    b->ptscap = 0;
    return 0;
}

psdl_perims *lpsdl_perims_push(lua_State *L) {
    perims_box *b = (perims_box *)lua_newuserdatauv(L, sizeof *b, 0);
    memset(b, 0, sizeof *b);
    luaL_setmetatable(L, PERIMS);
    b->p = psdl_perims_new();
    if (!b->p) luaL_error(L, "not enough memory");
    return b->p;
}

psdl_perims *lpsdl_perims_check(lua_State *L, int idx) {
    perims_box *b = (perims_box *)luaL_checkudata(L, idx, PERIMS);
    if (!b->p) luaL_argerror(L, idx, "a closed " PERIMS);
    return b->p;
}

/* Raises for a set error code e (0 returns). */
static void perims_raise(lua_State *L, int e) {
    if (e == PSDL_PERIMS_OK) return;
    if (e == PSDL_PERIMS_NOMEM) luaL_error(L, "not enough memory");
    if (e == PSDL_PERIMS_FULL) luaL_error(L, "too many perimeter points");
    luaL_error(L, "a perimeter vertex is not below the point count");
}

/* A Lua-owned buffer of n elements of size `size` (at least one), pushed on the stack. */
static void *buffer(lua_State *L, size_t n, size_t size) {
    if (n > ((size_t)-1 / 2) / size) luaL_error(L, "not enough memory");
    return lua_newuserdatauv(L, (n ? n : 1) * size, 0);
}

/* The room argument at idx (1-based, in 1..rooms of the set at 1); returns it 0-based. */
static size_t check_room(lua_State *L, int idx) {
    lua_Integer i = luaL_checkinteger(L, idx);
    size_t nr = psdl_perims_rooms(lpsdl_perims_check(L, 1));
    if (i < 1 || (lua_Unsigned)i > nr)
        luaL_argerror(L, idx, lua_pushfstring(L, "no room %I in the set (%I rooms)", i, (lua_Integer)nr));
    return (size_t)i - 1;
}

/* The references of the list at idx (1-based, each 1..2^32-1) into a new buffer, 0-based;
 * *n = count. what names the list in errors. */
static uint32_t *read_refs(lua_State *L, int idx, int arg, const char *what, size_t *n) {
    if (!lua_istable(L, idx)) luaL_argerror(L, arg, lua_pushfstring(L, "%s: table expected", what));
    size_t len = (size_t)lua_rawlen(L, idx);
    if (len > PSDL_PERIMS_MAX) luaL_argerror(L, arg, lua_pushfstring(L, "%s: too many points", what));
    uint32_t *v = (uint32_t *)buffer(L, len, sizeof *v);
    for (size_t k = 0; k < len; k++) {
        lua_Integer x;
        if (!lpsdl_rawint(L, idx, (lua_Integer)k + 1, 1, UINT32_MAX, &x))
            luaL_argerror(L, arg, lua_pushfstring(L, "%s[%I]: a vertex reference (1-based) expected", what, (lua_Integer)k + 1));
        v[k] = (uint32_t)(x - 1);
    }
    *n = len;
    return v;
}

/* core.perimeters([list]) -> set */
static int l_perimeters(lua_State *L) {
    lua_settop(L, 1);
    int has = !lua_isnoneornil(L, 1);
    if (has) luaL_checktype(L, 1, LUA_TTABLE);
    lpsdl_perims_push(L); /* 2 */
    size_t nr = has ? (size_t)lua_rawlen(L, 1) : 0;
    for (size_t r = 0; r < nr; r++) {
        lua_rawgeti(L, 1, (lua_Integer)r + 1); /* 3 */
        size_t n;
        uint32_t *v = read_refs(L, 3, 1, "list[i]", &n); /* 4 */
        perims_raise(L, psdl_perims_add(lpsdl_perims_check(L, 2), v, n));
        lua_settop(L, 2);
    }
    return 1;
}

static int l_rooms(lua_State *L) {
    lua_pushinteger(L, (lua_Integer)psdl_perims_rooms(lpsdl_perims_check(L, 1)));
    return 1;
}

/* Pushes a list of the n 0-based references v as 1-based integers. */
static void push_refs(lua_State *L, const uint32_t *v, size_t n) {
    lua_createtable(L, n < 0x7FFFFFFF ? (int)n : 0, 0);
    for (size_t k = 0; k < n; k++) {
        lua_pushinteger(L, (lua_Integer)v[k] + 1);
        lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
}

static int l_get(lua_State *L) {
    lua_settop(L, 2);
    size_t r = check_room(L, 2), n;
    psdl_perims_get(lpsdl_perims_check(L, 1), r, &n);
    uint32_t *copy = (uint32_t *)buffer(L, n, sizeof *copy);
    size_t m;
    const uint32_t *v = psdl_perims_get(lpsdl_perims_check(L, 1), r, &m); /* after the allocation */
    if (m < n) n = m;
    if (n) memcpy(copy, v, n * sizeof *copy);
    push_refs(L, copy, n);
    return 1;
}

static int l_set(lua_State *L) {
    lua_settop(L, 3);
    size_t r = check_room(L, 2), n;
    uint32_t *v = read_refs(L, 3, 3, "list", &n);
    perims_raise(L, psdl_perims_set(lpsdl_perims_check(L, 1), r, v, n));
    return 0;
}

/* The points of the vertex pool at idx as doubles, in the buffer of the set at 1; *n = count.
 * Valid until the next Lua allocation (a finalizer may use the set): call right before the
 * kernel. Raises when out of memory (the buffer stays the box's). */
static const double *pool_points(lua_State *L, int idx, size_t *n) {
    perims_box *b = (perims_box *)luaL_checkudata(L, 1, PERIMS);
    lpsdl_perims_check(L, 1);
    size_t c;
    const float *f = lpsdl_pool_floats(L, idx, 3, &c);
    if (c > b->ptscap) {
        if (c > ((size_t)-1 / 2) / (3 * sizeof(double))) luaL_error(L, "not enough memory");
        double *q = (double *)realloc(b->pts, 3 * c * sizeof *q);
        if (!q) luaL_error(L, "not enough memory");
        b->pts = q;
        b->ptscap = c;
    }
    for (size_t i = 0; i < 3 * c; i++) b->pts[i] = f[i];
    *n = c;
    return b->pts;
}

static int l_tjunctions(lua_State *L) {
    lua_settop(L, 3);
    lpsdl_perims_check(L, 1);
    double eps = luaL_optnumber(L, 3, 0.005);
    size_t np, cap = 256;
    lpsdl_pool_floats(L, 2, 3, &np); /* checks the pool */
    uint32_t *d = (uint32_t *)buffer(L, 3 * cap, sizeof *d); /* 4 */
    const double *pts = pool_points(L, 2, &np);
    const uint32_t *start, *verts;
    size_t nr = psdl_perims_csr(lpsdl_perims_check(L, 1), &start, &verts);
    size_t n = psdl_tjunctions(d, cap, pts, np, start, verts, nr, eps);
    if (n == PSDL_GEOM_NOMEM) return luaL_error(L, "not enough memory");
    if (n == PSDL_GEOM_INVALID)
        return luaL_argerror(L, 2, "the points span more than the largest finite number (or one is infinite)");
    if (n > cap) {
        cap = n;
        d = (uint32_t *)buffer(L, 3 * cap, sizeof *d);
        pts = pool_points(L, 2, &np); /* after the allocation */
        nr = psdl_perims_csr(lpsdl_perims_check(L, 1), &start, &verts);
        n = psdl_tjunctions(d, cap, pts, np, start, verts, nr, eps);
        if (n == PSDL_GEOM_NOMEM || n == PSDL_GEOM_INVALID) return luaL_error(L, "not enough memory");
        if (n > cap) n = cap; /* the set changed under a finalizer */
    }
    lua_createtable(L, (int)(3 * n), 0);
    for (size_t i = 0; i < 3 * n; i++) {
        lua_pushinteger(L, (lua_Integer)d[i] + 1);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

static int l_link(lua_State *L) {
    psdl_perims *p = lpsdl_perims_check(L, 1);
    lua_Integer np = luaL_checkinteger(L, 2);
    luaL_argcheck(L, np >= 0 && (lua_Unsigned)np <= UINT32_MAX, 2, "point count in 0..2^32-1 expected");
    int e = psdl_perims_link(p, (size_t)np);
    if (e == PSDL_PERIMS_RANGE) return luaL_argerror(L, 2, "a perimeter vertex is not below the point count");
    perims_raise(L, e);
    return 0;
}

/* The linked CSR of the set at 1; raises when it is not linked. */
static size_t linked_csr(lua_State *L, const uint32_t **start, const uint32_t **verts, const uint32_t **nb) {
    psdl_perims *p = lpsdl_perims_check(L, 1);
    if (!psdl_perims_linked(p)) luaL_error(L, PERIMS ": not linked (set:link first)");
    return psdl_perims_linked_csr(p, start, verts, nb);
}

static int l_linked(lua_State *L) {
    lua_settop(L, 2);
    size_t r = check_room(L, 2);
    const uint32_t *start, *verts, *nb;
    linked_csr(L, &start, &verts, &nb);
    size_t n = start[r + 1] - start[r];
    uint32_t *copy = (uint32_t *)buffer(L, 2 * n, sizeof *copy); /* 3 */
    if (r >= linked_csr(L, &start, &verts, &nb)) return luaL_error(L, "the set changed"); /* after the allocation */
    if (start[r + 1] - start[r] < n) n = start[r + 1] - start[r];
    for (size_t k = 0; k < n; k++) {
        copy[2 * k] = verts[start[r] + k];
        copy[2 * k + 1] = nb[start[r] + k];
    }
    /* the two keys interned once (lua_setfield would look each up again per point) */
    lua_pushliteral(L, "vertex");
    int kv = lua_gettop(L);
    lua_pushliteral(L, "neighbour");
    int kn = lua_gettop(L);
    lua_createtable(L, (int)n, 0);
    for (size_t k = 0; k < n; k++) {
        lua_createtable(L, 0, 2);
        lua_pushvalue(L, kv);
        lua_pushinteger(L, (lua_Integer)copy[2 * k] + 1);
        lua_rawset(L, -3);
        lua_pushvalue(L, kn);
        lua_pushinteger(L, (lua_Integer)copy[2 * k + 1]);
        lua_rawset(L, -3);
        lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    return 1;
}

static int l_height_mismatches(lua_State *L) {
    lua_settop(L, 5);
    size_t nr = psdl_perims_rooms(lpsdl_perims_check(L, 1));
    luaL_checktype(L, 3, LUA_TTABLE);
    double eps = luaL_checknumber(L, 4), gap = luaL_checknumber(L, 5);
    size_t np;
    lpsdl_pool_floats(L, 2, 3, &np); /* checks the pool */
    unsigned char *kind = (unsigned char *)buffer(L, nr, 1); /* 6 */
    for (size_t r = 0; r < nr; r++) {
        lua_Integer k;
        if (!lpsdl_rawint(L, 3, (lua_Integer)r + 1, 0, 2, &k)) luaL_argerror(L, 3, lua_pushfstring(L, "kinds[%I]: 0, 1 or 2 expected", (lua_Integer)r + 1));
        kind[r] = (unsigned char)k;
    }
    const uint32_t *start, *verts, *nb;
    if (linked_csr(L, &start, &verts, &nb) != nr) return luaL_error(L, "the set changed");
    const double *pts = pool_points(L, 2, &np);
    size_t n = psdl_height_mismatches(NULL, 0, pts, np, start, verts, nb, kind, nr, eps, gap, 16);
    if (n == PSDL_GEOM_NOMEM) return luaL_error(L, "not enough memory");
    psdl_height_mismatch *d = (psdl_height_mismatch *)buffer(L, n, sizeof *d); /* 7 */
    if (n) {
        if (linked_csr(L, &start, &verts, &nb) != nr) return luaL_error(L, "the set changed");
        pts = pool_points(L, 2, &np); /* after the allocation */
        size_t m = psdl_height_mismatches(d, n, pts, np, start, verts, nb, kind, nr, eps, gap, 16);
        if (m == PSDL_GEOM_NOMEM) return luaL_error(L, "not enough memory");
        if (m < n) n = m;
    }
    return lpsdl_push_mismatches(L, d, n);
}

static int l_tostring(lua_State *L) {
    perims_box *b = (perims_box *)luaL_checkudata(L, 1, PERIMS);
    if (b->p) lua_pushfstring(L, PERIMS " (%I rooms)", (lua_Integer)psdl_perims_rooms(b->p));
    else lua_pushliteral(L, PERIMS " (closed)");
    return 1;
}

void lpsdl_open_perims(lua_State *L) {
    static const luaL_Reg methods[] = {{"rooms", l_rooms},
                                       {"get", l_get},
                                       {"set", l_set},
                                       {"tjunctions", l_tjunctions},
                                       {"link", l_link},
                                       {"linked", l_linked},
                                       {"height_mismatches", l_height_mismatches},
                                       {NULL, NULL}};
    if (luaL_newmetatable(L, PERIMS)) {
        luaL_newlib(L, methods);
        lua_setfield(L, -2, "__index");
        lua_pushcfunction(L, perims_gc);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, l_tostring);
        lua_setfield(L, -2, "__tostring");
    }
    lua_pop(L, 1);
    lua_pushcfunction(L, l_perimeters);
    lua_setfield(L, -2, "perimeters");
}
