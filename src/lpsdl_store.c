/* lpsdl_store.c -- binding of the room store (src/psdl_store.h) for psdl.builder:
 *
 *   core.store()                       -> psdl.Store (empty)
 *   store:room()                       -> n: a new empty room, its number (1-based)
 *   store:rooms()                      -> number of rooms
 *   store:push(n, op)                  append attribute record op to room n
 *   store:count(n)                     -> records of room n
 *   store:ops(n [, groups [, from]])   -> list of records of room n as op tables (from the
 *                                         from-th, 1-based; group numbers mapped through the
 *                                         list groups when given)
 *   store:set_ops(n, ops)              replace room n's records by the op tables ops
 *   store:triangles(n)                 -> {a, b, c, ...} surface triangles of room n's ground
 *                                         geometry (vertex references), for core.boundary
 *   store:group_uses(order)            -> others, users, dividers, dusers: texture groups in
 *                                         order of first use over the rooms listed in order
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
#include <stdlib.h>
#include <string.h>

#include "lpsdl.h"
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
} store_ud;

static store_ud *check_store(lua_State *L, int idx) {
    store_ud *u = (store_ud *)luaL_checkudata(L, idx, STORE);
    if (!u->s) luaL_error(L, "attempt to use a closed " STORE);
    return u;
}

static int store_gc(lua_State *L) {
    store_ud *u = (store_ud *)luaL_checkudata(L, 1, STORE);
    psdl_store_free(u->s);
    u->s = NULL;
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

/* Reads the op table at index t into rec and its refs into a scratch buffer left on top of
 * the stack (a userdata; nothing pushed when the op has no refs); returns the refs (count in
 * *n). Raises naming the field on a bad op. */
static const uint32_t *read_op(lua_State *L, store_ud *u, int t, int argn, psdl_store_rec *rec, size_t *n) {
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
    *n = 0;
    int tp = lua_getfield(L, t, "refs");
    if (tp == LUA_TNIL) {
        lua_pop(L, 1);
        rec->aux |= AUX_NOREFS; /* no refs field: read back without one */
        return NULL;
    }
    if (tp != LUA_TTABLE)
        luaL_argerror(L, argn, lua_pushfstring(L, "op.refs: table expected, got %s", luaL_typename(L, -1)));
    size_t len = (size_t)lua_rawlen(L, -1);
    if (len > PSDL_STORE_MAX / sizeof(uint32_t)) luaL_argerror(L, argn, "op.refs: too many references");
    uint32_t *buf = (uint32_t *)lua_newuserdatauv(L, (len ? len : 1) * sizeof *buf, 0);
    for (size_t i = 0; i < len; i++) {
        lua_rawgeti(L, -2, (lua_Integer)i + 1);
        int ok;
        lua_Integer v = lua_tointegerx(L, -1, &ok);
        if (!ok || v < 1 || v > (lua_Integer)UINT32_MAX)
            luaL_argerror(L, argn, lua_pushfstring(L, "op.refs[%I]: a vertex reference (1-based) expected",
                                                   (lua_Integer)i + 1));
        lua_pop(L, 1);
        buf[i] = (uint32_t)v;
    }
    lua_replace(L, -2); /* the buffer in the refs table's slot */
    *n = len;
    return buf;
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
    size_t n;
    const uint32_t *refs = read_op(L, u, 3, 3, &rec, &n);
    push_rec(L, u, room, &rec, refs, n);
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
 * raises with the room unchanged. */
static int l_set_ops(lua_State *L) {
    store_ud *u = check_store(L, 1);
    size_t room = check_room(L, u, 2);
    luaL_checktype(L, 3, LUA_TTABLE);
    lua_settop(L, 3);
    size_t n = (size_t)lua_rawlen(L, 3);
    if (n > PSDL_STORE_MAX / sizeof(psdl_store_rec)) luaL_argerror(L, 3, "too many ops");
    psdl_store_rec *recs = (psdl_store_rec *)lua_newuserdatauv(L, (n ? n : 1) * sizeof *recs, 0); /* 4 */
    lua_createtable(L, n < INT32_MAX ? (int)n : 0, 0);                                          /* 5 */
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 3, (lua_Integer)i + 1); /* 6 */
        size_t nr;
        const uint32_t *refs = read_op(L, u, 6, 3, &recs[i], &nr);
        recs[i].nrefs = (uint32_t)nr;
        if (refs) lua_pushvalue(L, -1); /* the buffer (read_op left it on top) */
        else lua_pushboolean(L, 0);
        lua_rawseti(L, 5, (lua_Integer)i + 1); /* kept alive until pushed */
        lua_settop(L, 5);
    }
    psdl_store_clear(u->s, room);
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 5, (lua_Integer)i + 1);
        const uint32_t *refs = lua_type(L, -1) == LUA_TUSERDATA ? (const uint32_t *)lua_touserdata(L, -1) : NULL;
        push_rec(L, u, room, &recs[i], refs, refs ? recs[i].nrefs : 0);
        lua_pop(L, 1);
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

