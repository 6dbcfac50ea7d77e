/*
 * lpsdl_heightfield.c -- the height grid userdata of `psdl.core` ("psdl.Heightfield"): one
 * C array (psdl_heightfield.h) where the terrain code used to keep a Lua table of numbers.
 *
 * A Heightfield reads like the flat, 1-based, row-major table it replaces: `h[k]` (k = i *
 * cols + j + 1; nil outside 1..#h), `#h`, `ipairs(h)`. Three views:
 *   heights  numbers (metres); writable: `h[k] = number` (a field of floats or integer
 *            samples turns into doubles on its first write, so a height reads back as it
 *            was set; anything but a number, or k outside 1..#h, raises)
 *   samples  the integer samples of a decoded heightmap (read-only)
 *   mask     booleans, one byte a point (read-only)
 * Methods: h:size() -> rows, cols; h:type() -> "f32" | "f64" | "u16" | "u8"; h:view();
 * h:copy(); h:mapped(offset, scale) (heights over a samples view, sharing its memory);
 * h:stats([water]); h:point(i, j); h:bilinear(u, v); h:quantize(offset, scale, maxval);
 * h:to_table(). The samples live in a block userdata ("psdl.HeightfieldBlock": Lua memory,
 * counted by the collector and by psdl.sandbox's --max-memory; a decoded NHTG or raster is
 * freed by its __gc) that the fields using it hold as their user value: copies and mapped views share a block and are
 * copied on their first write (copy-on-write), so h:copy() costs nothing until then.
 *
 *   core.heightfield(rows, cols [, init]) -> heights (doubles): init nil (0), a number (every
 *     point), a flat table of rows * cols numbers, or a function (i, j) -> height (i, j from 0)
 *   core.heightfield_rasterize(tris, ox, oz, cell, rows, cols [, fill]) -> heights, mask,
 *     covered (see psdl_hf_rasterize and psdl_hf_fill_nearest)
 *   core.nonzero_bytes(s) -> count of bytes that are not 0
 *   core.is_heightfield(v) -> boolean
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lpsdl.h"
#include "psdl_heightfield.h"
#include "psdl_nhtg.h"

#define HF_MT "psdl.Heightfield"

/* the largest field made from Lua: 16385 x 16385 points (an NHTG at its tile limit) */
#define HF_MAX_POINTS ((size_t)(PSDL_NHTG_MAX_TILES + 1u) * (PSDL_NHTG_MAX_TILES + 1u))

#define BLOCK_MT "psdl.HeightfieldBlock"

/* The memory one or more fields read: samples allocated with the block (after its header,
 * inside the userdata, so that the collector counts them and paces itself), or a decoded
 * core object whose array the fields read. */
typedef struct hf_block {
    psdl_raster *raster;
    psdl_nhtg *nhtg;
} hf_block;

/* the samples start this far into a block userdata (Lua aligns userdata for any type) */
#define BLOCK_HEADER ((sizeof(hf_block) + 15u) & ~(size_t)15u)

struct lpsdl_hf {
    psdl_heightfield f;
    int view;     /* LPSDL_HF_HEIGHTS, _SAMPLES, _MASK */
    int writable; /* f.data: doubles this field alone reads (else a write copies first) */
    hf_block *block; /* kept alive by the user value */
};

static int block_gc(lua_State *L) {
    hf_block *b = (hf_block *)luaL_checkudata(L, 1, BLOCK_MT);
    psdl_raster_free(b->raster);
    b->raster = NULL;
    psdl_nhtg_free(b->nhtg);
    b->nhtg = NULL;
    return 0;
}

/* A new block with room for bytes of samples, made the user value of the field on top of
 * the stack. */
static hf_block *new_block(lua_State *L, lpsdl_hf *h, size_t bytes) {
    hf_block *b = (hf_block *)lua_newuserdatauv(L, BLOCK_HEADER + bytes, 0);
    memset(b, 0, sizeof *b);
    luaL_setmetatable(L, BLOCK_MT);
    lua_setiuservalue(L, -2, 1);
    h->block = b;
    return b;
}

lpsdl_hf *lpsdl_hf_test(lua_State *L, int idx) { return (lpsdl_hf *)luaL_testudata(L, idx, HF_MT); }

const psdl_heightfield *lpsdl_hf_field(const lpsdl_hf *h) { return &h->f; }

