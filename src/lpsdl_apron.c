/*
 * lpsdl_apron.c -- `core.apron_rings`, the binding of psdl_apron.h (the outer edge of a
 * city's ground apron), registered into the module table by lpsdl_open_apron.
 *
 * Longjmp safety: the points go to Lua userdata scratch before the kernel runs; the kernel's
 * result is copied into scratch and freed before any table is made.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "lpsdl.h"
#include "psdl_apron.h"

static void *scratch(lua_State *L, size_t n, size_t size) {
    if (n == 0) n = 1;
    if (n > ((size_t)-1) / 4 / size) luaL_error(L, "not enough memory");
    return lua_newuserdatauv(L, n * size, 0);
}

/* Coordinate c (1 = x, 3 = z) of point i of outline k (the point table on top of the stack). */
static double coord(lua_State *L, lua_Integer k, lua_Integer i, int c) {
    int ok;
    lua_geti(L, -1, c);
    double v = (double)lua_tonumberx(L, -1, &ok);
    lua_pop(L, 1);
    if (!ok || !isfinite(v))
        luaL_argerror(L, 1, lua_pushfstring(L, "outlines[%I][%I][%d]: finite number expected", k, i, c));
    return v;
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
            xz[2 * m] = coord(L, k, i, 1);
            xz[2 * m + 1] = coord(L, k, i, 3);
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

static const luaL_Reg apron_funcs[] = {
    {"apron_rings", l_apron_rings},
    {NULL, NULL},
};

void lpsdl_open_apron(lua_State *L) { luaL_setfuncs(L, apron_funcs, 0); }
