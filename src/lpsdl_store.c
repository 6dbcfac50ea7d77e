/* lpsdl_store.c -- binding of the room store (src/psdl_store.h) for psdl.builder:
 *
 *   core.store()                       -> psdl.Store (empty)
 *   store:room()                       -> n: a new empty room, its number (1-based)
 *   store:rooms()                      -> number of rooms
 *   store:push(n, op)                  append attribute record op to room n
 *   store:push_flat(n, group, list)    append records of the types without parameters (road,
 *                                         sidewalk strip, walkway, crosswalk, road fan, fan)
 *                                         given as one flat list of integers, or a string
 *                                         of 32-bit words (see l_push_flat)
 *   store:count(n)                     -> records of room n
 *   store:ops(n [, groups [, from]])   -> list of records of room n as op tables (from the
 *                                         from-th, 1-based; group numbers mapped through the
 *                                         list groups when given)
 *   store:set_ops(n, ops)              replace room n's records by the op tables ops
 *   store:triangles(n)                 -> {a, b, c, ...} surface triangles of room n's ground
 *                                         geometry (vertex references), for core.boundary
 *   store:group_uses(order)            -> others, users, dividers, dusers: texture groups in
 *                                         order of first use over the rooms listed in order
 *   store:building(n, A, R, groups)    append a building's records (core.building's output)
 *   store:mark()                       -> rooms, records, references, clears: the store's
 *                                         counts now
 *   store:truncate(rooms, records, references [, clears])  back to a store:mark()
 *                                         (psdl_store_truncate: what was added since is
 *                                         dropped; with clears, set_ops since is undone)
 *   store:strip_end(n, last)           -> type, a, b, c, d | nil: the first (last) strip record
 *                                         of room n and its crossroads at that end (§1.7)
 *   store:perimeters(order, outlines, vpool)  -> set | nil, code, position: the perimeter
 *                                         set of Builder:finish (lpsdl_perims.c)
 *   store:assemble(spec), store:complete(box, spec), store:validate(box, want_bytes,
 *   format_only)                       the document of Builder:finish in C (see each)
 *
 * An op table is what the builder's emitters describe (builder/room.lua): `type` (an attribute
 * name of psdl-format.md §2.4: "road", "sidewalk_strip", "walkway", "sliver", "crosswalk",
 * "road_fan", "fan", "facade_bound", "divided_road", "tunnel", "texture", "facade", "roof", or
 * "junction_tunnel"), `group` and `divider_group` (texture groups: a table with an integer
 * `index`, or the index), `refs` (vertex references, 1-based), `cap` ("start" / "end") and the
 * type's own fields (psdl_store.h lists them: top, density, light, bottom, u, v, height,
 * divider_type, cap_start, cap_end, divider_value, flags, height1, height2, ceiling_start,
 * walls, value). `walls` may be any Lua value (kept in the store's user value).
 * A bad argument raises `bad argument #k to 'push' (op.<field>: ...)`; nothing is added. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "lpsdl.h"
#include "psdl.h"
#include "psdl_perims.h"
#include "psdl_store.h"

#define STORE "psdl.Store"

static const char *const type_names[] = {"road", "sidewalk_strip", "walkway", "sliver", "crosswalk",
                                         "road_fan", "fan", "facade_bound", "divided_road", "tunnel",
                                         "texture", "facade", "roof", "junction_tunnel", NULL};

/* The type's parameter names, in param[] order (psdl_store.h), NULL-terminated. */
static const char *const *param_names(int type) {
    static const char *const none[] = {NULL};
    static const char *const divided[] = {"divider_type", "cap_start", "cap_end", "divider_value", NULL};
    static const char *const sliver[] = {"top", "density", NULL};
    static const char *const bound[] = {"light", "top", NULL};
    static const char *const facade[] = {"bottom", "top", "u", "v", NULL};
    static const char *const roof[] = {"height", NULL};
    static const char *const tunnel[] = {"flags", "height1", "height2", NULL};
    static const char *const junction[] = {"flags", "height1", "height2", "ceiling_start", "walls", NULL};
    static const char *const texture[] = {"value", NULL};
    switch (type) {
    case PSDL_STORE_DIVIDED_ROAD: return divided;
    case PSDL_STORE_SLIVER: return sliver;
    case PSDL_STORE_FACADE_BOUND: return bound;
    case PSDL_STORE_FACADE: return facade;
    case PSDL_STORE_ROOF: return roof;
    case PSDL_STORE_TUNNEL: return tunnel;
    case PSDL_STORE_JUNCTION_TUNNEL: return junction;
    case PSDL_STORE_TEXTURE: return texture;
    default: return none;
    }
}

/* Bits of psdl_store_rec.param kept as Lua booleans (divided roads' caps) and the walls slot. */
static int is_boolean_param(int type, int i) { return type == PSDL_STORE_DIVIDED_ROAD && (i == 1 || i == 2); }
static int is_walls_param(int type, int i) { return type == PSDL_STORE_JUNCTION_TUNNEL && i == 4; }

/* Bits of psdl_store_rec.aux: parameter i a Lua integer (1 << i) or absent (1 << (5 + i)),
 * no refs field (AUX_NOREFS). */
enum { AUX_ABSENT = 5, AUX_NOREFS = 0x8000 };

typedef struct store_ud {
    psdl_store *s;
    lua_Integer nwalls; /* walls values kept in the user value table */
    uint32_t *scratch;  /* references read from op tables before they are pushed */
    size_t scap;
} store_ud;

/* Room for n references at u->scratch + at (grown as needed; raises when out of memory).
 * The buffer belongs to the store: a raise while filling it leaks nothing. */
static uint32_t *scratch_at(lua_State *L, store_ud *u, size_t at, size_t n) {
    if (n > PSDL_STORE_MAX - at) luaL_error(L, "too many references");
    if (at + n > u->scap) {
        size_t cap = u->scap ? u->scap : 1024;
        while (cap < at + n) cap *= 2;
        uint32_t *p = (uint32_t *)realloc(u->scratch, cap * sizeof *p);
        if (!p) luaL_error(L, "not enough memory");
        u->scratch = p;
        u->scap = cap;
    }
    return u->scratch + at;
}

static store_ud *check_store(lua_State *L, int idx) {
    store_ud *u = (store_ud *)luaL_checkudata(L, idx, STORE);
    if (!u->s) luaL_error(L, "attempt to use a closed " STORE);
    return u;
}

static int store_gc(lua_State *L) {
    store_ud *u = (store_ud *)luaL_checkudata(L, 1, STORE);
    psdl_store_free(u->s);
    u->s = NULL;
    free(u->scratch);
    u->scratch = NULL;
    u->scap = 0;
    return 0;
}

static int l_store(lua_State *L) {
    store_ud *u = (store_ud *)lua_newuserdatauv(L, sizeof *u, 1);
    memset(u, 0, sizeof *u);
    luaL_setmetatable(L, STORE);
    u->s = psdl_store_new();
    if (!u->s) return luaL_error(L, "not enough memory");
    lua_newtable(L);
    lua_setiuservalue(L, -2, 1);
    return 1;
}

static size_t check_room(lua_State *L, store_ud *u, int idx) {
    lua_Integer n = luaL_checkinteger(L, idx);
    if (n < 1 || (lua_Unsigned)n > psdl_store_rooms(u->s))
        luaL_argerror(L, idx, lua_pushfstring(L, "no room %I in the store (%I rooms)", n,
                                              (lua_Integer)psdl_store_rooms(u->s)));
    return (size_t)n;
}

static int l_room(lua_State *L) {
    store_ud *u = check_store(L, 1);
    long n = psdl_store_add_room(u->s);
    if (n < 0) return luaL_error(L, n == PSDL_STORE_NOMEM ? "not enough memory" : "the store is full");
    lua_pushinteger(L, (lua_Integer)n);
    return 1;
}

static int l_rooms(lua_State *L) {
    lua_pushinteger(L, (lua_Integer)psdl_store_rooms(check_store(L, 1)->s));
    return 1;
}

static int l_count(lua_State *L) {
    store_ud *u = check_store(L, 1);
    lua_pushinteger(L, (lua_Integer)psdl_store_count(u->s, check_room(L, u, 2)));
    return 1;
}

