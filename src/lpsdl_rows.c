/*
 * lpsdl_rows.c -- the building rows of psdl.city.blocks in `psdl.core` (C API:
 * psdl_geom_rows.c in psdl_geom.h, psdl_row_buildings.h), registered by lpsdl_open_rows.
 *
 *   core.row_room(outline)      -> psdl.RowRoom (a block room for building rows)
 *   core.row_fits(room, fp)     -> boolean (recorded as placed when true)
 *   core.row_spec(opts)         -> psdl.RowSpec (what the buildings of a row look like)
 *   core.row_list()             -> psdl.RowList (the records of the buildings made, kept in C
 *                                  until list:fill makes their tables)
 *   core.row_buildings(room, front, spec, rng, ground, vpool, hpool, store, n, snap, budget,
 *                      list) -> built, under_decks | false, what, ... (one call per room)
 *
 * Longjmp safety: the memory a layout uses lives in the RowRoom, the RowSpec and scratch
 * userdata on the stack, so an error raised in the middle (a Lua generator that raises, a
 * pool closed by a finalizer) leaks nothing. Pools and the store are fetched afresh after
 * every Lua call or allocation (a finalizer may close them).
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lpsdl.h"
#include "psdl_geom.h"
#include "psdl_row_buildings.h"

#define ROW_ROOM "psdl.RowRoom"
#define ROW_SPEC "psdl.RowSpec"
#define ROW_LIST "psdl.RowList"

/* Scratch memory owned by a new userdata on the stack (collected by the GC). */
static void *scratch(lua_State *L, size_t n, size_t size) {
    if (n == 0) n = 1;
    if (n > ((size_t)-1) / 4 / size) luaL_error(L, "not enough memory");
    return lua_newuserdatauv(L, n * size, 0);
}

/* ================================================================ the room */

/***
 * A block room for building rows (psdl_row_room_init): its outline kept in C, with the
 * footprints placed in it.
 * @function row_room
 * @param outline flat x, y, z array or a vertex Pool (retail, metres)
 * @treturn userdata psdl.RowRoom
 */
static int l_row_room(lua_State *L) {
    lua_settop(L, 1); /* scratch userdata go above the argument */
    size_t n;
    const double *p = lpsdl_points(L, 1, &n, "outline");
    psdl_row_room *r = (psdl_row_room *)lua_newuserdatauv(L, sizeof *r, 0);
    memset(r, 0, sizeof *r);
    luaL_setmetatable(L, ROW_ROOM);
    if (psdl_row_room_init(r, p, n) != 0) luaL_error(L, "not enough memory");
    return 1;
}

static int row_room_gc(lua_State *L) {
    psdl_row_room_free((psdl_row_room *)luaL_checkudata(L, 1, ROW_ROOM));
    return 0;
}

/***
 * Does a footprint stand in the room, clear of the footprints placed (psdl_row_fits)? When it
 * does, it is recorded as placed.
 * @function row_fits
 * @tparam userdata room psdl.RowRoom
 * @param fp flat x, y, z array (retail, metres)
 * @treturn boolean
 */
static int l_row_fits(lua_State *L) {
    lua_settop(L, 2); /* scratch userdata go above the arguments */
    psdl_row_room *r = (psdl_row_room *)luaL_checkudata(L, 1, ROW_ROOM);
    size_t n;
    const double *p = lpsdl_points(L, 2, &n, "fp");
    size_t f = psdl_row_fits(r, p, n);
    if (f == PSDL_GEOM_NOMEM) luaL_error(L, "not enough memory");
    lua_pushboolean(L, f == 1);
    return 1;
}

/* ================================================================ the spec */

/* A RowSpec: the layout's options, the buildings' spec, and its arrays after it (doubles,
 * then size_t, then uint32_t). */
typedef struct spec_box {
    psdl_row_opts o;
    psdl_row_spec s;
    int floors_int; /* the floors' minimum is a Lua integer: the report's floors are too */
} spec_box;

