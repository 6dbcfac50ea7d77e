/*
 * lpsdl_package.c -- what `psdl package` needs from C (registered into `psdl.core` by
 * lpsdl_open_package): the visibility caster (psdl_visibility.h) and the zip container
 * (psdl_zip.h).
 *
 *   core.visibility(tris, rooms, R [, subterranean [, neighbours]]) -> psdl.Visibility
 *       tris: flat array of 9 numbers per triangle (metres); rooms: the game room id of
 *       each triangle; R: the PSDL room-count field; subterranean: array of room ids whose
 *       eyes stay low; neighbours: flat array of room-id pairs a1, b1, a2, b2, ... (perimeter
 *       neighbours, for the `frontier` flood). Raises on a wrong argument.
 *   vis:rows(first, last, {range =, rays =, eyes =, targeted =, frontier =, seed =, threads =,
 *            random_height =})
 *       -> {[r] = {ids...}}
 *       rows of rooms first..last (1 <= first <= last < R): ascending room ids hit by rays
 *   vis:triangles() -> number of finite triangles kept
 *   core.zip_build(files, level) -> bytes | nil, message, "invalid"
 *       files: array of {name, data} in archive order; level 0 (store) or 1-9 (deflate)
 *   core.zip_read(bytes [, max_total]) -> {{name =, data =}, ...} | nil, message, "bad_input"
 */
#include <stdlib.h>
#include <string.h>

#include "lpsdl.h"
#include "psdl_visibility.h"
#include "psdl_zip.h"

#define VIS "psdl.Visibility"

typedef struct {
    psdl_vis *v;
    uint32_t nrooms;
} vbox;

static int vis_close(lua_State *L) {
    vbox *b = (vbox *)luaL_checkudata(L, 1, VIS);
    psdl_vis_free(b->v);
    b->v = NULL;
    return 0;
}

static vbox *check_vis(lua_State *L) {
    vbox *b = (vbox *)luaL_checkudata(L, 1, VIS);
    if (!b->v) luaL_argerror(L, 1, "visibility is closed");
    return b;
}

/* scratch memory owned by a userdata on the stack */
static void *scratch(lua_State *L, size_t n, size_t size) {
    if (n == 0) n = 1;
    if (n > ((size_t)-1) / 4 / size) luaL_error(L, "not enough memory");
    return lua_newuserdatauv(L, n * size, 0);
}

static int l_visibility(lua_State *L) {
    lua_settop(L, 5); /* the scratch buffers below go above the arguments */
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_Integer R = luaL_checkinteger(L, 3);
    luaL_argcheck(L, R >= 1 && R <= 65536, 3, "room count 1..65536 expected");
    size_t nf = (size_t)lua_rawlen(L, 1);
    luaL_argcheck(L, nf % 9 == 0, 1, "9 numbers per triangle expected");
    size_t ntri = nf / 9;
    luaL_argcheck(L, (size_t)lua_rawlen(L, 2) == ntri, 2, "one room id per triangle expected");
    float *tri = scratch(L, nf, sizeof(float));
    uint32_t *room = scratch(L, ntri, sizeof(uint32_t));
    uint8_t *sub = scratch(L, (size_t)R, 1);
    memset(sub, 0, (size_t)R);
    for (size_t i = 0; i < nf; i++) {
        lua_rawgeti(L, 1, (lua_Integer)i + 1);
        int ok;
        lua_Number x = lua_tonumberx(L, -1, &ok);
        if (!ok) luaL_argerror(L, 1, lua_pushfstring(L, "element %d: number expected", (int)i + 1));
        tri[i] = (float)x;
        lua_pop(L, 1);
    }
    for (size_t i = 0; i < ntri; i++) {
        lua_rawgeti(L, 2, (lua_Integer)i + 1);
        int ok;
        lua_Integer r = lua_tointegerx(L, -1, &ok);
        if (!ok || r < 0 || r >= R)
            luaL_argerror(L, 2, lua_pushfstring(L, "element %d: room id 0..%d expected", (int)i + 1, (int)R - 1));
        room[i] = (uint32_t)r;
        lua_pop(L, 1);
    }
    if (!lua_isnoneornil(L, 4)) {
        luaL_checktype(L, 4, LUA_TTABLE);
        size_t ns = (size_t)lua_rawlen(L, 4);
        for (size_t i = 0; i < ns; i++) {
            lua_rawgeti(L, 4, (lua_Integer)i + 1);
            lua_Integer r = lua_tointeger(L, -1);
            if (r > 0 && r < R) sub[r] = 1;
            lua_pop(L, 1);
        }
    }
    vbox *b = (vbox *)lua_newuserdatauv(L, sizeof *b, 0);
    b->v = NULL;
    b->nrooms = (uint32_t)R;
    luaL_setmetatable(L, VIS);
    b->v = psdl_vis_new(tri, room, ntri, (uint32_t)R, sub);
    if (!b->v) return luaL_error(L, "not enough memory");
    if (!lua_isnoneornil(L, 5)) {
        luaL_checktype(L, 5, LUA_TTABLE);
        size_t np = (size_t)lua_rawlen(L, 5);
        luaL_argcheck(L, np % 2 == 0, 5, "pairs of room ids expected");
        uint32_t *pairs = malloc((np ? np : 1) * sizeof(uint32_t));
        if (!pairs) return luaL_error(L, "not enough memory");
        for (size_t i = 0; i < np; i++) {
            lua_rawgeti(L, 5, (lua_Integer)i + 1);
            int ok;
            lua_Integer r = lua_tointegerx(L, -1, &ok);
            lua_pop(L, 1);
            if (!ok || r < 0 || r >= R) {
                free(pairs);
                return luaL_argerror(L, 5, lua_pushfstring(L, "element %d: room id 0..%d expected", (int)i + 1,
                                                           (int)R - 1));
            }
            pairs[i] = (uint32_t)r;
        }
        int rc = psdl_vis_set_neighbours(b->v, pairs, np / 2);
        free(pairs);
        if (rc != 0) return luaL_error(L, "not enough memory");
    }
    return 1;
}