/* A group field of the op at index t: a table's integer `index`, an integer, or nil (0). */
static uint32_t op_group(lua_State *L, int t, const char *key, int argn) {
    uint32_t g = 0;
    int tp = lua_getfield(L, t, key);
    int table = tp == LUA_TTABLE;
    if (table) {
        lua_getfield(L, -1, "index");
        lua_replace(L, -2);
        tp = lua_type(L, -1);
    }
    if (tp != LUA_TNIL || table) {
        int ok;
        lua_Integer v = lua_tointegerx(L, -1, &ok);
        if (!ok || v < 1 || v > (lua_Integer)PSDL_STORE_MAX)
            luaL_argerror(L, argn, lua_pushfstring(L, "op.%s: a texture group (or its index) expected", key));
        g = (uint32_t)v;
    }
    lua_pop(L, 1);
    return g;
}

/* Reads the op table at index t into rec and its refs into the store's scratch buffer from
 * position `at` on (rec->nrefs of them; AUX_NOREFS when the op has no refs field). Raises
 * naming the field on a bad op. */
static void read_op(lua_State *L, store_ud *u, int t, int argn, psdl_store_rec *rec, size_t at) {
    if (!lua_istable(L, t)) luaL_argerror(L, argn, lua_pushfstring(L, "op table expected, got %s", luaL_typename(L, t)));
    memset(rec, 0, sizeof *rec);
    lua_getfield(L, t, "type");
    const char *tn = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    int type = -1;
    for (int i = 0; tn && type_names[i]; i++)
        if (strcmp(tn, type_names[i]) == 0) type = i;
    if (type < 0)
        luaL_argerror(L, argn, lua_pushfstring(L, "op.type: an attribute type name expected, got %s",
                                               tn ? tn : luaL_typename(L, -1)));
    lua_pop(L, 1);
    rec->type = (uint8_t)type;
    rec->group = op_group(L, t, "group", argn);
    rec->dgroup = op_group(L, t, "divider_group", argn);
    if (lua_getfield(L, t, "cap") != LUA_TNIL) {
        const char *c = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        if (c && strcmp(c, "start") == 0) rec->cap = 1;
        else if (c && strcmp(c, "end") == 0) rec->cap = 2;
        else luaL_argerror(L, argn, "op.cap: \"start\", \"end\" or nil expected");
    }
    lua_pop(L, 1);
    const char *const *pn = param_names(type);
    for (int i = 0; pn[i]; i++) {
        int tp = lua_getfield(L, t, pn[i]);
        if (is_walls_param(type, i)) {
            if (tp != LUA_TNIL) { /* kept in the user value table under a new number */
                if (u->nwalls >= ((lua_Integer)1 << 52)) luaL_argerror(L, argn, "op.walls: too many");
                lua_getiuservalue(L, 1, 1);
                lua_pushvalue(L, -2);
                lua_rawseti(L, -2, ++u->nwalls);
                lua_pop(L, 1);
                rec->param[i] = (double)u->nwalls;
            }
        } else if (is_boolean_param(type, i)) {
            rec->param[i] = lua_toboolean(L, -1) ? 1.0 : 0.0;
        } else if (tp == LUA_TNUMBER) {
            if (lua_isinteger(L, -1)) rec->aux |= (uint16_t)(1u << i);
            rec->param[i] = (double)lua_tonumber(L, -1);
        } else if (tp != LUA_TNIL) {
            luaL_argerror(L, argn, lua_pushfstring(L, "op.%s: number expected, got %s", pn[i], luaL_typename(L, -1)));
        } else {
            rec->aux |= (uint16_t)(1u << (AUX_ABSENT + i)); /* absent: stays nil when read back */
        }
        lua_pop(L, 1);
    }
    int tp = lua_getfield(L, t, "refs");
    if (tp == LUA_TNIL) {
        lua_pop(L, 1);
        rec->aux |= AUX_NOREFS; /* no refs field: read back without one */
        return;
    }
    if (tp != LUA_TTABLE)
        luaL_argerror(L, argn, lua_pushfstring(L, "op.refs: table expected, got %s", luaL_typename(L, -1)));
    size_t len = (size_t)lua_rawlen(L, -1);
    if (len > PSDL_STORE_MAX / sizeof(uint32_t)) luaL_argerror(L, argn, "op.refs: too many references");
    uint32_t *buf = scratch_at(L, u, at, len);
    for (size_t i = 0; i < len; i++) {
        lua_Integer v;
        if (!lpsdl_rawint(L, -1, (lua_Integer)i + 1, 1, UINT32_MAX, &v))
            luaL_argerror(L, argn, lua_pushfstring(L, "op.refs[%I]: a vertex reference (1-based) expected",
                                                   (lua_Integer)i + 1));
        buf[i] = (uint32_t)v;
    }
    lua_pop(L, 1);
    rec->nrefs = (uint32_t)len;
}

/* Appends a record to room `room`; raises on failure (room unchanged). */
static void push_rec(lua_State *L, store_ud *u, size_t room, const psdl_store_rec *rec, const uint32_t *refs, size_t n) {
    int e = psdl_store_push(u->s, room, rec, refs, n);
    if (e) luaL_error(L, e == PSDL_STORE_NOMEM ? "not enough memory" : "the store is full");
}

static int l_push(lua_State *L) {
    store_ud *u = check_store(L, 1);
    size_t room = check_room(L, u, 2);
    lua_settop(L, 3);
    psdl_store_rec rec;
    read_op(L, u, 3, 3, &rec, 0);
    push_rec(L, u, room, &rec, u->scratch, rec.nrefs);
    return 0;
}

/* store:push_flat(n, group, list): appends to room n records of the attribute types that have
 * no parameters, all in texture group `group` (an integer >= 1), given as one flat list of
 * integers `{type, cap, count, ref_1 .. ref_count, type, cap, count, ...}` (or the same as a
 * string of native 32-bit words, as core.junction_room gives its records): type a
 * psdl_store_type number (0x0 road, 0x1 sidewalk strip, 0x2 walkway, 0x4 crosswalk, 0x5 road
 * fan, 0x6 fan), cap 0, 1 (start) or 2 (end; sidewalk strips only), the references 1-based.
 * Read back (store:ops) each is the op table `{type = name, group = group, refs = {...}}`
 * (with `cap`) that store:push of that op makes: the builder's intersections and streets
 * emit their records with one call instead of an op table each. The whole list is checked
 * first: a bad entry raises `bad argument #3 to 'push_flat' (list[i]: ...)` and nothing is
 * added; out of memory, what was added is dropped again. */