/* Field k of table t as a finite number (a missing field: def, when def_ok). */
static double field_num(lua_State *L, int t, const char *k, int def_ok, double def) {
    lua_getfield(L, t, k);
    double v = def;
    if (!(def_ok && lua_isnil(L, -1))) {
        int ok;
        v = (double)lua_tonumberx(L, -1, &ok);
        if (!ok || !isfinite(v))
            luaL_argerror(L, 1, lua_pushfstring(L, "%s: finite number expected, got %s", k,
                                                ok ? "a number that is not finite" : luaL_typename(L, -1)));
    }
    lua_pop(L, 1);
    return v;
}

/* Field k of table t: a {min, max} pair of finite numbers with min <= max. Returns whether
 * min is a Lua integer. */
static int field_range(lua_State *L, int t, const char *k, double *lo, double *hi) {
    lua_getfield(L, t, k);
    int v = lua_gettop(L);
    if (!lua_istable(L, v)) luaL_argerror(L, 1, lua_pushfstring(L, "%s: {min, max} expected, got %s", k, luaL_typename(L, v)));
    int is_int = 0;
    for (int i = 1; i <= 2; i++) {
        lua_rawgeti(L, v, i);
        int ok;
        double x = (double)lua_tonumberx(L, -1, &ok);
        if (i == 1) is_int = lua_isinteger(L, -1);
        if (!ok || !isfinite(x)) luaL_argerror(L, 1, lua_pushfstring(L, "%s[%d]: finite number expected", k, i));
        *(i == 1 ? lo : hi) = x;
        lua_pop(L, 1);
    }
    if (*hi < *lo) luaL_argerror(L, 1, lua_pushfstring(L, "%s: min <= max expected", k));
    lua_pop(L, 1);
    return is_int;
}

/* Length of the group list at field k (nil: 0 when optional), each 1..2^32-1, checked. */
static size_t group_list_len(lua_State *L, int t, const char *k, int optional) {
    lua_getfield(L, t, k);
    size_t n = 0;
    if (lua_isnil(L, -1) && optional) {
        lua_pop(L, 1);
        return 0;
    }
    if (!lua_istable(L, -1)) luaL_argerror(L, 1, lua_pushfstring(L, "%s: list of texture groups expected", k));
    n = (size_t)lua_rawlen(L, -1);
    if (n == 0) luaL_argerror(L, 1, lua_pushfstring(L, "%s: a non-empty list expected", k));
    if (n > 1000000) luaL_argerror(L, 1, lua_pushfstring(L, "%s: at most 1000000 groups", k));
    lua_pop(L, 1);
    return n;
}

static void group_list(lua_State *L, int t, const char *k, uint32_t *out, size_t n) {
    if (n == 0) return;
    lua_getfield(L, t, k);
    for (size_t i = 0; i < n; i++) {
        lua_Integer g;
        if (!lpsdl_rawint(L, -1, (lua_Integer)i + 1, 1, UINT32_MAX, &g))
            luaL_argerror(L, 1, lua_pushfstring(L, "%s[%I]: texture group number expected", k, (lua_Integer)i + 1));
        out[i] = (uint32_t)g;
    }
    lua_pop(L, 1);
}

/***
 * What the buildings of a row look like, kept in C for core.row_buildings.
 * @function row_spec
 * @tparam table opts the layout's `setback`, `bay_width` (m), `depth`, `width`, `gap`
 * ({min, max} m); the buildings' `floors` ({min, max}), `floor_height`, `sliver_density`
 * (repeats per metre), `facades`, `roofs` (non-empty lists of texture group numbers),
 * `ground_facades` (nil or a list: a ground floor on buildings of 2 floors or more),
 * `sliver` (a group number); `refuse` (true: a building that would be made fails with
 * "refused"; floor_height, bay_width and sliver_density are then not checked); `decks` (nil
 * or a list of bridge decks `{pts = flat x, y, z ring, low = underside height}`) and
 * `deck_gap` (m kept below a deck)
 * @treturn userdata psdl.RowSpec
 * @raise naming the field when one is missing or not of its kind
 */