/* store:group_uses(order) -> others, users, dividers, dusers: over the rooms in the order of
 * the list `order` (room numbers), the texture groups (numbers) in order of first use
 * (`group` fields) with the room number of their first user, and the same for divider groups
 * (`divider_group` fields). Groups are numbered 1..PSDL_STORE_MAX. */
static int l_group_uses(lua_State *L) {
    store_ud *u = check_store(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    size_t n = (size_t)lua_rawlen(L, 2);
    uint32_t maxg = 0;
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 2, (lua_Integer)i + 1);
        size_t room = check_room(L, u, 3);
        lua_pop(L, 1);
        for (const psdl_store_rec *r = psdl_store_first(u->s, room); r; r = psdl_store_next(u->s, r)) {
            if (r->group > maxg) maxg = r->group;
            if (r->dgroup > maxg) maxg = r->dgroup;
        }
    }
    /* seen[g]: bit 0 used as a group, bit 1 as a divider group */
    unsigned char *seen = (unsigned char *)lua_newuserdatauv(L, (size_t)maxg + 1, 0); /* 3 */
    memset(seen, 0, (size_t)maxg + 1);
    lua_createtable(L, 0, 0); /* 4 others */
    lua_createtable(L, 0, 0); /* 5 users */
    lua_createtable(L, 0, 0); /* 6 dividers */
    lua_createtable(L, 0, 0); /* 7 dusers */
    lua_Integer no = 0, nd = 0;
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 2, (lua_Integer)i + 1);
        lua_Integer room = lua_tointeger(L, -1);
        lua_pop(L, 1);
        for (const psdl_store_rec *r = psdl_store_first(u->s, (size_t)room); r; r = psdl_store_next(u->s, r)) {
            if (r->group && !(seen[r->group] & 1)) {
                seen[r->group] |= 1;
                no++;
                lua_pushinteger(L, (lua_Integer)r->group);
                lua_rawseti(L, 4, no);
                lua_pushinteger(L, room);
                lua_rawseti(L, 5, no);
            }
            if (r->dgroup && !(seen[r->dgroup] & 2)) {
                seen[r->dgroup] |= 2;
                nd++;
                lua_pushinteger(L, (lua_Integer)r->dgroup);
                lua_rawseti(L, 6, nd);
                lua_pushinteger(L, room);
                lua_rawseti(L, 7, nd);
            }
        }
    }
    return 4;
}

static int l_tostring(lua_State *L) {
    store_ud *u = (store_ud *)luaL_checkudata(L, 1, STORE);
    if (u->s) lua_pushfstring(L, STORE " (%I rooms)", (lua_Integer)psdl_store_rooms(u->s));
    else lua_pushliteral(L, STORE " (closed)");
    return 1;
}

void lpsdl_open_store(lua_State *L) {
    static const luaL_Reg methods[] = {{"room", l_room},   {"rooms", l_rooms}, {"push", l_push},
                                       {"count", l_count}, {"ops", l_ops},     {"set_ops", l_set_ops},
                                       {"triangles", l_triangles}, {"group_uses", l_group_uses}, {NULL, NULL}};
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