int lpsdl_hf_view(const lpsdl_hf *h) { return h->view; }

/* A field on top of the stack; no block yet. */
static lpsdl_hf *push_field(lua_State *L, uint32_t rows, uint32_t cols, int type, int view) {
    lpsdl_hf *h = (lpsdl_hf *)lua_newuserdatauv(L, sizeof *h, 1);
    memset(h, 0, sizeof *h);
    luaL_setmetatable(L, HF_MT);
    h->f.rows = rows;
    h->f.cols = cols;
    h->f.type = (psdl_hf_type)type;
    h->f.scale = 1;
    h->view = view;
    return h;
}

lpsdl_hf *lpsdl_hf_push(lua_State *L, uint32_t rows, uint32_t cols, int type, int view) {
    lpsdl_hf *h = push_field(L, rows, cols, type, view);
    new_block(L, h, 0);
    return h;
}

/* A field on top of the stack reading the memory of the field at idx (not writable). */
static lpsdl_hf *push_sharing(lua_State *L, int idx, const lpsdl_hf *src, int view) {
    lpsdl_hf *h = push_field(L, src->f.rows, src->f.cols, src->f.type, view);
    h->f = src->f;
    h->block = src->block;
    lua_getiuservalue(L, idx, 1);
    lua_setiuservalue(L, -2, 1);
    return h;
}

void *lpsdl_hf_alloc(lua_State *L, lpsdl_hf *h) {
    size_t n = psdl_hf_count(&h->f), es = psdl_hf_sample_size(h->f.type);
    if (n == 0 || n > HF_MAX_POINTS) luaL_error(L, "a height grid of %d x %d points", (int)h->f.rows, (int)h->f.cols);
    hf_block *b = new_block(L, h, n * es); /* replaces the field's empty block */
    void *p = (char *)b + BLOCK_HEADER;
    h->f.data = p;
    h->writable = h->f.type == PSDL_HF_F64 && h->view == LPSDL_HF_HEIGHTS;
    return p;
}

void lpsdl_hf_own_raster(lpsdl_hf *h, psdl_raster *r) {
    h->block->raster = r;
    h->f.data = r->samples;
}

void lpsdl_hf_own_nhtg(lpsdl_hf *h, psdl_nhtg *t) {
    h->block->nhtg = t;
    h->f.data = t->heights;
}

static lpsdl_hf *check_hf(lua_State *L, int idx) { return (lpsdl_hf *)luaL_checkudata(L, idx, HF_MT); }

static const char *type_name(psdl_hf_type t) {
    switch (t) {
    case PSDL_HF_F32: return "f32";
    case PSDL_HF_F64: return "f64";
    case PSDL_HF_U16: return "u16";
    case PSDL_HF_U8: return "u8";
    }
    return "?";
}

/* Element k (0-based) as the view shows it. */
static void push_value(lua_State *L, const lpsdl_hf *h, size_t k) {
    if (h->view == LPSDL_HF_MASK) {
        lua_pushboolean(L, ((const uint8_t *)h->f.data)[k] != 0);
    } else if (h->view == LPSDL_HF_SAMPLES) {
        lua_pushinteger(L, h->f.type == PSDL_HF_U16 ? ((const uint16_t *)h->f.data)[k]
                                                    : ((const uint8_t *)h->f.data)[k]);
    } else {
        lua_pushnumber(L, psdl_hf_get(&h->f, k));
    }
}

/* ---------------------------------------------------------------- metamethods */

static int hf_index(lua_State *L) {
    lpsdl_hf *h = check_hf(L, 1);
    int isint = 0;
    lua_Integer k = lua_tointegerx(L, 2, &isint);
    if (isint) {
        if (k >= 1 && (lua_Unsigned)k <= psdl_hf_count(&h->f))
            push_value(L, h, (size_t)k - 1);
        else
            lua_pushnil(L);
        return 1;
    }
    if (lua_type(L, 2) == LUA_TSTRING) {
        luaL_getmetatable(L, HF_MT);
        lua_getfield(L, -1, "methods");
        lua_pushvalue(L, 2);
        lua_rawget(L, -2);
        return 1;
    }
    lua_pushnil(L);
    return 1;
}

/* Give the field at index 1 its own array of doubles (before a write to shared memory, or
 * to floats or integer samples). The old block stays while other fields read it. */