static int l_row_spec(lua_State *L) {
    lua_settop(L, 1);
    luaL_checktype(L, 1, LUA_TTABLE);
    spec_box head;
    memset(&head, 0, sizeof head);
    head.o.setback = field_num(L, 1, "setback", 0, 0);
    field_range(L, 1, "depth", &head.o.depth_min, &head.o.depth_max);
    field_range(L, 1, "width", &head.o.width_min, &head.o.width_max);
    field_range(L, 1, "gap", &head.o.gap_min, &head.o.gap_max);
    head.o.bay_width = field_num(L, 1, "bay_width", 0, 0);
    head.floors_int = field_range(L, 1, "floors", &head.s.floors_min, &head.s.floors_max);
    lua_getfield(L, 1, "refuse");
    head.s.refuse = lua_toboolean(L, -1);
    lua_pop(L, 1);
    head.s.floor_height = field_num(L, 1, "floor_height", 0, 0);
    head.s.bay_width = head.o.bay_width;
    head.s.sliver_density = field_num(L, 1, "sliver_density", 0, 0);
    if (!head.s.refuse && !(head.s.floor_height > 0 && head.s.bay_width > 0 && head.s.sliver_density > 0))
        luaL_argerror(L, 1, "floor_height, bay_width and sliver_density: positive numbers expected");
    if (!(head.o.bay_width > 0)) luaL_argerror(L, 1, "bay_width: a positive number expected");
    lua_getfield(L, 1, "sliver");
    int ok;
    lua_Integer sl = lua_tointegerx(L, -1, &ok);
    if (!ok || sl < 1 || sl > (lua_Integer)UINT32_MAX) luaL_argerror(L, 1, "sliver: texture group number expected");
    lua_pop(L, 1);
    head.s.sliver = (uint32_t)sl;
    size_t nf = group_list_len(L, 1, "facades", 0), nr = group_list_len(L, 1, "roofs", 0);
    size_t ng = group_list_len(L, 1, "ground_facades", 1);
    /* the decks: count them and their points */
    size_t nd = 0, np = 0;
    lua_getfield(L, 1, "decks");
    int decks = lua_gettop(L);
    if (!lua_isnil(L, decks)) {
        if (!lua_istable(L, decks)) luaL_argerror(L, 1, "decks: list expected");
        nd = (size_t)lua_rawlen(L, decks);
        if (nd > 1000000) luaL_argerror(L, 1, "decks: at most 1000000");
        for (size_t k = 0; k < nd; k++) {
            lua_rawgeti(L, decks, (lua_Integer)k + 1);
            if (!lua_istable(L, -1)) luaL_argerror(L, 1, lua_pushfstring(L, "decks[%I]: table expected", (lua_Integer)k + 1));
            lua_getfield(L, -1, "pts");
            if (!lua_istable(L, -1)) luaL_argerror(L, 1, lua_pushfstring(L, "decks[%I].pts: flat x, y, z array expected", (lua_Integer)k + 1));
            size_t m = (size_t)lua_rawlen(L, -1);
            if (m % 3 || m > 30000000) luaL_argerror(L, 1, lua_pushfstring(L, "decks[%I].pts: 3 numbers per point expected", (lua_Integer)k + 1));
            np += m / 3;
            lua_pop(L, 2);
        }
    }
    if (np > 10000000) luaL_argerror(L, 1, "decks: too many points");
    size_t bytes = sizeof(spec_box) + (3 * np + 5 * nd) * sizeof(double) + (nd + 1) * sizeof(size_t) +
                   (nf + nr + ng) * sizeof(uint32_t);
    spec_box *b = (spec_box *)lua_newuserdatauv(L, bytes, 0);
    *b = head;
    double *dpts = (double *)(b + 1), *dbox = dpts + 3 * np, *dlow = dbox + 4 * nd;
    size_t *dat = (size_t *)(dlow + nd);
    uint32_t *gf = (uint32_t *)(dat + nd + 1), *gr = gf + nf, *gg = gr + nr;
    group_list(L, 1, "facades", gf, nf);
    group_list(L, 1, "roofs", gr, nr);
    group_list(L, 1, "ground_facades", gg, ng);
    size_t at = 0;
    dat[0] = 0;
    for (size_t k = 0; k < nd; k++) {
        lua_rawgeti(L, decks, (lua_Integer)k + 1);
        lua_getfield(L, -1, "pts");
        size_t m = (size_t)lua_rawlen(L, -1) / 3;
        if (at + m > np) luaL_argerror(L, 1, "decks: changed while read");
        for (size_t i = 0; i < 3 * m; i++)
            if (!lpsdl_rawnum(L, -1, (lua_Integer)i + 1, &dpts[3 * at + i]))
                luaL_argerror(L, 1, lua_pushfstring(L, "decks[%I].pts[%I]: finite number expected", (lua_Integer)k + 1,
                                                    (lua_Integer)i + 1));
        lua_pop(L, 1);
        psdl_ring_box(dbox + 4 * k, dpts + 3 * at, m);
        lua_getfield(L, -1, "low");
        dlow[k] = (double)lua_tonumberx(L, -1, &ok);
        if (!ok) luaL_argerror(L, 1, lua_pushfstring(L, "decks[%I].low: number expected", (lua_Integer)k + 1));
        lua_pop(L, 2);
        at += m;
        dat[k + 1] = at;
    }
    b->s.facades = gf, b->s.nfacades = nf;
    b->s.roofs = gr, b->s.nroofs = nr;
    b->s.ground_facades = ng ? gg : NULL, b->s.nground = ng;
    b->s.deck_pts = dpts, b->s.deck_box = dbox, b->s.deck_low = dlow, b->s.deck_at = dat, b->s.ndecks = nd;
    b->s.deck_gap = nd ? field_num(L, 1, "deck_gap", 0, 0) : 0;
    luaL_setmetatable(L, ROW_SPEC);
    return 1;
}