static int l_push_flat(lua_State *L) {
    store_ud *u = check_store(L, 1);
    size_t room = check_room(L, u, 2);
    lua_Integer g = luaL_checkinteger(L, 3);
    if (g < 1 || g > (lua_Integer)PSDL_STORE_MAX) luaL_argerror(L, 3, "a texture group index (>= 1) expected");
    lua_settop(L, 4);
    size_t len;
    uint32_t *buf;
    if (lua_type(L, 4) == LUA_TSTRING) { /* native 32-bit words (core.junction_room's records) */
        size_t bytes;
        const char *str = lua_tolstring(L, 4, &bytes);
        if (bytes % sizeof(uint32_t)) luaL_argerror(L, 4, "list: a string of 32-bit words expected");
        len = bytes / sizeof(uint32_t);
        if (len > PSDL_STORE_MAX / sizeof(uint32_t)) luaL_argerror(L, 4, "list: too long");
        buf = scratch_at(L, u, 0, len);
        if (len) memcpy(buf, str, bytes);
    } else {
        luaL_checktype(L, 4, LUA_TTABLE);
        len = (size_t)lua_rawlen(L, 4);
        if (len > PSDL_STORE_MAX / sizeof(uint32_t)) luaL_argerror(L, 4, "list: too long");
        buf = scratch_at(L, u, 0, len);
        /* read and check every entry into the scratch buffer first */
        for (size_t i = 0; i < len; i++) {
            lua_Integer v;
            if (!lpsdl_rawint(L, 4, (lua_Integer)i + 1, 0, UINT32_MAX, &v))
                luaL_argerror(L, 4, lua_pushfstring(L, "list[%I]: a non-negative integer expected", (lua_Integer)i + 1));
            buf[i] = (uint32_t)v;
        }
    }
    for (size_t i = 0; i < len;) {
        if (len - i < 3) luaL_argerror(L, 4, lua_pushfstring(L, "list[%I]: type, cap and count expected", (lua_Integer)i + 1));
        uint32_t t = buf[i], cap = buf[i + 1], n = buf[i + 2];
        if (t != PSDL_STORE_ROAD && t != PSDL_STORE_SIDEWALK_STRIP && t != PSDL_STORE_WALKWAY &&
            t != PSDL_STORE_CROSSWALK && t != PSDL_STORE_ROAD_FAN && t != PSDL_STORE_FAN)
            luaL_argerror(L, 4, lua_pushfstring(L, "list[%I]: a type without parameters expected, got %I",
                                                (lua_Integer)i + 1, (lua_Integer)t));
        if (cap > 2 || (cap && t != PSDL_STORE_SIDEWALK_STRIP))
            luaL_argerror(L, 4, lua_pushfstring(L, "list[%I]: cap 0 (or 1, 2 for a sidewalk strip) expected",
                                                (lua_Integer)i + 2));
        if (n > len - i - 3)
            luaL_argerror(L, 4, lua_pushfstring(L, "list[%I]: %I references expected after it, %I left",
                                                (lua_Integer)i + 3, (lua_Integer)n, (lua_Integer)(len - i - 3)));
        for (size_t k = 0; k < n; k++)
            if (buf[i + 3 + k] < 1)
                luaL_argerror(L, 4, lua_pushfstring(L, "list[%I]: a vertex reference (1-based) expected",
                                                    (lua_Integer)(i + 4 + k)));
        i += 3 + (size_t)n;
    }
    int e = psdl_store_push_words(u->s, room, (uint32_t)g, buf, len);
    if (e) return luaL_error(L, e == PSDL_STORE_NOMEM ? "not enough memory" : "the store is full");
    return 0;
}

/* Pushes one record as an op table (groups: stack index of the group list, or 0). */
static void push_op(lua_State *L, store_ud *u, const psdl_store_rec *rec, int groups) {
    int type = rec->type;
    lua_createtable(L, 0, 8);
    lua_pushstring(L, type_names[type]);
    lua_setfield(L, -2, "type");
    static const char *const gkeys[2] = {"group", "divider_group"};
    uint32_t gs[2] = {rec->group, rec->dgroup};
    for (int k = 0; k < 2; k++)
        if (gs[k]) {
            if (groups) lua_rawgeti(L, groups, (lua_Integer)gs[k]);
            else lua_pushinteger(L, (lua_Integer)gs[k]);
            lua_setfield(L, -2, gkeys[k]);
        }
    if (rec->cap) {
        if (rec->cap == 1) lua_pushliteral(L, "start");
        else lua_pushliteral(L, "end");
        lua_setfield(L, -2, "cap");
    }
    const char *const *pn = param_names(type);
    for (int i = 0; pn[i]; i++) {
        if (is_walls_param(type, i)) {
            if (rec->param[i] > 0) {
                lua_getiuservalue(L, 1, 1);
                lua_rawgeti(L, -1, (lua_Integer)rec->param[i]);
                lua_setfield(L, -3, pn[i]);
                lua_pop(L, 1);
            }
            continue;
        }
        if (is_boolean_param(type, i)) lua_pushboolean(L, rec->param[i] != 0);
        else if (rec->aux & (1u << (AUX_ABSENT + i))) continue;
        else if (rec->aux & (1u << i)) lua_pushinteger(L, (lua_Integer)rec->param[i]);
        else lua_pushnumber(L, (lua_Number)rec->param[i]);
        lua_setfield(L, -2, pn[i]);
    }
    if (!(rec->aux & AUX_NOREFS)) {
        const uint32_t *r = psdl_store_refs(u->s, rec);
        lua_createtable(L, (int)rec->nrefs, 0);
        for (uint32_t i = 0; i < rec->nrefs; i++) {
            lua_pushinteger(L, (lua_Integer)r[i]);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        lua_setfield(L, -2, "refs");
    }
}

static int l_ops(lua_State *L) {
    store_ud *u = check_store(L, 1);
    size_t room = check_room(L, u, 2);
    int groups = 0;
    if (!lua_isnoneornil(L, 3)) {
        luaL_checktype(L, 3, LUA_TTABLE);
        groups = 3;
    }
    lua_Integer from = luaL_optinteger(L, 4, 1);
    lua_settop(L, 4);
    size_t n = psdl_store_count(u->s, room);
    lua_createtable(L, n < INT32_MAX ? (int)n : 0, 0);
    lua_Integer k = 0, out = 0;
    for (const psdl_store_rec *r = psdl_store_first(u->s, room); r; r = psdl_store_next(u->s, r)) {
        if (++k < from) continue;
        push_op(L, u, r, groups);
        lua_rawseti(L, -2, ++out);
    }
    return 1;
}

/* store:set_ops(n, ops): every op is read before the room is cleared, so that a bad one
 * raises with the room unchanged; store:truncate to a mark from before gives the room its old
 * records back (the clear log, psdl_store_clear). */
static int l_set_ops(lua_State *L) {
    store_ud *u = check_store(L, 1);
    size_t room = check_room(L, u, 2);
    luaL_checktype(L, 3, LUA_TTABLE);
    lua_settop(L, 3);
    size_t n = (size_t)lua_rawlen(L, 3);
    if (n > PSDL_STORE_MAX / sizeof(psdl_store_rec)) luaL_argerror(L, 3, "too many ops");
    psdl_store_rec *recs = (psdl_store_rec *)lua_newuserdatauv(L, (n ? n : 1) * sizeof *recs, 0); /* 4 */
    size_t at = 0; /* every op's references one after the other in the scratch buffer */
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 3, (lua_Integer)i + 1); /* 5 */
        read_op(L, u, 5, 3, &recs[i], at);
        at += recs[i].nrefs;
        lua_settop(L, 4);
    }
    if (psdl_store_clear(u->s, room) != PSDL_STORE_OK) return luaL_error(L, "store:set_ops: out of memory");
    at = 0;
    for (size_t i = 0; i < n; i++) {
        push_rec(L, u, room, &recs[i], u->scratch ? u->scratch + at : NULL, recs[i].nrefs);
        at += recs[i].nrefs;
    }
    return 0;
}

