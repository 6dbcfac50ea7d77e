/*
 * lpsdl_blocks.c -- the kernels of psdl.city.blocks, registered into the module table by
 * lpsdl_open_blocks:
 *
 *   core.face_loops(points, outlines) -> loops, gaps, open the network's boundary loops
 *                                                         (psdl_faces.h)
 *   core.network_faces(points, outlines, warp [, eps])    the network's faces, with holes,
 *       -> faces, apron_holes, gaps, open                 and its outer outlines (psdl_faces.h)
 *   core.apron_rings(outlines, margin, cell) -> rings     the apron's outer edge (psdl_apron.h)
 *   core.region(rings) -> psdl.Region                     a region with holes (psdl_region.h)
 *       region:clear(a, c) -> boolean                     chord test of hole joining
 *       region:target(hole, k [, avoid, other]) -> i | nil the outer point a hole joins
 *   core.refs_box(points, lists) -> x0, x1, z0, z1 | nil  plan box of referenced points
 *   core.refs_level(pool, lists) -> y | nil | false       the one height of referenced points
 *   core.rings_crossing(ring [, holes]) -> nil | e1, e2   first crossing of a ring with holes
 *                                                         (psdl_self_crossing on point tables)
 *   core.split_obstacles(polygons) -> psdl.SplitObstacles footprints chords keep clear of
 *   core.split_chord(pts, area, points, length, try, obs) the chord a block is cut along
 *       -> i, j | true (keep it) | false (none found)     (psdl_split.h)
 *   core.split_chord_refs(pool, refs, area, ...)          the same over vertex references
 *   core.refs_crossing(pool, refs [, holes])              rings_crossing over vertex references
 *   core.room_outline(store, room, pool) -> refs | nil    a room's outline from its store triangles
 *   core.refs_area2(pool, refs) -> S, core.refs_inside(pool, refs, x, z) -> boolean
 *                                                         psdl.plan's area2 and inside on references
 *   core.apron_edge(pool, outlines, extra, margin, cell, step, hcell, span) -> {flat, ...}
 *                                                         the apron's edge points (psdl_apron.h)
 *   core.block_ground(store, room, group, pool, pieces, level, ...)  a block room's ground fans
 *       -> y | tris | false, k | nil, k                   into the store (psdl_ground.h)
 *
 * Longjmp safety: the points go to Lua userdata before a kernel runs; the apron kernel's
 * result is copied into scratch and freed before any table is made.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lpsdl.h"
#include "psdl.h"
#include "psdl_apron.h"
#include "psdl_faces.h"
#include "psdl_geom.h"
#include "psdl_ground.h"
#include "psdl_region.h"
#include "psdl_segment.h"
#include "psdl_split.h"
#include "psdl_store.h"

static void *scratch(lua_State *L, size_t n, size_t size) {
    if (n == 0) n = 1;
    if (n > ((size_t)-1) / 4 / size) luaL_error(L, "not enough memory");
    return lua_newuserdatauv(L, n * size, 0);
}

/* Coordinate c (1 = x, 3 = z) of point i of outline (ring) k, the point table on top of the
 * stack; raises naming it (`what[k][i][c]`). */
static double coord(lua_State *L, const char *what, lua_Integer k, lua_Integer i, int c) {
    int ok;
    lua_geti(L, -1, c);
    double v = (double)lua_tonumberx(L, -1, &ok);
    lua_pop(L, 1);
    if (!ok || !isfinite(v))
        luaL_argerror(L, 1, lua_pushfstring(L, "%s[%I][%I][%d]: finite number expected", what, k, i, c));
    return v;
}

/* The point table {x, y, z} of vertex v (0-based), one per vertex: kept in the table at
 * `cache` (by 1-based vertex), as blocks/faces.lua's `pt` did. */
static void point_table(lua_State *L, int cache, const double *pts, uint32_t v) {
    if (lua_rawgeti(L, cache, (lua_Integer)v + 1) != LUA_TNIL) return;
    lua_pop(L, 1);
    lua_createtable(L, 3, 0);
    for (int c = 0; c < 3; c++) {
        lua_pushnumber(L, (lua_Number)pts[3 * (size_t)v + (size_t)c]);
        lua_rawseti(L, -2, c + 1);
    }
    lua_pushvalue(L, -1);
    lua_rawseti(L, cache, (lua_Integer)v + 1);
}

/* Pushes ring r of the copied result as `{pts, refs, kinds, area, warp [, holes = {}]}` (no
 * pts when cache is 0; warp: has a "portal" or "deck" edge). */
static void push_ring(lua_State *L, int cache, int kind0, const double *pts, const size_t *st, const uint32_t *vs,
                      const unsigned char *ks, const double *area, size_t r, int holes) {
    size_t s = st[r], n = st[r + 1] - s;
    int cn = n < INT32_MAX ? (int)n : 0;
    lua_createtable(L, 0, 5);
    if (cache) lua_createtable(L, cn, 0); /* pts */
    else lua_pushnil(L);
    lua_createtable(L, cn, 0); /* refs */
    lua_createtable(L, cn, 0); /* kinds */
    int t = lua_gettop(L);
    for (size_t k = 0; k < n; k++) {
        if (cache) {
            point_table(L, cache, pts, vs[s + k]);
            lua_rawseti(L, t - 2, (lua_Integer)k + 1);
        }
        lua_pushinteger(L, (lua_Integer)vs[s + k] + 1);
        lua_rawseti(L, t - 1, (lua_Integer)k + 1);
        lua_pushvalue(L, kind0 + ks[s + k]);
        lua_rawseti(L, t, (lua_Integer)k + 1);
    }
    lua_setfield(L, t - 3, "kinds");
    lua_setfield(L, t - 3, "refs");
    if (cache) lua_setfield(L, t - 3, "pts");
    else lua_pop(L, 1);
    lua_pushnumber(L, area[r]);
    lua_setfield(L, -2, "area");
    int warp = 0;
    for (size_t k = 0; k < n && !warp; k++) warp = ks[s + k] != 0;
    lua_pushboolean(L, warp);
    lua_setfield(L, -2, "warp");
    if (holes) {
        lua_newtable(L);
        lua_setfield(L, -2, "holes");
    }
}

/* Pushes the loops' gaps closed as a flat `{d, a, c, ...}` (metres, 1-based end and start
 * vertex) and the chains left out as a flat `{length in edges, first vertex, ...}`: the two
 * last results of face_loops and network_faces. */
static void push_gaps_open(lua_State *L, const psdl_faces_gap *gs, size_t ng, const psdl_faces_open *os, size_t no) {
    lua_createtable(L, (int)(3 * ng < INT32_MAX ? 3 * ng : 0), 0);
    for (size_t g = 0; g < ng; g++) {
        lua_pushnumber(L, gs[g].d);
        lua_rawseti(L, -2, (lua_Integer)(3 * g + 1));
        lua_pushinteger(L, (lua_Integer)gs[g].a + 1);
        lua_rawseti(L, -2, (lua_Integer)(3 * g + 2));
        lua_pushinteger(L, (lua_Integer)gs[g].c + 1);
        lua_rawseti(L, -2, (lua_Integer)(3 * g + 3));
    }
    lua_createtable(L, (int)(2 * no < INT32_MAX ? 2 * no : 0), 0);
    for (size_t o = 0; o < no; o++) {
        lua_pushinteger(L, (lua_Integer)os[o].len);
        lua_rawseti(L, -2, (lua_Integer)(2 * o + 1));
        lua_pushinteger(L, (lua_Integer)os[o].a + 1);
        lua_rawseti(L, -2, (lua_Integer)(2 * o + 2));
    }
}

/***
 * The faces of a road network (psdl_faces_network; blocks/faces.lua `M.faces`): the ordinary
 * rooms' outlines split at T-junctions, their boundary loops (`face_loops`), the loops of
 * more than 0.5 m² classified by winding and reversed, and each outline of the network put
 * in the smallest face holding it.
 * @function network_faces
 * @param points a vertex Pool (psdl.core.pool, dimension 3) or a flat x, y, z array
 * @tparam table outlines list of room outlines, each a list of 1-based vertex references
 *   (outlines of fewer than 3 points are left out)
 * @tparam table warp per outline: 0 (an ordinary room), 1 (a tunnel room: its edges are
 *   "portal"), 2 (another warp room, a bridge deck: its edges are "deck")
 * @tparam[opt=0.005] number eps T-junction tolerance (m; psdl_tjunctions)
 * @tparam[opt=true] boolean points false: the rings get no `pts` (blocks/faces.lua reads the
 *   points from the pool when it needs them)
 * @treturn table faces `{{pts, refs, kinds, area, warp, holes = {H...}}...}`: rings in
 *   retail winding; `pts` are point tables `{x, y, z}`, one table per vertex across the
 *   result; `kinds[k]` the kind of edge k -> k + 1 ("street", "portal", "deck"); area in m²;
 *   `warp` true when an edge is "portal" or "deck"
 * @treturn table the outlines no face holds (holes of the apron), `{pts, refs, kinds, area, warp}`
 *   each, wound S > 0 like every hole
 * @treturn table gaps closed: flat `{d, a, c, ...}` (as `face_loops`)
 * @treturn table chains left out: flat `{length in edges, first vertex, ...}`
 * @raise on a reference outside the points, a warp code other than 0, 1, 2, or points whose
 *   plan extent is not finite
 */