static void make_f64(lua_State *L, lpsdl_hf *h) {
    lua_getiuservalue(L, 1, 1); /* keep the old block alive until the copy is made */
    lua_pushvalue(L, 1);
    /* the field is left as it was if this raises (out of memory) */
    hf_block *b = new_block(L, h, psdl_hf_count(&h->f) * sizeof(double));
    double *p = (double *)(void *)((char *)b + BLOCK_HEADER);
    psdl_hf_to_f64(&h->f, p);
    h->f.type = PSDL_HF_F64;
    h->f.data = p;
    h->f.offset = 0;
    h->f.scale = 1;
    h->writable = 1;
    lua_pop(L, 2);
}

static int hf_newindex(lua_State *L) {
    lpsdl_hf *h = check_hf(L, 1);
    if (h->view != LPSDL_HF_HEIGHTS)
        return luaL_error(L, "the %s of a height grid are read-only", h->view == LPSDL_HF_MASK ? "mask" : "samples");
    int isint = 0;
    lua_Integer k = lua_tointegerx(L, 2, &isint);
    size_t n = psdl_hf_count(&h->f);
    if (!isint || k < 1 || (lua_Unsigned)k > n)
        return luaL_error(L, "heights[%s]: index out of range 1..%I (a height grid has a fixed size)",
                          luaL_tolstring(L, 2, NULL), (LUAI_UACINT)n);
    if (lua_type(L, 3) != LUA_TNUMBER)
        return luaL_error(L, "heights[%I]: number expected, got %s", (LUAI_UACINT)k, luaL_typename(L, 3));
    lua_Number v = lua_tonumber(L, 3);
    if (!h->writable) make_f64(L, h);
    ((double *)h->f.data)[k - 1] = (double)v;
    return 0;
}

static int hf_len(lua_State *L) {
    lua_pushinteger(L, (lua_Integer)psdl_hf_count(&check_hf(L, 1)->f));
    return 1;
}

static int hf_tostring(lua_State *L) {
    lpsdl_hf *h = check_hf(L, 1);
    lua_pushfstring(L, HF_MT " (%d x %d %s, %s)", (int)h->f.rows, (int)h->f.cols, type_name(h->f.type),
                    h->view == LPSDL_HF_MASK ? "mask" : h->view == LPSDL_HF_SAMPLES ? "samples" : "heights");
    return 1;
}

/* ---------------------------------------------------------------- methods */

/* h:size() -> rows, cols */
static int m_size(lua_State *L) {
    lpsdl_hf *h = check_hf(L, 1);
    lua_pushinteger(L, h->f.rows);
    lua_pushinteger(L, h->f.cols);
    return 2;
}

/* h:type() -> "f32" | "f64" | "u16" | "u8" (how the samples are stored) */
static int m_type(lua_State *L) {
    lua_pushstring(L, type_name(check_hf(L, 1)->f.type));
    return 1;
}

/* h:view() -> "heights" | "samples" | "mask" */
static int m_view(lua_State *L) {
    lpsdl_hf *h = check_hf(L, 1);
    lua_pushstring(L, h->view == LPSDL_HF_MASK ? "mask" : h->view == LPSDL_HF_SAMPLES ? "samples" : "heights");
    return 1;
}

/* h:copy() -> a field with the same values, type, view and mapping, independent of h: the
 * two share their memory until either is written (which copies it first) */
static int m_copy(lua_State *L) {
    lpsdl_hf *h = check_hf(L, 1);
    push_sharing(L, 1, h, h->view);
    h->writable = 0; /* shared now: a write to either copies first */
    return 1;
}

/* s:mapped(offset, scale) -> heights = offset + scale * sample over a samples view, sharing
 * its memory (the samples view is kept alive by the new field) */
static int m_mapped(lua_State *L) {
    lpsdl_hf *h = check_hf(L, 1);
    lua_Number offset = luaL_checknumber(L, 2), scale = luaL_checknumber(L, 3);
    luaL_argcheck(L, h->view == LPSDL_HF_SAMPLES, 1, "a samples view expected");
    lpsdl_hf *m = push_sharing(L, 1, h, LPSDL_HF_HEIGHTS);
    m->f.offset = offset;
    m->f.scale = scale;
    return 1;
}