static lua_Number opt_field(lua_State *L, int t, const char *k, lua_Number def, lua_Number lo, lua_Number hi) {
    lua_getfield(L, t, k);
    lua_Number v = def;
    if (!lua_isnil(L, -1)) {
        int ok;
        v = lua_tonumberx(L, -1, &ok);
        if (!ok || !(v >= lo && v <= hi))
            luaL_argerror(L, t, lua_pushfstring(L, "%s: number %f..%f expected", k, (double)lo, (double)hi));
    }
    lua_pop(L, 1);
    return v;
}

static int m_rows(lua_State *L) {
    lua_settop(L, 4);
    vbox *b = check_vis(L);
    lua_Integer first = luaL_checkinteger(L, 2), last = luaL_checkinteger(L, 3);
    luaL_argcheck(L, first >= 1 && first < (lua_Integer)b->nrooms, 2, "room id 1..R-1 expected");
    luaL_argcheck(L, last >= first && last < (lua_Integer)b->nrooms, 3, "room id first..R-1 expected");
    psdl_vis_opts o = {1000.0, 2048, 16, 8, 0, 1, 2, 0};
    if (!lua_isnoneornil(L, 4)) {
        luaL_checktype(L, 4, LUA_TTABLE);
        o.range = opt_field(L, 4, "range", o.range, 1.0, 1e6);
        o.rays = (uint32_t)opt_field(L, 4, "rays", o.rays, 1, 1e7);
        o.eyes = (uint32_t)opt_field(L, 4, "eyes", o.eyes, 1, 256);
        o.targeted = (uint32_t)opt_field(L, 4, "targeted", o.targeted, 0, 1e5);
        o.frontier = (uint32_t)opt_field(L, 4, "frontier", o.frontier, 0, 1e5);
        o.seed = (uint64_t)opt_field(L, 4, "seed", (lua_Number)o.seed, 0, 9007199254740991.0);
        o.threads = (int)opt_field(L, 4, "threads", o.threads, 1, 16);
        lua_getfield(L, 4, "random_height");
        o.random_height = lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    size_t stride = ((size_t)b->nrooms + 7) / 8;
    size_t nrow = (size_t)(last - first + 1);
    uint8_t *out = scratch(L, stride * nrow, 1);
    if (psdl_vis_rows(b->v, (uint32_t)first, (uint32_t)last, &o, out) != 0) return luaL_error(L, "not enough memory");
    lua_createtable(L, 0, (int)nrow);
    for (size_t k = 0; k < nrow; k++) {
        const uint8_t *row = out + k * stride;
        lua_createtable(L, 16, 0);
        int n = 0;
        for (uint32_t t = 0; t < b->nrooms; t++)
            if (row[t >> 3] & (1u << (t & 7))) {
                lua_pushinteger(L, t);
                lua_rawseti(L, -2, ++n);
            }
        lua_rawseti(L, -2, first + (lua_Integer)k);
    }
    return 1;
}

static int m_triangles(lua_State *L) {
    vbox *b = check_vis(L);
    lua_pushinteger(L, (lua_Integer)psdl_vis_triangles(b->v));
    return 1;
}

/* zip buffer held by a to-be-closed userdata while it is copied into a Lua string */
#define ZIPBUF "psdl.ZipBuffer"

static int zipbuf_close(lua_State *L) {
    void **p = (void **)luaL_checkudata(L, 1, ZIPBUF);
    free(*p);
    *p = NULL;
    return 0;
}

static int l_zip_build(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_Integer level = luaL_optinteger(L, 2, 9);
    luaL_argcheck(L, level >= 0 && level <= 9, 2, "level 0-9 expected");
    size_t n = (size_t)lua_rawlen(L, 1);
    psdl_zip_file *files = scratch(L, n, sizeof *files);
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 1, (lua_Integer)i + 1);
        if (!lua_istable(L, -1)) luaL_argerror(L, 1, lua_pushfstring(L, "files[%d]: {name, data} expected", (int)i + 1));
        lua_rawgeti(L, -1, 1);
        lua_rawgeti(L, -2, 2);
        if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
            luaL_argerror(L, 1, lua_pushfstring(L, "files[%d]: {name, data} strings expected", (int)i + 1));
        files[i].name = lua_tostring(L, -2);
        files[i].data = lua_tolstring(L, -1, &files[i].size);
        /* the strings stay referenced by the files table (argument 1) */
        lua_pop(L, 3);
    }
    void **holder = (void **)lua_newuserdatauv(L, sizeof(void *), 0);
    *holder = NULL;
    luaL_setmetatable(L, ZIPBUF);
    lua_toclose(L, -1);
    size_t size = 0;
    char err[256];
    /* 2000-01-01 00:00: a fixed time, so the same files give the same archive */
    if (psdl_zip_build(files, n, (int)level, 0, (uint16_t)((20 << 9) | (1 << 5) | 1), holder, &size, err,
                       sizeof err) != 0) {
        return lpsdl_push_failure(L, err, "invalid");
    }
    lua_pushlstring(L, (const char *)*holder, size);
    return 1;
}