static int l_network_faces(lua_State *L) {
    luaL_checktype(L, 3, LUA_TTABLE);
    double eps = luaL_optnumber(L, 4, 0.005);
    int with_pts = lua_isnoneornil(L, 5) || lua_toboolean(L, 5);
    lua_settop(L, 4);
    lpsdl_perims a;
    /* without point tables in the result, the pool's points go to C memory below, freed
     * right after the kernel, not to a Lua scratch copy */
    int from_pool = !with_pts && lua_type(L, 1) == LUA_TUSERDATA;
    if (from_pool) {
        size_t np;
        lpsdl_pool_floats(L, 1, 3, &np);
        lpsdl_perimeters(L, 2, np, &a);
    } else {
        lpsdl_points_perimeters(L, 4, &a); /* (settop keeps the 4 arguments) */
    }
    unsigned char *warp = (unsigned char *)scratch(L, a.nrooms, 1);
    for (size_t r = 0; r < a.nrooms; r++) {
        int ok;
        lua_rawgeti(L, 3, (lua_Integer)r + 1);
        lua_Integer w = lua_tointegerx(L, -1, &ok);
        lua_pop(L, 1);
        if (!ok || w < 0 || w > PSDL_FACES_DECK)
            luaL_argerror(L, 3, lua_pushfstring(L, "warp[%I]: 0, 1 or 2 expected", (lua_Integer)r + 1));
        warp[r] = (unsigned char)w;
    }
    double *own = NULL;
    if (from_pool) {
        /* the floats fetched after the last Lua allocation; nothing raises between the
         * malloc and its free */
        size_t np;
        const float *v = lpsdl_pool_floats(L, 1, 3, &np);
        if (np != a.npts) return luaL_argerror(L, 1, "the pool changed while reading the outlines");
        if (np > ((size_t)-1) / (3 * sizeof(double))) return luaL_error(L, "not enough memory");
        own = (double *)malloc((np ? 3 * np : 1) * sizeof *own);
        if (!own) return luaL_error(L, "not enough memory");
        for (size_t i = 0; i < 3 * np; i++) own[i] = v[i];
        a.pts = own;
    }
    psdl_faces_net f;
    int rc = psdl_faces_network(&f, a.pts, a.npts, a.start, a.verts, a.nrooms, warp, eps);
    free(own);
    if (rc == PSDL_FACES_NOMEM) return luaL_error(L, "not enough memory");
    if (rc != PSDL_FACES_OK) return luaL_argerror(L, 1, "the points' plan extent is not finite");
    /* copy out to collectable memory before any table is made (a raise must not leak) */
    size_t nr = f.nrings, nv = f.start[nr], no = nr - f.nfaces, nf = f.nfaces;
    size_t ng = f.loops.ngaps, nop = f.loops.nopen;
    size_t bytes = nr * sizeof(double) + (nr + 1) * sizeof(size_t) + (no + 1) * sizeof(size_t) +
                   ng * sizeof(psdl_faces_gap) + nop * sizeof(psdl_faces_open) + nv * sizeof(uint32_t) + nv;
    char *blk = (char *)lua_newuserdatauv(L, bytes ? bytes : 1, 0);
    double *area = (double *)(void *)blk;
    size_t *st = (size_t *)(void *)(area + nr), *host = st + nr + 1;
    psdl_faces_gap *gs = (psdl_faces_gap *)(void *)(host + no + 1);
    psdl_faces_open *os = (psdl_faces_open *)(void *)(gs + ng);
    uint32_t *vs = (uint32_t *)(void *)(os + nop);
    unsigned char *ks = (unsigned char *)(vs + nv);
    if (nr) memcpy(area, f.area, nr * sizeof *area);
    memcpy(st, f.start, (nr + 1) * sizeof *st);
    if (no) memcpy(host, f.host, no * sizeof *host);
    if (ng) memcpy(gs, f.loops.gaps, ng * sizeof *gs);
    if (nop) memcpy(os, f.loops.open, nop * sizeof *os);
    if (nv) memcpy(vs, f.verts, nv * sizeof *vs), memcpy(ks, f.kinds, nv);
    psdl_faces_net_free(&f);
    lua_pushliteral(L, "street");
    int kind0 = lua_gettop(L);
    lua_pushliteral(L, "portal");
    lua_pushliteral(L, "deck");
    lua_newtable(L); /* the point tables by vertex */
    int cache = with_pts ? lua_gettop(L) : 0;
    lua_createtable(L, nf < INT32_MAX ? (int)nf : 0, 0);
    int faces = lua_gettop(L);
    for (size_t r = 0; r < nf; r++) {
        push_ring(L, cache, kind0, a.pts, st, vs, ks, area, r, 1);
        lua_rawseti(L, faces, (lua_Integer)r + 1);
    }
    lua_newtable(L);
    int apron = lua_gettop(L);
    lua_Integer na = 0;
    for (size_t o = 0; o < no; o++) {
        push_ring(L, cache, kind0, a.pts, st, vs, ks, area, nf + o, 0);
        if (host[o] == PSDL_FACES_NONE) {
            lua_rawseti(L, apron, ++na);
        } else {
            lua_rawgeti(L, faces, (lua_Integer)host[o] + 1);
            lua_getfield(L, -1, "holes");
            lua_pushvalue(L, -3);
            lua_rawseti(L, -2, (lua_Integer)luaL_len(L, -2) + 1);
            lua_pop(L, 3);
        }
    }
    push_gaps_open(L, gs, ng, os, nop);
    return 4;
}

/***
 * The boundary loops of a road network (psdl_faces_loops; blocks/faces.lua): edges used by
 * exactly one outline, loose ends joined to loose starts within 12 m, chained taking the
 * sharpest left turn, split where a loop visits a vertex twice.
 * @function face_loops
 * @param points a vertex Pool (psdl.core.pool, dimension 3) or a flat x, y, z array
 * @tparam table outlines list of outlines, each a list of 1-based vertex references (already
 *   split at T-junctions)
 * @treturn table loops, each a list of vertex references (in tracing order)
 * @treturn table gaps closed: flat `{d, a, c, ...}` (metres, end vertex, start vertex)
 * @treturn table chains left out: flat `{length in edges, first vertex, ...}`
 * @raise on a reference outside the points, or an outline that is not a list of integers
 */
static int l_face_loops(lua_State *L) {
    lpsdl_perims a;
    lpsdl_points_perimeters(L, 2, &a);
    psdl_faces f;
    int rc = psdl_faces_loops(&f, a.pts, a.npts, a.start, a.verts, a.nrooms);
    if (rc == PSDL_FACES_NOMEM) return luaL_error(L, "not enough memory");
    if (rc != PSDL_FACES_OK) return luaL_argerror(L, 2, "a reference outside the points");
    /* copy out to collectable memory before any table is made (a raise must not leak) */
    size_t nl = f.nloops, nv = f.start[f.nloops], ng = f.ngaps, no = f.nopen;
    if (nl + 1 > ((size_t)-1) / 8 / sizeof(size_t) || nv > ((size_t)-1) / 8 / sizeof(uint32_t) ||
        ng > ((size_t)-1) / 8 / sizeof(psdl_faces_gap) || no > ((size_t)-1) / 8 / sizeof(psdl_faces_open)) {
        psdl_faces_free(&f);
        return luaL_error(L, "not enough memory");
    }
    size_t bytes = (nl + 1) * sizeof(size_t) + ng * sizeof(psdl_faces_gap) + no * sizeof(psdl_faces_open) +
                   nv * sizeof(uint32_t);
    char *blk = (char *)lua_newuserdatauv(L, bytes ? bytes : 1, 0); /* only Lua's own OOM raises here */
    size_t *ls = (size_t *)(void *)blk;
    psdl_faces_gap *gs = (psdl_faces_gap *)(void *)(ls + nl + 1);
    psdl_faces_open *os = (psdl_faces_open *)(void *)(gs + ng);
    uint32_t *vs = (uint32_t *)(void *)(os + no);
    memcpy(ls, f.start, (nl + 1) * sizeof *ls);
    if (ng) memcpy(gs, f.gaps, ng * sizeof *gs);
    if (no) memcpy(os, f.open, no * sizeof *os);
    if (nv) memcpy(vs, f.verts, nv * sizeof *vs);
    psdl_faces_free(&f);
    lua_createtable(L, nl < INT32_MAX ? (int)nl : 0, 0);
    for (size_t l = 0; l < nl; l++) {
        size_t n = ls[l + 1] - ls[l];
        lua_createtable(L, n < INT32_MAX ? (int)n : 0, 0);
        for (size_t k = 0; k < n; k++) {
            lua_pushinteger(L, (lua_Integer)vs[ls[l] + k] + 1);
            lua_rawseti(L, -2, (lua_Integer)k + 1);
        }
        lua_rawseti(L, -2, (lua_Integer)l + 1);
    }
    push_gaps_open(L, gs, ng, os, no);
    return 3;
}

/***
 * The rings of a city's apron edge: the contour `margin` metres out from some outlines,
 * separate parts joined by straight strips (psdl_apron_rings; psdl.city.blocks.apron).
 * @function apron_rings
 * @tparam table outlines list of rings, each a list of points `{x, y, z}` (metres; the plan
 *   is x, z; y is not read), any winding, at least one point each
 * @tparam number margin metres (> 0)
 * @tparam number cell grid spacing, metres (> 0)
 * @treturn table rings, each a list of `{x, z}` in retail winding (S < 0, psdl-format §4.2)
 * @raise on a bad point (naming outline, point, coordinate), a margin or cell not > 0, or a
 *   distance grid over PSDL_APRON_MAX_CELLS corners
 */