/* ================================================================ the list */

/* One building's record: its room's store number (0: a record made in Lua, kept in the
 * table list:fill takes), its outline (npts points from pts[3 * at]), base, top, floors. */
typedef struct list_rec {
    size_t serial, at, npts;
    double base, top, floors;
    size_t facades, slivers;
    int floors_int;
} list_rec;

typedef struct row_list {
    list_rec *recs;
    size_t n, cap;
    double *pts;
    size_t np, pcap; /* doubles */
} row_list;

static row_list *check_list(lua_State *L, int idx) { return (row_list *)luaL_checkudata(L, idx, ROW_LIST); }

static int row_list_gc(lua_State *L) {
    row_list *l = check_list(L, 1);
    free(l->recs);
    free(l->pts);
    memset(l, 0, sizeof *l);
    return 0;
}

/* Room for one more record and npts points; 0 or -1 (out of memory). */
static int list_grow(row_list *l, size_t npts) {
    if (l->n == l->cap) {
        size_t c = l->cap ? 2 * l->cap : 64;
        if (c > ((size_t)-1) / 2 / sizeof *l->recs) return -1;
        list_rec *r = (list_rec *)realloc(l->recs, c * sizeof *r);
        if (!r) return -1;
        l->recs = r, l->cap = c;
    }
    if (npts > (((size_t)-1) / 8 / sizeof(double)) - l->np / 3) return -1;
    if (l->np + 3 * npts > l->pcap) {
        size_t c = l->pcap ? 2 * l->pcap : 1024;
        while (c < l->np + 3 * npts) c *= 2;
        double *p = (double *)realloc(l->pts, c * sizeof *p);
        if (!p) return -1;
        l->pts = p, l->pcap = c;
    }
    return 0;
}

/***
 * An empty list of building records (core.row_buildings appends to it).
 * @function row_list
 * @treturn userdata psdl.RowList
 */