typedef struct {
    psdl_zip_entry *e;
    size_t n;
} ebox;

#define ZIPENT "psdl.ZipEntries"

static int zipent_close(lua_State *L) {
    ebox *b = (ebox *)luaL_checkudata(L, 1, ZIPENT);
    psdl_zip_entries_free(b->e, b->n);
    b->e = NULL;
    b->n = 0;
    return 0;
}

static int l_zip_read(lua_State *L) {
    size_t size;
    const char *buf = luaL_checklstring(L, 1, &size);
    lua_Integer max_total = luaL_optinteger(L, 2, (lua_Integer)1 << 31);
    luaL_argcheck(L, max_total > 0, 2, "positive size expected");
    ebox *b = (ebox *)lua_newuserdatauv(L, sizeof *b, 0);
    b->e = NULL;
    b->n = 0;
    luaL_setmetatable(L, ZIPENT);
    lua_toclose(L, -1);
    char err[256];
    if (psdl_zip_read(buf, size, (size_t)max_total, &b->e, &b->n, err, sizeof err) != 0) {
        return lpsdl_push_failure(L, err, "bad_input");
    }
    lua_createtable(L, (int)b->n, 0);
    for (size_t i = 0; i < b->n; i++) {
        lua_createtable(L, 0, 2);
        lua_pushstring(L, b->e[i].name);
        lua_setfield(L, -2, "name");
        lua_pushlstring(L, (const char *)b->e[i].data, b->e[i].size);
        lua_setfield(L, -2, "data");
        /* the C copy goes as soon as Lua holds the bytes: the peak stays near one copy */
        free(b->e[i].data);
        b->e[i].data = NULL;
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

static const luaL_Reg vis_methods[] = {
    {"rows", m_rows}, {"triangles", m_triangles}, {"close", vis_close}, {NULL, NULL},
};

static const luaL_Reg package_funcs[] = {
    {"visibility", l_visibility}, {"zip_build", l_zip_build}, {"zip_read", l_zip_read}, {NULL, NULL},
};

void lpsdl_open_package(lua_State *L) {
    if (luaL_newmetatable(L, VIS)) {
        lua_pushcfunction(L, vis_close);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, vis_close);
        lua_setfield(L, -2, "__close");
        luaL_newlib(L, vis_methods);
        lua_setfield(L, -2, "__index");
        lua_pushliteral(L, "psdl.core");
        lua_setfield(L, -2, "__metatable");
    }
    lua_pop(L, 1);
    if (luaL_newmetatable(L, ZIPBUF)) {
        lua_pushcfunction(L, zipbuf_close);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, zipbuf_close);
        lua_setfield(L, -2, "__close");
    }
    lua_pop(L, 1);
    if (luaL_newmetatable(L, ZIPENT)) {
        lua_pushcfunction(L, zipent_close);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, zipent_close);
        lua_setfield(L, -2, "__close");
    }
    lua_pop(L, 1);
    luaL_setfuncs(L, package_funcs, 0);
}