static void push_at(lua_State *L, size_t k, uint32_t cols) {
    lua_createtable(L, 2, 0);
    lua_pushinteger(L, (lua_Integer)(k / cols));
    lua_rawseti(L, -2, 1);
    lua_pushinteger(L, (lua_Integer)(k % cols));
    lua_rawseti(L, -2, 2);
}

/* h:stats([water = 312.5]) -> {min, max, mean, min_at = {i, j}, max_at = {i, j},
 * below_water, points} (heights; for a samples view min and max are the integer samples) */
static int m_stats(lua_State *L) {
    lpsdl_hf *h = check_hf(L, 1);
    lua_Number water = luaL_optnumber(L, 2, PSDL_NHTG_WATER_LEVEL);
    psdl_hf_stats s;
    psdl_heightfield f = h->f;
    if (h->view != LPSDL_HF_HEIGHTS) f.offset = 0, f.scale = 1;
    psdl_hf_stats_of(&f, water, &s);
    lua_createtable(L, 0, 7);
    if (h->view != LPSDL_HF_HEIGHTS && s.found) {
        lpsdl_set_int(L, "min", (lua_Integer)s.min);
        lpsdl_set_int(L, "max", (lua_Integer)s.max);
    } else {
        lua_pushnumber(L, s.min);
        lua_setfield(L, -2, "min");
        lua_pushnumber(L, s.max);
        lua_setfield(L, -2, "max");
    }
    lua_pushnumber(L, s.mean);
    lua_setfield(L, -2, "mean");
    push_at(L, s.min_at, h->f.cols);
    lua_setfield(L, -2, "min_at");
    push_at(L, s.max_at, h->f.cols);
    lua_setfield(L, -2, "max_at");
    lpsdl_set_int(L, "below_water", (lua_Integer)s.below);
    lpsdl_set_int(L, "points", (lua_Integer)s.count);
    return 1;
}

/* h:point(i, j) -> height of point (i, j) (from 0), clamped to the grid; nil for indices
 * that are not whole numbers */
static int m_point(lua_State *L) {
    lpsdl_hf *h = check_hf(L, 1);
    int a = 0, b = 0;
    lua_Integer i = lua_tointegerx(L, 2, &a), j = lua_tointegerx(L, 3, &b);
    if (!a || !b) {
        luaL_checknumber(L, 2);
        luaL_checknumber(L, 3);
        lua_pushnil(L);
        return 1;
    }
    lua_pushnumber(L, psdl_hf_point(&h->f, (int64_t)i, (int64_t)j));
    return 1;
}

/* h:bilinear(u, v) -> bilinear height at grid coordinates (u along columns, v along rows,
 * in cells), the edge extended outside the grid; NaN for a NaN coordinate */
static int m_bilinear(lua_State *L) {
    lpsdl_hf *h = check_hf(L, 1);
    lua_pushnumber(L, psdl_hf_bilinear(&h->f, luaL_checknumber(L, 2), luaL_checknumber(L, 3)));
    return 1;
}

/* h:quantize(offset, scale, maxval) -> samples view (u16) with sample = floor((height -
 * offset) / scale + 0.5), or nil, k (1-based element out of 0..maxval), its sample */
static int m_quantize(lua_State *L) {
    lpsdl_hf *h = check_hf(L, 1);
    lua_Number offset = luaL_checknumber(L, 2), scale = luaL_checknumber(L, 3);
    lua_Integer maxval = luaL_checkinteger(L, 4);
    luaL_argcheck(L, maxval >= 1 && maxval <= 65535, 4, "1..65535 expected");
    lpsdl_hf *q = lpsdl_hf_push(L, h->f.rows, h->f.cols, PSDL_HF_U16, LPSDL_HF_SAMPLES);
    uint16_t *out = (uint16_t *)lpsdl_hf_alloc(L, q);
    size_t bad = 0;
    double value = 0;
    if (psdl_hf_quantize(&h->f, offset, scale, (uint32_t)maxval, out, &bad, &value) != PSDL_OK) {
        luaL_pushfail(L);
        lua_pushinteger(L, (lua_Integer)bad + 1);
        lua_pushnumber(L, value);
        return 3;
    }
    return 1;
}