static int l_row_list(lua_State *L) {
    row_list *l = (row_list *)lua_newuserdatauv(L, sizeof *l, 0);
    memset(l, 0, sizeof *l);
    luaL_setmetatable(L, ROW_LIST);
    return 1;
}

/* list:add_lua() -> index: a place for a record made in Lua (list:fill takes it from its
 * third argument). */
static int l_list_add_lua(lua_State *L) {
    row_list *l = check_list(L, 1);
    if (list_grow(l, 0)) return luaL_error(L, "not enough memory");
    list_rec *r = &l->recs[l->n++];
    memset(r, 0, sizeof *r);
    lua_pushinteger(L, (lua_Integer)l->n);
    return 1;
}

/* list:count() -> records. */
static int l_list_count(lua_State *L) {
    lua_pushinteger(L, (lua_Integer)check_list(L, 1)->n);
    return 1;
}

/* list:fill(t, rooms, lua_recs): t[i] for every record i, in order: lua_recs[i] for a record
 * made in Lua, else {room = rooms[n], outline = {{x, y, z}...}, base, top, floors, facades,
 * slivers} (n: the room's store number). */
static int l_list_fill(lua_State *L) {
    row_list *l = check_list(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    luaL_checktype(L, 3, LUA_TTABLE);
    luaL_checktype(L, 4, LUA_TTABLE);
    lua_settop(L, 4);
    for (size_t i = 0; i < l->n; i++) {
        const list_rec *r = &l->recs[i];
        if (r->serial == 0) {
            lua_rawgeti(L, 4, (lua_Integer)i + 1);
            lua_rawseti(L, 2, (lua_Integer)i + 1);
            continue;
        }
        lua_createtable(L, 0, 7);
        lua_rawgeti(L, 3, (lua_Integer)r->serial);
        lua_setfield(L, -2, "room");
        lua_createtable(L, (int)r->npts, 0);
        for (size_t k = 0; k < r->npts; k++) {
            lua_createtable(L, 3, 0);
            for (int d = 0; d < 3; d++) {
                lua_pushnumber(L, (lua_Number)l->pts[3 * (r->at + k) + (size_t)d]);
                lua_rawseti(L, -2, d + 1);
            }
            lua_rawseti(L, -2, (lua_Integer)k + 1);
        }
        lua_setfield(L, -2, "outline");
        lua_pushnumber(L, (lua_Number)r->base);
        lua_setfield(L, -2, "base");
        lua_pushnumber(L, (lua_Number)r->top);
        lua_setfield(L, -2, "top");
        if (r->floors_int) lua_pushinteger(L, (lua_Integer)r->floors);
        else lua_pushnumber(L, (lua_Number)r->floors);
        lua_setfield(L, -2, "floors");
        lua_pushinteger(L, (lua_Integer)r->facades);
        lua_setfield(L, -2, "facades");
        lua_pushinteger(L, (lua_Integer)r->slivers);
        lua_setfield(L, -2, "slivers");
        lua_rawseti(L, 2, (lua_Integer)i + 1);
    }
    return 0;
}

/* ================================================================ one room's rows */

/* Arguments of core.row_buildings. */
enum { A_ROOM = 1, A_FRONT, A_SPEC, A_RNG, A_GROUND, A_VPOOL, A_HPOOL, A_STORE, A_N, A_SNAP, A_BUDGET, A_LIST };

/* The state of one call. */
typedef struct rows_run {
    lua_State *L;
    const spec_box *spec;
    row_list *list;
    psdl_row_ground ground;
    int lua_rng; /* the generator is a Lua function (A_RNG) */
    psdl_xoshiro x;
    double *outline;
    size_t cap; /* points outline holds */
    size_t room, budget;
    double snap;
    size_t built, under;
    int code;
    double detail;
    size_t nv, nh;
    psdl_store_mark_t mark;
} rows_run;

static double run_rng(void *ud) {
    rows_run *c = (rows_run *)ud;
    if (!c->lua_rng) return psdl_xoshiro_float(&c->x);
    lua_State *L = c->L;
    lua_pushvalue(L, A_RNG);
    lua_call(L, 0, 1);
    int ok;
    double v = (double)lua_tonumberx(L, -1, &ok);
    if (!ok) luaL_error(L, "rng: number expected, got %s", luaL_typename(L, -1));
    if (!(v >= 0 && v < 1)) luaL_error(L, "rng: a number in [0, 1) expected, got %f", v);
    lua_pop(L, 1);
    return v;
}

/* A footprint placed: plan the building, make it, record it in the list. */
static int run_place(void *ud, const double *fp, size_t n) {
    rows_run *c = (rows_run *)ud;
    lua_State *L = c->L;
    if (n > c->cap) {
        c->code = PSDL_ROW_NOMEM;
        return 1;
    }
    psdl_row_plan p;
    if (!psdl_row_building_plan(&c->spec->s, &c->ground, run_rng, c, fp, n, c->outline, &p)) {
        c->under++;
        return 0;
    }
    /* fetched after the generator ran (Lua may have closed them) */
    psdl_row_target t;
    t.vpool = lpsdl_pool(L, A_VPOOL, 3);
    t.hpool = lpsdl_pool(L, A_HPOOL, 1);
    t.store = lpsdl_store(L, A_STORE);
    t.room = c->room, t.snap = c->snap, t.budget = c->budget;
    c->nv = psdl_pool_count(t.vpool);
    c->nh = psdl_pool_count(t.hpool);
    psdl_store_mark(t.store, &c->mark);
    if (c->room > psdl_store_rooms(t.store)) {
        c->code = PSDL_ROW_FULL;
        return 1;
    }
    psdl_row_built bt;
    int e = psdl_row_building_emit(&c->spec->s, &p, c->outline, n, &t, &bt);
    if (e) {
        c->code = e;
        c->detail = e == PSDL_ROW_BUDGET ? (double)bt.reached : bt.repeats;
        return 1;
    }
    /* the report's record, kept in the list */
    row_list *l = c->list;
    if (list_grow(l, n)) {
        c->code = PSDL_ROW_NOMEM;
        return 1;
    }
    list_rec *rec = &l->recs[l->n++];
    rec->serial = c->room;
    rec->at = l->np / 3;
    rec->npts = n;
    memcpy(l->pts + l->np, c->outline, 3 * n * sizeof *l->pts);
    l->np += 3 * n;
    rec->base = p.base;
    rec->top = bt.top;
    rec->floors = p.floors;
    rec->floors_int = c->spec->floors_int && p.floors >= -9.2e18 && p.floors <= 9.2e18;
    rec->facades = bt.facades;
    rec->slivers = bt.slivers;
    c->built++;
    return 0;
}

static const char *const code_names[] = {"ok",      "range",  "noheight", "below", "vanish", "repeats",
                                         "budget", "noroof", "nomem",    "full",  "refused"};

/***
 * The buildings of one block room's rows (psdl_building_rows with psdl_row_building_plan and
 * psdl_row_building_emit per footprint placed): chains, footprints and fit tests, then each
 * building's heights, draws, geometry and store records, and its record in `list`.
 * @function row_buildings
 * @tparam userdata room psdl.RowRoom
 * @tparam table front one truthy value per outline edge that is frontage
 * @tparam userdata spec psdl.RowSpec
 * @param rng a psdl.city.random generator (its state s1..s4 is read, used and written back;
 * after an error raised part-way it is not written back) or a function returning [0, 1)
 * @param ground the room's ground: a number (a plane at that height) or a list of triangles
 * (9 numbers each: x, y, z of three points)
 * @param vpool the builder's vertex Pool
 * @param hpool its height Pool
 * @param store its psdl.Store
 * @tparam integer n the room's number in the store
 * @tparam[opt] number snap the builder's snap grid (m)
 * @tparam[opt] integer budget the builder's vertex budget (nil, false or math.huge: none)
 * @tparam userdata list psdl.RowList: each building's record is appended (list:fill makes
 * their tables)
 * @return built, under_decks (buildings made; footprints left out under a bridge deck)
 * @return or false, what ("range", "noheight", "below", "vanish", "repeats", "budget",
 * "noroof", "nomem", "full", "refused"), detail (the repeats or the vertex count reached),
 * and the vertex pool's, height pool's and store's counts before the failed building (for
 * pool:truncate, store:truncate: the building's part is still there), built, under_decks
 */
static int l_row_buildings(lua_State *L) {
    lua_settop(L, A_LIST);
    psdl_row_room *r = (psdl_row_room *)luaL_checkudata(L, A_ROOM, ROW_ROOM);
    luaL_checktype(L, A_FRONT, LUA_TTABLE);
    const spec_box *spec = (const spec_box *)luaL_checkudata(L, A_SPEC, ROW_SPEC);
    row_list *list = check_list(L, A_LIST);
    rows_run c;
    memset(&c, 0, sizeof c);
    c.L = L;
    c.spec = spec;
    c.list = list;
    if (lua_isfunction(L, A_RNG)) {
        c.lua_rng = 1;
    } else if (lua_istable(L, A_RNG)) {
        static const char *const sk[4] = {"s1", "s2", "s3", "s4"};
        for (int i = 0; i < 4; i++) {
            lua_getfield(L, A_RNG, sk[i]);
            int ok;
            lua_Integer v = lua_tointegerx(L, -1, &ok);
            if (!ok || !lua_isinteger(L, -1))
                luaL_argerror(L, A_RNG, lua_pushfstring(L, "%s: integer expected (a psdl.city.random generator)", sk[i]));
            c.x.s[i] = (uint64_t)v;
            lua_pop(L, 1);
        }
    } else {
        luaL_argerror(L, A_RNG, "a psdl.city.random generator or a function expected");
    }
    /* the ground */
    if (lua_type(L, A_GROUND) == LUA_TNUMBER) {
        c.ground.flat = 1;
        c.ground.y = lua_tonumber(L, A_GROUND);
    } else if (lua_istable(L, A_GROUND)) {
        size_t nt = (size_t)lua_rawlen(L, A_GROUND);
        if (nt > 10000000) luaL_argerror(L, A_GROUND, "too many triangles");
        double *tris = (double *)scratch(L, 9 * nt, sizeof *tris);
        double *cells = (double *)scratch(L, 4 * nt, sizeof *cells);
        for (size_t i = 0; i < nt; i++) {
            lua_rawgeti(L, A_GROUND, (lua_Integer)i + 1);
            if (!lua_istable(L, -1))
                luaL_argerror(L, A_GROUND, lua_pushfstring(L, "[%I]: triangle {9 numbers} expected", (lua_Integer)i + 1));
            for (int k = 0; k < 9; k++)
                if (!lpsdl_rawnum(L, -1, k + 1, &tris[9 * i + (size_t)k]))
                    luaL_argerror(L, A_GROUND, lua_pushfstring(L, "[%I][%d]: finite number expected", (lua_Integer)i + 1, k + 1));
            lua_pop(L, 1);
        }
        psdl_row_ground_cells(cells, tris, nt);
        c.ground.tris = tris, c.ground.cells = cells, c.ground.ntris = nt;
    } else {
        luaL_argerror(L, A_GROUND, "a height or a list of triangles expected");
    }
    lpsdl_pool(L, A_VPOOL, 3);
    lpsdl_pool(L, A_HPOOL, 1);
    psdl_store *st = lpsdl_store(L, A_STORE);
    lua_Integer room = luaL_checkinteger(L, A_N);
    if (room < 1 || (lua_Unsigned)room > psdl_store_rooms(st))
        luaL_argerror(L, A_N, lua_pushfstring(L, "no room %I in the store", room));
    c.room = (size_t)room;
    if (lua_toboolean(L, A_SNAP)) {
        c.snap = luaL_checknumber(L, A_SNAP);
        if (!(c.snap > 0) || !isfinite(c.snap)) luaL_argerror(L, A_SNAP, "a positive number expected");
    }
    /* (math.huge, as psdl.builder.VERTEX_BUDGET lifted for a bench: no budget) */
    if (lua_toboolean(L, A_BUDGET) && !(lua_type(L, A_BUDGET) == LUA_TNUMBER && lua_tonumber(L, A_BUDGET) == HUGE_VAL)) {
        lua_Integer b = luaL_checkinteger(L, A_BUDGET);
        if (b < 1) luaL_argerror(L, A_BUDGET, "a positive integer expected");
        c.budget = (size_t)b;
    }
    /* frontage flags; the footprints the layout makes have at most 2 (n + 2) + 4 points */
    size_t n = r->n;
    unsigned char *front = (unsigned char *)scratch(L, n, 1);
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, A_FRONT, (lua_Integer)i + 1);
        front[i] = (unsigned char)lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    c.cap = 2 * (n + 2) + 4;
    c.outline = (double *)scratch(L, 3 * c.cap, sizeof *c.outline);
    size_t placed = psdl_building_rows(r, front, &spec->o, run_rng, run_place, &c);
    psdl_row_room_trim(r); /* the room is kept for fit tests: its scratch goes back now */
    if (!c.lua_rng) { /* the generator's state back into its table */
        static const char *const sk[4] = {"s1", "s2", "s3", "s4"};
        for (int i = 0; i < 4; i++) {
            lua_pushinteger(L, (lua_Integer)c.x.s[i]);
            lua_setfield(L, A_RNG, sk[i]);
        }
    }
    if (placed == PSDL_GEOM_NOMEM) return luaL_error(L, "not enough memory");
    if (c.code) {
        lua_pushboolean(L, 0);
        lua_pushstring(L, code_names[c.code]);
        lua_pushnumber(L, (lua_Number)c.detail);
        lua_pushinteger(L, (lua_Integer)c.nv);
        lua_pushinteger(L, (lua_Integer)c.nh);
        lua_pushinteger(L, (lua_Integer)c.mark.rooms);
        lua_pushinteger(L, (lua_Integer)c.mark.recs);
        lua_pushinteger(L, (lua_Integer)c.mark.refs);
        lua_pushinteger(L, (lua_Integer)c.built);
        lua_pushinteger(L, (lua_Integer)c.under);
        return 10;
    }
    lua_pushinteger(L, (lua_Integer)c.built);
    lua_pushinteger(L, (lua_Integer)c.under);
    return 2;
}

