/*
 * lpsdl_geom.c -- the geometry kernels of `psdl.core` (C API in psdl_geom.h), registered
 * into the module table by lpsdl_open_geom. Flat Lua arrays in and out (style §4.4); every
 * index a function takes or returns is 1-based (point i of a flat array is elements
 * 3i-2 .. 3i; a Pool's entry k is Lua reference k + 1, so a vertex pool's references are the
 * document's vertex references).
 *
 *   core.flatten_points(list)                  -> flat | nil, index of the first bad point
 *   core.flat_check(flat)                      -> nil | index of the first bad coordinate
 *   core.polygon_points(list)                  -> flat, signed area [, edge1, edge2] | nil, index
 *   core.spline(ctrl, opts)                    -> pts
 *   core.polyline_length(pts [, plan])         -> metres
 *   core.offset(pts, offset [, miter])         -> pts, clamped
 *   core.sections(center, profile [, start_dir, end_dir]) -> pts, clamped
 *   core.street_rooms(vpool, center, profile [, opts]) -> {clamped, sections, stride, rooms =
 *                                                 {{refs, outline}...} [, flat, refs]} | false
 *   core.plan_outline(vpool, refs [, eps])    -> {{x, z}..., x0, z0, x1, z1}
 *   core.room_overlaps(vpool, outlines, owners, ends [, eps]) -> {a, b, x, z, ...} (rooms of
 *                                                 unrelated owners overlapping, psdl_overlaps.h)
 *   core.triangulate(pts [, holes])            -> {i1, i2, i3, ...}
 *   core.fans(pts [, holes [, no_extra]])      -> {{hub, rim...}, ...}, extra_pts
 *   core.keyhole(pts [, holes])                -> {i...} (one ring, holes keyholed)
 *   core.self_crossing(pts [, holes [, tol]])  -> nil | edge1, edge2
 *   core.polyline_crossing(pts)                -> nil | x, z, k1, k2, k3, k4
 *   core.first_outside(poly, pts [, closed [, eps]]) -> nil | point index
 *   core.points(pts)                           -> psdl.Points (kept as doubles; first_outside
 *                                                 takes it for poly or pts)
 *   core.ring_simple(pts [, touch])            -> boolean
 *   (the building rows' core.row_room, row_fits, row_spec, row_buildings: src/lpsdl_rows.c)
 *   core.facades(pts, opts)                    -> {{left, right, u, v, light, run, sloped}, ...}
 *                                                 (opts.flat: {left, right, u, v, light, flags, ...},
 *                                                 flags 1 run, 2 sloped)
 *   core.light_index(dx, dz)                   -> 0..63
 *   core.building(vpool, hpool, pts, opts)     -> {kind, a, b, h1, h2, light|u, ...} [, roof]
 *   core.junction(center, arms [, opts])       -> {points, surface, sections, distance, strips,
 *                                                  crosswalks, outline}
 *   core.junction_room(vpool, center, arms [, opts]) -> {outline, fans, strips, crosswalks,
 *                                                  sections, distance} (vertex references;
 *                                                  opts.records: records, fans = count
 *                                                  instead of fans, strips, crosswalks)
 *   core.signed_area(pts), core.winding(pts [, eps]), core.quad_deviation(pts),
 *   core.strip_deviation(pts, stride), core.fan_flatness(pts), core.fan_min_area(pts),
 *   core.bounds(pts [, first])                 -> {min, max, center, radius} | nil
 *   core.surface_triangles(type, refs)          -> {a, b, c, ...}
 *   core.boundary(tris, points)                -> {v...}
 *   core.link(perimeters, npoints)             -> {{{vertex=, neighbour=}...}...}
 *   core.tjunctions(points, perimeters [, eps]) -> {room, edge, vertex, ...}
 *   core.height_mismatches(points, linked, kinds, eps, gap) -> {block, edge, road, dy, ...}
 *   core.doc_height_mismatches(box, kinds, eps, gap) -> the same over an assembled document
 *   core.grid(cell)                            -> psdl.Grid (grid:insert(id, x0, z0, x1, z1),
 *                                                 grid:collect(x0, z0, x1, z1) -> {id...})
 *   core.pool(dim [, reserve_first])           -> psdl.Pool
 *       pool:add(x [, y, z]) / pool:add_flat(pts) / pool:find(...) / pool:count() /
 *       pool:get(i) / pool:set_dummy(...) / pool:totable() / pool:flat() / pool:points(refs) /
 *       pool:truncate(n)
 *
 * `points` arguments accept a flat array or a vertex Pool (its entries as points).
 * Longjmp safety: scratch arrays are Lua userdata (collected on error); the kernels that
 * allocate memory free it before returning and never call Lua. Pools are boxed userdata with
 * __gc and __close.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lpsdl.h"
#include "psdl.h"
#include "psdl_geom.h"
#include "psdl_conflicts.h"
#include "psdl_overlaps.h"
#include "psdl_store.h"

#define POOL "psdl.Pool"

/* ================================================================ helpers */

/* Scratch memory owned by a new userdata on the stack (collected by the GC). */
static void *scratch(lua_State *L, size_t n, size_t size) {
    if (n == 0) n = 1;
    if (n > ((size_t)-1) / 4 / size) luaL_error(L, "not enough memory");
    return lua_newuserdatauv(L, n * size, 0);
}

/* A block of memory kept between calls of the per-node and per-street kernels (core.junction,
 * core.junction_room, core.street_rooms, core.spline), so that a city's hundreds of nodes
 * and streets leave no scratch garbage behind
 * (the collector's work grows with what is allocated). One per Lua state, in the registry,
 * freed by its __gc. A call that finds it in use (a finalizer calling in during a call) or
 * cannot grow it gets NULL and uses scratch userdata instead; an error raised while it is in
 * use leaves it so (later calls use scratch: slower, never wrong). */
#define REUSE "psdl.Reuse"            /* its metatable */
#define REUSE_KEY "psdl.Reuse.block" /* the block (registry key) */
typedef struct reuse_box {
    void *p;
    size_t size;
    int busy;
} reuse_box;

static int reuse_gc(lua_State *L) {
    reuse_box *r = (reuse_box *)luaL_checkudata(L, 1, REUSE);
    free(r->p);
    r->p = NULL;
    r->size = 0;
    return 0;
}

/* The kept block (at least n bytes, marked in use: reuse_release it), or NULL. */
static void *reuse_take(lua_State *L, size_t n, reuse_box **box) {
    *box = NULL;
    lua_getfield(L, LUA_REGISTRYINDEX, REUSE_KEY);
    reuse_box *r = (reuse_box *)luaL_testudata(L, -1, REUSE);
    lua_pop(L, 1); /* (kept alive by the registry) */
    if (!r) {
        r = (reuse_box *)lua_newuserdatauv(L, sizeof *r, 0);
        r->p = NULL, r->size = 0, r->busy = 0;
        luaL_setmetatable(L, REUSE);
        lua_setfield(L, LUA_REGISTRYINDEX, REUSE_KEY);
    }
    if (r->busy || n > ((size_t)1 << 28)) return NULL;
    if (r->size < n) {
        void *q = realloc(r->p, n);
        if (!q) return NULL;
        r->p = q, r->size = n;
    }
    r->busy = 1;
    *box = r;
    return r->p;
}

static void reuse_release(reuse_box *box) {
    if (box) box->busy = 0;
}

static void nomem_check(lua_State *L, size_t r) {
    if (r == PSDL_GEOM_NOMEM) luaL_error(L, "not enough memory");
}

/* get_holes checks what the kernels check: PSDL_GEOM_INVALID from them is a bug here. */
static void holes_check(lua_State *L, size_t r, int arg) {
    if (r == PSDL_GEOM_INVALID) luaL_argerror(L, arg, "hole starts must increase within 2..#points");
}

static size_t arr_len(lua_State *L, int idx) {
    luaL_checktype(L, idx, LUA_TTABLE);
    return (size_t)lua_rawlen(L, idx);
}

static double arr_num(lua_State *L, int idx, size_t i, int arg, const char *what) {
    lua_rawgeti(L, idx, (lua_Integer)i);
    int ok;
    double v = (double)lua_tonumberx(L, -1, &ok);
    if (!ok)
        luaL_argerror(L, arg, lua_pushfstring(L, "%s[%I]: number expected, got %s", what, (lua_Integer)i,
                                              luaL_typename(L, -1)));
    lua_pop(L, 1);
    return v;
}

static lua_Integer arr_int(lua_State *L, int idx, size_t i, int arg, const char *what, lua_Integer lo, lua_Integer hi) {
    lua_rawgeti(L, idx, (lua_Integer)i);
    int ok;
    lua_Integer v = lua_tointegerx(L, -1, &ok);
    if (!ok || v < lo || v > hi)
        luaL_argerror(L, arg, lua_pushfstring(L, "%s[%I]: integer in %I..%I expected", what, (lua_Integer)i, lo, hi));
    lua_pop(L, 1);
    return v;
}

typedef struct psdl_pool_box {
    psdl_pool *pool;
    unsigned dim;
    int reserved; /* created with reserve_first: entry 0 is the dummy (set_dummy allowed) */
} pool_box;

static pool_box *check_pool(lua_State *L, int idx) {
    pool_box *b = (pool_box *)luaL_checkudata(L, idx, POOL);
    if (!b->pool) luaL_error(L, "attempt to use a closed " POOL);
    return b;
}

/* The pool's entries, fetched afresh. Any Lua allocation may run a __gc finalizer that
 * adds to the pool (its data moves) or closes it, so never keep this pointer across an
 * allocation (scratch, lua_createtable, lua_rawseti, lua_pushfstring...): call again after
 * it. Pools only grow, so counts taken earlier stay valid. */
static const float *pool_data(lua_State *L, pool_box *b) {
    if (!b->pool) luaL_error(L, "attempt to use a closed " POOL);
    return psdl_pool_data(b->pool);
}

const float *lpsdl_pool_floats(lua_State *L, int idx, unsigned dim, size_t *count) {
    pool_box *b = check_pool(L, idx);
    if (b->dim != dim) luaL_argerror(L, idx, lua_pushfstring(L, "a pool of dimension %d expected", (int)dim));
    *count = psdl_pool_count(b->pool);
    return pool_data(L, b);
}

/* Points (x, y, z doubles) from a flat array or a 3-D Pool at idx; *n = point count. The
 * array lives in a scratch userdata pushed on the stack. */
static double *get_points(lua_State *L, int idx, size_t *n, const char *what) {
    if (lua_type(L, idx) == LUA_TUSERDATA) {
        pool_box *b = check_pool(L, idx);
        if (b->dim != 3) luaL_argerror(L, idx, "a vertex pool (dimension 3) expected");
        size_t c = psdl_pool_count(b->pool);
        double *p = (double *)scratch(L, 3 * c, sizeof *p);
        const float *f = pool_data(L, b); /* after the allocation (a finalizer may move it) */
        for (size_t i = 0; i < 3 * c; i++) p[i] = f[i];
        *n = c;
        return p;
    }
    size_t len = arr_len(L, idx);
    if (len % 3) luaL_argerror(L, idx, lua_pushfstring(L, "%s: flat x, y, z array expected (%I numbers)", what,
                                                         (lua_Integer)len));
    double *p = (double *)scratch(L, len, sizeof *p);
    for (size_t i = 0; i < len; i++) p[i] = arr_num(L, idx, i + 1, idx, what);
    *n = len / 3;
    return p;
}

#define POINTS "psdl.Points"

/* A flat point array kept in C (core.points): doubles ready for the kernels, so that a
 * polygon tested again and again (a room's outline against each building) is converted
 * once. */
typedef struct points_box {
    size_t n;
    double p[];
} points_box;

/* Like get_points, but a psdl.Points argument is used in place (read only, no copy). */
static const double *get_points_ro(lua_State *L, int idx, size_t *n, const char *what) {
    points_box *b = (points_box *)luaL_testudata(L, idx, POINTS);
    if (b) {
        *n = b->n;
        return b->p;
    }
    return get_points(L, idx, n, what);
}

/***
 * Points kept in C for repeated tests (`first_outside` takes them as its polygon or points).
 * @function points
 * @param pts flat x, y, z array or a vertex Pool
 * @treturn userdata psdl.Points (`#` gives the point count)
 */
static int l_points(lua_State *L) {
    lua_settop(L, 1); /* scratch userdata go above the argument */
    size_t n;
    const double *p = get_points(L, 1, &n, "pts");
    if (n > (((size_t)-1) / 4 - sizeof(points_box)) / (3 * sizeof(double))) luaL_error(L, "not enough memory");
    points_box *b = (points_box *)lua_newuserdatauv(L, sizeof *b + 3 * n * sizeof(double), 0);
    b->n = n;
    if (n) memcpy(b->p, p, 3 * n * sizeof(double));
    luaL_setmetatable(L, POINTS);
    return 1;
}

static int points_len(lua_State *L) {
    lua_pushinteger(L, (lua_Integer)((points_box *)luaL_checkudata(L, 1, POINTS))->n);
    return 1;
}