/* h:to_table() -> a plain Lua table of the values (as h[k] gives them) */
static int m_to_table(lua_State *L) {
    lpsdl_hf *h = check_hf(L, 1);
    size_t n = psdl_hf_count(&h->f);
    lua_createtable(L, n < 0x7FFFFFFF ? (int)n : 0, 0);
    for (size_t k = 0; k < n; k++) {
        push_value(L, h, k);
        lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    return 1;
}

/* ---------------------------------------------------------------- module functions */

static uint32_t check_dim(lua_State *L, int arg) {
    lua_Integer v = luaL_checkinteger(L, arg);
    luaL_argcheck(L, v >= 1 && v <= (lua_Integer)PSDL_NHTG_MAX_TILES + 1, arg, "1..16385 points expected");
    return (uint32_t)v;
}

/* core.heightfield(rows, cols [, init]) -> heights (doubles); see the file comment */
static int l_heightfield(lua_State *L) {
    uint32_t rows = check_dim(L, 1), cols = check_dim(L, 2);
    int it = lua_type(L, 3);
    luaL_argexpected(L, it == LUA_TNONE || it == LUA_TNIL || it == LUA_TNUMBER || it == LUA_TTABLE ||
                     it == LUA_TFUNCTION, 3, "nil, number, table or function");
    size_t n = (size_t)rows * cols;
    if (it == LUA_TTABLE && luaL_len(L, 3) != (lua_Integer)n)
        return luaL_error(L, "heights: %I values for %d x %d points", (LUAI_UACINT)luaL_len(L, 3), (int)rows, (int)cols);
    lpsdl_hf *h = lpsdl_hf_push(L, rows, cols, PSDL_HF_F64, LPSDL_HF_HEIGHTS);
    int hi = lua_gettop(L);
    double *p = (double *)lpsdl_hf_alloc(L, h);
    if (it == LUA_TNUMBER) {
        double v = (double)lua_tonumber(L, 3);
        for (size_t k = 0; k < n; k++) p[k] = v;
    } else if (it == LUA_TTABLE) {
        for (size_t k = 0; k < n; k++) {
            if (lua_geti(L, 3, (lua_Integer)k + 1) != LUA_TNUMBER)
                return luaL_error(L, "heights[%I]: number expected, got %s", (LUAI_UACINT)k + 1, luaL_typename(L, -1));
            p[k] = (double)lua_tonumber(L, -1);
            lua_pop(L, 1);
        }
    } else if (it == LUA_TFUNCTION) {
        for (size_t k = 0; k < n; k++) {
            lua_pushvalue(L, 3);
            lua_pushinteger(L, (lua_Integer)(k / cols));
            lua_pushinteger(L, (lua_Integer)(k % cols));
            lua_call(L, 2, 1);
            if (lua_type(L, -1) != LUA_TNUMBER)
                return luaL_error(L, "heights(%d, %d): number expected, got %s", (int)(k / cols), (int)(k % cols),
                                  luaL_typename(L, -1));
            p[k] = (double)lua_tonumber(L, -1);
            lua_pop(L, 1);
        }
    } else {
        memset(p, 0, n * sizeof(double));
    }
    lua_settop(L, hi);
    return 1;
}

/* core.heightfield_rasterize(tris, ox, oz, cell, rows, cols [, fill]) -> heights, mask,
 * covered: tris a flat table of 9 numbers a triangle (x, y, z of its three points); each
 * grid point takes the highest triangle over it (psdl_hf_rasterize); points none covers
 * take their nearest covered neighbour's height, or fill when it is a number. mask: true
 * where a triangle was found; covered: how many. */
static int l_heightfield_rasterize(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    double ox = luaL_checknumber(L, 2), oz = luaL_checknumber(L, 3), cell = luaL_checknumber(L, 4);
    uint32_t rows = (uint32_t)luaL_checkinteger(L, 5), cols = (uint32_t)luaL_checkinteger(L, 6);
    luaL_argcheck(L, rows >= 1 && (uint64_t)rows * cols <= PSDL_RASTER_MAX_PIXELS, 5, "1..4194304 points expected");
    luaL_argcheck(L, cols >= 1, 6, "at least 1 column expected");
    int has_fill = lua_type(L, 7) == LUA_TNUMBER;
    double fill = has_fill ? (double)lua_tonumber(L, 7) : 0;
    lua_Integer len = luaL_len(L, 1);
    luaL_argcheck(L, len % 9 == 0, 1, "9 numbers a triangle expected");
    size_t n = (size_t)rows * cols;
    /* scratch: the triangles as doubles, then the queue of the fill */
    size_t nt = (size_t)(len / 9);
    size_t scratch = nt * 9 * sizeof(double);
    if (n * sizeof(size_t) > scratch) scratch = n * sizeof(size_t);
    void *tmp = lua_newuserdatauv(L, scratch ? scratch : 1, 0);
    double *tris = (double *)tmp;
    for (lua_Integer k = 0; k < len; k++) {
        if (lua_rawgeti(L, 1, k + 1) != LUA_TNUMBER)
            return luaL_error(L, "tris[%I]: number expected, got %s", (LUAI_UACINT)k + 1, luaL_typename(L, -1));
        tris[k] = (double)lua_tonumber(L, -1);
        lua_pop(L, 1);
    }
    lpsdl_hf *h = lpsdl_hf_push(L, rows, cols, PSDL_HF_F64, LPSDL_HF_HEIGHTS);
    double *best = (double *)lpsdl_hf_alloc(L, h);
    for (size_t k = 0; k < n; k++) best[k] = -HUGE_VAL;
    psdl_hf_rasterize(tris, nt, ox, oz, cell, rows, cols, best);
    lpsdl_hf *m = lpsdl_hf_push(L, rows, cols, PSDL_HF_U8, LPSDL_HF_MASK);
    uint8_t *covered = (uint8_t *)lpsdl_hf_alloc(L, m);
    size_t ncov;
    if (has_fill) {
        ncov = 0;
        for (size_t k = 0; k < n; k++) {
            covered[k] = best[k] != -HUGE_VAL;
            if (covered[k]) ncov++;
            else best[k] = fill;
        }
        if (ncov == 0)
            for (size_t k = 0; k < n; k++) best[k] = -HUGE_VAL;
    } else {
        ncov = psdl_hf_fill_nearest(best, covered, rows, cols, (size_t *)tmp);
    }
    lua_pushinteger(L, (lua_Integer)ncov);
    return 3;
}

/* core.is_heightfield(v) -> true when v is a psdl.Heightfield */
static int l_is_heightfield(lua_State *L) {
    lua_pushboolean(L, lpsdl_hf_test(L, 1) != NULL);
    return 1;
}

/* core.nonzero_bytes(s) -> how many bytes of s are not 0 */
static int l_nonzero_bytes(lua_State *L) {
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    size_t c = 0;
    for (size_t k = 0; k < n; k++) c += s[k] != 0;
    lua_pushinteger(L, (lua_Integer)c);
    return 1;
}

static const luaL_Reg hf_methods[] = {
    {"size", m_size},         {"type", m_type},         {"view", m_view},         {"copy", m_copy},
    {"mapped", m_mapped},     {"stats", m_stats},       {"point", m_point},       {"bilinear", m_bilinear},
    {"quantize", m_quantize}, {"to_table", m_to_table}, {NULL, NULL}};

static const luaL_Reg hf_meta[] = {{"__index", hf_index}, {"__newindex", hf_newindex}, {"__len", hf_len},
                                   {"__tostring", hf_tostring}, {NULL, NULL}};

static const luaL_Reg hf_funcs[] = {{"heightfield", l_heightfield},
                                    {"heightfield_rasterize", l_heightfield_rasterize},
                                    {"nonzero_bytes", l_nonzero_bytes},
                                    {"is_heightfield", l_is_heightfield},
                                    {NULL, NULL}};

void lpsdl_open_heightfield(lua_State *L) {
    if (luaL_newmetatable(L, BLOCK_MT)) {
        lua_pushcfunction(L, block_gc);
        lua_setfield(L, -2, "__gc");
        lua_pushliteral(L, "psdl.core");
        lua_setfield(L, -2, "__metatable");
    }
    lua_pop(L, 1);
    if (luaL_newmetatable(L, HF_MT)) {
        luaL_setfuncs(L, hf_meta, 0);
        luaL_newlib(L, hf_methods);
        lua_setfield(L, -2, "methods");
        lua_pushliteral(L, "psdl.core");
        lua_setfield(L, -2, "__metatable");
    }
    lua_pop(L, 1);
    luaL_setfuncs(L, hf_funcs, 0);
}