static const luaL_Reg rows_funcs[] = {
    {"row_room", l_row_room},
    {"row_fits", l_row_fits},
    {"row_spec", l_row_spec},
    {"row_buildings", l_row_buildings},
    {"row_list", l_row_list},
    {NULL, NULL},
};

static const luaL_Reg list_meth[] = {
    {"add_lua", l_list_add_lua},
    {"count", l_list_count},
    {"fill", l_list_fill},
    {NULL, NULL},
};

void lpsdl_open_rows(lua_State *L) {
    if (luaL_newmetatable(L, ROW_ROOM)) {
        lua_pushcfunction(L, row_room_gc);
        lua_setfield(L, -2, "__gc");
        lua_pushliteral(L, "psdl.RowRoom");
        lua_setfield(L, -2, "__metatable"); /* no script reaches __gc to free it in mid-layout */
    }
    lua_pop(L, 1);
    if (luaL_newmetatable(L, ROW_LIST)) {
        lua_pushcfunction(L, row_list_gc);
        lua_setfield(L, -2, "__gc");
        luaL_newlib(L, list_meth);
        lua_setfield(L, -2, "__index");
        lua_pushliteral(L, "psdl.RowList");
        lua_setfield(L, -2, "__metatable");
    }
    lua_pop(L, 1);
    if (luaL_newmetatable(L, ROW_SPEC)) {
        lua_pushliteral(L, "psdl.RowSpec");
        lua_setfield(L, -2, "__metatable");
    }
    lua_pop(L, 1);
    luaL_setfuncs(L, rows_funcs, 0);
}