static void push_points(lua_State *L, const double *p, size_t n) {
    lua_createtable(L, (int)(3 * n), 0);
    for (size_t i = 0; i < 3 * n; i++) {
        lua_pushnumber(L, p[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

static void push_indices(lua_State *L, const uint32_t *v, size_t n, lua_Integer base) {
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_pushinteger(L, (lua_Integer)v[i] + base);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

static double opt_field_num(lua_State *L, int t, const char *k, double def) {
    if (t == 0) return def;
    lua_getfield(L, t, k);
    double v = def;
    if (!lua_isnil(L, -1)) {
        int ok;
        v = (double)lua_tonumberx(L, -1, &ok);
        if (!ok) luaL_error(L, "option '%s': number expected, got %s", k, luaL_typename(L, -1));
    }
    lua_pop(L, 1);
    return v;
}

/* Plan vector {x, z} at field k of table t (or the value at idx when k is NULL); 0 if nil. */
static int opt_vec2(lua_State *L, int t, const char *k, double *out) {
    if (k) lua_getfield(L, t, k);
    else lua_pushvalue(L, t);
    int has = 0;
    if (lua_istable(L, -1)) {
        int v = lua_gettop(L);
        out[0] = arr_num(L, v, 1, v, k ? k : "direction");
        out[1] = arr_num(L, v, 2, v, k ? k : "direction");
        has = 1;
    } else if (!lua_isnil(L, -1)) {
        luaL_error(L, "'%s': {x, z} expected, got %s", k ? k : "direction", luaL_typename(L, -1));
    }
    lua_pop(L, 1);
    return has;
}

static const char *const kind_names[] = {"road", "walkway", "divided", "sidewalk", NULL};

/* Profile table at t (kind name, widths) into p. */
static void get_profile(lua_State *L, int t, psdl_profile *p) {
    luaL_checktype(L, t, LUA_TTABLE);
    memset(p, 0, sizeof *p);
    lua_getfield(L, t, "kind");
    int kind = -1;
    if (lua_type(L, -1) == LUA_TSTRING) { /* (the usual names found without luaL_checkoption's scan) */
        size_t n;
        const char *k = lua_tolstring(L, -1, &n);
        for (int i = 0; kind_names[i]; i++)
            if (strlen(kind_names[i]) == n && memcmp(kind_names[i], k, n) == 0) kind = i;
    }
    p->kind = kind >= 0 ? kind : luaL_checkoption(L, -1, "road", kind_names);
    lua_pop(L, 1);
    p->left = opt_field_num(L, t, "left", 0);
    p->right = opt_field_num(L, t, "right", 0);
    p->sidewalk_left = opt_field_num(L, t, "sidewalk_left", 0);
    p->sidewalk_right = opt_field_num(L, t, "sidewalk_right", 0);
    p->median = opt_field_num(L, t, "median", 0);
    p->curb = opt_field_num(L, t, "curb", -1);
    p->miter_limit = opt_field_num(L, t, "miter_limit", 0);
}

/* Hole starts (1-based point indices) at idx into 0-based starts. */
static uint32_t *get_holes(lua_State *L, int idx, size_t npts, size_t *nh) {
    *nh = 0;
    if (lua_isnoneornil(L, idx)) return NULL;
    size_t n = arr_len(L, idx);
    uint32_t *h = (uint32_t *)scratch(L, n, sizeof *h);
    for (size_t i = 0; i < n; i++) {
        h[i] = (uint32_t)(arr_int(L, idx, i + 1, idx, "holes", 2, (lua_Integer)npts) - 1);
        if (i > 0 && h[i] <= h[i - 1]) luaL_argerror(L, idx, "hole starts must increase");
    }
    *nh = n;
    return h;
}

/* ================================================================ point lists */

/* One coordinate of a point: a number within +-PSDL_MAX_COORDINATE (not NaN). */
static int coord_ok(lua_State *L, int idx, double *v) {
    if (lua_type(L, idx) != LUA_TNUMBER) return 0;
    *v = (double)lua_tonumber(L, idx);
    return *v >= -PSDL_MAX_COORDINATE && *v <= PSDL_MAX_COORDINATE;
}

/* Flattens the point list at idx into the new table it pushes, checking each point (a table
 * of numbers within +-PSDL_MAX_COORDINATE, y nil or false: 0); the coordinates go to
 * xyz too when given (3 per point). Returns 0, or the 1-based index of the first bad point
 * (the table pushed is then incomplete). */
static lua_Integer flatten_list(lua_State *L, int idx, lua_Integer n, double *xyz) {
    lua_createtable(L, n > 0 && n < INT32_MAX / 3 ? (int)(3 * n) : 0, 0);
    int out = lua_gettop(L);
    for (lua_Integer i = 1; i <= n; i++) {
        int ok = lua_geti(L, idx, i) == LUA_TTABLE;
        if (ok) {
            int p = lua_gettop(L);
            lua_geti(L, p, 1);
            lua_geti(L, p, 2);
            lua_geti(L, p, 3);
            if (!lua_toboolean(L, p + 2)) { /* nil or false: 0, as `p[2] or 0` */
                lua_pushinteger(L, 0);
                lua_replace(L, p + 2);
            }
            double v[3];
            ok = coord_ok(L, p + 1, &v[0]) && coord_ok(L, p + 2, &v[1]) && coord_ok(L, p + 3, &v[2]);
            if (ok) { /* the values as they are (integers stay integers, as geom.flatten keeps them) */
                if (xyz) memcpy(xyz + 3 * (i - 1), v, sizeof v);
                lua_rawseti(L, out, 3 * i);
                lua_rawseti(L, out, 3 * i - 1);
                lua_rawseti(L, out, 3 * i - 2);
            } else {
                lua_pop(L, 3);
            }
        }
        lua_pop(L, 1);
        if (!ok) return i;
    }
    return 0;
}

/***
 * A list of points as a flat array, checked (what builder's argument checks accept).
 * @function flatten_points
 * @tparam table list `{ {x, y, z}, ... }` (y may be nil or false: 0)
 * @return flat `{x1, y1, z1, ...}`, or nil and the 1-based index of the first point that is
 * not a table of numbers within +-65,536 m (PSDL_MAX_COORDINATE, psdl.h)
 */
static int l_flatten_points(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    lua_Integer bad = flatten_list(L, 1, luaL_len(L, 1), NULL);
    if (bad) {
        luaL_pushfail(L);
        lua_pushinteger(L, bad);
        return 2;
    }
    return 1;
}

/***
 * The first entry of a flat array that is no coordinate flatten_points would take (a number
 * within +-65,536 m, PSDL_MAX_COORDINATE, not NaN), or nil when all are (the builder's check of a
 * flat centre line, psdl.builder's Builder:street).
 * @function flat_check
 * @tparam table flat `{x1, y1, z1, ...}` (its length as `#`)
 * @return nil, or the 1-based index of the first bad entry
 */
static int l_flat_check(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    lua_Integer n = luaL_len(L, 1);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, 1, i);
        double v;
        int ok = coord_ok(L, 2, &v);
        lua_pop(L, 1);
        if (!ok) {
            lua_pushinteger(L, i);
            return 1;
        }
    }
    return 0;
}

/***
 * A polygon's points as a flat array, checked as flatten_points does, with its signed area
 * (psdl_signed_area) and its first self-crossing (psdl_self_crossing, tolerance 1e-6): what
 * the builder's polygon checks need, in one pass.
 * @function polygon_points
 * @tparam table list `{ {x, y, z}, ... }`
 * @return flat, signed area, and nil or the two 1-based crossing edges; or nil and the index
 * of the first bad point
 */
static int l_polygon_points(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    lua_Integer n = luaL_len(L, 1);
    if (n < 0) n = 0;
    double *xyz = (double *)scratch(L, 3 * (size_t)n, sizeof *xyz); /* 2 */
    lua_Integer bad = flatten_list(L, 1, n, xyz);                    /* 3 */
    if (bad) {
        luaL_pushfail(L);
        lua_pushinteger(L, bad);
        return 2;
    }
    lua_pushnumber(L, psdl_signed_area(xyz, (size_t)n));
    uint32_t e[2];
    size_t r = psdl_self_crossing(e, xyz, (size_t)n, NULL, 0, 1e-6);
    nomem_check(L, r);
    if (r != 1) return 2;
    return 2 + lpsdl_push_edges(L, 1, e);
}

/* ================================================================ centre lines, sections */

/***
 * Smooth centre line through control points (psdl_spline).
 * @function spline
 * @tparam table ctrl flat x, y, z control points (2 or more)
 * @tparam[opt] table opts spacing (m, 5), max_angle (degrees, 7.5), half_width (m),
 * planar_tol (m, 0.02), start_dir / end_dir ({x, z} tangents)
 * @treturn table flat points
 */
static int l_spline(lua_State *L) {
    lua_settop(L, 2); /* scratch userdata go above the arguments */
    size_t n;
    double *c = get_points(L, 1, &n, "ctrl");
    int t = lua_istable(L, 2) ? 2 : 0;
    psdl_spline_opts o;
    memset(&o, 0, sizeof o);
    o.spacing = opt_field_num(L, t, "spacing", 0);
    o.max_angle = opt_field_num(L, t, "max_angle", 0);
    o.half_width = opt_field_num(L, t, "half_width", 0);
    o.planar_tol = opt_field_num(L, t, "planar_tol", 0);
    if (t) {
        o.has_start_dir = opt_vec2(L, t, "start_dir", o.start_dir);
        o.has_end_dir = opt_vec2(L, t, "end_dir", o.end_dir);
    }
    /* the samples built once, in a block a userdata owns while they are pushed (a push
     * that raises leaves it to the collector) */
    reuse_box *own = (reuse_box *)lua_newuserdatauv(L, sizeof *own, 0);
    own->p = NULL, own->size = 0, own->busy = 0;
    luaL_setmetatable(L, REUSE);
    double *out;
    size_t m = psdl_spline_alloc(&out, c, n, &o);
    nomem_check(L, m);
    if (m == PSDL_GEOM_INVALID)
        luaL_argerror(L, 1, "ctrl: a control point or option is not a finite number (NaN or infinity)");
    own->p = out;
    if (m > ((size_t)1 << 26)) luaL_error(L, "not enough memory");
    push_points(L, out, m);
    free(out);
    own->p = NULL;
    return 1;
}

/* core.polyline_length(pts [, plan]) -> metres: the length of the polyline (3D; plan true
 * measures in XZ only). pts: flat x, y, z array or vertex Pool (as every `pts` below). */
static int l_polyline_length(lua_State *L) {
    lua_settop(L, 2); /* scratch userdata go above the arguments */
    size_t n;
    double *p = get_points(L, 1, &n, "pts");
    lua_pushnumber(L, psdl_polyline_length(p, n, lua_toboolean(L, 2)));
    return 1;
}

/* core.offset(pts, offset [, miter = 4]) -> pts, clamped: the polyline moved offset metres
 * to the left of travel (negative: right), y kept, points on tight curves clamped so they
 * never fold (psdl_offset); clamped counts them. */
static int l_offset(lua_State *L) {
    lua_settop(L, 3); /* scratch userdata go above the arguments */
    size_t n;
    double *p = get_points(L, 1, &n, "pts");
    double off = luaL_checknumber(L, 2), miter = luaL_optnumber(L, 3, 0);
    double *out = (double *)scratch(L, 3 * n, sizeof *out);
    size_t cl = psdl_offset(out, p, n, off, miter);
    push_points(L, out, n);
    lua_pushinteger(L, (lua_Integer)cl);
    return 2;
}

/* core.sections(center, profile [, start_dir, end_dir]) -> pts, clamped: the cross-sections
 * of a strip along a centre line (flat points, one row of 4 (road), 2 (walkway, sidewalk) or
 * 6 (divided) points per centre point, left to right of travel, §2.4). profile = {kind =
 * "road"|"walkway"|"divided"|"sidewalk", left, right, sidewalk_left, sidewalk_right, median,
 * curb, miter_limit} in metres; start_dir / end_dir {x, z} end tangents. Bad profiles raise. */
static int l_sections(lua_State *L) {
    lua_settop(L, 4); /* scratch userdata go above the arguments */
    size_t n;
    double *c = get_points(L, 1, &n, "center");
    psdl_profile p;
    get_profile(L, 2, &p);
    double sd[2], ed[2];
    int hs = !lua_isnoneornil(L, 3) && opt_vec2(L, 3, NULL, sd);
    int he = !lua_isnoneornil(L, 4) && opt_vec2(L, 4, NULL, ed);
    size_t m = psdl_sections_bound(n, &p), cl = 0;
    double *out = (double *)scratch(L, 3 * m, sizeof *out);
    m = psdl_sections(out, c, n, &p, hs ? sd : NULL, he ? ed : NULL, &cl);
    push_points(L, out, m);
    lua_pushinteger(L, (lua_Integer)cl);
    return 2;
}

/* Points (x, y, z doubles) of the list at idx: a flat array, or a list of {x, y, z} points
 * (y nil or false: 0); *n = point count; kept in a scratch userdata pushed on the stack. A
 * value that is not a number raises naming `what`. */
static double *get_point_list(lua_State *L, int idx, size_t *n, const char *what) {
    luaL_checktype(L, idx, LUA_TTABLE);
    if (lua_rawgeti(L, idx, 1) != LUA_TTABLE) {
        lua_pop(L, 1);
        return get_points(L, idx, n, what);
    }
    lua_pop(L, 1);
    size_t m = (size_t)lua_rawlen(L, idx);
    double *p = (double *)scratch(L, 3 * m, sizeof *p);
    for (size_t i = 0; i < m; i++) {
        if (lua_rawgeti(L, idx, (lua_Integer)i + 1) != LUA_TTABLE)
            luaL_argerror(L, idx, lua_pushfstring(L, "%s[%I]: {x, y, z} expected", what, (lua_Integer)i + 1));
        int t = lua_gettop(L);
        for (int d = 0; d < 3; d++) {
            int ok = 1;
            lua_rawgeti(L, t, d + 1);
            if (d == 1 && !lua_toboolean(L, -1)) p[3 * i + 1] = 0;
            else p[3 * i + d] = (double)lua_tonumberx(L, -1, &ok);
            if (!ok)
                luaL_argerror(L, idx, lua_pushfstring(L, "%s[%I][%d]: number expected", what, (lua_Integer)i + 1, d + 1));
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    *n = m;
    return p;
}

/* Writes the row of stride points at field k of table t (a list of {x, y, z}, y nil: 0)
 * over section `sec` of sf (sf NULL: only checks the row); nothing when the field is nil. */
static void put_section_row(lua_State *L, int t, const char *k, double *sf, size_t sec, size_t stride) {
    lua_getfield(L, t, k);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return;
    }
    int r = lua_gettop(L);
    if (lua_istable(L, r) && lua_rawlen(L, r) == 3 * stride && lua_rawgeti(L, r, 1) == LUA_TNUMBER) {
        lua_pop(L, 1); /* a flat x, y, z row (psdl.city's junction ends, core.junction_store) */
        for (size_t q = 0; q < 3 * stride; q++) {
            int ok = 0;
            lua_rawgeti(L, r, (lua_Integer)q + 1);
            double v = (double)lua_tonumberx(L, -1, &ok);
            if (!ok || !isfinite(v))
                luaL_error(L, "option '%s': point %d: finite numbers expected", k, (int)(q / 3) + 1);
            if (sf) sf[3 * sec * stride + q] = v;
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
        return;
    }
    if (lua_istable(L, r)) lua_settop(L, r);
    if (!lua_istable(L, r) || lua_rawlen(L, r) != stride)
        luaL_error(L, "option '%s': a row of %d points expected", k, (int)stride);
    for (size_t c = 0; c < stride; c++) {
        if (lua_rawgeti(L, r, (lua_Integer)c + 1) != LUA_TTABLE) luaL_error(L, "option '%s': point %d expected", k, (int)c + 1);
        int pt = lua_gettop(L);
        for (int d = 0; d < 3; d++) {
            int ok = 1;
            double v = 0;
            lua_rawgeti(L, pt, d + 1);
            if (!(d == 1 && !lua_toboolean(L, -1))) v = (double)lua_tonumberx(L, -1, &ok);
            if (!ok || !isfinite(v)) luaL_error(L, "option '%s': point %d: finite numbers expected", k, (int)c + 1);
            if (sf) sf[3 * (sec * stride + c) + (size_t)d] = v;
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

/***
 * A street's road rooms in one call (psdl.builder's Builder:street): the cross-sections of the
 * centre line (psdl_sections), the first / last replaced by given rows, every point added to
 * the vertex pool, cut into rooms of at most `split` sections with each room's outline
 * (psdl_street_rooms).
 * @function street_rooms
 * @tparam userdata vpool the builder's vertex Pool (dimension 3)
 * @tparam table center the centre line: flat x, y, z or a list of {x, y, z} (2 points or more)
 * @tparam table profile as core.sections
 * @tparam[opt] table opts `start_dir`, `end_dir` ({x, z}), `start_section`, `end_section`
 * (rows of the profile's stride points {x, y, z}, or each row as one flat x, y, z array), `split` (sections per room, >= 2, 64),
 * `snap` (m), `min_length` (m: a centre line shorter in plan gives false, nothing pooled),
 * `flat` (true: also the sections and all references), `records` (true, for a road or
 * walkway profile: instead of `rooms`, `records` = per room its road or walkway record as a
 * string of native 32-bit words for store:push_flat, and `outlines` = per room its outline)
 * @return `{clamped = n, sections = n, stride = n, rooms = {{refs = {...}, outline = {...}},
 * ...}, flat = {x1, y1, z1, ...}, refs = {...}}` (vertex references; flat and refs only with
 * opts.flat), or false when the centre line is shorter than min_length
 */
static int l_street_rooms(lua_State *L) {
    lua_settop(L, 4); /* scratch userdata go above the arguments */
    pool_box *pb = check_pool(L, 1);
    if (pb->dim != 3) luaL_argerror(L, 1, "a vertex pool (dimension 3) expected");
    size_t n;
    double *c = get_point_list(L, 2, &n, "center");
    if (n < 2) luaL_argerror(L, 2, "center: 2 or more points expected");
    for (size_t i = 0; i < 3 * n; i++)
        if (!isfinite(c[i])) luaL_argerror(L, 2, "center: a coordinate is not a finite number");
    psdl_profile prof;
    get_profile(L, 3, &prof);
    if (prof.kind == PSDL_SECTION_SIDEWALK) luaL_argerror(L, 3, "profile.kind: road, walkway or divided expected");
    int t = lua_istable(L, 4) ? 4 : 0;
    double snap = opt_field_num(L, t, "snap", 0), min_length = opt_field_num(L, t, "min_length", 0);
    double split_d = opt_field_num(L, t, "split", 64);
    if (!(snap >= 0 && snap < HUGE_VAL)) luaL_argerror(L, 4, "snap: a finite number >= 0 expected");
    if (!(split_d >= 2 && split_d <= 1e6 && split_d == floor(split_d)))
        luaL_argerror(L, 4, "split: a whole number in 2..1000000 expected");
    double sd[2], ed[2];
    int hs = t && opt_vec2(L, t, "start_dir", sd), he = t && opt_vec2(L, t, "end_dir", ed);
    if (min_length > 0 && !(psdl_polyline_length(c, n, 1) >= min_length)) {
        lua_pushboolean(L, 0);
        return 1;
    }
    size_t stride = psdl_section_stride(prof.kind);
    if (n > ((size_t)-1) / 64 / (stride + 1)) luaL_error(L, "not enough memory");
    /* the end rows checked before the kept block is taken (nothing raises while it is held,
     * up to the result tables) */
    if (t) {
        put_section_row(L, t, "start_section", NULL, 0, stride);
        put_section_row(L, t, "end_section", NULL, 0, stride);
    }
    /* one block for the sections, references, room ranges and outlines, sized for the
     * psdl_sections_bound(n) / stride sections the centre line can give; the kept block of
     * the per-node kernels when free (no garbage per street), else scratch */
    size_t nsb = psdl_sections_bound(n, &prof), split = (size_t)split_d, owb;
    size_t nrb = psdl_street_rooms_bound(nsb / stride, stride, split, &owb);
    if (nsb > ((size_t)1 << 26) || owb > ((size_t)1 << 26)) luaL_error(L, "not enough memory");
    size_t bytes = 3 * nsb * sizeof(double) + (nsb + 2 * nrb + owb + 3 + nsb) * sizeof(uint32_t);
    reuse_box *box;
    double *sf = (double *)reuse_take(L, bytes, &box);
    if (!sf) sf = (double *)scratch(L, bytes, 1);
    uint32_t *refs = (uint32_t *)(sf + 3 * nsb), *ranges = refs + nsb, *outl = ranges + 2 * nrb;
    uint32_t *rec = outl + owb; /* a room's record (opts.records): 3 + its references */
    size_t cl = 0, m = psdl_sections(sf, c, n, &prof, hs ? sd : NULL, he ? ed : NULL, &cl);
    size_t nsec = m / stride;
    if (t && nsec > 0) { /* (checked above: these cannot raise) */
        put_section_row(L, t, "start_section", sf, 0, stride);
        put_section_row(L, t, "end_section", sf, nsec - 1, stride);
    }
    pb = (pool_box *)luaL_testudata(L, 1, POOL);
    if (!pb || !pb->pool) { /* a finalizer closed it during the allocations */
        reuse_release(box);
        check_pool(L, 1);
    }
    size_t nw, made = psdl_street_rooms(refs, ranges, outl, &nw, pb->pool, sf, nsec, stride, split, snap);
    if (made == PSDL_GEOM_NOMEM || made == PSDL_GEOM_INVALID) reuse_release(box);
    if (made == PSDL_GEOM_NOMEM) luaL_error(L, "not enough memory (or the vertex pool is full)");
    if (made == PSDL_GEOM_INVALID) luaL_argerror(L, 3, "the profile has no sections");
    lua_createtable(L, 0, 6);
    lua_pushinteger(L, (lua_Integer)cl);
    lua_setfield(L, -2, "clamped");
    lua_pushinteger(L, (lua_Integer)nsec);
    lua_setfield(L, -2, "sections");
    lua_pushinteger(L, (lua_Integer)stride);
    lua_setfield(L, -2, "stride");
    int want_records = 0;
    if (t) {
        lua_getfield(L, t, "records");
        want_records = lua_toboolean(L, -1) && prof.kind != PSDL_SECTION_DIVIDED;
        lua_pop(L, 1);
    }
    if (want_records) { /* records = {string per room}, outlines = {refs per room} */
        uint32_t type = prof.kind == PSDL_SECTION_WALKWAY ? 0x2 : 0x0;
        lua_createtable(L, (int)made, 0);
        lua_createtable(L, (int)made, 0);
        for (size_t k = 0, w = 0; k < made; k++) {
            size_t a = ranges[2 * k], b = ranges[2 * k + 1], nref = (b - a + 1) * stride;
            rec[0] = type, rec[1] = 0, rec[2] = (uint32_t)nref;
            for (size_t q = 0; q < nref; q++) rec[3 + q] = refs[a * stride + q] + 1;
            lua_pushlstring(L, (const char *)rec, (3 + nref) * sizeof *rec);
            lua_rawseti(L, -3, (lua_Integer)k + 1);
            push_indices(L, outl + w + 1, outl[w], 1);
            lua_rawseti(L, -2, (lua_Integer)k + 1);
            w += 1 + outl[w];
        }
        lua_setfield(L, -3, "outlines"); /* (below: the records, the result) */
        lua_setfield(L, -2, "records");
    } else {
        lua_createtable(L, (int)made, 0);
        for (size_t k = 0, w = 0; k < made; k++) {
            lua_createtable(L, 0, 2);
            size_t a = ranges[2 * k], b = ranges[2 * k + 1];
            push_indices(L, refs + a * stride, (b - a + 1) * stride, 1);
            lua_setfield(L, -2, "refs");
            push_indices(L, outl + w + 1, outl[w], 1);
            lua_setfield(L, -2, "outline");
            w += 1 + outl[w];
            lua_rawseti(L, -2, (lua_Integer)k + 1);
        }
        lua_setfield(L, -2, "rooms");
    }
    int want_flat = 0;
    if (t) {
        lua_getfield(L, t, "flat");
        want_flat = lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    if (want_flat) {
        push_points(L, sf, nsec * stride);
        lua_setfield(L, -2, "flat");
        push_indices(L, refs, nsec * stride, 1);
        lua_setfield(L, -2, "refs");
    }
    reuse_release(box);
    return 1;
}

/* The numbers of core.run_street's last argument (a list, reused by the caller). */
enum { RUN_SPACING = 1, RUN_MAX_ANGLE, RUN_HALF_WIDTH, RUN_ROOM_LENGTH, RUN_SNAP, RUN_GROUP, RUN_DGROUP,
       RUN_DTYPE, RUN_DVALUE, RUN_AUX, RUN_CAPS, RUN_NUMBERS = RUN_CAPS };

/* A plan direction at idx for run_street: nil (*has = 0), or a table of two finite numbers
 * whose square length is at least 1e-24 (what psdl.builder's trusted street accepts); 0 when
 * it is anything else. */
static int run_dir(lua_State *L, int idx, double *out, int *has) {
    *has = 0;
    if (lua_isnil(L, idx)) return 1;
    if (!lua_istable(L, idx)) return 0;
    for (int i = 0; i < 2; i++) {
        int ok = 0;
        lua_rawgeti(L, idx, i + 1);
        out[i] = lua_type(L, -1) == LUA_TNUMBER ? (double)lua_tonumberx(L, -1, &ok) : 0;
        lua_pop(L, 1);
        if (!ok || !isfinite(out[i])) return 0;
    }
    *has = 1;
    return out[0] * out[0] + out[1] * out[1] >= 1e-24;
}

/* An end row at idx for run_street: nil, a flat x, y, z row of stride points (finite
 * numbers) or the same as a string of native doubles (core.junction_store's sections)
 * copied into row, its points in the other order when `reversed`; 0 when it is anything
 * else. */
static int run_row(lua_State *L, int idx, size_t stride, double *row, int *has, int reversed) {
    *has = 0;
    if (lua_isnil(L, idx)) return 1;
    if (lua_type(L, idx) == LUA_TSTRING) {
        size_t len;
        const char *b = lua_tolstring(L, idx, &len);
        if (len != 3 * stride * sizeof *row) return 0;
        for (size_t q = 0; q < 3 * stride; q++) {
            double v;
            memcpy(&v, b + q * sizeof v, sizeof v);
            if (!isfinite(v)) return 0;
            row[reversed ? 3 * (stride - 1 - q / 3) + q % 3 : q] = v;
        }
        *has = 1;
        return 1;
    }
    if (!lua_istable(L, idx) || lua_rawlen(L, idx) != 3 * stride) return 0;
    for (size_t q = 0; q < 3 * stride; q++) {
        int ok = 0;
        size_t to = reversed ? 3 * (stride - 1 - q / 3) + q % 3 : q;
        lua_rawgeti(L, idx, (lua_Integer)q + 1);
        row[to] = lua_type(L, -1) == LUA_TNUMBER ? (double)lua_tonumberx(L, -1, &ok) : 0;
        lua_pop(L, 1);
        if (!ok || !isfinite(row[to])) return 0;
    }
    *has = 1;
    return 1;
}

/***
 * A road run of psdl.city of one piece on the ground, in one call: its centre line (the
 * spline through its control points, as core.spline), its cross-sections with the
 * intersections' end rows (as core.street_rooms), the rooms it is cut into (room_length,
 * at most 120 sections a room: psdl.city.road's rule), their points pooled, and each room's
 * record (road 0x0, walkway 0x2 or divided road 0x8) pushed into the store into new rooms
 * of the store. Returns nothing, having changed nothing, when the run is not the usual case
 * (a control point or direction that is not a finite number, a spline that fails, a sample
 * beyond +-65,536 m, no length, sections clamped on a tight curve, fewer than 2 sections,
 * more than the 255 rooms a road record lists):
 * psdl.city then builds it the general way, which raises the message for it.
 * @function run_street
 * @tparam userdata vpool the builder's vertex Pool (dimension 3)
 * @tparam userdata store the builder's room store
 * @tparam table ctrl the control points, flat x, y, z
 * @tparam table profile as core.sections (road, walkway or divided)
 * @tparam table start_dir, end_dir end tangents {x, z} or nil
 * @tparam table start_section, end_section flat end rows (the profile's stride points, a list
 * of numbers or a string of native doubles as core.junction_store gives them) or nil;
 * the end row left to right of travel towards the run's end, or, with `end_outward`, as the
 * intersection there gives it (left to right of travel away from it: read in reverse)
 * @tparam table p numbers: spacing (m), max_angle (degrees, 0: default), half_width (m),
 * room_length (m), snap (m, 0: exact), group (texture group of the records), dgroup (the
 * divider group), divider type, divider value (m), aux (which divider parameters are
 * integers, as the store keeps them: 1 type, 8 value), caps (1: close the divider at the
 * start, 2: at the end)
 * @tparam[opt] boolean end_outward the end row's order (above)
 * @treturn integer the store number of the first new room
 * @treturn integer the rooms
 * @treturn table per room its outline (vertex references)
 * Bad arguments (not a pool, a store, a profile or a list of numbers) raise naming them.
 */
static int l_run_street(lua_State *L) {
    lua_settop(L, 10); /* scratch userdata go above the arguments */
    int end_outward = lua_toboolean(L, 10);
    check_pool(L, 1);
    if (((pool_box *)lua_touserdata(L, 1))->dim != 3) luaL_argerror(L, 1, "a vertex pool (dimension 3) expected");
    lpsdl_store(L, 2);
    luaL_checktype(L, 3, LUA_TTABLE);
    psdl_profile prof;
    get_profile(L, 4, &prof);
    if (prof.kind == PSDL_SECTION_SIDEWALK) luaL_argerror(L, 4, "profile.kind: road, walkway or divided expected");
    luaL_checktype(L, 9, LUA_TTABLE);
    double pv[RUN_NUMBERS + 1];
    for (int i = 1; i <= RUN_NUMBERS; i++) {
        pv[i] = arr_num(L, 9, (size_t)i, 9, "p");
        if (!isfinite(pv[i])) luaL_argerror(L, 9, lua_pushfstring(L, "p[%d]: a finite number expected", i));
    }
    if (!(pv[RUN_ROOM_LENGTH] > 0)) luaL_argerror(L, 9, "p[4]: room_length must be positive");
    if (!(pv[RUN_SNAP] >= 0)) luaL_argerror(L, 9, "p[5]: snap must be >= 0");
    if (!(pv[RUN_GROUP] >= 1 && pv[RUN_GROUP] <= PSDL_STORE_MAX && pv[RUN_GROUP] == floor(pv[RUN_GROUP])) ||
        !(pv[RUN_DGROUP] >= 0 && pv[RUN_DGROUP] <= PSDL_STORE_MAX && pv[RUN_DGROUP] == floor(pv[RUN_DGROUP])))
        luaL_argerror(L, 9, "p[6], p[7]: texture group numbers expected");
    if (!(pv[RUN_AUX] >= 0 && pv[RUN_AUX] <= 0xFFFF && pv[RUN_CAPS] >= 0 && pv[RUN_CAPS] <= 3))
        luaL_argerror(L, 9, "p[10], p[11]: aux 0..65535 and caps 0..3 expected");
    size_t stride = psdl_section_stride(prof.kind);
    /* the control points: plain finite numbers, else the general way */
    size_t len = (size_t)lua_rawlen(L, 3);
    if (len < 6 || len % 3 || len > ((size_t)1 << 24)) return 0;
    double *c = (double *)scratch(L, len, sizeof *c);
    for (size_t i = 0; i < len; i++) {
        int ok = 0;
        lua_rawgeti(L, 3, (lua_Integer)i + 1);
        c[i] = lua_type(L, -1) == LUA_TNUMBER ? (double)lua_tonumberx(L, -1, &ok) : 0;
        lua_pop(L, 1);
        if (!ok) return 0;
    }
    psdl_spline_opts o;
    memset(&o, 0, sizeof o);
    o.spacing = pv[RUN_SPACING];
    o.max_angle = pv[RUN_MAX_ANGLE];
    o.half_width = pv[RUN_HALF_WIDTH];
    double srow[18], erow[18];
    int hss, hes;
    if (!run_dir(L, 5, o.start_dir, &o.has_start_dir) || !run_dir(L, 6, o.end_dir, &o.has_end_dir) ||
        !run_row(L, 7, stride, srow, &hss, 0) || !run_row(L, 8, stride, erow, &hes, end_outward))
        return 0;
    /* the samples, in a block a userdata owns (an error leaves it to the collector) */
    reuse_box *own = (reuse_box *)lua_newuserdatauv(L, sizeof *own, 0);
    own->p = NULL, own->size = 0, own->busy = 0;
    luaL_setmetatable(L, REUSE);
    double *cl = NULL;
    size_t m = psdl_spline_alloc(&cl, c, len / 3, &o);
    nomem_check(L, m);
    own->p = cl;
    if (m == PSDL_GEOM_INVALID || m < 2 || m > ((size_t)1 << 24)) return 0;
    for (size_t i = 0; i < 3 * m; i++) /* (core.flat_check's test) */
        if (!(cl[i] >= -PSDL_MAX_COORDINATE && cl[i] <= PSDL_MAX_COORDINATE)) return 0;
    if (!(psdl_polyline_length(cl, m, 1) >= 1e-6)) return 0;
    /* rooms of about room_length, at most 120 sections each (psdl.city.road's split) */
    double plan = 0;
    for (size_t i = 1; i < m; i++) {
        double dx = cl[3 * i] - cl[3 * i - 3], dz = cl[3 * i + 2] - cl[3 * i - 1];
        plan = plan + sqrt(dx * dx + dz * dz);
    }
    double nr = floor(plan / pv[RUN_ROOM_LENGTH] + 0.5);
    if (nr < 1) nr = 1;
    double sp = ceil((double)(m - 1) / nr) + 1;
    size_t split = sp > 120 ? 120 : sp < 2 ? 2 : (size_t)sp;
    size_t nsb = psdl_sections_bound(m, &prof), owb;
    size_t nrb = psdl_street_rooms_bound(nsb / stride, stride, split, &owb);
    if (nsb > ((size_t)1 << 26) || owb > ((size_t)1 << 26)) luaL_error(L, "not enough memory");
    size_t bytes = 3 * nsb * sizeof(double) + (nsb + 2 * nrb + owb + 3 + nsb) * sizeof(uint32_t);
    if (psdl_street_rooms_bound(m, stride, split, NULL) > 255) return 0; /* more than a road record lists */
    reuse_box *box;
    double *sf = (double *)reuse_take(L, bytes, &box);
    if (!sf) sf = (double *)scratch(L, bytes, 1);
    uint32_t *refs = (uint32_t *)(sf + 3 * nsb), *ranges = refs + nsb, *outl = ranges + 2 * nrb;
    size_t clamped = 0, nsec = psdl_sections(sf, cl, m, &prof, o.has_start_dir ? o.start_dir : NULL,
                                             o.has_end_dir ? o.end_dir : NULL, &clamped) / stride;
    if (clamped > 0 || nsec < 2) {
        reuse_release(box);
        return 0;
    }
    if (hss) memcpy(sf, srow, 3 * stride * sizeof *sf);
    if (hes) memcpy(sf + 3 * (nsec - 1) * stride, erow, 3 * stride * sizeof *sf);
    pool_box *pb = (pool_box *)luaL_testudata(L, 1, POOL);
    if (!pb || !pb->pool) { /* a finalizer closed it during the allocations */
        reuse_release(box);
        check_pool(L, 1);
    }
    size_t nw, made = psdl_street_rooms(refs, ranges, outl, &nw, pb->pool, sf, nsec, stride, split, pv[RUN_SNAP]);
    if (made == PSDL_GEOM_NOMEM || made == PSDL_GEOM_INVALID || made == 0) {
        reuse_release(box);
        luaL_error(L, made == PSDL_GEOM_NOMEM ? "not enough memory (or the vertex pool is full)"
                                              : "the profile has no sections");
    }
    /* the rooms and their records, into the store (one word array reused a room) */
    psdl_store *st = (psdl_store *)lpsdl_store(L, 2);
    psdl_store_mark_t mark;
    psdl_store_mark(st, &mark);
    uint32_t *w = outl + owb; /* (3 + nsb words after the outlines: a room's references) */
    long first = 0;
    for (size_t k = 0; k < made; k++) {
        long room = psdl_store_add_room(st);
        int e = room < 0 ? (int)room : 0;
        if (!e) {
            if (k == 0) first = room;
            size_t a = ranges[2 * k], b = ranges[2 * k + 1], nref = (b - a + 1) * stride;
            for (size_t q = 0; q < nref; q++) w[q] = refs[a * stride + q] + 1;
            psdl_store_rec rec;
            memset(&rec, 0, sizeof rec);
            rec.group = (uint32_t)pv[RUN_GROUP];
            if (prof.kind == PSDL_SECTION_DIVIDED) {
                int caps = (int)pv[RUN_CAPS];
                rec.type = PSDL_STORE_DIVIDED_ROAD;
                rec.dgroup = (uint32_t)pv[RUN_DGROUP];
                rec.aux = (uint16_t)pv[RUN_AUX];
                rec.param[0] = pv[RUN_DTYPE];
                rec.param[1] = (k == 0 && (caps & 1)) ? 1.0 : 0.0;
                rec.param[2] = (k + 1 == made && (caps & 2)) ? 1.0 : 0.0;
                rec.param[3] = pv[RUN_DVALUE];
            } else {
                rec.type = prof.kind == PSDL_SECTION_WALKWAY ? PSDL_STORE_WALKWAY : PSDL_STORE_ROAD;
            }
            e = psdl_store_push(st, (size_t)room, &rec, w, nref);
        }
        if (e) {
            psdl_store_truncate(st, &mark);
            reuse_release(box);
            return luaL_error(L, e == PSDL_STORE_NOMEM ? "not enough memory" : "the store is full");
        }
    }
    lua_pushinteger(L, (lua_Integer)first);
    lua_pushinteger(L, (lua_Integer)made);
    lua_createtable(L, (int)made, 0);
    for (size_t k = 0, q = 0; k < made; k++) {
        push_indices(L, outl + q + 1, outl[q], 1);
        lua_rawseti(L, -2, (lua_Integer)k + 1);
        q += 1 + outl[q];
    }
    reuse_release(box);
    free(own->p);
    own->p = NULL;
    return 3;
}

/***
 * A room outline in plan, for overlap tests (psdl.city.network's `overlaps`): the points of
 * vertex references as `{x, z}` tables, a point within `eps` (in x and in z) of the last one
 * kept left out, and the box of all of them.
 * @function plan_outline
 * @tparam userdata vpool a vertex Pool (dimension 3)
 * @tparam table refs 1-based vertex references
 * @tparam[opt] number eps metres (1e-6)
 * @treturn table `{ {x, z}, ..., x0 =, z0 =, x1 =, z1 = }` (the box is +-huge when refs is empty)
 */
static int l_plan_outline(lua_State *L) {
    lua_settop(L, 3);
    pool_box *b = check_pool(L, 1);
    if (b->dim != 3) luaL_argerror(L, 1, "a vertex pool (dimension 3) expected");
    size_t n = arr_len(L, 2), count = psdl_pool_count(b->pool);
    double eps = luaL_optnumber(L, 3, 1e-6);
    double *xz = (double *)scratch(L, 2 * n, sizeof *xz); /* 4 */
    for (size_t i = 0; i < n; i++) {
        lua_Integer r = arr_int(L, 2, i + 1, 2, "refs", 1, (lua_Integer)count);
        const float *f = pool_data(L, b) + 3 * (size_t)(r - 1);
        xz[2 * i] = f[0];
        xz[2 * i + 1] = f[2];
    }
    double x0 = HUGE_VAL, z0 = HUGE_VAL, x1 = -HUGE_VAL, z1 = -HUGE_VAL, qx = 0, qz = 0;
    lua_createtable(L, (int)n, 4);
    lua_Integer k = 0;
    for (size_t i = 0; i < n; i++) {
        double x = xz[2 * i], z = xz[2 * i + 1];
        if (k == 0 || fabs(qx - x) > eps || fabs(qz - z) > eps) {
            lua_createtable(L, 2, 0);
            lua_pushnumber(L, x);
            lua_rawseti(L, -2, 1);
            lua_pushnumber(L, z);
            lua_rawseti(L, -2, 2);
            lua_rawseti(L, -2, ++k);
            qx = x, qz = z;
        }
        if (x < x0) x0 = x;
        if (x1 < x) x1 = x;
        if (z < z0) z0 = z;
        if (z1 < z) z1 = z;
    }
    lua_pushnumber(L, x0);
    lua_setfield(L, -2, "x0");
    lua_pushnumber(L, z0);
    lua_setfield(L, -2, "z0");
    lua_pushnumber(L, x1);
    lua_setfield(L, -2, "x1");
    lua_pushnumber(L, z1);
    lua_setfield(L, -2, "z1");
    return 1;
}

/***
 * Rooms of unrelated parts of a road network that overlap in plan, in one call
 * (psdl_room_overlaps, src/psdl_overlaps.h): psdl.city.network's `overlaps`. Each outline is
 * taken in plan as core.plan_outline takes it (a point within 1e-6 m in x and z of the last
 * one kept left out; the box of all of them); outlines of fewer than 3 points are left out.
 * @function room_overlaps
 * @tparam userdata vpool a vertex Pool (dimension 3)
 * @tparam table outlines the rooms' outlines (lists of vertex references)
 * @tparam table owners per outline, the number of its owner (1-based)
 * @tparam table ends per owner two numbers: a road's end nodes (owner numbers), or 0, 0 for
 * a node
 * @tparam[opt] number eps metres (0.05): how far polygons must overlap
 * @treturn table `{a1, b1, x1, z1, a2, ...}`: the owners of each overlapping pair (a: the
 * one whose outline comes first) and a point of the overlap; bad arguments raise naming them
 */
static int l_room_overlaps(lua_State *L) {
    lua_settop(L, 5); /* scratch userdata go above the arguments */
    pool_box *pb = check_pool(L, 1);
    if (pb->dim != 3) luaL_argerror(L, 1, "a vertex pool (dimension 3) expected");
    size_t n = arr_len(L, 2), n2 = arr_len(L, 4);
    if (arr_len(L, 3) != n) luaL_argerror(L, 3, "one owner per outline expected");
    if (n2 % 2) luaL_argerror(L, 4, "two numbers per owner expected");
    size_t nown = n2 / 2;
    double eps = luaL_optnumber(L, 5, 0.05);
    if (!(eps > 0 && eps < HUGE_VAL)) luaL_argerror(L, 5, "eps: a positive finite number expected");
    if (n >= PSDL_GRID_MAX_ID || nown >= PSDL_GRID_MAX_ID) luaL_argerror(L, 2, "too many outlines or owners");
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (lua_rawgeti(L, 2, (lua_Integer)i + 1) != LUA_TTABLE)
            luaL_argerror(L, 2, lua_pushfstring(L, "outlines[%I]: list of vertex references expected", (lua_Integer)i + 1));
        total += (size_t)lua_rawlen(L, -1);
        lua_pop(L, 1);
        if (total > ((size_t)1 << 28)) luaL_argerror(L, 2, "too many vertex references");
    }
    double *xz = (double *)scratch(L, 2 * total, sizeof *xz);        /* 6 */
    uint32_t *start = (uint32_t *)scratch(L, n + 1, sizeof *start);  /* 7 */
    double *box = (double *)scratch(L, 4 * n, sizeof *box);          /* 8 */
    uint32_t *owner = (uint32_t *)scratch(L, n, sizeof *owner);      /* 9 */
    uint32_t *ends = (uint32_t *)scratch(L, 2 * nown, sizeof *ends); /* 10 */
    reuse_box *own = (reuse_box *)lua_newuserdatauv(L, sizeof *own, 0); /* 11: frees the result */
    own->p = NULL, own->size = 0, own->busy = 0;
    luaL_setmetatable(L, REUSE);
    for (size_t o = 0; o < nown; o++) {
        lua_Integer a = arr_int(L, 4, 2 * o + 1, 4, "ends", 0, (lua_Integer)nown);
        lua_Integer b = arr_int(L, 4, 2 * o + 2, 4, "ends", 0, (lua_Integer)nown);
        if ((a == 0) != (b == 0))
            luaL_argerror(L, 4, lua_pushfstring(L, "ends[%I]: both 0 (a node) or both owners (a road) expected",
                                                (lua_Integer)(2 * o + 1)));
        ends[2 * o] = a ? (uint32_t)(a - 1) : PSDL_OVERLAP_NODE;
        ends[2 * o + 1] = b ? (uint32_t)(b - 1) : PSDL_OVERLAP_NODE;
    }
    for (size_t i = 0; i < n; i++) owner[i] = (uint32_t)(arr_int(L, 3, i + 1, 3, "owners", 1, (lua_Integer)nown) - 1);
    pb = check_pool(L, 1); /* after the allocations (a finalizer may have closed it) */
    size_t count = psdl_pool_count(pb->pool), w = 0;
    const float *data = psdl_pool_data(pb->pool);
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 2, (lua_Integer)i + 1);
        int t = lua_gettop(L);
        size_t m = (size_t)lua_rawlen(L, t), k = 0;
        double x0 = HUGE_VAL, z0 = HUGE_VAL, x1 = -HUGE_VAL, z1 = -HUGE_VAL, qx = 0, qz = 0;
        start[i] = (uint32_t)w;
        for (size_t q = 0; q < m; q++) {
            lua_rawgeti(L, t, (lua_Integer)q + 1);
            int ok;
            lua_Integer r = lua_tointegerx(L, -1, &ok);
            lua_pop(L, 1);
            if (!ok || r < 1 || (lua_Unsigned)r > count)
                luaL_argerror(L, 2, lua_pushfstring(L, "outlines[%I][%I]: vertex reference in 1..%I expected",
                                                    (lua_Integer)i + 1, (lua_Integer)q + 1, (lua_Integer)count));
            const float *f = data + 3 * (size_t)(r - 1);
            double x = f[0], z = f[2];
            if (k == 0 || fabs(qx - x) > 1e-6 || fabs(qz - z) > 1e-6) {
                xz[2 * w] = x, xz[2 * w + 1] = z;
                w++, k++;
                qx = x, qz = z;
            }
            if (x < x0) x0 = x;
            if (x1 < x) x1 = x;
            if (z < z0) z0 = z;
            if (z1 < z) z1 = z;
        }
        lua_pop(L, 1);
        if (k < 3) x0 = z0 = x1 = z1 = 0; /* left out (the kernel skips fewer than 3 points) */
        box[4 * i] = x0, box[4 * i + 1] = z0, box[4 * i + 2] = x1, box[4 * i + 3] = z1;
    }
    start[n] = (uint32_t)w;
    psdl_overlap *res;
    size_t nres;
    int e = psdl_room_overlaps(&res, &nres, xz, start, box, owner, n, ends, nown, eps, 40);
    if (e == PSDL_OVERLAPS_NOMEM) luaL_error(L, "not enough memory");
    if (e) luaL_argerror(L, 4, "the owners' ends are not roads between nodes, or a room is too large for the grid");
    own->p = res; /* freed by the collector if a push below raises */
    lua_createtable(L, (int)(4 * nres), 0);
    for (size_t r = 0; r < nres; r++) {
        lua_pushinteger(L, (lua_Integer)res[r].a + 1);
        lua_rawseti(L, -2, (lua_Integer)(4 * r + 1));
        lua_pushinteger(L, (lua_Integer)res[r].b + 1);
        lua_rawseti(L, -2, (lua_Integer)(4 * r + 2));
        lua_pushnumber(L, res[r].x);
        lua_rawseti(L, -2, (lua_Integer)(4 * r + 3));
        lua_pushnumber(L, res[r].z);
        lua_rawseti(L, -2, (lua_Integer)(4 * r + 4));
    }
    free(res);
    own->p = NULL;
    return 1;
}

/* frees a psdl_net_conflicts result left in a userdata when a push raises */
static int conflicts_gc(lua_State *L) {
    psdl_conflicts_free((psdl_net_conflicts *)lua_touserdata(L, 1));
    return 0;
}

/***
 * The conflicts of a road network before anything is built, in one call
 * (psdl_network_conflicts, src/psdl_conflicts.h): psdl.city.network's `conflicts`.
 * @function network_conflicts
 * @tparam table pts the roads' plan polylines, one after the other, as a flat
 * `{x1, z1, y1, x2, ...}` array (metres; x and z finite; y, any number, only for a
 * crossing's height)
 * @tparam table starts per road the number of its first point (1-based), then one past the
 * last point: road r has the points starts[r] .. starts[r + 1] - 1 (at least 2)
 * @tparam table roads per road 7 numbers: its index (pairs are tested from the lower), its
 * end nodes (1-based), half width (m), level (1: a bridge or tunnel), in the small grid
 * (1/0), meets only the small grid (1/0)
 * @tparam table nodes per node 5 numbers: x, z, reach (m), active (1: tested), meets only
 * the small grid (1/0)
 * @tparam boolean small whether there is a small grid (psdl.city.repair's re-check)
 * @tparam[opt] number cell grid cell (m, 50)
 * @treturn table levels `{lv, other, x, z, half, ...}` (road numbers 1-based)
 * @treturn table crosses `{a, b, x, z, sa, sb, y, ...}`
 * @treturn table touches `{node, road, d, s, x, z, dx, dz, ...}`
 * Bad arguments raise naming them.
 */
static int l_network_conflicts(lua_State *L) {
    lua_settop(L, 6); /* scratch userdata go above the arguments */
    size_t np = arr_len(L, 1), ns = arr_len(L, 2), nr7 = arr_len(L, 3), nn5 = arr_len(L, 4);
    int use_small = lua_toboolean(L, 5);
    double cell = luaL_optnumber(L, 6, 50);
    if (!(cell > 0 && cell < HUGE_VAL)) luaL_argerror(L, 6, "cell: a positive finite number expected");
    if (np % 3) luaL_argerror(L, 1, "a flat array of x, z, y expected");
    if (nr7 % 7) luaL_argerror(L, 3, "7 numbers per road expected");
    if (nn5 % 5) luaL_argerror(L, 4, "5 numbers per node expected");
    size_t npts = np / 3, nroads = nr7 / 7, nnodes = nn5 / 5;
    if (ns != nroads + 1) luaL_argerror(L, 2, "one start per road and one past the last point expected");
    if (npts >= PSDL_GRID_MAX_ID || nnodes >= PSDL_GRID_MAX_ID) luaL_argerror(L, 1, "too many points or nodes");
    double *pts = (double *)scratch(L, np, sizeof *pts);                       /* 7 */
    uint32_t *start = (uint32_t *)scratch(L, nroads + 1, sizeof *start);       /* 8 */
    psdl_net_road *roads = (psdl_net_road *)scratch(L, nroads, sizeof *roads); /* 9 */
    psdl_net_node *nodes = (psdl_net_node *)scratch(L, nnodes, sizeof *nodes); /* 10 */
    for (size_t i = 0; i < np; i++) {
        pts[i] = arr_num(L, 1, i + 1, 1, "pts");
        if (i % 3 != 2 && !(fabs(pts[i]) < HUGE_VAL)) /* (a height is only carried to a crossing) */
            luaL_argerror(L, 1, lua_pushfstring(L, "pts[%I]: finite number expected", (lua_Integer)i + 1));
    }
    lua_Integer prev = 1;
    for (size_t r = 0; r <= nroads; r++) {
        lua_Integer v = arr_int(L, 2, r + 1, 2, "starts", prev, (lua_Integer)npts + 1);
        if (r > 0 && v < prev + 2)
            luaL_argerror(L, 2, lua_pushfstring(L, "starts[%I]: a road of 2 or more points expected", (lua_Integer)r));
        start[r] = (uint32_t)(v - 1);
        prev = v;
    }
    if (nroads > 0 && start[nroads] != npts) luaL_argerror(L, 2, "the last start must be one past the last point");
    for (size_t r = 0; r < nroads; r++) {
        size_t b = 7 * r;
        psdl_net_road *rd = &roads[r];
        rd->index = arr_int(L, 3, b + 1, 3, "roads", LUA_MININTEGER, LUA_MAXINTEGER);
        rd->a = (uint32_t)(arr_int(L, 3, b + 2, 3, "roads", 1, (lua_Integer)nnodes) - 1);
        rd->b = (uint32_t)(arr_int(L, 3, b + 3, 3, "roads", 1, (lua_Integer)nnodes) - 1);
        rd->hw = arr_num(L, 3, b + 4, 3, "roads");
        if (!(rd->hw >= 0 && rd->hw < HUGE_VAL))
            luaL_argerror(L, 3, lua_pushfstring(L, "roads[%I]: a half width >= 0 expected", (lua_Integer)(b + 4)));
        rd->level = arr_int(L, 3, b + 5, 3, "roads", 0, 1) != 0;
        rd->in_small = arr_int(L, 3, b + 6, 3, "roads", 0, 1) != 0;
        rd->query_small = arr_int(L, 3, b + 7, 3, "roads", 0, 1) != 0;
    }
    for (size_t n = 0; n < nnodes; n++) {
        size_t b = 5 * n;
        psdl_net_node *nd = &nodes[n];
        nd->x = arr_num(L, 4, b + 1, 4, "nodes");
        nd->z = arr_num(L, 4, b + 2, 4, "nodes");
        nd->reach = arr_num(L, 4, b + 3, 4, "nodes");
        if (!(fabs(nd->x) < HUGE_VAL && fabs(nd->z) < HUGE_VAL && nd->reach >= 0 && nd->reach < HUGE_VAL))
            luaL_argerror(L, 4, lua_pushfstring(L, "nodes[%I]: finite x, z and a reach >= 0 expected", (lua_Integer)b + 1));
        nd->active = arr_int(L, 4, b + 4, 4, "nodes", 0, 1) != 0;
        nd->query_small = arr_int(L, 4, b + 5, 4, "nodes", 0, 1) != 0;
    }
    psdl_net_conflicts *res = (psdl_net_conflicts *)lua_newuserdatauv(L, sizeof *res, 0); /* 11 */
    memset(res, 0, sizeof *res);
    lua_createtable(L, 0, 1); /* its results are freed by the collector if a push below raises */
    lua_pushcfunction(L, conflicts_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    int e = psdl_network_conflicts(res, pts, start, roads, nroads, nodes, nnodes, use_small, cell);
    if (e == PSDL_CONFLICTS_NOMEM) luaL_error(L, "not enough memory");
    if (e) luaL_argerror(L, 1, "a point not finite, or a road too large for the grid");
    lua_createtable(L, (int)(5 * res->nlevels), 0);
    for (size_t k = 0; k < res->nlevels; k++) {
        const psdl_net_level *it = &res->levels[k];
        lua_Integer i = (lua_Integer)(5 * k);
        lua_pushinteger(L, (lua_Integer)it->lv + 1), lua_rawseti(L, -2, i + 1);
        lua_pushinteger(L, (lua_Integer)it->other + 1), lua_rawseti(L, -2, i + 2);
        lua_pushnumber(L, it->x), lua_rawseti(L, -2, i + 3);
        lua_pushnumber(L, it->z), lua_rawseti(L, -2, i + 4);
        lua_pushnumber(L, it->half), lua_rawseti(L, -2, i + 5);
    }
    lua_createtable(L, (int)(7 * res->ncrosses), 0);
    for (size_t k = 0; k < res->ncrosses; k++) {
        const psdl_net_cross *it = &res->crosses[k];
        lua_Integer i = (lua_Integer)(7 * k);
        lua_pushinteger(L, (lua_Integer)it->a + 1), lua_rawseti(L, -2, i + 1);
        lua_pushinteger(L, (lua_Integer)it->b + 1), lua_rawseti(L, -2, i + 2);
        lua_pushnumber(L, it->x), lua_rawseti(L, -2, i + 3);
        lua_pushnumber(L, it->z), lua_rawseti(L, -2, i + 4);
        lua_pushnumber(L, it->sa), lua_rawseti(L, -2, i + 5);
        lua_pushnumber(L, it->sb), lua_rawseti(L, -2, i + 6);
        lua_pushnumber(L, it->y), lua_rawseti(L, -2, i + 7);
    }
    lua_createtable(L, (int)(8 * res->ntouches), 0);
    for (size_t k = 0; k < res->ntouches; k++) {
        const psdl_net_touch *it = &res->touches[k];
        lua_Integer i = (lua_Integer)(8 * k);
        lua_pushinteger(L, (lua_Integer)it->node + 1), lua_rawseti(L, -2, i + 1);
        lua_pushinteger(L, (lua_Integer)it->road + 1), lua_rawseti(L, -2, i + 2);
        lua_pushnumber(L, it->d), lua_rawseti(L, -2, i + 3);
        lua_pushnumber(L, it->s), lua_rawseti(L, -2, i + 4);
        lua_pushnumber(L, it->x), lua_rawseti(L, -2, i + 5);
        lua_pushnumber(L, it->z), lua_rawseti(L, -2, i + 6);
        lua_pushnumber(L, it->dx), lua_rawseti(L, -2, i + 7);
        lua_pushnumber(L, it->dz), lua_rawseti(L, -2, i + 8);
    }
    psdl_conflicts_free(res);
    return 3;
}

/* ================================================================ fans */

/* core.triangulate(pts [, holes]) -> {i1, i2, i3, ...}: ear-clipping triangles (1-based
 * point indices, 3 per triangle, retail winding) of the polygon pts: the outer ring, then
 * holes starting at the 1-based indices in holes (increasing, 2..#points, else raises). */
static int l_triangulate(lua_State *L) {
    lua_settop(L, 2); /* scratch userdata go above the arguments */
    size_t n, nh;
    double *p = get_points(L, 1, &n, "pts");
    uint32_t *h = get_holes(L, 2, n, &nh);
    uint32_t *t = (uint32_t *)scratch(L, 3 * psdl_triangulate_bound(n, nh), sizeof *t);
    size_t nt = psdl_triangulate(t, p, n, h, nh);
    nomem_check(L, nt);
    holes_check(L, nt, 2);
    push_indices(L, t, 3 * nt, 1);
    return 1;
}

/* core.fans(pts [, holes [, no_extra]]) -> {{hub, rim...}, ...}, extra: triangle fans
 * covering the polygon (1-based indices, convex pieces in retail winding, psdl_fans); an
 * index past the points names extra (flat x, y, z of added hub points, none when no_extra). */
static int l_fans(lua_State *L) {
    lua_settop(L, 3); /* scratch userdata go above the arguments */
    size_t n, nh;
    double *p = get_points(L, 1, &n, "pts");
    uint32_t *h = get_holes(L, 2, n, &nh);
    unsigned flags = lua_toboolean(L, 3) ? PSDL_FANS_NO_EXTRA : 0;
    size_t fb = psdl_fans_bound(n, nh);
    uint32_t *f = (uint32_t *)scratch(L, fb, sizeof *f);
    double *extra = (double *)scratch(L, 3 * (n + 2 * nh + 1), sizeof *extra);
    size_t ne = 0, w = psdl_fans(f, extra, &ne, p, n, h, nh, flags);
    nomem_check(L, w);
    holes_check(L, w, 2);
    lua_newtable(L);
    lua_Integer k = 0;
    for (size_t i = 0; i < w;) {
        size_t m = f[i];
        push_indices(L, f + i + 1, m, 1);
        lua_rawseti(L, -2, ++k);
        i += 1 + m;
    }
    push_points(L, extra, ne);
    return 2;
}

/***
 * One perimeter ring for a polygon with holes (psdl_keyhole): the outer ring in retail
 * winding, each hole joined through a zero-width keyhole cut.
 * @function keyhole
 * @tparam table pts flat x, y, z: the outer ring, then the holes
 * @tparam[opt] table holes 1-based start of each hole in pts
 * @treturn table 1-based point indices (bridge ends repeated)
 */
static int l_keyhole(lua_State *L) {
    lua_settop(L, 2); /* scratch userdata go above the arguments */
    size_t n, nh;
    double *p = get_points(L, 1, &n, "pts");
    uint32_t *h = get_holes(L, 2, n, &nh);
    uint32_t *d = (uint32_t *)scratch(L, psdl_keyhole_bound(n, nh), sizeof *d);
    size_t w = psdl_keyhole(d, p, n, h, nh);
    nomem_check(L, w);
    if (w == PSDL_GEOM_INVALID) luaL_argerror(L, 2, "a hole lies outside the outer ring");
    push_indices(L, d, w, 1);
    return 1;
}

/***
 * Where an open polyline first meets itself: crossing, or a point on another segment
 * (psdl_polyline_crossing; psdl.city.network.self_crossing uses it).
 * @function polyline_crossing
 * @param pts flat x, y, z array (plan x, z) or a vertex Pool
 * @return nil when it is simple, else x, z of the meeting point and the 1-based numbers of
 * the points at the ends of the two segments that meet (k1, k2 of the first, k3, k4 of the
 * second)
 */
static int l_polyline_crossing(lua_State *L) {
    lua_settop(L, 1); /* scratch userdata go above the argument */
    size_t n;
    double *p = get_points(L, 1, &n, "pts");
    uint32_t k[4];
    double at[2];
    size_t r = psdl_polyline_crossing(k, at, p, n);
    nomem_check(L, r);
    if (!r) {
        lua_pushnil(L);
        return 1;
    }
    lua_pushnumber(L, at[0]);
    lua_pushnumber(L, at[1]);
    for (int i = 0; i < 4; i++) lua_pushinteger(L, (lua_Integer)k[i] + 1);
    return 6;
}

/***
 * First proper crossing between two edges of a polygon with holes (psdl_self_crossing).
 * @function self_crossing
 * @tparam table pts flat x, y, z: the outer ring, then the holes
 * @tparam[opt] table holes 1-based hole starts
 * @tparam[opt] number tol metres (1e-6)
 * @return nil when no two edges cross, else the two 1-based edge numbers (edge k runs from
 * point k to the next point of its ring)
 */
static int l_self_crossing(lua_State *L) {
    lua_settop(L, 3); /* scratch userdata go above the arguments */
    size_t n, nh;
    double *p = get_points(L, 1, &n, "pts");
    uint32_t *h = get_holes(L, 2, n, &nh);
    double tol = luaL_optnumber(L, 3, 1e-6);
    uint32_t e[2];
    size_t r = psdl_self_crossing(e, p, n, h, nh, tol);
    nomem_check(L, r);
    holes_check(L, r, 2);
    return lpsdl_push_edges(L, r != 0, e);
}

/***
 * Whether a ring is simple with a margin (psdl_ring_simple).
 * @function ring_simple
 * @tparam table pts flat x, y, z ring
 * @tparam[opt] number touch metres (1e-3): edges that are not neighbours must stay this far apart
 * @treturn boolean
 */
static int l_ring_simple(lua_State *L) {
    lua_settop(L, 2); /* scratch userdata go above the arguments */
    size_t n;
    double *p = get_points(L, 1, &n, "pts");
    size_t r = psdl_ring_simple(p, n, luaL_optnumber(L, 2, 1e-3));
    nomem_check(L, r);
    lua_pushboolean(L, r == 1);
    return 1;
}

/***
 * Whether points stay inside a polygon (psdl_first_outside).
 * @function first_outside
 * @tparam table poly flat x, y, z polygon (a keyhole ring works)
 * @tparam table pts flat x, y, z points
 * @tparam[opt] boolean closed the points form a ring
 * @tparam[opt] number eps metres (0.005): tolerance at the boundary
 * @return nil when inside, else the 1-based index of the first point outside (or of the
 * first point of the first edge leaving)
 */
static int l_first_outside(lua_State *L) {
    lua_settop(L, 4); /* scratch userdata go above the arguments */
    size_t n, m;
    const double *poly = get_points_ro(L, 1, &n, "poly");
    const double *p = get_points_ro(L, 2, &m, "pts");
    size_t r = psdl_first_outside(poly, n, p, m, lua_toboolean(L, 3), luaL_optnumber(L, 4, 0.005));
    nomem_check(L, r);
    if (r == 0) lua_pushnil(L);
    else lua_pushinteger(L, (lua_Integer)r);
    return 1;
}


/* ================================================================ facades */

/* core.light_index(dx, dz) -> 0..63: the light-table index of a wall whose base runs in
 * plan direction (dx, dz) (§2.4 0x7). */
static int l_light_index(lua_State *L) {
    lua_settop(L, 2); /* scratch userdata go above the arguments */
    lua_pushinteger(L, (lua_Integer)psdl_light_index(luaL_checknumber(L, 1), luaL_checknumber(L, 2)));
    return 1;
}

/* core.facades(pts, opts) -> {{left, right, u, v, light, run, sloped}, ...}: the facade
 * layout along an outline (psdl_facades): left / right 1-based point indices, u / v texture
 * repeats, light index, run = starts a wall run, sloped = the ground dips below `bottom`.
 * opts = {floor_height (m, 3), bay_width (m, 4), bottom, top (m), collinear (degrees, 1),
 * closed}. */
static int l_facades(lua_State *L) {
    lua_settop(L, 2); /* scratch userdata go above the arguments */
    size_t n;
    double *p = get_points(L, 1, &n, "pts");
    luaL_checktype(L, 2, LUA_TTABLE);
    psdl_facade_opts o;
    memset(&o, 0, sizeof o);
    o.floor_height = opt_field_num(L, 2, "floor_height", 0);
    o.bay_width = opt_field_num(L, 2, "bay_width", 0);
    o.bottom = opt_field_num(L, 2, "bottom", 0);
    o.top = opt_field_num(L, 2, "top", 0);
    o.collinear_deg = opt_field_num(L, 2, "collinear", 0);
    lua_getfield(L, 2, "closed");
    o.closed = lua_toboolean(L, -1);
    lua_pop(L, 1);
    lua_getfield(L, 2, "flat");
    int flat = lua_toboolean(L, -1);
    lua_pop(L, 1);
    size_t nb = psdl_facades_bound(n, o.closed);
    uint32_t *d = (uint32_t *)scratch(L, 6 * nb, sizeof *d);
    size_t ns = psdl_facades(d, p, n, &o);
    if (flat) { /* {left, right, u, v, light, flags, ...}: flags 1 run, 2 sloped */
        lua_createtable(L, (int)(6 * ns), 0);
        for (size_t i = 0; i < 6 * ns; i++) {
            lua_pushinteger(L, (lua_Integer)d[i] + (i % 6 < 2 ? 1 : 0));
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        return 1;
    }
    lua_createtable(L, (int)ns, 0);
    static const char *const keys[] = {"left", "right", "u", "v", "light"};
    for (size_t i = 0; i < ns; i++) {
        lua_createtable(L, 0, 7);
        for (int k = 0; k < 5; k++) {
            lua_pushinteger(L, (lua_Integer)d[6 * i + (size_t)k] + (k < 2 ? 1 : 0));
            lua_setfield(L, -2, keys[k]);
        }
        lua_pushboolean(L, d[6 * i + 5] & 1);
        lua_setfield(L, -2, "run");
        lua_pushboolean(L, (d[6 * i + 5] & 2) != 0);
        lua_setfield(L, -2, "sloped");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

/***
 * A building's attributes (psdl_building): its points and heights pooled as the builder's
 * attribute calls would add them.
 * @function building
 * @param vpool vertex Pool
 * @param hpool height Pool (dimension 1)
 * @tparam table pts flat x, y, z outline (retail winding when closed)
 * @tparam table opts `base`, `top`, `floor_height`, `ground_height`, `bay_width`,
 * `sliver_density`, `snap`, `closed`
 * @treturn table 6 numbers per attribute: kind (1 bound, 2 sliver, 3 ground facade, 4 upper
 * facade), two vertex references, two height references (bound: top, 0), light (bound) or u
 * @treturn table|nil closed: `{m, refs..., m, refs..., height reference}` (fans, hub first)
 */
static int l_building(lua_State *L) {
    lua_settop(L, 4); /* scratch userdata go above the arguments */
    pool_box *vb = check_pool(L, 1), *hb = check_pool(L, 2);
    if (vb->dim != 3) luaL_argerror(L, 1, "a vertex pool (dimension 3) expected");
    if (hb->dim != 1) luaL_argerror(L, 2, "a height pool (dimension 1) expected");
    size_t n;
    const double *p = get_points(L, 3, &n, "pts");
    luaL_checktype(L, 4, LUA_TTABLE);
    psdl_building_opts o;
    memset(&o, 0, sizeof o);
    o.base = opt_field_num(L, 4, "base", 0);
    o.top = opt_field_num(L, 4, "top", 0);
    o.floor_height = opt_field_num(L, 4, "floor_height", 0);
    o.ground_height = opt_field_num(L, 4, "ground_height", 0);
    o.bay_width = opt_field_num(L, 4, "bay_width", 0);
    o.sliver_density = opt_field_num(L, 4, "sliver_density", 0.25);
    o.snap = opt_field_num(L, 4, "snap", 0);
    lua_getfield(L, 4, "closed");
    o.closed = lua_toboolean(L, -1);
    lua_pop(L, 1);
    size_t rb;
    size_t ob = psdl_building_bound(n, o.closed, &rb);
    uint32_t *ops = (uint32_t *)scratch(L, ob, sizeof *ops);
    uint32_t *roof = (uint32_t *)scratch(L, rb + 1, sizeof *roof);
    size_t nroof = 0;
    /* the allocations above may have run a finalizer that closed a pool; the kernel calls no
     * Lua */
    check_pool(L, 1);
    check_pool(L, 2);
    size_t na = psdl_building(ops, roof, &nroof, vb->pool, hb->pool, p, n, &o);
    nomem_check(L, na);
    lua_createtable(L, (int)(6 * na), 0);
    for (size_t i = 0; i < na; i++) {
        const uint32_t *a = ops + 6 * i;
        /* vertex and height references 1-based; a bound's unused second height stays 0 */
        lua_Integer v[6] = {a[0], (lua_Integer)a[1] + 1, (lua_Integer)a[2] + 1, (lua_Integer)a[3] + 1,
                            a[0] == PSDL_BUILDING_BOUND ? 0 : (lua_Integer)a[4] + 1, a[5]};
        for (int f = 0; f < 6; f++) {
            lua_pushinteger(L, v[f]);
            lua_rawseti(L, -2, (lua_Integer)(6 * i) + f + 1);
        }
    }
    if (!o.closed) return 1;
    lua_createtable(L, (int)nroof, 0);
    lua_Integer w = 0;
    size_t i = 0;
    while (i + 1 < nroof) { /* fans: [m, refs...]; the last word is the height */
        size_t m = roof[i];
        lua_pushinteger(L, (lua_Integer)m);
        lua_rawseti(L, -2, ++w);
        for (size_t q = 1; q <= m; q++) {
            lua_pushinteger(L, (lua_Integer)roof[i + q] + 1);
            lua_rawseti(L, -2, ++w);
        }
        i += 1 + m;
    }
    if (nroof) {
        lua_pushinteger(L, (lua_Integer)roof[nroof - 1] + 1);
        lua_rawseti(L, -2, ++w);
    }
    return 2;
}

/* ================================================================ junctions */

/* The junction of arms[0 .. na-1] and options o built into *j, in one block (the kept one
 * when free, else scratch userdata pushed on the stack); with extra, *extra receives room
 * for a pool reference per point and the fans of the surface (core.junction_room). Arms
 * that cannot be joined raise naming argument argarms. */
static void junction_build(lua_State *L, int argarms, psdl_junction *j, const psdl_arm *arms, size_t na,
                           const psdl_junction_opts *o, reuse_box **box, uint32_t **extra) {
    psdl_junction_sizes cap;
    psdl_junction_bound(&cap, arms, na, o);
    /* one block: the doubles first, then the words (the caller's extra words last) */
    size_t nd = 3 * cap.points + na;
    size_t extra_words = extra ? cap.points + psdl_fans_bound(cap.surface, 0) : 0;
    size_t nw = cap.surface + cap.sections + cap.strips + 4 * cap.crosswalks + cap.outline + extra_words;
    if (nd > ((size_t)1 << 26) || nw > ((size_t)1 << 26)) luaL_error(L, "not enough memory");
    size_t bytes = nd * sizeof(double) + nw * sizeof(uint32_t);
    double *dp = (double *)reuse_take(L, bytes, box);
    if (!dp) dp = (double *)scratch(L, bytes, 1);
    j->points = dp;
    j->distance = dp + 3 * cap.points;
    uint32_t *wp = (uint32_t *)(dp + nd);
    j->surface = wp, wp += cap.surface;
    j->sections = wp, wp += cap.sections;
    j->strips = wp, wp += cap.strips;
    j->crosswalks = wp, wp += 4 * cap.crosswalks;
    j->outline = wp, wp += cap.outline;
    if (extra) *extra = wp;
    size_t r = psdl_junction_build(j, arms, na, o);
    if (r == PSDL_GEOM_NOMEM || r == PSDL_GEOM_INVALID) reuse_release(*box);
    nomem_check(L, r);
    if (r == PSDL_GEOM_INVALID)
        luaL_argerror(L, argarms, "arms cannot be joined (two arms less than 1 degree apart, a zero direction, a negative "
                                  "width, or a value that is not a finite number)");
}

/* The arguments of core.junction at c (center), c + 1 (arms), c + 2 (opts) read and the
 * junction built into *j (junction_build); returns the arms (*na of them, in scratch).
 * Bad arguments raise naming them. */
static psdl_arm *junction_args(lua_State *L, int c, psdl_junction *j, size_t *na_out, reuse_box **box,
                               uint32_t **extra) {
    psdl_junction_opts o;
    memset(&o, 0, sizeof o);
    luaL_checktype(L, c, LUA_TTABLE);
    for (int i = 0; i < 3; i++) o.center[i] = arr_num(L, c, (size_t)i + 1, c, "center");
    size_t na = arr_len(L, c + 1);
    if (na == 0) luaL_argerror(L, c + 1, "at least one arm expected");
    if (na > 4096) luaL_argerror(L, c + 1, "at most 4096 arms expected");
    int t = lua_istable(L, c + 2) ? c + 2 : 0;
    o.radius = opt_field_num(L, t, "radius", 0);
    o.arc_step = opt_field_num(L, t, "arc_step", 0);
    o.curb = opt_field_num(L, t, "curb", -1);
    if (!isfinite(o.radius) || !isfinite(o.arc_step) || !isfinite(o.curb))
        luaL_argerror(L, c + 2, "radius, arc_step and curb must be finite numbers");
    psdl_arm *arms = (psdl_arm *)scratch(L, na, sizeof *arms);
    for (size_t i = 0; i < na; i++) {
        lua_rawgeti(L, c + 1, (lua_Integer)i + 1);
        int a = lua_gettop(L);
        if (!lua_istable(L, a)) luaL_argerror(L, c + 1, lua_pushfstring(L, "arms[%I]: table expected", (lua_Integer)i + 1));
        memset(&arms[i], 0, sizeof arms[i]);
        if (!opt_vec2(L, a, "dir", arms[i].dir))
            luaL_argerror(L, c + 1, lua_pushfstring(L, "arms[%I].dir: {x, z} expected", (lua_Integer)i + 1));
        lua_getfield(L, a, "profile");
        if (!lua_istable(L, -1))
            luaL_argerror(L, c + 1, lua_pushfstring(L, "arms[%I].profile: table expected", (lua_Integer)i + 1));
        get_profile(L, lua_gettop(L), &arms[i].profile);
        lua_pop(L, 1);
        arms[i].crosswalk = opt_field_num(L, a, "crosswalk", 0);
        arms[i].min_distance = opt_field_num(L, a, "min_distance", 0);
        lua_pop(L, 1);
    }
    junction_build(L, c + 1, j, arms, na, &o, box, extra);
    *na_out = na;
    return arms;
}

/* psdl_junction_pool of the built junction j into the Pool at pool_idx (refs: a reference
 * per point, then the fans); returns the fans' words. Raises (the kept block released) when
 * the pool is closed or full, or the surface cannot be cut into fans. */
static size_t junction_pooled(lua_State *L, int pool_idx, const psdl_junction *j, uint32_t *refs, reuse_box *box,
                              double snap) {
    pool_box *pb = (pool_box *)luaL_testudata(L, pool_idx, POOL);
    if (!pb || !pb->pool) { /* a finalizer closed it during the allocations */
        reuse_release(box);
        check_pool(L, pool_idx);
    }
    size_t w = psdl_junction_pool(refs, refs + j->size.points, pb->pool, j, snap);
    if (w == PSDL_GEOM_NOMEM || w == PSDL_GEOM_INVALID) reuse_release(box);
    if (w == PSDL_GEOM_NOMEM) luaL_error(L, "not enough memory (or the vertex pool is full)");
    if (w == PSDL_GEOM_INVALID) luaL_error(L, "the intersection's surface cannot be cut into fans");
    return w;
}

/* Sets field "distance" of the table on top: the n distances d (m). */
static void push_junction_distance(lua_State *L, const double *d, size_t n) {
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_pushnumber(L, d[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "distance");
}

/* Pushes the distance list and the sidewalk strips {pairs, start_cap, end_cap} of j, their
 * indices mapped through map (NULL: the point indices) plus base; sets them as fields
 * "distance" and "strips" of the table on top. */
static void push_junction_strips(lua_State *L, const psdl_junction *j, size_t na, const uint32_t *map,
                                 lua_Integer base) {
    push_junction_distance(L, j->distance, na);
    lua_newtable(L);
    lua_Integer ns = 0;
    for (size_t w = 0; w < j->size.strips;) {
        uint32_t np = j->strips[w], caps = j->strips[w + 1];
        lua_createtable(L, 0, 3);
        lua_createtable(L, (int)(2 * np), 0);
        for (size_t k = 0; k < 2 * (size_t)np; k++) {
            uint32_t v = j->strips[w + 2 + k];
            lua_pushinteger(L, (lua_Integer)(map ? map[v] : v) + base);
            lua_rawseti(L, -2, (lua_Integer)k + 1);
        }
        lua_setfield(L, -2, "pairs");
        lua_pushboolean(L, caps & 1);
        lua_setfield(L, -2, "start_cap");
        lua_pushboolean(L, (caps & 2) != 0);
        lua_setfield(L, -2, "end_cap");
        lua_rawseti(L, -2, ++ns);
        w += 2 + 2 * (size_t)np;
    }
    lua_setfield(L, -2, "strips");
}

/* core.junction(center, arms [, opts]) -> {points, surface, outline, sections, distance,
 * strips, crosswalks}: an intersection at center {x, y, z} (psdl_junction_build). arms =
 * {{dir = {x, z}, profile = (as core.sections), crosswalk (m), min_distance (m)}, ...};
 * opts = {radius (m), arc_step (degrees), curb (m)}. points is flat; the rest are 1-based
 * indices into it: surface and outline rings, sections per arm, distance per arm (m),
 * strips {{pairs, start_cap, end_cap}, ...}, crosswalks {{c0, c1, c2, c3}, ...}. Arms that
 * cannot be joined or non-finite values raise. */
static int l_junction(lua_State *L) {
    lua_settop(L, 3); /* scratch userdata go above the arguments */
    psdl_junction j;
    size_t na;
    reuse_box *box;
    psdl_arm *arms = junction_args(L, 1, &j, &na, &box, NULL);
    lua_createtable(L, 0, 7);
    push_points(L, j.points, j.size.points);
    lua_setfield(L, -2, "points");
    push_indices(L, j.surface, j.size.surface, 1);
    lua_setfield(L, -2, "surface");
    push_indices(L, j.outline, j.size.outline, 1);
    lua_setfield(L, -2, "outline");
    lua_createtable(L, (int)na, 0);
    for (size_t i = 0, off = 0; i < na; i++) {
        size_t st = psdl_section_stride(arms[i].profile.kind);
        push_indices(L, j.sections + off, st, 1);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
        off += st;
    }
    lua_setfield(L, -2, "sections");
    push_junction_strips(L, &j, na, NULL, 1);
    lua_createtable(L, (int)j.size.crosswalks, 0);
    for (size_t c = 0; c < j.size.crosswalks; c++) {
        push_indices(L, j.crosswalks + 4 * c, 4, 1);
        lua_rawseti(L, -2, (lua_Integer)c + 1);
    }
    lua_setfield(L, -2, "crosswalks");
    reuse_release(box);
    return 1;
}

/* Pushes the list of the pool references (1-based) of point indices v[0 .. n-1]. */
static void push_mapped(lua_State *L, const uint32_t *v, size_t n, const uint32_t *map) {
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_pushinteger(L, (lua_Integer)map[v[i]] + 1);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

/* The records of a junction room as 32-bit words for the store ([type, cap, count, refs...]
 * each, in the order Builder:intersection emits them: the road fans of the surface, each
 * sidewalk strip with its start and end caps, the crosswalks), vertex references (1-based)
 * mapped through map; out NULL: only counted. Returns the words; *nf = the fans. */
static size_t junction_words(uint32_t *out, const psdl_junction *j, const uint32_t *map, const uint32_t *fans,
                             size_t nfw, size_t *nf) {
    size_t k = 0;
    *nf = 0;
#define PUT(v) (out ? (void)(out[k++] = (uint32_t)(v)) : (void)k++)
    for (size_t i = 0; i < nfw;) { /* fans: [m, refs...], 0-based pool entries */
        size_t m = fans[i];
        PUT(0x5), PUT(0), PUT(m);
        for (size_t q = 1; q <= m; q++) PUT(fans[i + q] + 1);
        i += 1 + m;
        ++*nf;
    }
    for (size_t w = 0; w < j->size.strips;) { /* [pairs, caps, point indices...] */
        uint32_t np = j->strips[w], caps = j->strips[w + 1];
        const uint32_t *v = j->strips + w + 2;
        size_t n2 = 2 * (size_t)np, nc = n2 < 2 ? n2 : 2; /* a cap: the first / last pair */
        if (caps & 1) {
            PUT(0x1), PUT(1), PUT(nc);
            for (size_t q = 0; q < nc; q++) PUT(map[v[q]] + 1);
        }
        PUT(0x1), PUT(0), PUT(n2);
        for (size_t q = 0; q < n2; q++) PUT(map[v[q]] + 1);
        if (caps & 2) {
            PUT(0x1), PUT(2), PUT(nc);
            for (size_t q = n2 - nc; q < n2; q++) PUT(map[v[q]] + 1);
        }
        w += 2 + n2;
    }
    for (size_t c = 0; c < j->size.crosswalks; c++) {
        PUT(0x4), PUT(0), PUT(4);
        for (int q = 0; q < 4; q++) PUT(map[j->crosswalks[4 * c + (size_t)q]] + 1);
    }
#undef PUT
    return k;
}

/* Sets fields "records" and "fans" of the table on top (core.junction_room with opts.records):
 * the room's records (junction_words) as one string of native 32-bit words for
 * store:push_flat, and the number of fans. A string: one object for the collector, 4 bytes
 * a word. */
static void junction_records(lua_State *L, const psdl_junction *j, const uint32_t *map, const uint32_t *fans,
                             size_t nfw) {
    size_t nf, words = junction_words(NULL, j, map, fans, nfw, &nf);
    uint32_t *out = (uint32_t *)scratch(L, words, sizeof *out);
    junction_words(out, j, map, fans, nfw, &nf);
    lua_pushlstring(L, (const char *)out, words * sizeof *out);
    lua_remove(L, -2); /* the scratch */
    lua_setfield(L, -2, "records");
    lua_pushinteger(L, (lua_Integer)nf);
    lua_setfield(L, -2, "fans");
}

/***
 * An intersection room's geometry in one call: core.junction's kernel (psdl_junction_build),
 * its points added to the vertex pool (snapped to `opts.snap` when given) and the road fans
 * of its surface (psdl_junction_pool), everything as vertex references: what
 * Builder:intersection emits.
 * @function junction_room
 * @tparam userdata vpool the builder's vertex Pool (dimension 3)
 * @tparam table center, arms, opts as core.junction (opts also `snap`, metres)
 * @treturn table `{outline = refs, fans = {refs (hub first)...}, strips = {{pairs = refs,
 * start_cap, end_cap}...}, crosswalks = {refs (4)...}, sections = {{{x, y, z}...} per arm,
 * left to right of outward travel}, distance = {m per arm}}`; with `opts.records` true, instead
 * of fans, strips and crosswalks: `records` (the fans, the sidewalk strips with their caps and
 * the crosswalks, in that order, as one string of native 32-bit words for store:push_flat)
 * and `fans` (how many fans); raises on bad arguments as core.junction does, on a pool that is
 * closed or full
 */
static int l_junction_room(lua_State *L) {
    lua_settop(L, 4); /* scratch userdata go above the arguments */
    pool_box *pb = check_pool(L, 1);
    if (pb->dim != 3) luaL_argerror(L, 1, "a vertex pool (dimension 3) expected");
    double snap = opt_field_num(L, lua_istable(L, 4) ? 4 : 0, "snap", 0);
    if (!(snap >= 0 && snap < HUGE_VAL)) luaL_argerror(L, 4, "snap: a finite number >= 0 expected");
    psdl_junction j;
    size_t na;
    reuse_box *box;
    uint32_t *refs; /* a pool reference per point, then the fans (in the same block) */
    psdl_arm *arms = junction_args(L, 2, &j, &na, &box, &refs);
    uint32_t *fans = refs + j.size.points;
    size_t w = junction_pooled(L, 1, &j, refs, box, snap);
    int flat_records = 0;
    if (lua_istable(L, 4)) {
        lua_getfield(L, 4, "records");
        flat_records = lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    lua_createtable(L, 0, 6);
    push_mapped(L, j.outline, j.size.outline, refs);
    lua_setfield(L, -2, "outline");
    if (flat_records) {
        junction_records(L, &j, refs, fans, w);
        push_junction_distance(L, j.distance, na);
    } else {
        lua_newtable(L);
        lua_Integer nf = 0;
        for (size_t i = 0; i < w;) {
            size_t m = fans[i];
            lua_createtable(L, (int)m, 0);
            for (size_t k = 1; k <= m; k++) {
                lua_pushinteger(L, (lua_Integer)fans[i + k] + 1);
                lua_rawseti(L, -2, (lua_Integer)k);
            }
            lua_rawseti(L, -2, ++nf);
            i += 1 + m;
        }
        lua_setfield(L, -2, "fans");
        push_junction_strips(L, &j, na, refs, 1);
        lua_createtable(L, (int)j.size.crosswalks, 0);
        for (size_t c = 0; c < j.size.crosswalks; c++) {
            push_mapped(L, j.crosswalks + 4 * c, 4, refs);
            lua_rawseti(L, -2, (lua_Integer)c + 1);
        }
        lua_setfield(L, -2, "crosswalks");
    }
    lua_createtable(L, (int)na, 0);
    for (size_t i = 0, off = 0; i < na; i++) {
        size_t st = psdl_section_stride(arms[i].profile.kind);
        lua_createtable(L, (int)st, 0);
        for (size_t k = 0; k < st; k++) {
            const double *p = j.points + 3 * (size_t)j.sections[off + k];
            lua_createtable(L, 3, 0);
            for (int d = 0; d < 3; d++) {
                lua_pushnumber(L, p[d]);
                lua_rawseti(L, -2, d + 1);
            }
            lua_rawseti(L, -2, (lua_Integer)k + 1);
        }
        lua_rawseti(L, -2, (lua_Integer)i + 1);
        off += st;
    }
    lua_setfield(L, -2, "sections");
    reuse_release(box);
    return 1;
}

/* A number argument at idx that must be finite (named `what` in the error). */
static double check_finite(lua_State *L, int idx, const char *what) {
    double v = (double)luaL_checknumber(L, idx);
    if (!isfinite(v)) luaL_argerror(L, idx, lua_pushfstring(L, "%s: a finite number expected", what));
    return v;
}

/***
 * An intersection room of psdl.city in one call: core.junction_room's kernel and pooling, its
 * records pushed straight into the builder's store (what store:push_flat of core.junction_room's
 * `records` adds), no table per arm and none per point.
 * @function junction_store
 * @tparam userdata vpool the builder's vertex Pool (dimension 3)
 * @tparam userdata store the builder's room store (core.store)
 * @tparam integer room the room (1-based, a room of the store) the records go to
 * @tparam integer group the texture group number of the records (>= 1)
 * @tparam number x, y, z the node (metres; the intersection is flat at y)
 * @tparam table arms flat, 5 values an arm: `dx, dz` (the plan direction outward), `profile`
 * (as core.sections, seen travelling outward), `crosswalk` (m), `min_distance` (m)
 * @tparam number radius curb corner radius (m)
 * @tparam number arc_step degrees (0: the kernel's default)
 * @tparam number snap metres (0: exact)
 * @treturn table outline (vertex references)
 * @treturn table distance (m, per arm: where its road starts)
 * @treturn table sections: per arm its end section (outward left to right) as one string of
 * 3 x stride native doubles (x, y, z per point: what core.run_street takes as an end row, one
 * object instead of a table of numbers; string.unpack("d", ...) reads it)
 * @treturn integer the road fans of the surface (0: nothing was pushed, the surface has no area)
 * Bad arguments raise naming them; arms that cannot be joined raise as core.junction_room.
 */
static int l_junction_store(lua_State *L) {
    lua_settop(L, 11); /* scratch userdata go above the arguments */
    check_pool(L, 1);
    if (((pool_box *)lua_touserdata(L, 1))->dim != 3) luaL_argerror(L, 1, "a vertex pool (dimension 3) expected");
    psdl_store *st = lpsdl_store(L, 2);
    lua_Integer room = luaL_checkinteger(L, 3), group = luaL_checkinteger(L, 4);
    if (room < 1 || (lua_Unsigned)room > psdl_store_rooms(st)) luaL_argerror(L, 3, "a room of the store expected");
    if (group < 1 || group > (lua_Integer)PSDL_STORE_MAX) luaL_argerror(L, 4, "a texture group number (>= 1) expected");
    psdl_junction_opts o;
    memset(&o, 0, sizeof o);
    o.center[0] = check_finite(L, 5, "x");
    o.center[1] = check_finite(L, 6, "y");
    o.center[2] = check_finite(L, 7, "z");
    size_t len = arr_len(L, 8);
    if (len == 0 || len % 5) luaL_argerror(L, 8, "arms: 5 values an arm expected (dx, dz, profile, crosswalk, min_distance)");
    size_t na = len / 5;
    if (na > 4096) luaL_argerror(L, 8, "at most 4096 arms expected");
    o.radius = check_finite(L, 9, "radius");
    o.arc_step = check_finite(L, 10, "arc_step");
    double snap = (double)luaL_checknumber(L, 11);
    if (!(snap >= 0 && snap < HUGE_VAL)) luaL_argerror(L, 11, "snap: a finite number >= 0 expected");
    o.curb = -1;
    psdl_arm arms_s[8]; /* (a node's arms: on the stack unless there are many) */
    psdl_arm *arms = na <= 8 ? arms_s : (psdl_arm *)scratch(L, na, sizeof *arms);
    for (size_t i = 0; i < na; i++) {
        memset(&arms[i], 0, sizeof arms[i]);
        arms[i].dir[0] = arr_num(L, 8, 5 * i + 1, 8, "arms");
        arms[i].dir[1] = arr_num(L, 8, 5 * i + 2, 8, "arms");
        if (lua_rawgeti(L, 8, (lua_Integer)(5 * i + 3)) != LUA_TTABLE)
            luaL_argerror(L, 8, lua_pushfstring(L, "arms[%I]: a profile table expected", (lua_Integer)(5 * i + 3)));
        get_profile(L, lua_gettop(L), &arms[i].profile);
        lua_pop(L, 1);
        arms[i].crosswalk = arr_num(L, 8, 5 * i + 4, 8, "arms");
        arms[i].min_distance = arr_num(L, 8, 5 * i + 5, 8, "arms");
    }
    psdl_junction j;
    reuse_box *box;
    uint32_t *refs; /* a pool reference per point, then the fans (in the same block) */
    junction_build(L, 8, &j, arms, na, &o, &box, &refs);
    uint32_t *fans = refs + j.size.points;
    size_t w = junction_pooled(L, 1, &j, refs, box, snap);
    size_t nf, words = junction_words(NULL, &j, refs, fans, w, &nf);
    uint32_t out_s[2048]; /* (a node's records: on the stack unless there are many) */
    uint32_t *out = NULL;
    if (nf > 0) {
        out = words <= 2048 ? out_s : (uint32_t *)lua_newuserdatauv(L, words * sizeof *out, 0);
        junction_words(out, &j, refs, fans, w, &nf);
        st = lpsdl_store(L, 2); /* (fetched again after the allocation) */
        int e = psdl_store_push_words(st, (size_t)room, (uint32_t)group, out, words);
        if (e) {
            reuse_release(box);
            return luaL_error(L, e == PSDL_STORE_NOMEM ? "not enough memory" : "the store is full");
        }
    }
    push_mapped(L, j.outline, j.size.outline, refs);
    lua_createtable(L, (int)na, 0);
    for (size_t i = 0; i < na; i++) {
        lua_pushnumber(L, j.distance[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_createtable(L, (int)na, 0);
    for (size_t i = 0, off = 0; i < na; i++) {
        size_t stn = psdl_section_stride(arms[i].profile.kind);
        double row[3 * 6]; /* (a section has at most 6 points: a divided road's) */
        for (size_t k = 0; k < stn && k < 6; k++)
            memcpy(row + 3 * k, j.points + 3 * (size_t)j.sections[off + k], 3 * sizeof *row);
        lua_pushlstring(L, (const char *)row, 3 * (stn < 6 ? stn : 6) * sizeof *row);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
        off += stn;
    }
    lua_pushinteger(L, (lua_Integer)nf);
    reuse_release(box);
    return 4;
}

/* ================================================================ measures */

/* core.signed_area(pts) -> m²: the plan area of the polygon, negative in retail winding. */
static int l_signed_area(lua_State *L) {
    lua_settop(L, 1); /* scratch userdata go above the arguments */
    size_t n;
    double *p = get_points(L, 1, &n, "pts");
    lua_pushnumber(L, psdl_signed_area(p, n));
    return 1;
}

/* core.winding(pts [, eps = 1e-9]) -> -1 (retail), 1 or 0 (|area| <= eps m²). */
static int l_winding(lua_State *L) {
    lua_settop(L, 2); /* scratch userdata go above the arguments */
    size_t n;
    double *p = get_points(L, 1, &n, "pts");
    lua_pushinteger(L, psdl_winding(p, n, luaL_optnumber(L, 2, 1e-9)));
    return 1;
}

/* core.quad_deviation(pts) -> metres: the non-planarity of a quad of exactly 4 points. */
static int l_quad_deviation(lua_State *L) {
    lua_settop(L, 1); /* scratch userdata go above the arguments */
    size_t n;
    double *p = get_points(L, 1, &n, "pts");
    if (n != 4) luaL_argerror(L, 1, "4 points expected");
    lua_pushnumber(L, psdl_quad_deviation(p, p + 3, p + 6, p + 9));
    return 1;
}

/* core.strip_deviation(pts, stride) -> metres: the largest quad deviation of a strip of
 * sections of `stride` points (the point count a multiple of stride, else raises). */
static int l_strip_deviation(lua_State *L) {
    lua_settop(L, 2); /* scratch userdata go above the arguments */
    size_t n;
    double *p = get_points(L, 1, &n, "pts");
    lua_Integer stride = luaL_checkinteger(L, 2);
    if (stride < 1 || n % (size_t)stride) luaL_argerror(L, 2, "the point count is not a multiple of the stride");
    lua_pushnumber(L, psdl_strip_deviation(p, n / (size_t)stride, (size_t)stride));
    return 1;
}

/* core.fan_flatness(pts) -> metres: the largest height difference from the hub (point 1). */
static int l_fan_flatness(lua_State *L) {
    lua_settop(L, 1); /* scratch userdata go above the arguments */
    size_t n;
    double *p = get_points(L, 1, &n, "pts");
    lua_pushnumber(L, psdl_fan_flatness(p, n));
    return 1;
}

/* core.fan_min_area(pts) -> m²: the smallest triangle of the fan (hub first); 0 = degenerate. */
static int l_fan_min_area(lua_State *L) {
    lua_settop(L, 1); /* scratch userdata go above the arguments */
    size_t n;
    double *p = get_points(L, 1, &n, "pts");
    lua_pushnumber(L, psdl_fan_min_area(p, n));
    return 1;
}

static void push_vec3(lua_State *L, const double *v) {
    lua_createtable(L, 3, 0);
    for (int i = 0; i < 3; i++) {
        lua_pushnumber(L, v[i]);
        lua_rawseti(L, -2, i + 1);
    }
}

/* core.bounds(pts [, first = 1]) -> {min, max, center = {x, y, z}, radius} | nil: §1.6
 * bounds of the points from index `first` on (nil when there are none). */
static int l_bounds(lua_State *L) {
    lua_settop(L, 2); /* scratch userdata go above the arguments */
    size_t n;
    lua_Integer first = luaL_optinteger(L, 2, 1);
    double b[10];
    size_t got;
    if (lua_type(L, 1) == LUA_TUSERDATA) {
        /* a pool: its float points read in place (no copy: a megabyte of doubles for a
         * city's pool, faulted in on a process's first builds) */
        pool_box *pb = check_pool(L, 1);
        if (pb->dim != 3) luaL_argerror(L, 1, "a vertex pool (dimension 3) expected");
        n = psdl_pool_count(pb->pool);
        got = first < 1 || n == 0 ? 0 : psdl_bounds_f(b, psdl_pool_data(pb->pool), n, (size_t)first - 1);
    } else {
        double *p = get_points(L, 1, &n, "pts");
        got = first < 1 ? 0 : psdl_bounds(b, p, n, (size_t)first - 1);
    }
    if (got == 0) {
        lua_pushnil(L);
        return 1;
    }
    lua_createtable(L, 0, 4);
    push_vec3(L, b);
    lua_setfield(L, -2, "min");
    push_vec3(L, b + 3);
    lua_setfield(L, -2, "max");
    push_vec3(L, b + 6);
    lua_setfield(L, -2, "center");
    lua_pushnumber(L, b[9]);
    lua_setfield(L, -2, "radius");
    return 1;
}

/* ================================================================ rooms */

static const char *const attr_names[] = {"road", "sidewalk_strip", "walkway", "sliver", "crosswalk",
                                         "road_fan", "fan", "facade_bound", "divided_road", "tunnel",
                                         "texture", "facade", "roof", NULL};

/* core.surface_triangles(type, refs) -> {a, b, c, ...}: the triangles of one attribute's
 * vertex list (type a document attribute name, e.g. "road", "fan"), in the refs' own
 * numbering (not rebased). */
static int l_surface_triangles(lua_State *L) {
    lua_settop(L, 2); /* scratch userdata go above the arguments */
    int type = luaL_checkoption(L, 1, NULL, attr_names);
    size_t n = arr_len(L, 2);
    uint32_t *r = (uint32_t *)scratch(L, n, sizeof *r);
    for (size_t i = 0; i < n; i++) r[i] = (uint32_t)arr_int(L, 2, i + 1, 2, "refs", 0, UINT32_MAX);
    uint32_t *d = (uint32_t *)scratch(L, psdl_surface_bound(n), sizeof *d);
    size_t w = psdl_surface_triangles(d, type, r, n);
    push_indices(L, d, w, 0);
    return 1;
}

/* core.boundary(tris, points) -> {v...}: the outline (1-based point indices, retail
 * winding, holes keyholed) of the union of the triangles tris (1-based indices into points,
 * 3 per triangle; out of range raises). points may be a vertex Pool. */
static int l_boundary(lua_State *L) {
    lua_settop(L, 2); /* scratch userdata go above the arguments */
    size_t nt = arr_len(L, 1), np;
    if (nt % 3) luaL_argerror(L, 1, "3 indices per triangle expected");
    uint32_t *t = (uint32_t *)scratch(L, nt, sizeof *t);
    uint32_t *d = (uint32_t *)scratch(L, nt + 1, sizeof *d);
    if (lua_type(L, 2) == LUA_TUSERDATA) {
        /* a pool: copy only the points the triangles use, renumbered */
        pool_box *b = check_pool(L, 2);
        if (b->dim != 3) luaL_argerror(L, 2, "a vertex pool (dimension 3) expected");
        np = psdl_pool_count(b->pool);
        for (size_t i = 0; i < nt; i++) t[i] = (uint32_t)(arr_int(L, 1, i + 1, 1, "tris", 1, (lua_Integer)np) - 1);
        const float *f = pool_data(L, b); /* after the allocations (a finalizer may move it) */
        size_t n = psdl_boundary_used(d, t, nt / 3, f, np);
        nomem_check(L, n);
        push_indices(L, d, n, 1);
        return 1;
    }
    double *p = get_points(L, 2, &np, "points");
    for (size_t i = 0; i < nt; i++) t[i] = (uint32_t)(arr_int(L, 1, i + 1, 1, "tris", 1, (lua_Integer)np) - 1);
    size_t n = psdl_boundary(d, t, nt / 3, p, np);
    nomem_check(L, n);
    push_indices(L, d, n, 1);
    return 1;
}

static void perimeter_table(lua_State *L, int idx, size_t r) {
    lua_rawgeti(L, idx, (lua_Integer)r + 1);
    if (!lua_istable(L, -1))
        luaL_argerror(L, idx, lua_pushfstring(L, "perimeters[%I]: table expected", (lua_Integer)r + 1));
}

/* Perimeters {{v, ...}, ...} (1-based references) at idx into CSR (0-based). Each room's
 * length is read once, before verts is allocated, and the second pass reads only that many
 * entries: the allocation may run a __gc finalizer that resizes the tables (a room that
 * shrank raises "integer expected"; one that grew is read up to its old length). */
static void get_perimeters(lua_State *L, int idx, size_t npts, uint32_t **start, uint32_t **verts, size_t *nrooms) {
    size_t nr = arr_len(L, idx);
    uint32_t *st = (uint32_t *)scratch(L, nr + 1, sizeof *st);
    st[0] = 0;
    for (size_t r = 0; r < nr; r++) {
        perimeter_table(L, idx, r);
        size_t n = (size_t)lua_rawlen(L, -1);
        if (n > (size_t)UINT32_MAX - st[r]) luaL_argerror(L, idx, "more than 2^32 - 1 perimeter points");
        st[r + 1] = st[r] + (uint32_t)n;
        lua_pop(L, 1);
    }
    uint32_t *v = (uint32_t *)scratch(L, st[nr], sizeof *v);
    for (size_t r = 0; r < nr; r++) {
        perimeter_table(L, idx, r);
        int t = lua_gettop(L);
        for (size_t w = st[r]; w < st[r + 1]; w++)
            v[w] = (uint32_t)(arr_int(L, t, w - st[r] + 1, idx, "perimeter", 1, (lua_Integer)npts) - 1);
        lua_pop(L, 1);
    }
    *start = st;
    *verts = v;
    *nrooms = nr;
}

/* core.link(perimeters, npoints) -> {{{vertex =, neighbour =}, ...}, ...}: neighbour links
 * (§1.5) of room perimeters {{v, ...}, ...} (1-based vertices, each <= npoints, npoints in
 * 0..2^32-1, else raises): per room its perimeter with the neighbouring room (1-based, 0 =
 * none) of each edge, vertices shared only at a corner repeated (psdl_link). */
static int l_link(lua_State *L) {
    lua_settop(L, 2); /* scratch userdata go above the arguments */
    lua_Integer np = luaL_checkinteger(L, 2);
    luaL_argcheck(L, np >= 0 && (lua_Unsigned)np <= UINT32_MAX, 2, "point count in 0..2^32-1 expected");
    uint32_t *start, *verts;
    size_t nr;
    get_perimeters(L, 1, (size_t)np, &start, &verts, &nr);
    size_t bound = psdl_link_bound(start, verts, nr, (size_t)np);
    nomem_check(L, bound);
    if (bound == PSDL_GEOM_INVALID) luaL_argerror(L, 1, "a perimeter vertex is not below the point count");
    uint32_t *dv = (uint32_t *)scratch(L, bound, sizeof *dv);
    uint32_t *dn = (uint32_t *)scratch(L, bound, sizeof *dn);
    uint32_t *ds = (uint32_t *)scratch(L, nr + 1, sizeof *ds);
    nomem_check(L, psdl_link(dv, dn, ds, start, verts, nr, (size_t)np));
    /* the two keys interned once (lua_setfield would look each up again per point) */
    lua_pushliteral(L, "vertex");
    int kv = lua_gettop(L);
    lua_pushliteral(L, "neighbour");
    int kn = lua_gettop(L);
    lua_createtable(L, (int)nr, 0);
    for (size_t r = 0; r < nr; r++) {
        lua_createtable(L, (int)(ds[r + 1] - ds[r]), 0);
        for (uint32_t k = ds[r]; k < ds[r + 1]; k++) {
            lua_createtable(L, 0, 2);
            lua_pushvalue(L, kv);
            lua_pushinteger(L, (lua_Integer)dv[k] + 1);
            lua_rawset(L, -3);
            lua_pushvalue(L, kn);
            lua_pushinteger(L, (lua_Integer)dn[k]);
            lua_rawset(L, -3);
            lua_rawseti(L, -2, (lua_Integer)(k - ds[r]) + 1);
        }
        lua_rawseti(L, -2, (lua_Integer)r + 1);
    }
    return 1;
}

/* core.tjunctions(points, perimeters [, eps = 0.005]) -> {room, edge, vertex, ...}:
 * T-junctions (psdl_tjunctions), 3 1-based numbers each: a vertex of another room lying
 * within eps metres inside perimeter edge `edge` of `room`. points may be a vertex Pool;
 * points spanning more than the largest double raise. */
static int l_tjunctions(lua_State *L) {
    lpsdl_perims a;
    lpsdl_points_perimeters(L, 3, &a);
    const double *p = a.pts;
    double eps = luaL_optnumber(L, 3, 0.005);
    /* one search for the usual handful of records; a second only when more are found */
    size_t cap = 256;
    uint32_t *d = (uint32_t *)scratch(L, 3 * cap, sizeof *d);
    size_t n = psdl_tjunctions(d, cap, p, a.npts, a.start, a.verts, a.nrooms, eps);
    nomem_check(L, n);
    if (n == PSDL_GEOM_INVALID)
        luaL_argerror(L, 1, "the points span more than the largest finite number (or one is infinite)");
    if (n > cap) {
        d = (uint32_t *)scratch(L, 3 * n, sizeof *d);
        nomem_check(L, psdl_tjunctions(d, n, p, a.npts, a.start, a.verts, a.nrooms, eps));
    }
    lua_createtable(L, (int)(3 * n), 0);
    for (size_t i = 0; i < 3 * n; i++) {
        lua_pushinteger(L, (lua_Integer)d[i] + 1);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

/***
 * Rooms overlapping in plan by more than 0.5 m² (psdl_check_overlaps: the validator's
 * room_overlap rule on rooms that are no document yet).
 * @function overlaps
 * @param points flat x, y, z array or a vertex Pool
 * @tparam table perimeters `{{v, ...}, ...}` (1-based references into points)
 * @tparam[opt] table warp per room: true for a warp room (left out)
 * @treturn table `{{room = a, other = b, x = x, z = z, message = text}, ...}`: 1-based rooms
 * of the list (a < b), the overlap's centroid in metres, the validator's message
 */
static int l_overlaps(lua_State *L) {
    lpsdl_perims a;
    lpsdl_points_perimeters(L, 3, &a);
    size_t nr = a.nrooms;
    unsigned char *warp = NULL;
    if (!lua_isnoneornil(L, 3)) {
        luaL_checktype(L, 3, LUA_TTABLE);
        warp = (unsigned char *)scratch(L, nr + 1, 1);
        for (size_t r = 0; r < nr; r++) {
            warp[r] = (unsigned char)(lua_rawgeti(L, 3, (lua_Integer)r + 1) != LUA_TNIL && lua_toboolean(L, -1));
            lua_pop(L, 1);
        }
    }
    lpsdl_problems *o = lpsdl_problems_push(L); /* freed by its __gc, also after a raise */
    int rc = psdl_check_overlaps(a.pts, a.npts, a.start, a.verts, nr, warp, lpsdl_problems_add, o, NULL);
    if (rc != 0 || o->nomem) return luaL_error(L, "not enough memory");
    const psdl_problem *items = o->items;
    size_t n = o->n;
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        const psdl_problem *pr = &items[i];
        lua_createtable(L, 0, 5);
        lua_pushinteger(L, (lua_Integer)pr->room);
        lua_setfield(L, -2, "room");
        lua_pushinteger(L, (lua_Integer)pr->other_room);
        lua_setfield(L, -2, "other");
        lua_pushnumber(L, pr->x);
        lua_setfield(L, -2, "x");
        lua_pushnumber(L, pr->z);
        lua_setfield(L, -2, "z");
        lua_pushstring(L, pr->message);
        lua_setfield(L, -2, "message");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

/***
 * Block edges beside road edges at another height (psdl_height_mismatches).
 * @function height_mismatches
 * @param points flat x, y, z array or a vertex Pool
 * @tparam table linked perimeters as `core.link` returns them: `{{{vertex =, neighbour =}...}...}`
 * @tparam table kinds per room: 1 block, 2 road or intersection, 0 neither
 * @tparam number eps metres
 * @tparam number gap metres (largest height difference reported)
 * @treturn table `{block, edge, road, dy, ...}`: 1-based rooms and perimeter edges, one
 * record per pair of rooms, sorted by block room then road room
 */

static int l_height_mismatches(lua_State *L) {
    lua_settop(L, 5); /* scratch userdata go above the arguments */
    size_t np;
    double *p = get_points(L, 1, &np, "points");
    size_t nr = arr_len(L, 2);
    double eps = luaL_checknumber(L, 4), gap = luaL_checknumber(L, 5);
    luaL_checktype(L, 3, LUA_TTABLE);
    uint32_t *start = (uint32_t *)scratch(L, nr + 1, sizeof *start);
    unsigned char *kind = (unsigned char *)scratch(L, nr, 1);
    size_t *len = (size_t *)scratch(L, nr, sizeof *len);
    size_t total = 0;
    for (size_t r = 0; r < nr; r++) {
        kind[r] = (unsigned char)arr_int(L, 3, r + 1, 3, "kinds", 0, 2);
        lua_rawgeti(L, 2, (lua_Integer)r + 1);
        if (!lua_istable(L, -1)) luaL_argerror(L, 2, lua_pushfstring(L, "linked[%I]: table expected", (lua_Integer)r + 1));
        len[r] = kind[r] ? lua_rawlen(L, -1) : 0;
        total += len[r];
        lua_pop(L, 1);
    }
    uint32_t *verts = (uint32_t *)scratch(L, total, sizeof *verts);
    uint32_t *nb = (uint32_t *)scratch(L, total, sizeof *nb);
    size_t w = 0;
    for (size_t r = 0; r < nr; r++) {
        start[r] = (uint32_t)w;
        if (!kind[r]) continue;
        lua_rawgeti(L, 2, (lua_Integer)r + 1);
        int t = lua_gettop(L);
        if (!lua_istable(L, t)) luaL_argerror(L, 2, lua_pushfstring(L, "linked[%I]: table expected", (lua_Integer)r + 1));
        /* only to the length seen first: the allocations since may have run a finalizer
         * that changed the table */
        size_t n = len[r];
        for (size_t i = 0; i < n; i++) {
            if (lua_rawgeti(L, t, (lua_Integer)i + 1) != LUA_TTABLE)
                luaL_argerror(L, 2, lua_pushfstring(L, "linked[%I][%I]: table expected", (lua_Integer)r + 1,
                                                    (lua_Integer)i + 1));
            lua_getfield(L, -1, "vertex");
            lua_getfield(L, -2, "neighbour");
            int ok1, ok2;
            lua_Integer v = lua_tointegerx(L, -2, &ok1), m = lua_tointegerx(L, -1, &ok2);
            if (!ok1 || !ok2 || v < 1 || m < 0)
                luaL_argerror(L, 2, lua_pushfstring(L, "linked[%I][%I]: vertex and neighbour expected",
                                                    (lua_Integer)r + 1, (lua_Integer)i + 1));
            verts[w] = v > (lua_Integer)UINT32_MAX ? UINT32_MAX : (uint32_t)(v - 1);
            nb[w] = m > (lua_Integer)UINT32_MAX ? UINT32_MAX : (uint32_t)m;
            w++;
            lua_pop(L, 3);
        }
        lua_pop(L, 1);
    }
    start[nr] = (uint32_t)w;
    size_t n = psdl_height_mismatches(NULL, 0, p, np, start, verts, nb, kind, nr, eps, gap, 16);
    nomem_check(L, n);
    psdl_height_mismatch *d = (psdl_height_mismatch *)scratch(L, n, sizeof *d);
    if (n) nomem_check(L, psdl_height_mismatches(d, n, p, np, start, verts, nb, kind, nr, eps, gap, 16));
    return lpsdl_push_mismatches(L, d, n);
}

/***
 * `height_mismatches` over an assembled document (a room store's `assemble`, completed):
 * its perimeters and vertices as the builder linked and pooled them, read in C
 * (psdl_height_mismatches_doc), without the Lua tables.
 * @function doc_height_mismatches
 * @param box the document box
 * @tparam table kinds per document room 1 .. n: 1 block, 2 road or intersection, 0 neither
 * @tparam number eps metres
 * @tparam number gap metres
 * @treturn table as `height_mismatches`, rooms numbered as in the document
 * @raise when kinds does not list every room, or a kind is not 0, 1 or 2
 */
static int l_doc_height_mismatches(lua_State *L) {
    const psdl_doc *doc = lpsdl_doc_check(L, 1);
    size_t nr = arr_len(L, 2);
    double eps = luaL_checknumber(L, 3), gap = luaL_checknumber(L, 4);
    lua_settop(L, 4);
    size_t rooms = doc->nrooms > 0 ? doc->nrooms - 1 : 0;
    if (nr != rooms)
        luaL_argerror(L, 2, lua_pushfstring(L, "%I kinds for a document of %I rooms", (lua_Integer)nr, (lua_Integer)rooms));
    unsigned char *kind = (unsigned char *)scratch(L, nr, 1);
    for (size_t r = 0; r < nr; r++) kind[r] = (unsigned char)arr_int(L, 2, r + 1, 2, "kinds", 0, 2);
    size_t n = psdl_height_mismatches_doc(NULL, 0, doc, kind, eps, gap, 16);
    nomem_check(L, n);
    psdl_height_mismatch *d = (psdl_height_mismatch *)scratch(L, n, sizeof *d);
    if (n) nomem_check(L, psdl_height_mismatches_doc(d, n, doc, kind, eps, gap, 16));
    return lpsdl_push_mismatches(L, d, n);
}

/* Pushes the records d[0 .. n-1] as {block, edge, road, dy, ...} (1-based rooms and edges;
 * lpsdl.h). */
int lpsdl_push_mismatches(lua_State *L, const psdl_height_mismatch *d, size_t n) {
    lua_createtable(L, (int)(4 * n), 0);
    for (size_t i = 0; i < n; i++) {
        lua_pushinteger(L, (lua_Integer)d[i].block + 1);
        lua_rawseti(L, -2, (lua_Integer)(4 * i + 1));
        lua_pushinteger(L, (lua_Integer)d[i].edge + 1);
        lua_rawseti(L, -2, (lua_Integer)(4 * i + 2));
        lua_pushinteger(L, (lua_Integer)d[i].road + 1);
        lua_rawseti(L, -2, (lua_Integer)(4 * i + 3));
        lua_pushnumber(L, d[i].dy);
        lua_rawseti(L, -2, (lua_Integer)(4 * i + 4));
    }
    return 1;
}

/* ================================================================ grid */

#define GRID "psdl.Grid"

typedef struct grid_box {
    psdl_grid *g;
} grid_box;

static psdl_grid *check_grid(lua_State *L, int idx) {
    grid_box *b = (grid_box *)luaL_checkudata(L, idx, GRID);
    if (!b->g) luaL_error(L, "attempt to use a closed " GRID);
    return b->g;
}

/***
 * A uniform grid of items by plan box (psdl_grid: psdl.plan's Grid in C, the same cells and
 * the same order of candidates), for searches run once per segment or node.
 * @function grid
 * @tparam number cell cell size, metres (> 0, finite)
 * @treturn userdata psdl.Grid: `grid:insert(id, x0, z0, x1, z1)` (id: integer 1 .. 2^24),
 * `grid:collect(x0, z0, x1, z1)` -> `{id, ...}` every item whose cells meet the box, once,
 * cells x-major, items in insertion order; a box that is not finite or spans more than
 * 2^24 cells raises. Point items: `grid:insert_point(id, x, z)`, `grid:nearest(x, z, span)`
 * -> id, squared distance (m²) | nil (psdl_grid_nearest); `grid:cell(x, z)` -> `{id, ...}` |
 * nil, the one cell's items as inserted
 */
static int grid_new_l(lua_State *L) {
    double cell = luaL_checknumber(L, 1);
    luaL_argcheck(L, cell > 0 && isfinite(cell), 1, "cell: a finite size > 0 expected");
    grid_box *b = (grid_box *)lua_newuserdatauv(L, sizeof *b, 0);
    b->g = NULL;
    luaL_setmetatable(L, GRID);
    b->g = psdl_grid_new(cell);
    if (!b->g) luaL_error(L, "not enough memory");
    return 1;
}

static int grid_gc(lua_State *L) {
    grid_box *b = (grid_box *)luaL_checkudata(L, 1, GRID);
    psdl_grid_free(b->g);
    b->g = NULL;
    return 0;
}

/* Raises for a box psdl_grid_insert/collect refused: a bug's box (not finite) as an argument
 * error, a finite one as the city being too large for the game (a script or extract whose
 * coordinates run to hundreds of kilometres: every search grid of the build meets it first),
 * with no position (the message is about the input, not the library's line). */
static int grid_box_fail(lua_State *L, int arg, double x0, double z0, double x1, double z1) {
    if (!(isfinite(x0) && isfinite(z0) && isfinite(x1) && isfinite(z1)))
        return luaL_argerror(L, arg, "the box is not finite or spans too many cells");
    char msg[400];
    snprintf(msg, sizeof msg,
             "the city is too large: a box %.1f km by %.1f km (x from %.0f to %.0f m, z from %.0f to %.0f m) "
             "spans more than the 2^24 cells of a search grid; the game's limit is a city about 5 km across "
             "(2,047 rooms, 65,024 vertices: docs/osm.md, \"Area limit\")",
             (x1 - x0) / 1000.0, (z1 - z0) / 1000.0, x0, x1, z0, z1);
    lua_pushstring(L, msg);
    return lua_error(L);
}

static int grid_insert(lua_State *L) {
    psdl_grid *g = check_grid(L, 1);
    lua_Integer id = luaL_checkinteger(L, 2);
    luaL_argcheck(L, id >= 1 && id <= (lua_Integer)PSDL_GRID_MAX_ID, 2, "id: integer 1 .. 2^24 expected");
    double x0 = luaL_checknumber(L, 3), z0 = luaL_checknumber(L, 4), x1 = luaL_checknumber(L, 5),
           z1 = luaL_checknumber(L, 6);
    int r = psdl_grid_insert(g, (uint32_t)id, x0, z0, x1, z1);
    if (r == -1) grid_box_fail(L, 3, x0, z0, x1, z1);
    if (r != 0) luaL_error(L, "not enough memory");
    return 0;
}

static int grid_collect(lua_State *L) {
    psdl_grid *g = check_grid(L, 1);
    double x0 = luaL_checknumber(L, 2), z0 = luaL_checknumber(L, 3), x1 = luaL_checknumber(L, 4),
           z1 = luaL_checknumber(L, 5);
    lua_settop(L, 5);
    uint32_t local[256];
    uint32_t *out = local;
    size_t n = psdl_grid_collect(g, out, 256, x0, z0, x1, z1);
    if (n == PSDL_GEOM_INVALID) grid_box_fail(L, 2, x0, z0, x1, z1);
    if (n > 256) {
        out = (uint32_t *)scratch(L, n, sizeof *out);
        g = check_grid(L, 1);
        size_t m = psdl_grid_collect(g, out, n, x0, z0, x1, z1);
        if (m != n) luaL_error(L, "internal: grid changed during a query");
    }
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_pushinteger(L, (lua_Integer)out[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

/* grid:insert_point(id, x, z): a point item in the cell holding (x, z) (psdl_grid_insert_point) */
static int grid_insert_point(lua_State *L) {
    psdl_grid *g = check_grid(L, 1);
    lua_Integer id = luaL_checkinteger(L, 2);
    luaL_argcheck(L, id >= 1 && id <= (lua_Integer)PSDL_GRID_MAX_ID, 2, "id: integer 1 .. 2^24 expected");
    double x = luaL_checknumber(L, 3), z = luaL_checknumber(L, 4);
    int r = psdl_grid_insert_point(g, (uint32_t)id, x, z);
    if (r == -1) luaL_argerror(L, 3, "the point is not finite");
    if (r != 0) luaL_error(L, "not enough memory");
    return 0;
}

/* grid:nearest(x, z, span) -> id, d2 | nil: the point item nearest to (x, z) within span
 * cells (psdl_grid_nearest) and its squared distance (m²) */
static int grid_nearest(lua_State *L) {
    psdl_grid *g = check_grid(L, 1);
    double x = luaL_checknumber(L, 2), z = luaL_checknumber(L, 3);
    lua_Number span = luaL_checknumber(L, 4);
    int64_t sp = span != span || span < 0 ? -1 : span > 1e15 ? (int64_t)1e15 : (int64_t)floor(span);
    uint32_t id = 0;
    double d2 = 0;
    int r = psdl_grid_nearest(g, x, z, sp, &id, &d2);
    if (r < 0) luaL_argerror(L, 2, "the point is not finite");
    if (r == 0) {
        lua_pushnil(L);
        return 1;
    }
    lua_pushinteger(L, (lua_Integer)id);
    lua_pushnumber(L, d2);
    return 2;
}

/* grid:cell(x, z) -> {id, ...} | nil: the items of the cell holding (x, z), in insertion
 * order, as often as inserted there (psdl_grid_cell) */
static int grid_cell(lua_State *L) {
    psdl_grid *g = check_grid(L, 1);
    double x = luaL_checknumber(L, 2), z = luaL_checknumber(L, 3);
    size_t n;
    const uint32_t *items = psdl_grid_cell(g, x, z, &n);
    if (!items) {
        lua_pushnil(L);
        return 1;
    }
    lua_createtable(L, n < INT32_MAX ? (int)n : 0, 0);
    for (size_t i = 0; i < n; i++) {
        items = psdl_grid_cell(g, x, z, &n); /* afresh: a finalizer run by lua_rawseti may insert */
        if (i >= n) break;
        lua_pushinteger(L, (lua_Integer)items[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

static const luaL_Reg grid_meth[] = {
    {"insert", grid_insert}, {"collect", grid_collect}, {"insert_point", grid_insert_point},
    {"nearest", grid_nearest}, {"cell", grid_cell}, {"close", grid_gc}, {NULL, NULL},
};

/* ================================================================ pools */

/* core.pool([dim = 3 [, reserve_first]]) -> psdl.Pool: a deduplicating pool of float
 * tuples (dim 1..4); reserve_first keeps entry 1 as the dummy vertex (§3.2, set_dummy). */
static int pool_new(lua_State *L) {
    lua_Integer dim = luaL_optinteger(L, 1, 3);
    luaL_argcheck(L, dim >= 1 && dim <= 4, 1, "dimension 1..4 expected");
    int reserve = lua_toboolean(L, 2);
    pool_box *b = (pool_box *)lua_newuserdatauv(L, sizeof *b, 0);
    b->pool = NULL;
    b->dim = (unsigned)dim;
    b->reserved = reserve;
    luaL_setmetatable(L, POOL);
    b->pool = psdl_pool_new((unsigned)dim, reserve);
    if (!b->pool) luaL_error(L, "not enough memory");
    return 1;
}

/* pool:close() (also __close and __gc): frees the pool; any later use raises. */
static int pool_close(lua_State *L) {
    pool_box *b = (pool_box *)luaL_checkudata(L, 1, POOL);
    psdl_pool_free(b->pool);
    b->pool = NULL;
    return 0;
}

/* tostring(pool) -> "psdl.Pool (dim, n entries)" or "psdl.Pool (closed)". */
static int pool_tostring(lua_State *L) {
    pool_box *b = (pool_box *)luaL_checkudata(L, 1, POOL);
    if (b->pool) lua_pushfstring(L, POOL " (%d, %I entries)", (int)b->dim, (lua_Integer)psdl_pool_count(b->pool));
    else lua_pushliteral(L, POOL " (closed)");
    return 1;
}

static void pool_args(lua_State *L, pool_box *b, int first, double *v) {
    for (unsigned d = 0; d < b->dim; d++) v[d] = luaL_checknumber(L, first + (int)d);
}

/* pool:add(x [, y, z]) -> 1-based reference */
static int pool_add(lua_State *L) {
    pool_box *b = check_pool(L, 1);
    double v[4];
    pool_args(L, b, 2, v);
    uint32_t i = psdl_pool_add(b->pool, v);
    if (i == UINT32_MAX) luaL_error(L, "not enough memory");
    lua_pushinteger(L, (lua_Integer)i + 1);
    return 1;
}

/* pool:add_flat(values) -> {ref, ...}: one reference per dim values */
static int pool_add_flat(lua_State *L) {
    pool_box *b = check_pool(L, 1);
    size_t n = arr_len(L, 2);
    if (n % b->dim) luaL_argerror(L, 2, "value count is not a multiple of the pool's dimension");
    size_t m = n / b->dim;
    lua_createtable(L, (int)m, 0);
    for (size_t k = 0; k < m; k++) {
        double v[4];
        for (unsigned d = 0; d < b->dim; d++) v[d] = arr_num(L, 2, k * b->dim + d + 1, 2, "values");
        check_pool(L, 1); /* lua_rawseti may have run a finalizer that closed it */
        uint32_t i = psdl_pool_add(b->pool, v);
        if (i == UINT32_MAX) luaL_error(L, "not enough memory");
        lua_pushinteger(L, (lua_Integer)i + 1);
        lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    return 1;
}

/* pool:find(x [, y, z]) -> 1-based reference | nil (the dummy never matches). */
static int pool_find(lua_State *L) {
    pool_box *b = check_pool(L, 1);
    double v[4];
    pool_args(L, b, 2, v);
    uint32_t i = psdl_pool_find(b->pool, v);
    if (i == UINT32_MAX) lua_pushnil(L);
    else lua_pushinteger(L, (lua_Integer)i + 1);
    return 1;
}

/* pool:count() -> entries (the dummy included). */
static int pool_count(lua_State *L) {
    lua_pushinteger(L, (lua_Integer)psdl_pool_count(check_pool(L, 1)->pool));
    return 1;
}

/* pool:get(i) -> x [, y, z]: entry i (1-based; out of range raises). */
static int pool_get(lua_State *L) {
    pool_box *b = check_pool(L, 1);
    lua_Integer i = luaL_checkinteger(L, 2);
    luaL_argcheck(L, i >= 1 && (size_t)i <= psdl_pool_count(b->pool), 2, "reference out of range");
    const float *f = psdl_pool_data(b->pool) + (size_t)(i - 1) * b->dim;
    for (unsigned d = 0; d < b->dim; d++) lua_pushnumber(L, f[d]);
    return (int)b->dim;
}

/* pool:truncate(n): drops the entries after the n-th (n: a count pool:count() returned
 * earlier; psdl_pool_truncate), so that the pool is as it was then. n out of range (above the
 * count, below the reserved dummy) raises, nothing changed. */
static int pool_truncate(lua_State *L) {
    pool_box *b = check_pool(L, 1);
    lua_Integer n = luaL_checkinteger(L, 2);
    size_t count = psdl_pool_count(b->pool);
    if (n < (b->reserved ? 1 : 0) || (lua_Unsigned)n > count)
        return luaL_argerror(L, 2, lua_pushfstring(L, "count %I outside %d..%I", n, b->reserved ? 1 : 0,
                                                   (lua_Integer)count));
    if (psdl_pool_truncate(b->pool, (size_t)n) != 0) return luaL_error(L, "pool:truncate failed");
    return 0;
}

/* pool:set_dummy(x [, y, z]): overwrites the reserved entry 1; raises for a pool made
 * without reserve_first (its entry 1 is an ordinary, hashed entry). */
static int pool_set_dummy(lua_State *L) {
    pool_box *b = check_pool(L, 1);
    double v[4];
    pool_args(L, b, 2, v);
    if (!b->reserved || psdl_pool_set_dummy(b->pool, v) != 0)
        luaL_error(L, "the pool reserves no dummy entry (create it with core.pool(dim, true))");
    return 0;
}

/* pool:totable() -> {{x, y, z}, ...} for dimension 3 (document vertices), {h, ...} for 1 */
static int pool_totable(lua_State *L) {
    pool_box *b = check_pool(L, 1);
    size_t n = psdl_pool_count(b->pool);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        if (b->dim == 1) {
            lua_pushnumber(L, pool_data(L, b)[i]);
        } else {
            lua_createtable(L, (int)b->dim, 0);
            const float *f = pool_data(L, b); /* after the allocation */
            for (unsigned d = 0; d < b->dim; d++) {
                lua_pushnumber(L, f[i * b->dim + d]);
                lua_rawseti(L, -2, d + 1);
            }
        }
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

/* pool:flat() -> {x1, y1, z1, x2, ...} */
static int pool_flat(lua_State *L) {
    pool_box *b = check_pool(L, 1);
    size_t n = psdl_pool_count(b->pool) * b->dim;
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_pushnumber(L, pool_data(L, b)[i]); /* afresh: lua_rawseti may run a finalizer */
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

/* pool:points(refs) -> {x1, y1, z1, x2, ...}: the entries of 1-based references, in order
 * (dim values each; Builder:flat_of) */
static int pool_points(lua_State *L) {
    pool_box *b = check_pool(L, 1);
    size_t n = arr_len(L, 2), count = psdl_pool_count(b->pool);
    lua_settop(L, 2);
    lua_createtable(L, (int)(n * b->dim), 0);
    lua_Integer w = 0;
    for (size_t i = 0; i < n; i++) {
        lua_Integer r = arr_int(L, 2, i + 1, 2, "refs", 1, (lua_Integer)count);
        for (unsigned d = 0; d < b->dim; d++) {
            /* afresh each time: lua_rawseti may run a finalizer that moves the data */
            lua_pushnumber(L, pool_data(L, b)[(size_t)(r - 1) * b->dim + d]);
            lua_rawseti(L, 3, ++w);
        }
    }
    return 1;
}

/* Points at argument 1 and perimeters at 2, the stack first set to `top` (lpsdl.h). */
void lpsdl_points_perimeters(lua_State *L, int top, lpsdl_perims *out) {
    lua_settop(L, top); /* scratch userdata go above the arguments */
    out->pts = get_points(L, 1, &out->npts, "points");
    get_perimeters(L, 2, out->npts, &out->start, &out->verts, &out->nrooms);
}

/* Perimeters at idx over npts points, for the other binding files (lpsdl.h). */
void lpsdl_perimeters(lua_State *L, int idx, size_t npts, lpsdl_perims *out) {
    out->pts = NULL;
    out->npts = npts;
    get_perimeters(L, idx, npts, &out->start, &out->verts, &out->nrooms);
}

/* Points as the kernels take them, for the other binding files (lpsdl.h). */
double *lpsdl_points(lua_State *L, int idx, size_t *n, const char *what) { return get_points(L, idx, n, what); }

psdl_pool *lpsdl_pool(lua_State *L, int idx, unsigned dim) {
    pool_box *b = check_pool(L, idx);
    if (b->dim != dim) luaL_argerror(L, idx, lua_pushfstring(L, "a pool of dimension %d expected", (int)dim));
    return b->pool;
}

static const luaL_Reg pool_meth[] = {
    {"add", pool_add},       {"add_flat", pool_add_flat}, {"find", pool_find},       {"count", pool_count},
    {"get", pool_get},       {"set_dummy", pool_set_dummy}, {"truncate", pool_truncate}, {"totable", pool_totable}, {"flat", pool_flat},
    {"points", pool_points}, {"close", pool_close},       {NULL, NULL},
};

static const luaL_Reg pool_metameth[] = {
    {"__gc", pool_close}, {"__close", pool_close}, {"__tostring", pool_tostring}, {"__index", NULL}, {NULL, NULL},
};

static const luaL_Reg geom_funcs[] = {
    {"flatten_points", l_flatten_points},
    {"flat_check", l_flat_check},
    {"polygon_points", l_polygon_points},
    {"spline", l_spline},
    {"polyline_length", l_polyline_length},
    {"offset", l_offset},
    {"sections", l_sections},
    {"street_rooms", l_street_rooms},
    {"run_street", l_run_street},
    {"plan_outline", l_plan_outline},
    {"room_overlaps", l_room_overlaps},
    {"network_conflicts", l_network_conflicts},
    {"triangulate", l_triangulate},
    {"fans", l_fans},
    {"keyhole", l_keyhole},
    {"self_crossing", l_self_crossing},
    {"polyline_crossing", l_polyline_crossing},
    {"first_outside", l_first_outside},
    {"points", l_points},
    {"ring_simple", l_ring_simple},
    {"facades", l_facades},
    {"building", l_building},
    {"light_index", l_light_index},
    {"junction", l_junction},
    {"junction_room", l_junction_room},
    {"junction_store", l_junction_store},
    {"signed_area", l_signed_area},
    {"winding", l_winding},
    {"quad_deviation", l_quad_deviation},
    {"strip_deviation", l_strip_deviation},
    {"fan_flatness", l_fan_flatness},
    {"fan_min_area", l_fan_min_area},
    {"bounds", l_bounds},
    {"surface_triangles", l_surface_triangles},
    {"boundary", l_boundary},
    {"link", l_link},
    {"tjunctions", l_tjunctions},
    {"overlaps", l_overlaps},
    {"height_mismatches", l_height_mismatches},
    {"doc_height_mismatches", l_doc_height_mismatches},
    {"pool", pool_new},
    {"grid", grid_new_l},
    {NULL, NULL},
};

void lpsdl_open_geom(lua_State *L) {
    if (luaL_newmetatable(L, POINTS)) {
        lua_pushcfunction(L, points_len);
        lua_setfield(L, -2, "__len");
    }
    lua_pop(L, 1);
    if (luaL_newmetatable(L, GRID)) {
        lua_pushcfunction(L, grid_gc);
        lua_setfield(L, -2, "__gc");
        luaL_newlibtable(L, grid_meth);
        luaL_setfuncs(L, grid_meth, 0);
        lua_setfield(L, -2, "__index");
    }
    lua_pop(L, 1);
    if (luaL_newmetatable(L, REUSE)) {
        lua_pushcfunction(L, reuse_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_pop(L, 1);
    if (luaL_newmetatable(L, POOL)) {
        luaL_setfuncs(L, pool_metameth, 0);
        luaL_newlibtable(L, pool_meth);
        luaL_setfuncs(L, pool_meth, 0);
        lua_setfield(L, -2, "__index");
    }
    lua_pop(L, 1);
    luaL_setfuncs(L, geom_funcs, 0);
}