static int l_apron_rings(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    double margin = luaL_checknumber(L, 2), cell = luaL_checknumber(L, 3);
    luaL_argcheck(L, margin > 0 && isfinite(margin), 2, "margin must be a finite number > 0");
    luaL_argcheck(L, cell > 0 && isfinite(cell), 3, "cell must be a finite number > 0");
    lua_settop(L, 3);
    lua_Integer nout = luaL_len(L, 1);
    size_t npts = 0;
    for (lua_Integer k = 1; k <= nout; k++) {
        if (lua_geti(L, 1, k) != LUA_TTABLE)
            luaL_argerror(L, 1, lua_pushfstring(L, "outlines[%I]: table expected", k));
        npts += (size_t)luaL_len(L, -1);
        lua_pop(L, 1);
    }
    size_t *start = (size_t *)scratch(L, (size_t)nout + 1, sizeof *start); /* 4 */
    double *xz = (double *)scratch(L, 2 * npts, sizeof *xz);              /* 5 */
    size_t m = 0;
    for (lua_Integer k = 1; k <= nout; k++) {
        start[k - 1] = m;
        lua_geti(L, 1, k);
        lua_Integer n = luaL_len(L, -1);
        for (lua_Integer i = 1; i <= n; i++) {
            if (lua_geti(L, -1, i) != LUA_TTABLE)
                luaL_argerror(L, 1, lua_pushfstring(L, "outlines[%I][%I]: point table expected", k, i));
            xz[2 * m] = coord(L, "outlines", k, i, 1);
            xz[2 * m + 1] = coord(L, "outlines", k, i, 3);
            m++;
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    start[nout] = m;
    psdl_apron a;
    size_t cells;
    int rc = psdl_apron_rings(&a, xz, start, (size_t)nout, margin, cell, &cells);
    if (rc == PSDL_APRON_NOMEM) return luaL_error(L, "not enough memory");
    if (rc == PSDL_APRON_TOO_BIG)
        return luaL_error(L, "the apron's distance grid would need %f corners (margin %f m, cell %f m; at most %d): "
                             "use a larger cell",
                          (double)cells, margin, cell, (int)PSDL_APRON_MAX_CELLS);
    if (rc != PSDL_APRON_OK) return luaL_error(L, "apron_rings: invalid input (code %d)", rc);
    size_t nr = a.count, total = a.start[nr];
    size_t *rs = NULL;
    double *rxz = NULL;
    /* copy out (scratch is collected should a table fail to allocate below); a failing
     * userdata allocation would leak the kernel's result: checked sizes, and such a failure
     * raises only when Lua itself is out of memory */
    if (nr + 1 > ((size_t)-1) / 4 / sizeof *rs || 2 * total + 1 > ((size_t)-1) / 4 / sizeof *rxz) {
        psdl_apron_free(&a);
        return luaL_error(L, "not enough memory");
    }
    rs = (size_t *)lua_newuserdatauv(L, (nr + 1) * sizeof *rs, 0);
    memcpy(rs, a.start, (nr + 1) * sizeof *rs);
    rxz = (double *)lua_newuserdatauv(L, (2 * total + 1) * sizeof *rxz, 0);
    memcpy(rxz, a.xz, 2 * total * sizeof *rxz);
    psdl_apron_free(&a);
    lua_createtable(L, nr < INT32_MAX ? (int)nr : 0, 0);
    for (size_t r = 0; r < nr; r++) {
        size_t n = rs[r + 1] - rs[r];
        lua_createtable(L, n < INT32_MAX ? (int)n : 0, 0);
        for (size_t i = 0; i < n; i++) {
            lua_createtable(L, 2, 0);
            lua_pushnumber(L, (lua_Number)rxz[2 * (rs[r] + i)]);
            lua_rawseti(L, -2, 1);
            lua_pushnumber(L, (lua_Number)rxz[2 * (rs[r] + i) + 1]);
            lua_rawseti(L, -2, 2);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        lua_rawseti(L, -2, (lua_Integer)r + 1);
    }
    return 1;
}

/* ================================================================ regions (psdl_region.h) */

#define REGION "psdl.Region"

typedef struct region_box {
    size_t nrings, npts;
    size_t *start;  /* nrings + 1, in the same block */
    uint64_t *ids;  /* npts */
    double *xz;     /* 2 npts */
} region_box;

/***
 * A plan region with holes, kept in C for chord tests (psdl_region.h).
 * @function region
 * @tparam table rings list of rings, each a list of points `{x, y, z}` (metres; the plan is x,
 *   z): the outer ring first, then the holes. A point's identity is its table: the edges at a
 *   chord's own ends are those of the same tables.
 * @treturn userdata psdl.Region, with `region:clear(a, c)`
 * @raise on a point that is not a table of finite x and z (naming ring, point, coordinate)
 */
static int l_region(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    lua_Integer nr = luaL_len(L, 1);
    luaL_argcheck(L, nr >= 1, 1, "at least the outer ring expected");
    size_t npts = 0;
    for (lua_Integer r = 1; r <= nr; r++) {
        if (lua_geti(L, 1, r) != LUA_TTABLE) luaL_argerror(L, 1, lua_pushfstring(L, "rings[%I]: table expected", r));
        npts += (size_t)luaL_len(L, -1);
        lua_pop(L, 1);
    }
    if ((size_t)nr > ((size_t)-1) / 64 || npts > ((size_t)-1) / 64) return luaL_error(L, "not enough memory");
    size_t bytes = sizeof(region_box) + ((size_t)nr + 1) * sizeof(size_t) + npts * sizeof(uint64_t) +
                   2 * npts * sizeof(double);
    region_box *b = (region_box *)lua_newuserdatauv(L, bytes, 0);
    b->nrings = (size_t)nr, b->npts = npts;
    b->xz = (double *)(void *)(b + 1); /* doubles first: aligned */
    b->ids = (uint64_t *)(void *)(b->xz + 2 * npts);
    b->start = (size_t *)(void *)(b->ids + npts);
    luaL_setmetatable(L, REGION);
    size_t m = 0;
    for (lua_Integer r = 1; r <= nr; r++) {
        b->start[r - 1] = m;
        lua_geti(L, 1, r);
        lua_Integer n = luaL_len(L, -1);
        for (lua_Integer i = 1; i <= n; i++) {
            if (lua_geti(L, -1, i) != LUA_TTABLE)
                luaL_argerror(L, 1, lua_pushfstring(L, "rings[%I][%I]: point table expected", r, i));
            b->ids[m] = (uint64_t)(uintptr_t)lua_topointer(L, -1);
            b->xz[2 * m] = coord(L, "rings", r, i, 1);
            b->xz[2 * m + 1] = coord(L, "rings", r, i, 3);
            m++;
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    b->start[nr] = m;
    return 1;
}

/* The x and z of the point table at idx (argument arg). */
static void chord_end(lua_State *L, int idx, double *x, double *z) {
    luaL_checktype(L, idx, LUA_TTABLE);
    int okx, okz;
    lua_geti(L, idx, 1);
    lua_geti(L, idx, 3);
    *x = (double)lua_tonumberx(L, -2, &okx);
    *z = (double)lua_tonumberx(L, -1, &okz);
    lua_pop(L, 2);
    if (!okx || !okz) luaL_argerror(L, idx, "point {x, y, z} with numbers expected");
}

/***
 * Is the chord from point a to point c clear: no ring edge meets it (psdl.plan.segs_meet)
 * except the edges at a and c themselves (the same tables), and its midpoint lies inside the
 * outer ring and outside every hole? (psdl_region_chord_clear)
 * @function Region:clear
 * @tparam table a point `{x, y, z}` (metres)
 * @tparam table c point `{x, y, z}`
 * @treturn boolean
 */
static int l_region_clear(lua_State *L) {
    region_box *b = (region_box *)luaL_checkudata(L, 1, REGION);
    double ax, az, cx, cz;
    chord_end(L, 2, &ax, &az);
    chord_end(L, 3, &cx, &cz);
    uint64_t ida = (uint64_t)(uintptr_t)lua_topointer(L, 2), idc = (uint64_t)(uintptr_t)lua_topointer(L, 3);
    lua_pushboolean(L, psdl_region_chord_clear(b->xz, b->ids, b->start, b->nrings, ida, idc, ax, az, cx, cz));
    return 1;
}

/* The point of vertex reference t[i] (1..count, t a stack index) in the pool's floats v
 * (3 per point); raises at argument arg naming it `what[k][i]`, or `what[i]` when k is 0.
 * Raw reads only: runs no Lua and allocates nothing until it raises. */
static int vref_error(lua_State *L, int arg, const char *what, lua_Integer k, lua_Integer i, lua_Integer n) {
    if (k > 0) return luaL_argerror(L, arg, lua_pushfstring(L, "%s[%I][%I]: vertex reference 1..%I expected", what, k, i, n));
    return luaL_argerror(L, arg, lua_pushfstring(L, "%s[%I]: vertex reference 1..%I expected", what, i, n));
}
static inline const float *vref(lua_State *L, const float *v, size_t count, int t, lua_Integer i, int arg,
                                const char *what, lua_Integer k) {
    lua_Integer r, n = (lua_Integer)count; /* (a pool's count: far below LUA_MAXINTEGER) */
    if (!lpsdl_rawint(L, t, i, 1, n, &r)) vref_error(L, arg, what, k, i, n);
    return v + 3 * (size_t)(r - 1);
}

/* refs_box and refs_level: the vertex Pool at argument 1 (dimension 3) and the list of lists
 * of references at argument 2 checked, the stack set to them; returns the number of lists
 * (*count: the pool's points). */
static lua_Integer pool_lists(lua_State *L, size_t *count) {
    lpsdl_pool_floats(L, 1, 3, count); /* checks the pool */
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    return (lua_Integer)lua_rawlen(L, 2);
}

/* List i of the lists at argument 2 pushed (raises naming it when it is no table); returns
 * its length. */
static lua_Integer push_list(lua_State *L, lua_Integer i) {
    if (lua_rawgeti(L, 2, i) != LUA_TTABLE) luaL_argerror(L, 2, lua_pushfstring(L, "lists[%I]: table expected", i));
    return (lua_Integer)lua_rawlen(L, -1);
}

/***
 * The plan box of the points that lists of vertex references name.
 * @function refs_box
 * @param points a vertex Pool (dimension 3) or a flat x, y, z array
 * @tparam table lists list of lists of 1-based references (room outlines)
 * @treturn number x0, x1, z0, z1 (metres), or nil when the lists name no point
 * @raise on a reference outside the points
 */
static int l_refs_box(lua_State *L) {
    if (lua_type(L, 1) == LUA_TUSERDATA) { /* a Pool: its floats read in place, no copy */
        size_t count;
        lua_Integer nl = pool_lists(L, &count);
        const float *v = lpsdl_pool_floats(L, 1, 3, &count);
        int any = 0;
        double x0 = HUGE_VAL, x1 = -HUGE_VAL, z0 = HUGE_VAL, z1 = -HUGE_VAL;
        for (lua_Integer i = 1; i <= nl; i++) {
            lua_Integer n = push_list(L, i);
            for (lua_Integer k = 1; k <= n; k++) { /* raw reads: no Lua runs, nothing allocated */
                const float *p = vref(L, v, count, -1, k, 2, "lists", i);
                double x = (double)p[0], z = (double)p[2];
                if (x < x0) x0 = x;
                if (x > x1) x1 = x;
                if (z < z0) z0 = z;
                if (z > z1) z1 = z;
                any = 1;
            }
            lua_pop(L, 1);
        }
        if (!any) {
            lua_pushnil(L);
            return 1;
        }
        lua_pushnumber(L, x0);
        lua_pushnumber(L, x1);
        lua_pushnumber(L, z0);
        lua_pushnumber(L, z1);
        return 4;
    }
    lpsdl_perims a;
    lpsdl_points_perimeters(L, 2, &a);
    const double *p = a.pts;
    const uint32_t *start = a.start, *verts = a.verts;
    if (start[a.nrooms] == 0) {
        lua_pushnil(L);
        return 1;
    }
    double x0 = HUGE_VAL, x1 = -HUGE_VAL, z0 = HUGE_VAL, z1 = -HUGE_VAL;
    for (size_t k = 0; k < start[a.nrooms]; k++) {
        double x = p[3 * (size_t)verts[k]], z = p[3 * (size_t)verts[k] + 2];
        if (x < x0) x0 = x;
        if (x > x1) x1 = x;
        if (z < z0) z0 = z;
        if (z > z1) z1 = z;
    }
    lua_pushnumber(L, x0);
    lua_pushnumber(L, x1);
    lua_pushnumber(L, z0);
    lua_pushnumber(L, z1);
    return 4;
}

/***
 * The one height of the points that lists of vertex references name (blocks/ground.lua: is
 * a room's ground, outline and fans, a plane at that height?), read from the vertex pool in
 * place.
 * @function refs_level
 * @param pool a vertex Pool (psdl.core.pool, dimension 3)
 * @tparam table lists list of lists of 1-based references
 * @treturn number|nil|boolean y (metres) when every point named has that height, nil when
 *   the lists name no point, false when the heights differ
 * @raise on a reference outside the pool (naming it: `lists[i][k]`) or a list that is not a table
 */
static int l_refs_level(lua_State *L) {
    size_t count;
    lua_Integer nl = pool_lists(L, &count);
    int any = 0, level = 1;
    float y0 = 0;
    for (lua_Integer i = 1; i <= nl && level; i++) {
        lua_Integer n = push_list(L, i);
        /* the pool's floats, fetched after the last call that could run Lua (raw reads
         * below run none and allocate nothing) */
        const float *v = lpsdl_pool_floats(L, 1, 3, &count);
        for (lua_Integer k = 1; k <= n; k++) {
            float y = vref(L, v, count, -1, k, 2, "lists", i)[1];
            if (!any) y0 = y, any = 1;
            else if (y != y0) {
                level = 0;
                break;
            }
        }
        lua_pop(L, 1);
    }
    if (!any) lua_pushnil(L);
    else if (!level) lua_pushboolean(L, 0);
    else lua_pushnumber(L, (lua_Number)y0);
    return 1;
}

/* Reads the points of the list of 1-based vertex references at idx (argument arg; errors
 * name it `what[k][i]`, or `what[i]` when k is 0) from the pool's floats v (count points)
 * into xyz (3 per point, dim 3) or xz (2 per point, dim 2) from point m on, at most cap
 * points in all; returns the new count. Raw reads only: runs no Lua and allocates nothing
 * until it raises. */
static size_t read_refs(lua_State *L, const float *v, size_t count, int idx, int arg, const char *what,
                        lua_Integer k, double *out, int dim, size_t m, size_t cap) {
    lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
    for (lua_Integer i = 1; i <= n && m < cap; i++) {
        const float *p = vref(L, v, count, idx, i, arg, what, k);
        if (dim == 3) out[3 * m] = p[0], out[3 * m + 1] = p[1], out[3 * m + 2] = p[2];
        else out[2 * m] = p[0], out[2 * m + 1] = p[2];
        m++;
    }
    return m;
}

/***
 * A room's outline from its ground geometry in the store (`Builder:room_outline` of a room
 * without an outline of its own): the boundary of its surface triangles (psdl_store_triangles,
 * psdl_boundary_used: the loop of largest plan area, retail winding, holes keyholed), with
 * no Lua table per triangle.
 * @function room_outline
 * @param store a psdl.Store
 * @tparam integer room the room's number in the store (1-based)
 * @param pool the vertex Pool (psdl.core.pool, dimension 3) the store's references name
 * @treturn table|nil 1-based vertex references (empty when the triangles make no loop); nil
 *   when the room has no surface triangles
 * @raise on a room not in the store, a reference outside the pool, or out of memory
 */
static int l_room_outline(lua_State *L) {
    struct psdl_store *st = lpsdl_store(L, 1);
    lua_Integer room = luaL_checkinteger(L, 2);
    size_t np;
    lpsdl_pool_floats(L, 3, 3, &np); /* checks the pool */
    luaL_argcheck(L, room >= 1 && (lua_Unsigned)room <= (lua_Unsigned)psdl_store_rooms(st), 2,
                  "no such room in the store");
    lua_settop(L, 3);
    uint32_t *t = NULL;
    size_t n = 0;
    if (psdl_store_triangles(st, (size_t)room, &t, &n)) return luaL_error(L, "not enough memory");
    if (n == 0) {
        free(t);
        lua_pushnil(L);
        return 1;
    }
    if (n > (size_t)INT32_MAX) {
        free(t);
        return luaL_error(L, "not enough memory");
    }
    /* into Lua memory before anything else can raise (the C buffer is freed at once) */
    uint32_t *tt = (uint32_t *)lua_newuserdatauv(L, n * sizeof *tt, 0); /* 4 */
    memcpy(tt, t, n * sizeof *tt);
    free(t);
    uint32_t *d = (uint32_t *)scratch(L, n + 1, sizeof *d); /* 5 */
    const float *f = lpsdl_pool_floats(L, 3, 3, &np);        /* after the allocations */
    for (size_t i = 0; i < n; i++) {
        if (tt[i] < 1 || tt[i] > np)
            return luaL_error(L, "room %d: vertex reference %d outside the pool (1..%d)", (int)room, (int)tt[i],
                              (int)np);
        tt[i] -= 1;
    }
    size_t m = psdl_boundary_used(d, tt, n / 3, f, np);
    if (m == PSDL_GEOM_NOMEM) return luaL_error(L, "not enough memory");
    if (m == PSDL_GEOM_INVALID) return luaL_error(L, "room %d: a triangle outside the pool", (int)room);
    lua_createtable(L, (int)m, 0);
    for (size_t i = 0; i < m; i++) {
        lua_pushinteger(L, (lua_Integer)d[i] + 1);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

/* ================================================================ plan tests on references */

/* The points (x, z) of the list of vertex references at idx (argument arg) into scratch
 * pushed on the stack; *n points. */
static double *refs_xz(lua_State *L, int pool, int idx, int arg, size_t *n) {
    luaL_checktype(L, idx, LUA_TTABLE);
    size_t m = (size_t)lua_rawlen(L, idx), count;
    if (m > ((size_t)INT32_MAX) / 4) luaL_argerror(L, arg, "too many references");
    double *xz = (double *)scratch(L, 2 * m, sizeof *xz);
    const float *v = lpsdl_pool_floats(L, pool, 3, &count); /* after the allocation */
    *n = read_refs(L, v, count, idx, arg, "refs", 0, xz, 2, 0, m);
    return xz;
}

/***
 * Twice the signed plan area of a ring of vertex references (psdl.plan.area2 over the pool's
 * points, the same sum in the same order: S < 0 is retail winding).
 * @function refs_area2
 * @param pool the vertex Pool (dimension 3)
 * @tparam table refs 1-based vertex references
 * @treturn number S (m²)
 */
static int l_refs_area2(lua_State *L) {
    size_t n;
    lua_settop(L, 2);
    const double *xz = refs_xz(L, 1, 2, 2, &n);
    double s = 0;
    if (n) {
        const double *p = xz + 2 * (n - 1);
        for (size_t i = 0; i < n; i++) {
            const double *q = xz + 2 * i;
            s = s + p[0] * q[1] - q[0] * p[1]; /* ((s + a) - b), as Lua groups it */
            p = q;
        }
    }
    lua_pushnumber(L, s);
    return 1;
}

/***
 * Is (x, z) inside a ring of vertex references (psdl.plan.inside over the pool's points:
 * crossing number, the same arithmetic; points on the boundary either way)?
 * @function refs_inside
 * @param pool the vertex Pool (dimension 3)
 * @tparam table refs 1-based vertex references
 * @tparam number x
 * @tparam number z
 * @treturn boolean
 */
static int l_refs_inside(lua_State *L) {
    double x = luaL_checknumber(L, 3), z = luaL_checknumber(L, 4);
    lua_settop(L, 4);
    size_t n;
    const double *xz = refs_xz(L, 1, 2, 2, &n);
    lua_pushboolean(L, psdl_ring_inside(xz, n, 2, x, z));
    return 1;
}

/* ================================================================ apron edge */

/***
 * The apron's outer edge as points (blocks/init.lua `fill_apron` without a height function):
 * the rings `core.apron_rings` finds around the outlines and the extra lines (each a list of
 * vertex references into pool), cut every `step` m (psdl_apron_edge), each point at the
 * height of the nearest outline point (a grid of `hcell` m cells, at most `span` cells out;
 * 0 when none).
 * @function apron_edge
 * @param pool the vertex Pool (dimension 3)
 * @tparam table outlines lists of vertex references: the network's outlines (their points
 *   give the heights)
 * @tparam table extra lists of vertex references: other lines the apron keeps clear of
 *   (bridge decks, tunnel bores)
 * @tparam number margin metres (> 0)
 * @tparam number cell the distance grid's spacing, metres (> 0)
 * @tparam number step metres between edge points (> 0)
 * @tparam number hcell the height grid's cell, metres (> 0)
 * @tparam number span cells searched out from a point
 * @treturn table one flat `{x1, y1, z1, ...}` per ring
 * @raise on a bad argument or reference, a distance grid too big, or out of memory
 */
static int l_apron_edge(lua_State *L) {
    size_t count;
    lpsdl_pool_floats(L, 1, 3, &count); /* checks the pool */
    luaL_checktype(L, 2, LUA_TTABLE);
    luaL_checktype(L, 3, LUA_TTABLE);
    double margin = luaL_checknumber(L, 4), cell = luaL_checknumber(L, 5), step = luaL_checknumber(L, 6);
    double hcell = luaL_checknumber(L, 7);
    lua_Number span = luaL_checknumber(L, 8);
    luaL_argcheck(L, margin > 0 && isfinite(margin), 4, "margin must be a finite number > 0");
    luaL_argcheck(L, cell > 0 && isfinite(cell), 5, "cell must be a finite number > 0");
    luaL_argcheck(L, step > 0 && isfinite(step), 6, "step must be a finite number > 0");
    luaL_argcheck(L, hcell > 0 && isfinite(hcell), 7, "hcell must be a finite number > 0");
    long long sp = span != span || span < 0 ? -1 : span > 1e15 ? (long long)1e15 : (long long)floor(span);
    lua_settop(L, 8);
    lua_Integer no = (lua_Integer)lua_rawlen(L, 2), nx = (lua_Integer)lua_rawlen(L, 3);
    size_t nh = 0, npts = 0;
    for (int arg = 2; arg <= 3; arg++)
        for (lua_Integer k = 1; k <= (arg == 2 ? no : nx); k++) {
            if (lua_rawgeti(L, arg, k) != LUA_TTABLE)
                luaL_argerror(L, arg, lua_pushfstring(L, "lists[%I]: list of vertex references expected", k));
            size_t n = (size_t)lua_rawlen(L, -1);
            lua_pop(L, 1);
            if (n > ((size_t)INT32_MAX) / 8 || npts > ((size_t)INT32_MAX) / 8 - n) luaL_argerror(L, arg, "too many points");
            npts += n;
            if (arg == 2) nh += n;
        }
    size_t *start = (size_t *)scratch(L, (size_t)(no + nx) + 1, sizeof *start); /* 9 */
    double *xz = (double *)scratch(L, 2 * npts, sizeof *xz);                   /* 10 */
    double *hp = (double *)scratch(L, 3 * nh, sizeof *hp);                     /* 11 */
    const float *v = lpsdl_pool_floats(L, 1, 3, &count);                       /* after the allocations */
    size_t m = 0, mh = 0;
    for (int arg = 2; arg <= 3; arg++)
        for (lua_Integer k = 1; k <= (arg == 2 ? no : nx); k++) {
            start[(arg == 2 ? 0 : no) + k - 1] = m;
            lua_rawgeti(L, arg, k);
            size_t m1 = read_refs(L, v, count, lua_gettop(L), arg, "lists", k, xz, 2, m, npts);
            if (arg == 2) mh = read_refs(L, v, count, lua_gettop(L), arg, "lists", k, hp, 3, mh, nh);
            m = m1;
            lua_pop(L, 1);
        }
    start[no + nx] = m;
    psdl_apron a;
    size_t cells;
    int rc = psdl_apron_rings(&a, xz, start, (size_t)(no + nx), margin, cell, &cells);
    if (rc == PSDL_APRON_NOMEM) return luaL_error(L, "not enough memory");
    if (rc == PSDL_APRON_TOO_BIG)
        return luaL_error(L, "the apron's distance grid would need %f corners (margin %f m, cell %f m; at most %d): "
                             "use a larger cell",
                          (double)cells, margin, cell, (int)PSDL_APRON_MAX_CELLS);
    if (rc != PSDL_APRON_OK) return luaL_error(L, "apron_edge: invalid input (code %d)", rc);
    double *exyz = NULL;
    size_t *est = NULL;
    rc = psdl_apron_edge(&exyz, &est, &a, step, hp, mh, hcell, sp);
    size_t nr = a.count;
    psdl_apron_free(&a);
    if (rc != PSDL_APRON_OK) return luaL_error(L, rc == PSDL_APRON_NOMEM ? "not enough memory" : "apron_edge: invalid input");
    /* into Lua memory before any table is made (a failing allocation below raises) */
    size_t total = est[nr];
    if (nr + 1 > ((size_t)-1) / 4 / sizeof *est || 3 * total + 1 > ((size_t)-1) / 4 / sizeof *exyz ||
        3 * total > (size_t)INT32_MAX) {
        free(exyz), free(est);
        return luaL_error(L, "not enough memory");
    }
    size_t *rs = (size_t *)lua_newuserdatauv(L, (nr + 1) * sizeof *rs, 0);
    memcpy(rs, est, (nr + 1) * sizeof *rs);
    free(est);
    double *pxyz = (double *)lua_newuserdatauv(L, (3 * total + 1) * sizeof *pxyz, 0);
    if (total) memcpy(pxyz, exyz, 3 * total * sizeof *pxyz);
    free(exyz);
    lua_createtable(L, (int)nr, 0);
    for (size_t r = 0; r < nr; r++) {
        size_t s = rs[r], n = rs[r + 1] - s;
        lua_createtable(L, (int)(3 * n), 0);
        for (size_t i = 0; i < 3 * n; i++) {
            lua_pushnumber(L, pxyz[3 * s + i]);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        lua_rawseti(L, -2, (lua_Integer)r + 1);
    }
    return 1;
}

/* ================================================================ ground */

/* block_ground's scratch, kept as its upvalue between calls: its size in bytes, whether a
 * call is using it; the arrays follow (doubles first). */
typedef struct ground_buf {
    size_t bytes;
    int busy;
    double align_;
} ground_buf;

/***
 * The ground of a block room in one call (blocks/ground.lua): for each piece in order,
 * what `Room:fan_refs(piece, group, {hub_height = ...})` does (psdl_ground.h: the pieces'
 * points from the pool, the crossing and area tests, psdl_fans, the hub points' heights from
 * hub_height, the hubs pooled, one fan record per fan into the store), then the level test
 * of the fans' points and, when they are not level, their triangles. No Lua table per fan.
 * @function block_ground
 * @param store the builder's psdl.Store
 * @tparam integer room the room's number in the store
 * @tparam integer group the texture group's index (Builder:texture(...).index)
 * @param pool the vertex Pool (dimension 3)
 * @tparam table pieces list of pieces, each a list of 1-based vertex references (a simple
 *   ring in retail winding)
 * @param level nil (no level test), true (the level of the first piece's own points) or a
 *   height (m, as `core.refs_level` gives it)
 * @tparam[opt] function hub_height function(x, z) -> y (a number, else the hub stays on the
 *   piece's plane)
 * @tparam[opt] number snap the builder's snap grid (m)
 * @tparam[opt] boolean checked the pieces were tested for crossings (refs_crossing) already
 * @tparam[opt] number budget the vertex count that stops the call (the builder's budget)
 * @return the height when every fan point is at the level; else a list of triangles `{x1,
 *   y1, z1, x2, y2, z2, x3, y3, z3}` (hub first, in fan order); or false, k when the pool
 *   went over the budget with piece k (its records pushed: `Room:check_budget` raises); or
 *   nil, k when piece k cannot be made here (a bad reference, a crossing, no area, a hub
 *   height outside +-65,536 m): nothing of it was added, and `Room:fan_refs` of it raises
 *   the builder's message
 * @raise on a bad argument, a room not in the store, or out of memory
 */
static int l_block_ground(lua_State *L) {
    lpsdl_store(L, 1);
    lua_Integer room = luaL_checkinteger(L, 2);
    lua_Integer group = luaL_checkinteger(L, 3);
    luaL_argcheck(L, group >= 1 && group <= (lua_Integer)PSDL_STORE_MAX, 3, "a texture group index (>= 1) expected");
    size_t count;
    lpsdl_pool_floats(L, 4, 3, &count); /* checks the pool */
    luaL_checktype(L, 5, LUA_TTABLE);
    int level_mode = lua_toboolean(L, 6);
    if (level_mode && !lua_isboolean(L, 6)) luaL_checknumber(L, 6);
    if (!lua_isnoneornil(L, 7)) luaL_checktype(L, 7, LUA_TFUNCTION);
    double snap = luaL_optnumber(L, 8, 0);
    int checked = lua_toboolean(L, 9);
    double budget = lua_isnoneornil(L, 10) ? -1 : luaL_checknumber(L, 10); /* (math.huge: none) */
    lua_settop(L, 10);
    int has_hub_height = !lua_isnil(L, 7);
    /* the pieces' references, checked as integers; scratch sized by the largest piece */
    lua_Integer np = (lua_Integer)lua_rawlen(L, 5);
    size_t total = 0, most = 0;
    for (lua_Integer k = 1; k <= np; k++) {
        if (lua_rawgeti(L, 5, k) != LUA_TTABLE)
            luaL_argerror(L, 5, lua_pushfstring(L, "pieces[%I]: list of vertex references expected", k));
        size_t n = (size_t)lua_rawlen(L, -1);
        lua_pop(L, 1);
        if (n > ((size_t)INT32_MAX) / 8 || total > ((size_t)INT32_MAX) / 8 - n)
            luaL_argerror(L, 5, "pieces: too many references");
        total += n;
        if (n > most) most = n;
    }
    /* one buffer for all (doubles first), the one kept from the last call when it is large
     * enough and not in use (a hub_height calling back in), else a new one kept instead */
    size_t outcap = psdl_ground_bound(1) * (size_t)np + 6 * total; /* psdl_ground_bound per piece */
    size_t nd = 3 * most + 3 * most + 3, nu = total + psdl_ground_bound(most) + most + 1 + outcap;
    size_t bytes = sizeof(ground_buf) + nd * sizeof(double) + nu * sizeof(uint32_t);
    ground_buf *gb = NULL;
    if (lua_type(L, lua_upvalueindex(1)) == LUA_TUSERDATA) {
        gb = (ground_buf *)lua_touserdata(L, lua_upvalueindex(1));
        if (gb->busy || gb->bytes < bytes) gb = NULL;
    }
    if (!gb) {
        size_t want = bytes < 16384 ? 16384 : bytes;
        gb = (ground_buf *)scratch(L, want, 1);
        gb->bytes = want;
        lua_copy(L, -1, lua_upvalueindex(1));
    } else {
        lua_pushvalue(L, lua_upvalueindex(1)); /* (kept on the stack while in use) */
    }
    gb->busy = 1;
    double *pts = (double *)(void *)(gb + 1);                                 /* 11: the buffer */
    double *extra = pts + 3 * most;
    uint32_t *refs = (uint32_t *)(void *)(extra + 3 * most + 3);
    uint32_t *fans = refs + total;
    uint32_t *hubs = fans + psdl_ground_bound(most);
    uint32_t *out = hubs + most + 1;
    size_t at = 0, wout = 0;
    for (lua_Integer k = 1; k <= np; k++) {
        lua_rawgeti(L, 5, k);
        size_t n = (size_t)lua_rawlen(L, -1);
        uint32_t *pr = refs + at;
        for (size_t i = 0; i < n; i++) {
            int ok;
            lua_rawgeti(L, -1, (lua_Integer)i + 1);
            lua_Integer r = lua_tointegerx(L, -1, &ok);
            lua_pop(L, 1);
            if (!ok || r < 1 || (lua_Unsigned)r > (lua_Unsigned)UINT32_MAX) {
                gb->busy = 0;
                luaL_pushfail(L);
                lua_pushinteger(L, k);
                return 2;
            }
            pr[i] = (uint32_t)r;
        }
        lua_pop(L, 1);
        at += n;
        size_t ne = 0;
        psdl_pool *pool = lpsdl_pool(L, 4, 3);
        size_t w = psdl_ground_plan(fans, extra, &ne, pts, pool, pr, n, !checked);
        if (w == PSDL_GEOM_NOMEM) return luaL_error(L, "not enough memory");
        if (w == PSDL_GROUND_BADREF || w == PSDL_GROUND_CROSSING || w == PSDL_GROUND_NOAREA) {
            gb->busy = 0;
            luaL_pushfail(L);
            lua_pushinteger(L, k);
            return 2;
        }
        if (has_hub_height) /* the caller's ground under each added hub (Room:fan's hub_height) */
            for (size_t j = 0; j < ne; j++) {
                lua_pushvalue(L, 7);
                lua_pushnumber(L, extra[3 * j]);
                lua_pushnumber(L, extra[3 * j + 2]);
                lua_call(L, 2, 1);
                if (lua_type(L, -1) == LUA_TNUMBER) extra[3 * j + 1] = (double)lua_tonumber(L, -1);
                lua_pop(L, 1);
            }
        for (size_t j = 0; j < 3 * ne; j++) /* Builder:vertices_flat's test */
            if (!(extra[j] >= -PSDL_MAX_COORDINATE && extra[j] <= PSDL_MAX_COORDINATE)) {
                gb->busy = 0;
                luaL_pushfail(L);
                lua_pushinteger(L, k);
                return 2;
            }
        if (wout + w > outcap) return luaL_error(L, "block_ground: fans past their bound");
        pool = lpsdl_pool(L, 4, 3); /* (fetched again after the Lua calls) */
        struct psdl_store *st = lpsdl_store(L, 1);
        if (room < 1 || (lua_Unsigned)room > (lua_Unsigned)psdl_store_rooms(st))
            luaL_argerror(L, 2, "no such room in the store");
        int e = psdl_ground_emit(st, (size_t)room, (uint32_t)group, pool, pr, n, fans, w, extra, ne, snap, hubs,
                                 out + wout);
        if (e == PSDL_STORE_NOMEM) return luaL_error(L, "not enough memory");
        if (e) return luaL_error(L, "the store is full");
        wout += w;
        if (budget >= 0 && (double)psdl_pool_count(pool) > budget) {
            gb->busy = 0;
            lua_pushboolean(L, 0);
            lua_pushinteger(L, k);
            return 2;
        }
    }
    psdl_pool *pool = lpsdl_pool(L, 4, 3);
    if (level_mode) {
        double y0 = 0;
        int level = 1;
        if (lua_isboolean(L, 6)) { /* the level of the first piece's own points */
            lua_rawgeti(L, 5, 1);
            size_t n = (size_t)lua_rawlen(L, -1);
            lua_pop(L, 1);
            const float *v = psdl_pool_data(pool);
            level = n > 0;
            for (size_t i = 0; i < n && level; i++) {
                double h = (double)v[3 * (size_t)(refs[i] - 1) + 1];
                if (i == 0) y0 = h;
                else if (h != y0) level = 0;
            }
        } else {
            y0 = (double)lua_tonumber(L, 6);
        }
        float y;
        if (level && psdl_ground_level(pool, out, wout, &y) && (double)y == y0) {
            gb->busy = 0;
            lua_pushnumber(L, (lua_Number)y);
            return 1;
        }
    }
    /* the triangles (hub, v(j-1), v(j)) of each fan: the points copied before any table is made */
    size_t ntri = 0;
    for (size_t i = 0; i < wout; i += 1 + out[i]) ntri += out[i] - 2;
    double *xyz = (double *)scratch(L, 3 * (wout + 1), sizeof *xyz); /* 12 */
    gb->busy = 0; /* (out is read below; no Lua runs until the tables, which copy from xyz) */
    pool = lpsdl_pool(L, 4, 3);
    count = psdl_pool_count(pool);
    const float *v = psdl_pool_data(pool);
    for (size_t i = 0; i < wout; i++) {
        uint32_t r = out[i];
        xyz[3 * i] = xyz[3 * i + 1] = xyz[3 * i + 2] = 0;
        if (r >= 1 && r <= count) {
            const float *p = v + 3 * (size_t)(r - 1);
            xyz[3 * i] = p[0], xyz[3 * i + 1] = p[1], xyz[3 * i + 2] = p[2];
        }
    }
    lua_createtable(L, ntri < INT32_MAX ? (int)ntri : 0, 0);
    lua_Integer t = 0;
    for (size_t i = 0; i < wout; i += 1 + out[i]) {
        size_t m = out[i];
        const double *h = xyz + 3 * (i + 1);
        for (size_t j = 3; j <= m; j++) {
            const double *a = xyz + 3 * (i + j - 1), *c = xyz + 3 * (i + j);
            lua_createtable(L, 9, 0);
            for (int q = 0; q < 3; q++) {
                lua_pushnumber(L, h[q]);
                lua_rawseti(L, -2, q + 1);
                lua_pushnumber(L, a[q]);
                lua_rawseti(L, -2, q + 4);
                lua_pushnumber(L, c[q]);
                lua_rawseti(L, -2, q + 7);
            }
            lua_rawseti(L, -2, ++t);
        }
    }
    return 1;
}

/* ================================================================ crossings */

/* Reads the points {x, y, z} of the list at idx (argument arg, named `what` in errors) into
 * xyz from point m on; returns the count read. */
static size_t read_ring(lua_State *L, int idx, int arg, const char *what, lua_Integer k, double *xyz, size_t m,
                        size_t cap) {
    lua_Integer n = luaL_len(L, idx);
    for (lua_Integer i = 1; i <= n && m < cap; i++) {
        if (lua_rawgeti(L, idx, i) != LUA_TTABLE)
            luaL_argerror(L, arg, lua_pushfstring(L, "%s[%I]: point table expected", what, k > 0 ? k : i));
        for (int c = 1; c <= 3; c++) {
            int ok;
            lua_geti(L, -1, c);
            double v = (double)lua_tonumberx(L, -1, &ok);
            lua_pop(L, 1);
            if (c == 2 && !ok) v = 0; /* y is not read by the test */
            else if (!ok || !isfinite(v))
                luaL_argerror(L, arg, lua_pushfstring(L, "%s[%I][%d]: finite number expected", what, i, c));
            xyz[3 * m + (size_t)(c - 1)] = v;
        }
        lua_pop(L, 1);
        m++;
    }
    return m;
}

/***
 * The first proper crossing between two edges of a ring with holes (psdl_self_crossing,
 * tolerance 1e-6), read straight from point tables: what `core.self_crossing` answers on the
 * same points flattened.
 * @function rings_crossing
 * @tparam table ring points `{x, y, z}` (metres; plan x, z)
 * @tparam[opt] table holes list of rings like `ring`, each of at least one point
 * @treturn nil|integer nil when the rings are simple and apart, else the two crossing edges
 *   (1-based over the ring's points, then each hole's)
 * @raise on a point that is not a table of finite numbers, or an empty hole
 */
static int l_rings_crossing(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    int has_holes = !lua_isnoneornil(L, 2);
    if (has_holes) luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    lua_Integer nh = has_holes ? luaL_len(L, 2) : 0;
    lua_Integer total = luaL_len(L, 1);
    luaL_argcheck(L, total >= 0 && total <= (lua_Integer)1 << 28, 1, "too many points");
    luaL_argcheck(L, nh >= 0 && nh <= (lua_Integer)1 << 24, 2, "too many holes");
    for (lua_Integer h = 1; h <= nh; h++) {
        if (lua_rawgeti(L, 2, h) != LUA_TTABLE) luaL_argerror(L, 2, lua_pushfstring(L, "holes[%I]: table expected", h));
        lua_Integer n = luaL_len(L, -1);
        if (n < 1 || n > (lua_Integer)1 << 28) luaL_argerror(L, 2, lua_pushfstring(L, "holes[%I]: points expected", h));
        total += n;
        lua_pop(L, 1);
        luaL_argcheck(L, total <= (lua_Integer)1 << 28, 2, "too many points");
    }
    size_t cap = (size_t)total;
    double *xyz = (double *)scratch(L, 3 * cap, sizeof *xyz);                        /* 3 */
    uint32_t *starts = (uint32_t *)scratch(L, (size_t)nh, sizeof *starts);           /* 4 */
    size_t m = read_ring(L, 1, 1, "ring", 0, xyz, 0, cap);
    for (lua_Integer h = 1; h <= nh; h++) {
        lua_rawgeti(L, 2, h);
        starts[h - 1] = (uint32_t)m;
        m = read_ring(L, lua_gettop(L), 2, "holes", 0, xyz, m, cap);
        lua_pop(L, 1);
    }
    uint32_t e[2];
    size_t r = psdl_self_crossing(e, xyz, m, nh ? starts : NULL, (size_t)nh, 1e-6);
    if (r == PSDL_GEOM_NOMEM) return luaL_error(L, "not enough memory");
    if (r == PSDL_GEOM_INVALID) return luaL_argerror(L, 1, "the ring and each hole need at least one point");
    return lpsdl_push_edges(L, r != 0, e);
}

/***
 * `rings_crossing` of rings given as vertex references (blocks/init.lua's polygons): the
 * points read from the vertex pool in place, as `Builder:point` gives them.
 * @function refs_crossing
 * @param pool a vertex Pool (psdl.core.pool, dimension 3)
 * @tparam table refs the ring: 1-based vertex references
 * @tparam[opt] table holes list of rings like `refs`, each of at least one reference
 * @treturn nil|integer nil when the rings are simple and apart, else the two crossing edges
 *   (1-based over the ring's points, then each hole's)
 * @raise on a reference outside the pool (naming it), an empty hole, or too many points
 */
static int l_refs_crossing(lua_State *L) {
    size_t count;
    lpsdl_pool_floats(L, 1, 3, &count);
    luaL_checktype(L, 2, LUA_TTABLE);
    int has_holes = !lua_isnoneornil(L, 3);
    if (has_holes) luaL_checktype(L, 3, LUA_TTABLE);
    lua_settop(L, 3);
    size_t nh = has_holes ? lua_rawlen(L, 3) : 0;
    size_t total = lua_rawlen(L, 2);
    luaL_argcheck(L, total <= (size_t)1 << 28, 2, "too many points");
    luaL_argcheck(L, nh <= (size_t)1 << 24, 3, "too many holes");
    for (size_t h = 1; h <= nh; h++) {
        if (lua_rawgeti(L, 3, (lua_Integer)h) != LUA_TTABLE)
            luaL_argerror(L, 3, lua_pushfstring(L, "holes[%I]: table expected", (lua_Integer)h));
        size_t n = lua_rawlen(L, -1);
        if (n < 1) luaL_argerror(L, 3, lua_pushfstring(L, "holes[%I]: references expected", (lua_Integer)h));
        total += n;
        lua_pop(L, 1);
        luaL_argcheck(L, total <= (size_t)1 << 28, 3, "too many points");
    }
    double local[3 * 256];
    uint32_t lstarts[16];
    double *xyz = 3 * total <= sizeof local / sizeof local[0] ? local : (double *)scratch(L, 3 * total, sizeof *xyz);
    uint32_t *starts = nh <= 16 ? lstarts : (uint32_t *)scratch(L, nh, sizeof *starts);
    const float *v = lpsdl_pool_floats(L, 1, 3, &count); /* after the last allocation */
    size_t m = read_refs(L, v, count, 2, 2, "refs", 0, xyz, 3, 0, total);
    for (size_t h = 1; h <= nh; h++) {
        lua_rawgeti(L, 3, (lua_Integer)h);
        starts[h - 1] = (uint32_t)m;
        m = read_refs(L, v, count, lua_gettop(L), 3, "holes", (lua_Integer)h, xyz, 3, m, total);
        lua_pop(L, 1);
    }
    uint32_t e[2];
    size_t r = psdl_self_crossing(e, xyz, m, nh ? starts : NULL, nh, 1e-6);
    if (r == PSDL_GEOM_NOMEM) return luaL_error(L, "not enough memory");
    if (r == PSDL_GEOM_INVALID) return luaL_argerror(L, 2, "the ring and each hole need at least one point");
    return lpsdl_push_edges(L, r != 0, e);
}

/* ================================================================ splitting (psdl_split.h) */

#define OBSTACLES "psdl.SplitObstacles"

/* The obstacles' userdata: the struct, then 4 box values per polygon, the x, z pairs and the
 * count + 1 start offsets in the same block. */
typedef struct obstacles_box {
    psdl_split_obstacles o;
} obstacles_box;

/***
 * Polygons the chords of `split_chord` keep clear of (given building footprints), kept in C.
 * @function split_obstacles
 * @tparam table polygons list of polygons, each a list of points `{x, y, z}` (metres; the plan
 *   is x, z)
 * @treturn userdata psdl.SplitObstacles
 * @raise on a polygon that is not a table or a point that is not a table of finite x and z
 *   (naming polygon, point, coordinate)
 */
static int l_split_obstacles(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    lua_Integer np = luaL_len(L, 1);
    luaL_argcheck(L, np >= 0 && np < (lua_Integer)1 << 40, 1, "too many polygons");
    size_t npts = 0;
    for (lua_Integer k = 1; k <= np; k++) {
        if (lua_geti(L, 1, k) != LUA_TTABLE)
            luaL_argerror(L, 1, lua_pushfstring(L, "polygons[%I]: table expected", k));
        lua_Integer n = luaL_len(L, -1);
        if (n < 0 || n > (lua_Integer)1 << 40) luaL_argerror(L, 1, lua_pushfstring(L, "polygons[%I]: bad length", k));
        npts += (size_t)n;
        lua_pop(L, 1);
    }
    if ((size_t)np > ((size_t)-1) / 64 || npts > ((size_t)-1) / 64) return luaL_error(L, "not enough memory");
    size_t bytes = sizeof(obstacles_box) + 4 * (size_t)np * sizeof(double) + 2 * npts * sizeof(double) +
                   ((size_t)np + 1) * sizeof(size_t);
    obstacles_box *b = (obstacles_box *)lua_newuserdatauv(L, bytes, 0);
    double *box = (double *)(void *)(b + 1);
    double *xz = box + 4 * (size_t)np;
    size_t *start = (size_t *)(void *)(xz + 2 * npts);
    b->o.count = (size_t)np, b->o.start = start, b->o.xz = xz, b->o.box = box;
    luaL_setmetatable(L, OBSTACLES);
    size_t m = 0;
    for (lua_Integer k = 1; k <= np; k++) {
        start[k - 1] = m;
        double *bb = box + 4 * (k - 1);
        bb[0] = HUGE_VAL, bb[1] = -HUGE_VAL, bb[2] = HUGE_VAL, bb[3] = -HUGE_VAL;
        lua_geti(L, 1, k);
        lua_Integer n = luaL_len(L, -1);
        for (lua_Integer i = 1; i <= n && m < npts; i++) {
            if (lua_geti(L, -1, i) != LUA_TTABLE)
                luaL_argerror(L, 1, lua_pushfstring(L, "polygons[%I][%I]: point table expected", k, i));
            double x = coord(L, "polygons", k, i, 1), z = coord(L, "polygons", k, i, 3);
            xz[2 * m] = x, xz[2 * m + 1] = z;
            if (x < bb[0]) bb[0] = x;
            if (x > bb[1]) bb[1] = x;
            if (z < bb[2]) bb[2] = z;
            if (z > bb[3]) bb[3] = z;
            m++;
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    start[np] = m;
    return 1;
}

/* split_chord's and split_chord_refs's limits: arguments a .. a + 4 (max_area, max_points,
 * max_length, try, obstacles), the stack set to a + 4. */
typedef struct split_limits {
    double area, points, length;
    int try_;
    const psdl_split_obstacles *obs;
} split_limits;
static split_limits check_split_limits(lua_State *L, int a) {
    split_limits k;
    k.area = luaL_checknumber(L, a), k.points = luaL_checknumber(L, a + 1);
    k.length = luaL_checknumber(L, a + 2);
    k.try_ = lua_toboolean(L, a + 3);
    k.obs = NULL;
    if (!lua_isnoneornil(L, a + 4)) k.obs = &((obstacles_box *)luaL_checkudata(L, a + 4, OBSTACLES))->o;
    lua_settop(L, a + 4);
    return k;
}

/* psdl_split_chord of the n plan points xz under the limits k; pushes its answer (the chord's
 * ends, 1-based, or whether to keep the polygon). */
static int push_split(lua_State *L, const double *xz, size_t n, const split_limits *k) {
    size_t ci = 0, cj = 0;
    int rc = psdl_split_chord(xz, n, k->area, k->points, k->length, k->try_, k->obs, &ci, &cj);
    if (rc == PSDL_SPLIT_NOMEM) return luaL_error(L, "not enough memory");
    if (rc == PSDL_SPLIT_CHORD) {
        lua_pushinteger(L, (lua_Integer)ci + 1);
        lua_pushinteger(L, (lua_Integer)cj + 1);
        return 2;
    }
    lua_pushboolean(L, rc == PSDL_SPLIT_FITS);
    return 1;
}

/***
 * What to do with a piece of a block on the way to rooms within the limits (psdl_split_chord;
 * blocks/split.lua): keep it (within the limits, or not to be cut), cut it along a chord
 * between two of its vertices, or none found.
 * @function split_chord
 * @tparam table pts the polygon: at least 3 points `{x, y, z}` (metres; plan x, z), retail
 *   winding, at most 2^24
 * @tparam number max_area m²
 * @tparam number max_points points
 * @tparam number max_length m (the shape's extent across which it is cut)
 * @tparam boolean try false: keep it even when over a limit (too deep a recursion)
 * @tparam[opt] userdata obstacles psdl.SplitObstacles (chords avoid them when they can)
 * @treturn[1] integer i, integer j the chord's ends (1-based indices into pts)
 * @treturn[2] boolean true: keep the polygon; false: over a limit, no chord found
 * @raise on a bad point (naming it), a limit that is not a number, fewer than 3 points, or
 *   obstacles that are not psdl.SplitObstacles
 */
static int l_split_chord(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    split_limits k = check_split_limits(L, 2);
    lua_Integer n = luaL_len(L, 1);
    luaL_argcheck(L, n >= 3, 1, "at least 3 points expected");
    luaL_argcheck(L, n <= (lua_Integer)1 << 24, 1, "too many points");
    double local[512];
    double *xz = 2 * (size_t)n <= sizeof local / sizeof local[0] ? local : (double *)scratch(L, 2 * (size_t)n, sizeof *xz);
    for (lua_Integer i = 1; i <= n; i++) {
        if (lua_rawgeti(L, 1, i) != LUA_TTABLE)
            luaL_argerror(L, 1, lua_pushfstring(L, "pts[%I]: point table expected", i));
        for (int c = 0; c < 2; c++) {
            int ok;
            lua_geti(L, -1, c ? 3 : 1);
            double v = (double)lua_tonumberx(L, -1, &ok);
            lua_pop(L, 1);
            if (!ok || !isfinite(v))
                luaL_argerror(L, 1, lua_pushfstring(L, "pts[%I][%d]: finite number expected", i, c ? 3 : 1));
            xz[2 * (i - 1) + c] = v;
        }
        lua_pop(L, 1);
    }
    return push_split(L, xz, (size_t)n, &k);
}

/***
 * `split_chord` of a polygon given as vertex references (blocks/split.lua): the points read
 * from the vertex pool in place, as `Builder:point` gives them.
 * @function split_chord_refs
 * @param pool a vertex Pool (psdl.core.pool, dimension 3)
 * @tparam table refs at least 3 1-based vertex references, retail winding, at most 2^24
 * @tparam number max_area m²
 * @tparam number max_points points
 * @tparam number max_length m
 * @tparam boolean try false: keep it even when over a limit
 * @tparam[opt] userdata obstacles psdl.SplitObstacles
 * @treturn[1] integer i, integer j the chord's ends (1-based indices into refs)
 * @treturn[2] boolean true: keep the polygon; false: over a limit, no chord found
 * @raise on a reference outside the pool (naming it), a limit that is not a number, fewer
 *   than 3 references, or obstacles that are not psdl.SplitObstacles
 */
static int l_split_chord_refs(lua_State *L) {
    size_t count;
    lpsdl_pool_floats(L, 1, 3, &count);
    luaL_checktype(L, 2, LUA_TTABLE);
    split_limits k = check_split_limits(L, 3);
    size_t n = lua_rawlen(L, 2);
    luaL_argcheck(L, n >= 3, 2, "at least 3 references expected");
    luaL_argcheck(L, n <= (size_t)1 << 24, 2, "too many references");
    double local[512];
    double *xz = 2 * n <= sizeof local / sizeof local[0] ? local : (double *)scratch(L, 2 * n, sizeof *xz);
    const float *v = lpsdl_pool_floats(L, 1, 3, &count); /* after the last allocation */
    read_refs(L, v, count, 2, 2, "refs", 0, xz, 2, 0, n);
    for (size_t i = 0; i < 2 * n; i++)
        if (!isfinite(xz[i])) luaL_argerror(L, 2, "a point that is not finite");
    return push_split(L, xz, n, &k);
}

/* An optional 1-based index at idx within 1..n, 0-based, or PSDL_REGION_NONE when nil. */
static size_t opt_index(lua_State *L, int idx, size_t n) {
    if (lua_isnoneornil(L, idx)) return PSDL_REGION_NONE;
    lua_Integer v = luaL_checkinteger(L, idx);
    luaL_argcheck(L, v >= 1 && (lua_Unsigned)v <= (lua_Unsigned)n, idx, "index out of range");
    return (size_t)v - 1;
}

/***
 * The point of the outer ring a hole's point is joined to (psdl_region_target): outer points
 * by distance, the first whose chord is in the outer ring's angle there and clear, first
 * away from the edges (10 degrees), then any; with `avoid` and `other`, not outer point
 * `avoid` and not meeting the chord from hole point `other` to it.
 * @function Region:target
 * @tparam integer hole the hole (1-based: the region's second ring is hole 1)
 * @tparam integer k the hole's point (1-based)
 * @tparam[opt] integer avoid an outer point (1-based), given with `other`
 * @tparam[opt] integer other the hole point of the first chord (1-based)
 * @treturn integer|nil the outer point (1-based)
 * @raise on an index out of range, or avoid without other (or the reverse)
 */
static int l_region_target(lua_State *L) {
    region_box *b = (region_box *)luaL_checkudata(L, 1, REGION);
    lua_Integer hole = luaL_checkinteger(L, 2);
    luaL_argcheck(L, hole >= 1 && (lua_Unsigned)hole < (lua_Unsigned)b->nrings, 2, "no such hole");
    size_t ring = (size_t)hole, nh = b->start[ring + 1] - b->start[ring], no = b->start[1] - b->start[0];
    lua_Integer k = luaL_checkinteger(L, 3);
    luaL_argcheck(L, k >= 1 && (lua_Unsigned)k <= (lua_Unsigned)nh, 3, "index out of range");
    size_t avoid = opt_index(L, 4, no), other = opt_index(L, 5, nh);
    luaL_argcheck(L, (avoid == PSDL_REGION_NONE) == (other == PSDL_REGION_NONE), 4, "avoid and other go together");
    size_t r = psdl_region_target(b->xz, b->ids, b->start, b->nrings, ring, (size_t)k - 1, avoid, other);
    if (r == PSDL_REGION_NOMEM) return luaL_error(L, "not enough memory");
    if (r == PSDL_REGION_NONE) lua_pushnil(L);
    else lua_pushinteger(L, (lua_Integer)r + 1);
    return 1;
}

static const luaL_Reg region_meth[] = {
    {"clear", l_region_clear},
    {"target", l_region_target},
    {NULL, NULL},
};

static const luaL_Reg blocks_funcs[] = {
    {"face_loops", l_face_loops},
    {"network_faces", l_network_faces},
    {"apron_rings", l_apron_rings},
    {"region", l_region},
    {"refs_box", l_refs_box},
    {"refs_level", l_refs_level},
    {"rings_crossing", l_rings_crossing},
    {"split_obstacles", l_split_obstacles},
    {"split_chord", l_split_chord},
    {"split_chord_refs", l_split_chord_refs},
    {"refs_crossing", l_refs_crossing},
    {"room_outline", l_room_outline},
    {"apron_edge", l_apron_edge},
    {"refs_area2", l_refs_area2},
    {"refs_inside", l_refs_inside},
    {NULL, NULL},
};

void lpsdl_open_blocks(lua_State *L) {
    if (luaL_newmetatable(L, REGION)) {
        luaL_newlibtable(L, region_meth);
        luaL_setfuncs(L, region_meth, 0);
        lua_setfield(L, -2, "__index");
    }
    lua_pop(L, 1);
    luaL_newmetatable(L, OBSTACLES);
    lua_pop(L, 1);
    luaL_setfuncs(L, blocks_funcs, 0);
    lua_pushnil(L); /* block_ground's scratch, made on its first call */
    lua_pushcclosure(L, l_block_ground, 1);
    lua_setfield(L, -2, "block_ground");
}