static int l_triangles(lua_State *L) {
    store_ud *u = check_store(L, 1);
    size_t room = check_room(L, u, 2);
    uint32_t *t;
    size_t n;
    if (psdl_store_triangles(u->s, room, &t, &n)) return luaL_error(L, "not enough memory");
    if (n > INT32_MAX) {
        free(t);
        return luaL_error(L, "not enough memory");
    }
    /* Lua allocations may raise: copy to Lua memory first, free the C buffer, then build */
    uint32_t *copy = (uint32_t *)lua_newuserdatauv(L, (n ? n : 1) * sizeof *copy, 0);
    if (n) memcpy(copy, t, n * sizeof *t);
    free(t);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_pushinteger(L, (lua_Integer)copy[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

/* Pushes the list of `what` (groups or rooms) of uses[0..n-1] as a new table. */
static void push_uses(lua_State *L, const psdl_store_use *uses, size_t n, int rooms) {
    lua_createtable(L, n > INT32_MAX ? INT32_MAX : (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_pushinteger(L, (lua_Integer)(rooms ? uses[i].room : uses[i].group));
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

/* store:group_uses(order) -> others, users, dividers, dusers: over the rooms in the order of
 * the list `order` (room numbers), the texture groups (numbers) in order of first use
 * (`group` fields) with the room number of their first user, and the same for divider groups
 * (`divider_group` fields); psdl_store_group_uses. A bad entry raises
 * `bad argument #1 to 'group_uses' (order[i]: ...)`. */
static int l_group_uses(lua_State *L) {
    store_ud *u = check_store(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    size_t n = (size_t)lua_rawlen(L, 2), nrooms = psdl_store_rooms(u->s);
    if (n > PSDL_STORE_MAX) luaL_argerror(L, 2, "too many rooms");
    uint32_t *order = (uint32_t *)lua_newuserdatauv(L, (n ? n : 1) * sizeof *order, 0); /* 3 */
    for (size_t i = 0; i < n; i++) {
        lua_Integer room;
        if (!lpsdl_rawint(L, 2, (lua_Integer)i + 1, 1, (lua_Integer)nrooms, &room))
            luaL_argerror(L, 2, lua_pushfstring(L, "order[%I]: a room of the store (1..%I) expected", (lua_Integer)i + 1,
                                                (lua_Integer)nrooms));
        order[i] = (uint32_t)room;
    }
    psdl_store_use *g, *d;
    size_t ng, nd;
    int e = psdl_store_group_uses(u->s, order, n, &g, &ng, &d, &nd);
    if (e) return luaL_error(L, e == PSDL_STORE_NOMEM ? "not enough memory" : "group_uses: bad arguments");
    /* Lua allocations may raise: copy the C lists into Lua memory, free them, then build */
    psdl_store_use *copy = (psdl_store_use *)lua_newuserdatauv(L, (ng + nd ? ng + nd : 1) * sizeof *copy, 0);
    if (ng) memcpy(copy, g, ng * sizeof *g);
    if (nd) memcpy(copy + ng, d, nd * sizeof *d);
    free(g);
    free(d);
    push_uses(L, copy, ng, 0);
    push_uses(L, copy, ng, 1);
    push_uses(L, copy + ng, nd, 0);
    push_uses(L, copy + ng, nd, 1);
    return 4;
}

/* ================================================================ the document (finish) */

/* Integer t[i] (raw) in lo..hi, else a raise naming what and i. */
static lua_Integer list_int(lua_State *L, int t, lua_Integer i, lua_Integer lo, lua_Integer hi, const char *what) {
    lua_Integer v;
    if (!lpsdl_rawint(L, t, i, lo, hi, &v)) luaL_error(L, "%s[%I]: integer in %I..%I expected", what, i, lo, hi);
    return v;
}

/* The table field t[key] pushed (raises when it is no table); returns its index. */
static int field_tab(lua_State *L, int t, const char *key) {
    if (lua_getfield(L, t, key) != LUA_TTABLE) luaL_error(L, "spec.%s: table expected", key);
    return lua_gettop(L);
}

/* An 8.8 fixed-point value (psdl-format §2.4), or -1 when out of 0..65535/256. */
static long fixed88(double v) {
    double w = floor(v * 256.0 + 0.5);
    return (w >= 0.0 && w <= 65535.0) ? (long)w : -1;
}

/* Pushes nil, code, position, n (a builder error finish words with the room's label). */
static int fail(lua_State *L, const char *code, lua_Integer pos, lua_Integer n) {
    lua_pushnil(L);
    lua_pushstring(L, code);
    lua_pushinteger(L, pos);
    lua_pushinteger(L, n);
    return 4;
}

/* Pushes nil, code, position. */
static int fail_at(lua_State *L, const char *code, lua_Integer pos) {
    lua_pushnil(L);
    lua_pushstring(L, code);
    lua_pushinteger(L, pos);
    return 3;
}

/* Pushes nil, "encodable", position, message (a value the format cannot hold; the path is
 * the Lua document's, e.g. rooms[3].attributes[2].vertices[1]). */
static int unencodable(lua_State *L, lua_Integer pos, const char *fmt, ...) {
    lua_pushnil(L);
    lua_pushliteral(L, "encodable");
    lua_pushinteger(L, pos);
    va_list ap;
    va_start(ap, fmt);
    lua_pushvfstring(L, fmt, ap);
    va_end(ap);
    return 4;
}

static int is_strip(int type) {
    return type == PSDL_STORE_ROAD || type == PSDL_STORE_WALKWAY || type == PSDL_STORE_DIVIDED_ROAD;
}

/* store:strip_end(n, last) -> type, a, b, c, d | nil
 * The first (last = true: the last) strip record (road, walkway or divided road) of room n:
 * its type name and its crossroads at that end (§1.7: the end section's road outer L, curb
 * L, curb R, outer R; a divided road's columns 1, 2, 5, 6; a walkway's v1, v1, v2, v2;
 * vertex references, 1-based); nil when the room has none. A strip whose end section is
 * missing (fewer references than one section) gives 0 for those references. */
static int l_strip_end(lua_State *L) {
    store_ud *u = check_store(L, 1);
    size_t room = check_room(L, u, 2);
    int last = lua_toboolean(L, 3);
    const psdl_store_rec *found = NULL;
    for (const psdl_store_rec *r = psdl_store_first(u->s, room); r; r = psdl_store_next(u->s, r))
        if (is_strip(r->type)) {
            found = r;
            if (!last) break;
        }
    if (!found) return 0;
    size_t stride = found->type == PSDL_STORE_ROAD ? 4 : found->type == PSDL_STORE_DIVIDED_ROAD ? 6 : 2;
    size_t n = found->nrefs;
    const uint32_t *refs = psdl_store_refs(u->s, found);
    size_t base = last ? (n >= stride ? n - stride : 0) : 0;
    static const int cols[3][4] = {{0, 1, 2, 3}, {0, 1, 4, 5}, {0, 0, 1, 1}};
    const int *c = cols[found->type == PSDL_STORE_ROAD ? 0 : found->type == PSDL_STORE_DIVIDED_ROAD ? 1 : 2];
    lua_pushstring(L, type_names[found->type]);
    for (int k = 0; k < 4; k++) {
        size_t at = base + (size_t)c[k];
        lua_pushinteger(L, at < n ? (lua_Integer)refs[at] : 0);
    }
    return 5;
}

/* store:perimeters(order, outlines, vpool) -> set | nil, code, position
 * The perimeter set (psdl.Perimeters, src/psdl_perims.h) of the rooms listed in order (room
 * numbers, in document order): room i's outline outlines[i] when that is a table (vertex
 * references, 1-based, copied), else the outline of its ground geometry (its surface
 * triangles, psdl_store_triangles, as core.boundary takes it over the vertex pool vpool).
 * Rooms the builder words an error for come back as a code with their position i:
 * "no_geometry" (no outline and no surface triangles), "no_outline" (the ground geometry's
 * outline has fewer than 3 points). */
static int l_perimeters(lua_State *L) {
    store_ud *u = check_store(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    luaL_checktype(L, 3, LUA_TTABLE);
    lua_settop(L, 4);
    size_t np;
    lpsdl_pool_floats(L, 4, 3, &np); /* checks the pool */
    size_t nr = (size_t)lua_rawlen(L, 2);
    for (size_t i = 0; i < nr; i++) { /* the rooms checked before any work */
        lua_rawgeti(L, 2, (lua_Integer)i + 1);
        check_room(L, u, lua_gettop(L));
        lua_pop(L, 1);
    }
    psdl_perims *set = lpsdl_perims_push(L); /* 5 */
    /* no Lua allocation from here on but for raising: the pool's data stays put */
    const float *pts = lpsdl_pool_floats(L, 4, 3, &np);
    for (size_t i = 0; i < nr; i++) {
        lua_rawgeti(L, 2, (lua_Integer)i + 1);
        size_t room = (size_t)lua_tointeger(L, -1);
        lua_pop(L, 1);
        if (lua_rawgeti(L, 3, (lua_Integer)i + 1) == LUA_TTABLE) {
            size_t n = (size_t)lua_rawlen(L, -1);
            uint32_t *buf = scratch_at(L, u, 0, n);
            for (size_t k = 0; k < n; k++) {
                lua_Integer v;
                if (!lpsdl_rawint(L, -1, (lua_Integer)k + 1, 1, (lua_Integer)np, &v))
                    luaL_argerror(L, 3, lua_pushfstring(L, "outlines[%I][%I]: a vertex reference 1..%I expected",
                                                        (lua_Integer)i + 1, (lua_Integer)k + 1, (lua_Integer)np));
                buf[k] = (uint32_t)(v - 1);
            }
            lua_pop(L, 1);
            int e = psdl_perims_add(set, buf, n);
            if (e) luaL_error(L, e == PSDL_PERIMS_NOMEM ? "not enough memory" : "too many perimeter points");
            continue;
        }
        lua_pop(L, 1);
        uint32_t *t;
        size_t nt;
        if (psdl_store_triangles(u->s, room, &t, &nt)) return luaL_error(L, "not enough memory");
        if (nt == 0) {
            free(t);
            return fail_at(L, "no_geometry", (lua_Integer)i + 1);
        }
        int bad = 0;
        for (size_t k = 0; k < nt; k++) {
            if (t[k] < 1 || t[k] > np) bad = 1;
            t[k]--;
        }
        long n = bad ? PSDL_PERIMS_RANGE : psdl_perims_add_boundary(set, t, nt / 3, pts, np);
        free(t);
        if (n == PSDL_PERIMS_RANGE)
            return luaL_error(L, "room %I: its ground geometry uses a vertex above the pool's %I", (lua_Integer)room, (lua_Integer)np);
        if (n < 0) return luaL_error(L, n == PSDL_PERIMS_NOMEM ? "not enough memory" : "too many perimeter points");
        if (n < 3) return fail_at(L, "no_outline", (lua_Integer)i + 1);
    }
    return 1;
}

/* store:assemble(spec) -> box | nil, code, position, n
 * The rooms of the document in C, straight from the records (Builder:finish; what the Lua
 * document's rooms would hold, psdl-format.md §1.4-§2.4): spec.order (room serials in
 * document order), spec.flags and spec.props (room flag and prop-rule bytes, by position),
 * spec.perims (the rooms' perimeter set, store:perimeters, linked: set:link), spec.gvalue (texture
 * value of each texture group, by group index), spec.masks (serial -> list of the wall masks
 * of the room's junction tunnels, in order). A texture reference goes before textured
 * geometry whenever the value changes (a raw texture record sets it); LAST on the final
 * attribute. Errors the builder words itself come back as codes: "perimeter_long" (n
 * points), "perimeter_short", "tunnel_alone" (a road tunnel not followed by a strip),
 * "junction_edges" (n perimeter edges), "no_attributes"; a value the format cannot hold
 * as "encodable" with a message naming it. */
#define GV_BAD (-2) /* l_assemble: a group without a usable texture value */
static int l_assemble(lua_State *L) {
    store_ud *u = check_store(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    int order = field_tab(L, 2, "order");   /* 3 */
    int flags = field_tab(L, 2, "flags");   /* 4 */
    int props = field_tab(L, 2, "props");   /* 5 */
    lua_getfield(L, 2, "perims"); /* 6 */
    int perims = lua_gettop(L);
    if (!luaL_testudata(L, perims, "psdl.Perimeters")) luaL_error(L, "spec.perims: a perimeter set (store:perimeters) expected");
    lpsdl_perims_check(L, perims);
    int gvalue = field_tab(L, 2, "gvalue"); /* 7 */
    int masks = field_tab(L, 2, "masks");   /* 8 */
    size_t nr = (size_t)lua_rawlen(L, order);
    if (nr > 65535) luaL_error(L, "spec.order: %I rooms, the format counts at most 65,535", (lua_Integer)nr);
    /* the groups' texture values read once (a record reads its group's): GV_BAD where
     * gvalue holds no integer in 0..65535, raised by list_int only if a record uses it */
    size_t gmax = (size_t)lua_rawlen(L, gvalue);
    if (gmax > PSDL_STORE_MAX) luaL_error(L, "spec.gvalue: %I groups, too many", (lua_Integer)gmax);
    lua_Integer *gv = (lua_Integer *)lua_newuserdatauv(L, (gmax + 1) * sizeof *gv, 0); /* 9 */
    for (size_t g = 1; g <= gmax; g++)
        if (!lpsdl_rawint(L, gvalue, (lua_Integer)g, 0, 65535, &gv[g])) gv[g] = GV_BAD;
    psdl_doc *doc = lpsdl_doc_push(L); /* 10 */
    memcpy(doc->magic, "PSD0", 4);
    doc->target_size = 2;
    doc->nrooms = (uint32_t)nr + 1;
    doc->rooms = (psdl_room *)psdl_doc_alloc(doc, (nr + 1) * sizeof *doc->rooms);
    if (!doc->rooms) return luaL_error(L, "not enough memory");
    doc->rooms[0].flags = 0;
    doc->rooms[0].prop_rule = 0xCD;
    for (size_t i = 1; i <= nr; i++) {
        lua_Integer serial = list_int(L, order, (lua_Integer)i, 1, (lua_Integer)psdl_store_rooms(u->s), "order");
        psdl_room *rm = &doc->rooms[i];
        rm->flags = (uint8_t)list_int(L, flags, (lua_Integer)i, 0, 255, "flags");
        rm->prop_rule = (uint8_t)list_int(L, props, (lua_Integer)i, 0, PSDL_MAX_PROP_RULE, "props");
        /* perimeter (§1.5), from the linked set (read afresh: an allocation above may have
         * run a finalizer) */
        const uint32_t *lst, *lv, *lnb;
        if (psdl_perims_linked_csr(lpsdl_perims_check(L, perims), &lst, &lv, &lnb) != nr)
            luaL_error(L, "spec.perims: linked perimeters of the %I rooms expected", (lua_Integer)nr);
        size_t np = lst[i] - lst[i - 1];
        if (np > 255) return fail(L, "perimeter_long", (lua_Integer)i, (lua_Integer)np);
        if (np < 3) return fail(L, "perimeter_short", (lua_Integer)i, (lua_Integer)np);
        rm->nperimeter = (uint32_t)np;
        rm->perimeter = (psdl_perimeter_point *)psdl_doc_alloc(doc, np * sizeof *rm->perimeter);
        if (!rm->perimeter) return luaL_error(L, "not enough memory");
        psdl_perims_linked_csr(lpsdl_perims_check(L, perims), &lst, &lv, &lnb); /* after the allocation */
        for (size_t k = 1; k <= np; k++) {
            uint32_t v = lv[lst[i - 1] + k - 1], nb = lnb[lst[i - 1] + k - 1];
            if (v > 65535)
                return unencodable(L, (lua_Integer)i, "rooms[%I].perimeter[%I].vertex: a vertex reference 1..65536 expected", (lua_Integer)i, (lua_Integer)k);
            if (nb > 65535)
                return unencodable(L, (lua_Integer)i, "rooms[%I].perimeter[%I].neighbour: 0..65535 expected", (lua_Integer)i, (lua_Integer)k);
            rm->perimeter[k - 1].vertex = (uint16_t)v;
            rm->perimeter[k - 1].neighbour = (uint16_t)nb;
        }
        /* attributes: at most two per record (a texture reference and the record), made in
         * the store's scratch and copied into the document at their real count (the document
         * is zeroed as it is allocated: twice the room would be touched for nothing) */
        size_t nrec = psdl_store_count(u->s, (size_t)serial);
        enum { AWORDS = (sizeof(psdl_attr) + sizeof(uint32_t) - 1) / sizeof(uint32_t) };
        psdl_attr *at = nrec ? (psdl_attr *)(void *)scratch_at(L, u, 0, 2 * nrec * AWORDS) : NULL; /* each zeroed as made */
        size_t na = 0, nj = 0;
        long cur = -1; /* texture value in force, -1 = none yet */
        int masks_t = 0;
        for (const psdl_store_rec *r = psdl_store_first(u->s, (size_t)serial); r; r = psdl_store_next(u->s, r)) {
            int type = r->type;
            if (type == PSDL_STORE_TEXTURE) {
                if (!(r->param[0] >= 0 && r->param[0] <= 65535))
                    return unencodable(L, (lua_Integer)i, "rooms[%I]: texture value %f out of range", (lua_Integer)i, r->param[0]);
                psdl_attr *a = &at[na++];
                memset(a, 0, sizeof *a);
                a->type = PSDL_ATTR_TEXTURE;
                a->param[0] = (uint32_t)r->param[0];
                cur = (long)a->param[0];
                continue;
            }
            if (type == PSDL_STORE_TUNNEL) {
                const psdl_store_rec *nx = psdl_store_next(u->s, r);
                if (!nx || !is_strip(nx->type)) return fail(L, "tunnel_alone", (lua_Integer)i, 0);
            }
            if (type == PSDL_STORE_JUNCTION_TUNNEL && np > 32) return fail(L, "junction_edges", (lua_Integer)i, (lua_Integer)np);
            if (r->group) { /* the group's texture value, referenced when it changes */
                lua_Integer v = r->group <= gmax ? gv[r->group] : -1;
                if (v == GV_BAD) v = list_int(L, gvalue, (lua_Integer)r->group, 0, 65535, "gvalue"); /* raises */
                if (v < 0) luaL_error(L, "gvalue[%I]: no texture value for the group", (lua_Integer)r->group);
                if (v != cur) {
                    psdl_attr *a = &at[na++];
                    memset(a, 0, sizeof *a);
                    a->type = PSDL_ATTR_TEXTURE;
                    a->param[0] = (uint32_t)v;
                    cur = (long)v;
                }
            }
            psdl_attr *a = &at[na++];
            memset(a, 0, sizeof *a);
            const uint32_t *refs = psdl_store_refs(u->s, r);
            lua_Integer an = (lua_Integer)na;
            if (type == PSDL_STORE_TUNNEL || type == PSDL_STORE_JUNCTION_TUNNEL) {
                int junction = type == PSDL_STORE_JUNCTION_TUNNEL;
                uint16_t *w = (uint16_t *)psdl_doc_alloc(doc, (junction ? 10 : 3) * sizeof *w);
                if (!w) return luaL_error(L, "not enough memory");
                long h1 = fixed88(r->param[1]), h2 = fixed88(r->param[2]);
                if (!(r->param[0] >= 0 && r->param[0] <= 65535) || h1 < 0 || h2 < 0)
                    return unencodable(L, (lua_Integer)i, "rooms[%I].attributes[%I]: tunnel flags or heights out of range", (lua_Integer)i, an);
                a->type = PSDL_ATTR_TUNNEL;
                w[0] = (uint16_t)r->param[0];
                w[1] = (uint16_t)h1;
                w[2] = (uint16_t)h2;
                a->refs = w;
                a->nrefs = 3;
                if (junction) {
                    if (!(r->param[3] >= 1 && r->param[3] <= 65536))
                        return unencodable(L, (lua_Integer)i, "rooms[%I].attributes[%I].ceiling_start: 1..65536 expected", (lua_Integer)i, an);
                    if (!masks_t) {
                        lua_rawgeti(L, masks, serial);
                        if (!lua_istable(L, -1)) luaL_error(L, "masks[%I]: table expected", serial);
                        masks_t = lua_gettop(L);
                    }
                    lua_Integer m = list_int(L, masks_t, (lua_Integer)++nj, 0, 0xFFFFFFFF, "masks");
                    w[3] = (uint16_t)((uint32_t)r->param[3] - 1);
                    w[4] = (uint16_t)(m & 0xFFFF);
                    w[5] = (uint16_t)(m >> 16);
                    w[6] = w[7] = w[8] = w[9] = 0;
                    a->nrefs = 10;
                }
                continue;
            }
            a->type = (uint8_t)type;
            if (r->nrefs) {
                uint16_t *v16 = (uint16_t *)psdl_doc_alloc(doc, r->nrefs * sizeof *v16);
                if (!v16) return luaL_error(L, "not enough memory");
                for (uint32_t k = 0; k < r->nrefs; k++) {
                    if (refs[k] < 1 || refs[k] > 65536)
                        return unencodable(L, (lua_Integer)i, "rooms[%I].attributes[%I].vertices[%I]: %I is out of range (1..65536)",
                                           (lua_Integer)i, an, (lua_Integer)k + 1, (lua_Integer)refs[k]);
                    v16[k] = (uint16_t)(refs[k] - 1);
                }
                a->refs = v16;
                a->nrefs = r->nrefs;
            }
            /* heights are references (1-based in Lua, 0-based in the file) */
            double p0 = r->param[0], p1 = r->param[1];
            switch (type) {
            case PSDL_STORE_SIDEWALK_STRIP: a->cap = r->cap == 1 ? PSDL_CAP_START : r->cap == 2 ? PSDL_CAP_END : PSDL_CAP_NONE; break;
            case PSDL_STORE_SLIVER:
            case PSDL_STORE_FACADE:
                if (!(p0 >= 1 && p0 <= 65536 && p1 >= 1 && p1 <= 65536))
                    return unencodable(L, (lua_Integer)i, "rooms[%I].attributes[%I]: a height reference out of range", (lua_Integer)i, an);
                a->param[0] = (uint32_t)p0 - 1;
                a->param[1] = (uint32_t)p1 - 1;
                if (type == PSDL_STORE_FACADE) {
                    if (!(r->param[2] >= 0 && r->param[2] <= 65535 && r->param[3] >= 0 && r->param[3] <= 65535))
                        return unencodable(L, (lua_Integer)i, "rooms[%I].attributes[%I]: repeats out of range", (lua_Integer)i, an);
                    a->param[2] = (uint32_t)r->param[2];
                    a->param[3] = (uint32_t)r->param[3];
                }
                break;
            case PSDL_STORE_FACADE_BOUND:
                if (!(p0 >= 0 && p0 <= 65535 && p1 >= 1 && p1 <= 65536))
                    return unencodable(L, (lua_Integer)i, "rooms[%I].attributes[%I]: light or top out of range", (lua_Integer)i, an);
                a->param[0] = (uint32_t)p0;
                a->param[1] = (uint32_t)p1 - 1;
                break;
            case PSDL_STORE_ROOF:
                if (!(p0 >= 1 && p0 <= 65536))
                    return unencodable(L, (lua_Integer)i, "rooms[%I].attributes[%I].height: out of range", (lua_Integer)i, an);
                a->param[0] = (uint32_t)p0 - 1;
                break;
            case PSDL_STORE_DIVIDED_ROAD: {
                long dv = fixed88(r->param[3]);
                lua_Integer dtex = r->dgroup && r->dgroup <= gmax ? gv[r->dgroup] : -1;
                if (dtex == GV_BAD) dtex = list_int(L, gvalue, (lua_Integer)r->dgroup, 0, 65535, "gvalue"); /* raises */
                if (!(p0 >= 0 && p0 <= 63) || dv < 0 || dtex < 0)
                    return unencodable(L, (lua_Integer)i, "rooms[%I].attributes[%I]: divider type, value or texture out of range", (lua_Integer)i, an);
                a->param[0] = (uint32_t)p0;
                a->param[1] = (uint32_t)((p1 != 0 ? 1 : 0) | (r->param[2] != 0 ? 2 : 0));
                a->param[2] = (uint32_t)dtex;
                a->param[3] = (uint32_t)dv;
                break;
            }
            default: break;
            }
        }
        if (masks_t) lua_settop(L, 10);
        if (na == 0) return fail(L, "no_attributes", (lua_Integer)i, 0);
        at[na - 1].last = 1;
        rm->attrs = (psdl_attr *)psdl_doc_alloc(doc, na * sizeof *at);
        if (!rm->attrs) return luaL_error(L, "not enough memory");
        memcpy(rm->attrs, u->scratch, na * sizeof *at); /* (at may have moved: the scratch is the store's) */
        rm->nattrs = (uint32_t)na;
        psdl_error err;
        memset(&err, 0, sizeof err);
        if (psdl_room_pack(doc, rm, &err) != PSDL_OK) {
            if (err.code == PSDL_E_NOMEM) return luaL_error(L, "not enough memory");
            return unencodable(L, (lua_Integer)i, "rooms[%I].attributes[%I]: %s", (lua_Integer)i,
                               (lua_Integer)(err.attribute >= 0 ? err.attribute + 1 : 0), err.message);
        }
    }
    lua_settop(L, 10);
    return 1;
}

/* A vector {x, y, z} of t[key] as floats. */
static psdl_vec3 field_vec(lua_State *L, int t, const char *key) {
    if (lua_getfield(L, t, key) != LUA_TTABLE) luaL_error(L, "bounds.%s: table expected", key);
    float f[3];
    for (int i = 0; i < 3; i++) {
        lua_rawgeti(L, -1, i + 1);
        int ok = lua_type(L, -1) == LUA_TNUMBER;
        if (ok) f[i] = lpsdl_to_float(lua_tonumber(L, -1), &ok);
        if (!ok) luaL_error(L, "bounds.%s[%d]: a float expected", key, i + 1);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    psdl_vec3 v = {f[0], f[1], f[2]};
    return v;
}

/* store:complete(box, spec) -> box: the rest of the assembled document: spec.vpool and
 * spec.hpool (the builder's pools: vertices, heights), spec.textures (names), spec.bounds
 * ({min, max, center, radius}, §1.6), spec.first_road_room, spec.roads (road records as in
 * the Lua document, §1.7). */
static int l_complete(lua_State *L) {
    check_store(L, 1);
    psdl_doc *doc = lpsdl_doc_check(L, 2);
    luaL_checktype(L, 3, LUA_TTABLE);
    lua_settop(L, 3);
    lua_Integer frr = (lua_getfield(L, 3, "first_road_room"), luaL_optinteger(L, -1, 0));
    if (frr < 0 || frr > 65535) luaL_error(L, "spec.first_road_room: 0..65535 expected");
    doc->first_road_room = (uint32_t)frr;
    lua_pop(L, 1);
    /* textures (§1.3), slot 0 empty */
    int tt = field_tab(L, 3, "textures");
    size_t nt = (size_t)lua_rawlen(L, tt);
    if (nt > 65534) luaL_error(L, "spec.textures: too many");
    doc->ntextures = (uint32_t)nt + 1;
    doc->textures = (psdl_texture *)psdl_doc_alloc(doc, (nt + 1) * sizeof *doc->textures);
    if (!doc->textures) return luaL_error(L, "not enough memory");
    for (size_t v = 1; v <= nt; v++) {
        lua_rawgeti(L, tt, (lua_Integer)v);
        size_t len;
        const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : NULL;
        if (!s || len > 254) luaL_error(L, "spec.textures[%I]: a name of at most 254 bytes expected", (lua_Integer)v);
        char *name = (char *)psdl_doc_alloc(doc, len + 1);
        if (!name) return luaL_error(L, "not enough memory");
        memcpy(name, s, len);
        doc->textures[v].name = name;
        doc->textures[v].name_len = (uint8_t)len;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    /* roads (§1.7) */
    int rt = field_tab(L, 3, "roads");
    size_t nroads = (size_t)lua_rawlen(L, rt);
    doc->nroads = (uint32_t)nroads;
    doc->roads = nroads ? (psdl_road *)psdl_doc_alloc(doc, nroads * sizeof *doc->roads) : NULL;
    if (nroads && !doc->roads) return luaL_error(L, "not enough memory");
    for (size_t k = 0; k < nroads; k++) {
        psdl_road *rd = &doc->roads[k];
        if (lua_rawgeti(L, rt, (lua_Integer)k + 1) != LUA_TTABLE) luaL_error(L, "roads[%I]: table expected", (lua_Integer)k + 1);
        int t = lua_gettop(L);
        lua_getfield(L, t, "flags");
        int ok;
        lua_Integer fl = lua_tointegerx(L, -1, &ok);
        if (!ok || fl < 0 || fl > 0xFFFFFFFF) luaL_error(L, "roads[%I].flags: integer expected", (lua_Integer)k + 1);
        rd->flags = (uint32_t)fl;
        lua_pop(L, 1);
        int ll = field_tab(L, t, "lanes_left"), lr = field_tab(L, t, "lanes_right");
        size_t nl = (size_t)lua_rawlen(L, ll), nrr = (size_t)lua_rawlen(L, lr);
        if (nl > PSDL_MAX_LANE_VALUES || nrr > PSDL_MAX_LANE_VALUES) luaL_error(L, "roads[%I]: too many lane values", (lua_Integer)k + 1);
        rd->nleft = (uint8_t)nl;
        rd->nright = (uint8_t)nrr;
        rd->lane_values = nl + nrr ? (float *)psdl_doc_alloc(doc, (nl + nrr) * sizeof(float)) : NULL;
        if (nl + nrr && !rd->lane_values) return luaL_error(L, "not enough memory");
        for (size_t q = 0; q < nl + nrr; q++) {
            lua_rawgeti(L, q < nl ? ll : lr, (lua_Integer)(q < nl ? q : q - nl) + 1);
            int okf = lua_type(L, -1) == LUA_TNUMBER;
            if (okf) rd->lane_values[q] = lpsdl_to_float(lua_tonumber(L, -1), &okf);
            if (!okf) luaL_error(L, "roads[%I]: lane value %I: a float expected", (lua_Integer)k + 1, (lua_Integer)q + 1);
            lua_pop(L, 1);
        }
        lua_pop(L, 2);
        int sl = field_tab(L, t, "stop_lights");
        for (int q = 0; q < 2; q++) rd->stop_light[q] = (uint8_t)list_int(L, sl, q + 1, 0, 255, "stop_lights");
        lua_pop(L, 1);
        int sc = field_tab(L, t, "start_crossroads"), ec = field_tab(L, t, "end_crossroads");
        for (int q = 0; q < 4; q++) {
            rd->start_crossroads[q] = (uint16_t)(list_int(L, sc, q + 1, 1, 65536, "start_crossroads") - 1);
            rd->end_crossroads[q] = (uint16_t)(list_int(L, ec, q + 1, 1, 65536, "end_crossroads") - 1);
        }
        lua_pop(L, 2);
        int ro = field_tab(L, t, "rooms");
        size_t nro = (size_t)lua_rawlen(L, ro);
        if (nro > 255) luaL_error(L, "roads[%I].rooms: at most 255", (lua_Integer)k + 1);
        rd->nrooms = (uint8_t)nro;
        rd->rooms = nro ? (int16_t *)psdl_doc_alloc(doc, nro * sizeof *rd->rooms) : NULL;
        if (nro && !rd->rooms) return luaL_error(L, "not enough memory");
        for (size_t q = 0; q < nro; q++) rd->rooms[q] = (int16_t)list_int(L, ro, (lua_Integer)q + 1, -32768, 32767, "rooms");
        lua_pop(L, 2); /* rooms, the record */
    }
    lua_pop(L, 1);
    /* bounds (§1.6) */
    int bt = field_tab(L, 3, "bounds");
    doc->bounds_min = field_vec(L, bt, "min");
    doc->bounds_max = field_vec(L, bt, "max");
    doc->sphere_center = field_vec(L, bt, "center");
    lua_getfield(L, bt, "radius");
    int okr = lua_type(L, -1) == LUA_TNUMBER;
    if (okr) doc->sphere_radius = lpsdl_to_float(lua_tonumber(L, -1), &okr);
    if (!okr) luaL_error(L, "bounds.radius: a float expected");
    lua_pop(L, 2);
    doc->has_tail = 1;
    /* pools last: their data pointers are taken after every allocation above */
    lua_getfield(L, 3, "hpool");
    lua_getfield(L, 3, "vpool");
    size_t nh, nv;
    lpsdl_pool_floats(L, -2, 1, &nh);
    lpsdl_pool_floats(L, -1, 3, &nv);
    float *hs = nh ? (float *)psdl_doc_alloc(doc, nh * sizeof *hs) : NULL;
    psdl_vec3 *vs = nv ? (psdl_vec3 *)psdl_doc_alloc(doc, nv * sizeof *vs) : NULL;
    if ((nh && !hs) || (nv && !vs)) return luaL_error(L, "not enough memory");
    const float *hf = lpsdl_pool_floats(L, -2, 1, &nh);
    if (nh) memcpy(hs, hf, nh * sizeof *hs);
    const float *vf = lpsdl_pool_floats(L, -1, 3, &nv);
    for (size_t i = 0; i < nv; i++) {
        vs[i].x = vf[3 * i];
        vs[i].y = vf[3 * i + 1];
        vs[i].z = vf[3 * i + 2];
    }
    doc->nheights = (uint32_t)nh;
    doc->heights = hs;
    doc->nvertices = (uint32_t)nv;
    doc->vertices = vs;
    lua_settop(L, 2);
    return 1;
}

/* store:validate(box, want_bytes, format_only) -> as core.validate, for an assembled
 * document (the box is released). */
static int l_validate_box(lua_State *L) {
    check_store(L, 1);
    lpsdl_doc_check(L, 2);
    int want = lua_toboolean(L, 3);
    unsigned flags = lua_toboolean(L, 4) ? PSDL_VALIDATE_NO_DRIVABLE : 0u;
    lua_settop(L, 2);
    return lpsdl_doc_validate(L, 2, want, flags);
}

/* store:building(n, A, R, groups) -> runs, facades, slivers
 * Appends the records of one building (core.building's output) to room n without an op
 * table each: A holds 6 numbers per attribute (kind 1 facade bound, 2 sliver, 3 ground-floor
 * facade, 4 upper facade; two vertex references; two height references; light or u repeats),
 * R (or nil) the roof's fans ({m, refs...} each) with its height reference last. groups:
 * {sliver, ground, upper, roof = group numbers, vground, vupper = v repeats}; a group a
 * present kind needs must be there. */
static int l_building(lua_State *L) {
    store_ud *u = check_store(L, 1);
    size_t room = check_room(L, u, 2);
    luaL_checktype(L, 3, LUA_TTABLE);
    int has_roof = !lua_isnoneornil(L, 4);
    if (has_roof) luaL_checktype(L, 4, LUA_TTABLE);
    luaL_checktype(L, 5, LUA_TTABLE);
    lua_settop(L, 5);
    static const char *const gk[6] = {"sliver", "ground", "upper", "roof", "vground", "vupper"};
    lua_Integer g[6];
    for (int k = 0; k < 6; k++) {
        lua_getfield(L, 5, gk[k]);
        g[k] = lua_isnil(L, -1) ? 0 : lua_tointeger(L, -1);
        if (g[k] < 0 || g[k] > (lua_Integer)PSDL_STORE_MAX)
            luaL_argerror(L, 5, lua_pushfstring(L, "groups.%s: out of range", gk[k]));
        lua_pop(L, 1);
    }
    size_t na = (size_t)lua_rawlen(L, 3);
    if (na % 6) luaL_argerror(L, 3, "6 numbers per attribute expected");
    lua_Integer runs = 0, facades = 0, slivers = 0;
    for (size_t q = 0; q < na; q += 6) {
        lua_Integer v[6];
        for (int k = 0; k < 6; k++) {
            if (!lpsdl_rawint(L, 3, (lua_Integer)(q + (size_t)k) + 1, LUA_MININTEGER, LUA_MAXINTEGER, &v[k]))
                luaL_argerror(L, 3, lua_pushfstring(L, "A[%I]: integer expected", (lua_Integer)(q + (size_t)k) + 1));
        }
        if (v[1] < 1 || v[2] < 1 || v[1] > (lua_Integer)UINT32_MAX || v[2] > (lua_Integer)UINT32_MAX)
            luaL_argerror(L, 3, lua_pushfstring(L, "A[%I]: vertex references expected", (lua_Integer)q + 2));
        psdl_store_rec rec;
        memset(&rec, 0, sizeof rec);
        uint32_t refs[2] = {(uint32_t)v[1], (uint32_t)v[2]};
        if (v[0] == 1) {
            rec.type = PSDL_STORE_FACADE_BOUND;
            rec.param[0] = (double)v[5];
            rec.param[1] = (double)v[3];
            rec.aux = 3;
            runs++;
        } else if (v[0] == 2) {
            rec.type = PSDL_STORE_SLIVER;
            rec.group = (uint32_t)g[0];
            rec.param[0] = (double)v[3];
            rec.param[1] = (double)v[4];
            rec.aux = 3;
            slivers++;
        } else {
            int ground = v[0] == 3;
            rec.type = PSDL_STORE_FACADE;
            rec.group = (uint32_t)g[ground ? 1 : 2];
            rec.param[0] = (double)v[3];
            rec.param[1] = (double)v[4];
            rec.param[2] = (double)v[5];
            rec.param[3] = (double)g[ground ? 4 : 5];
            rec.aux = 15;
            facades++;
        }
        if (rec.type != PSDL_STORE_FACADE_BOUND && rec.group == 0)
            luaL_argerror(L, 5, "a texture group for a kind of attribute the building has");
        push_rec(L, u, room, &rec, refs, 2);
    }
    if (has_roof) {
        size_t nr = (size_t)lua_rawlen(L, 4);
        if (nr < 1 || g[3] == 0) luaL_argerror(L, 4, "roof fans, their height and a roof group expected");
        lua_Integer hr = list_int(L, 4, (lua_Integer)nr, 1, 65536, "R");
        size_t i = 1;
        while (i < nr) {
            lua_Integer m = list_int(L, 4, (lua_Integer)i, 0, (lua_Integer)(nr - i - 1), "R");
            uint32_t *buf = scratch_at(L, u, 0, (size_t)m);
            for (lua_Integer k = 1; k <= m; k++) buf[k - 1] = (uint32_t)list_int(L, 4, (lua_Integer)i + k, 1, UINT32_MAX, "R");
            psdl_store_rec rec;
            memset(&rec, 0, sizeof rec);
            rec.type = PSDL_STORE_ROOF;
            rec.group = (uint32_t)g[3];
            rec.param[0] = (double)hr;
            rec.aux = 1;
            push_rec(L, u, room, &rec, buf, (size_t)m);
            i += 1 + (size_t)m;
        }
    }
    lua_pushinteger(L, runs);
    lua_pushinteger(L, facades);
    lua_pushinteger(L, slivers);
    return 3;
}

/* store:mark() -> rooms, records, references, clears (psdl_store_mark). */
static int l_mark(lua_State *L) {
    psdl_store_mark_t m;
    psdl_store_mark(check_store(L, 1)->s, &m);
    lua_pushinteger(L, (lua_Integer)m.rooms);
    lua_pushinteger(L, (lua_Integer)m.recs);
    lua_pushinteger(L, (lua_Integer)m.refs);
    lua_pushinteger(L, (lua_Integer)m.cleared);
    return 4;
}

/* store:truncate(rooms, records, references [, clears]): back to counts store:mark() returned
 * (psdl_store_truncate); with `clears`, the rooms cleared since (store:set_ops) get their
 * records back too (without it, clears are not undone). Counts that are not integers >= 0,
 * or not of this store's history, raise naming the argument; nothing is changed then. */
static int l_truncate(lua_State *L) {
    store_ud *u = check_store(L, 1);
    psdl_store_mark_t now, m;
    psdl_store_mark(u->s, &now);
    size_t *dst[4] = {&m.rooms, &m.recs, &m.refs, &m.cleared};
    size_t lim[4] = {now.rooms, now.recs, now.refs, now.cleared};
    static const char *const what[4] = {"rooms", "records", "references", "clears"};
    for (int i = 0; i < 4; i++) {
        lua_Integer v = i == 3 ? luaL_optinteger(L, i + 2, (lua_Integer)now.cleared) : luaL_checkinteger(L, i + 2);
        if (v < 0 || (lua_Unsigned)v > lim[i])
            return luaL_argerror(L, i + 2, lua_pushfstring(L, "%s: %I outside 0..%I", what[i], v, (lua_Integer)lim[i]));
        *dst[i] = (size_t)v;
    }
    if (psdl_store_truncate(u->s, &m) != PSDL_STORE_OK)
        return luaL_error(L, "store:truncate: the counts are not a mark of this store (a kept record uses a dropped reference)");
    return 0;
}

static int l_tostring(lua_State *L) {
    store_ud *u = (store_ud *)luaL_checkudata(L, 1, STORE);
    if (u->s) lua_pushfstring(L, STORE " (%I rooms)", (lua_Integer)psdl_store_rooms(u->s));
    else lua_pushliteral(L, STORE " (closed)");
    return 1;
}

struct psdl_store *lpsdl_store(lua_State *L, int idx) { return check_store(L, idx)->s; }

void lpsdl_open_store(lua_State *L) {
    static const luaL_Reg methods[] = {{"room", l_room},   {"rooms", l_rooms}, {"push", l_push},
                                       {"push_flat", l_push_flat},
                                       {"count", l_count}, {"ops", l_ops},     {"set_ops", l_set_ops},
                                       {"triangles", l_triangles}, {"group_uses", l_group_uses}, {"perimeters", l_perimeters}, {"strip_end", l_strip_end}, {"assemble", l_assemble},
                                       {"complete", l_complete}, {"validate", l_validate_box},
                                       {"building", l_building}, {"mark", l_mark}, {"truncate", l_truncate},
                                       {NULL, NULL}};
    if (luaL_newmetatable(L, STORE)) {
        luaL_newlib(L, methods);
        lua_setfield(L, -2, "__index");
        lua_pushcfunction(L, store_gc);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, store_gc);
        lua_setfield(L, -2, "__close");
        lua_pushcfunction(L, l_tostring);
        lua_setfield(L, -2, "__tostring");
    }
    lua_pop(L, 1);
    lua_pushcfunction(L, l_store);
    lua_setfield(L, -2, "store");
}
