/*
 * lpsdl_render.c -- the map canvas of `psdl.core` (C API in psdl_raster.h), used by
 * lua/psdl/render.lua. Registered into the module table by lpsdl_open_render.
 *
 *   core.canvas_new(width, height [, rgba])  -> canvas        (bad sizes raise; nil, msg, "nomem")
 *   core.canvas_png_decode(bytes)             -> canvas | nil, message, code
 *   core.text_width(n, scale)                 -> pixels taken by n characters of the built-in font
 *
 *   canvas:size()                              -> width, height
 *   canvas:get(x, y)                           -> 0xRRGGBBAA (0 outside)
 *   canvas:triangles(xy, rgba [, stripes])     -> pixels covered
 *   canvas:polygon(xy, rgba [, stripes])       -> pixels covered (even-odd)
 *   canvas:rect(x0, y0, x1, y1, rgba)
 *   canvas:stroke(segments, width, rgba)
 *   canvas:marker(x, y, r, shape, fill [, outline_width, outline])
 *   canvas:text(x, y, text, scale, rgba [, halo]) -> width in pixels
 *   canvas:downsample(factor)                  -> new canvas
 *   canvas:png([level])                        -> PNG bytes
 *   canvas:close()                             (also __close and __gc)
 *
 * Coordinates are pixels with (0, 0) the top-left corner of the canvas; pixel (x, y)
 * covers [x, x+1) x [y, y+1) (so `get` takes 0-based pixel indices). Colours are integers
 * 0xRRGGBBAA. `xy` is a flat list {x1, y1, x2, y2, ...}: 6 numbers per triangle, 2 per
 * polygon point; `segments` 4 numbers (x0, y0, x1, y1) per segment. `stripes` is a table
 * {period =, duty =, dx =, dy =, phase =}: the pixel at centre p is painted when
 * frac((p.x*dx + p.y*dy + phase) / period) < duty. `shape` is "disc", "diamond" or
 * "square".
 *
 * Longjmp safety: a canvas lives in its userdata from the moment it is allocated;
 * coordinate lists are copied into userdata buffers before any core call. Any allocation
 * may run a __gc finalizer that closes a canvas, so methods fetch the canvas pointer again
 * after allocating.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "lpsdl.h"
#include "psdl_raster.h"

#define CANVAS "psdl.Canvas"

typedef struct cbox {
    psdl_canvas *c;
} cbox;

static cbox *check_box(lua_State *L, int i) { return (cbox *)luaL_checkudata(L, i, CANVAS); }

static psdl_canvas *check_canvas(lua_State *L, int i) {
    cbox *b = check_box(L, i);
    if (!b->c) luaL_argerror(L, i, "canvas is closed");
    return b->c;
}

/* Pushes a new box owning c (c may be NULL and set afterwards). */
static cbox *push_box(lua_State *L, psdl_canvas *c) {
    cbox *b = (cbox *)lua_newuserdatauv(L, sizeof *b, 0);
    b->c = c;
    luaL_setmetatable(L, CANVAS);
    return b;
}

/* canvas:close() (also __close and __gc): frees the pixels; closing twice is allowed. */
static int canvas_close(lua_State *L) {
    cbox *b = check_box(L, 1);
    psdl_canvas_free(b->c);
    b->c = NULL;
    return 0;
}

/* tostring(canvas) -> "psdl.Canvas (W x H)" or "psdl.Canvas (closed)". */
static int canvas_tostring(lua_State *L) {
    cbox *b = check_box(L, 1);
    if (b->c)
        lua_pushfstring(L, CANVAS " (%d x %d)", b->c->width, b->c->height);
    else
        lua_pushliteral(L, CANVAS " (closed)");
    return 1;
}

static uint32_t check_rgba(lua_State *L, int i) {
    lua_Integer v = luaL_checkinteger(L, i);
    luaL_argcheck(L, v >= 0 && v <= 0xFFFFFFFF, i, "colour 0xRRGGBBAA expected");
    return (uint32_t)v;
}

static int check_int_arg(lua_State *L, int i, lua_Integer lo, lua_Integer hi) {
    lua_Integer v = luaL_checkinteger(L, i);
    luaL_argcheck(L, v >= lo && v <= hi, i, "out of range");
    return (int)v;
}

/* Copy the flat number list at index i (length a multiple of `stride`) into a userdata
 * buffer left on the stack. *n receives the number of numbers. */
static double *check_list(lua_State *L, int i, size_t stride, size_t *n) {
    luaL_checktype(L, i, LUA_TTABLE);
    lua_Unsigned len = lua_rawlen(L, i);
    if (len % stride != 0)
        luaL_argerror(L, i, lua_pushfstring(L, "list of %d numbers per item expected, got %d numbers", (int)stride,
                                            (int)len));
    if (len > ((size_t)1 << 28)) luaL_argerror(L, i, "list too long");
    double *buf = (double *)lua_newuserdatauv(L, (len ? len : 1) * sizeof(double), 0);
    for (lua_Unsigned k = 0; k < len; k++) {
        int isnum = 0;
        lua_rawgeti(L, i, (lua_Integer)k + 1);
        lua_Number v = lua_tonumberx(L, -1, &isnum);
        if (!isnum) luaL_argerror(L, i, lua_pushfstring(L, "item %d is not a number", (int)k + 1));
        buf[k] = (double)v;
        lua_pop(L, 1);
    }
    *n = (size_t)len;
    return buf;
}

static double opt_field(lua_State *L, int t, const char *k, double def) {
    lua_getfield(L, t, k);
    double v = def;
    if (!lua_isnil(L, -1)) {
        int isnum = 0;
        v = (double)lua_tonumberx(L, -1, &isnum);
        if (!isnum) luaL_error(L, "stripes.%s: number expected", k);
    }
    lua_pop(L, 1);
    return v;
}

/* Paint from colour at index ci and optional stripes table at index si. */
static psdl_paint check_paint(lua_State *L, int ci, int si) {
    psdl_paint p = psdl_paint_solid(check_rgba(L, ci));
    if (!lua_isnoneornil(L, si)) {
        luaL_checktype(L, si, LUA_TTABLE);
        p.period = opt_field(L, si, "period", 0);
        p.duty = opt_field(L, si, "duty", 0.5);
        p.dx = opt_field(L, si, "dx", 1);
        p.dy = opt_field(L, si, "dy", 0);
        p.phase = opt_field(L, si, "phase", 0);
        if (!(p.period > 0) || !isfinite(p.period)) luaL_argerror(L, si, "stripes.period must be a positive number");
        if (!isfinite(p.duty) || !isfinite(p.dx) || !isfinite(p.dy) || !isfinite(p.phase))
            luaL_argerror(L, si, "stripes: finite numbers expected");
    }
    return p;
}

/* core.canvas_new(width, height [, rgba = 0xFFFFFFFF]) -> canvas | nil, message, "nomem":
 * a width x height pixel canvas (sides 1..16384, at most 2^26 pixels) filled with rgba
 * (0xRRGGBBAA). Sizes out of range raise. */
static int l_canvas_new(lua_State *L) {
    int w = check_int_arg(L, 1, 1, PSDL_CANVAS_MAX_SIDE);
    int h = check_int_arg(L, 2, 1, PSDL_CANVAS_MAX_SIDE);
    uint32_t rgba = lua_isnoneornil(L, 3) ? 0xFFFFFFFFu : check_rgba(L, 3);
    luaL_argcheck(L, (uint64_t)w * (uint64_t)h <= PSDL_CANVAS_MAX_PIXELS, 2, "canvas has too many pixels");
    cbox *b = push_box(L, NULL);
    b->c = psdl_canvas_new(w, h, rgba);
    if (!b->c) {
        return lpsdl_push_failure(L, "psdl: nomem: out of memory for the canvas", "nomem");
    }
    return 1;
}

/* core.canvas_png_decode(bytes) -> canvas | nil, message, code: any PNG as an RGBA canvas
 * (psdl_canvas_png_decode: bad_magic, bad_count for images over the limits or larger than
 * their compressed data can hold, truncated, invalid, nomem). */
static int l_canvas_png_decode(lua_State *L) {
    size_t n = 0;
    const char *s = luaL_checklstring(L, 1, &n);
    cbox *b = push_box(L, NULL);
    psdl_error err;
    psdl_status st = psdl_canvas_png_decode(s, n, &b->c, &err);
    if (st != PSDL_OK) {
        return lpsdl_push_failure(L, err.message, psdl_status_name(st));
    }
    return 1;
}

/* core.text_width(text_or_n [, scale = 1]) -> pixels: the width of a string (or of n
 * bytes) in the built-in 5 x 7 font at an integer scale, no trailing gap. n 0..4096 and
 * scale 1..64, else raises. */
static int l_text_width(lua_State *L) {
    lua_Integer n;
    if (lua_type(L, 1) == LUA_TSTRING)
        n = (lua_Integer)lua_rawlen(L, 1);
    else
        n = luaL_checkinteger(L, 1);
    int scale = (int)luaL_optinteger(L, 2, 1);
    luaL_argcheck(L, n >= 0 && n <= PSDL_TEXT_MAX_LEN, 1, "out of range");
    luaL_argcheck(L, scale >= 1 && scale <= PSDL_TEXT_MAX_SCALE, 2, "out of range");
    lua_pushinteger(L, psdl_text_width((size_t)n, scale));
    return 1;
}

/* canvas:size() -> width, height (pixels). A closed canvas raises (every method). */
static int m_size(lua_State *L) {
    psdl_canvas *c = check_canvas(L, 1);
    lua_pushinteger(L, c->width);
    lua_pushinteger(L, c->height);
    return 2;
}

/* canvas:get(x, y) -> 0xRRGGBBAA of pixel (x, y) (0-based integers), 0 outside. */
static int m_get(lua_State *L) {
    psdl_canvas *c = check_canvas(L, 1);
    lua_Integer x = luaL_checkinteger(L, 2), y = luaL_checkinteger(L, 3);
    if (x < 0 || y < 0 || x >= c->width || y >= c->height)
        lua_pushinteger(L, 0);
    else
        lua_pushinteger(L, (lua_Integer)psdl_canvas_get(c, (int)x, (int)y));
    return 1;
}

/* canvas:triangles(xy, rgba [, stripes]) -> pixels covered: fills triangles (6 numbers
 * each in xy, pixels, either winding) with the top-left rule. A list whose length is not a
 * multiple of 6, a non-number or bad stripes raise. */
static int m_triangles(lua_State *L) {
    check_canvas(L, 1);
    psdl_paint p = check_paint(L, 3, 4);
    size_t n = 0;
    double *xy = check_list(L, 2, 6, &n);
    psdl_canvas *c = check_canvas(L, 1); /* after the allocation: a finalizer may close it */
    lua_pushinteger(L, (lua_Integer)psdl_canvas_triangles(c, xy, n / 6, &p));
    return 1;
}

/* canvas:polygon(xy, rgba [, stripes]) -> pixels covered: fills the polygon of the points
 * {x1, y1, x2, y2, ...} (pixels, closed implicitly) with the even-odd rule; fewer than 3
 * points or a NaN / infinite coordinate paint nothing (0). */
static int m_polygon(lua_State *L) {
    check_canvas(L, 1);
    psdl_paint p = check_paint(L, 3, 4);
    size_t n = 0;
    double *xy = check_list(L, 2, 2, &n);
    psdl_canvas *c = check_canvas(L, 1); /* after the allocation: a finalizer may close it */
    lua_pushinteger(L, (lua_Integer)psdl_canvas_polygon(c, xy, n / 2, &p));
    return 1;
}

/* canvas:rect(x0, y0, x1, y1, rgba): blends rgba over the pixels [x0, x1) x [y0, y1)
 * (integers within +-2^24, clipped to the canvas). */
static int m_rect(lua_State *L) {
    psdl_canvas *c = check_canvas(L, 1);
    int x0 = check_int_arg(L, 2, -(1 << 24), 1 << 24), y0 = check_int_arg(L, 3, -(1 << 24), 1 << 24);
    int x1 = check_int_arg(L, 4, -(1 << 24), 1 << 24), y1 = check_int_arg(L, 5, -(1 << 24), 1 << 24);
    psdl_canvas_rect(c, x0, y0, x1, y1, check_rgba(L, 6));
    return 0;
}

/* canvas:stroke(segments, width, rgba): anti-aliased lines `width` pixels wide with round
 * caps along the segments {x0, y0, x1, y1, ...}, composited once (overlaps do not darken);
 * a width that is not in (0, 1e6) draws nothing. Out of memory raises. */
static int m_stroke(lua_State *L) {
    check_canvas(L, 1);
    double width = (double)luaL_checknumber(L, 3);
    uint32_t rgba = check_rgba(L, 4);
    size_t n = 0;
    double *seg = check_list(L, 2, 4, &n);
    psdl_canvas *c = check_canvas(L, 1); /* after the allocation: a finalizer may close it */
    if (psdl_canvas_stroke(c, seg, n / 4, width, rgba) != 0) return luaL_error(L, "not enough memory");
    return 0;
}

/* canvas:marker(x, y, r, shape, fill [, outline_width = 0, outline]): an anti-aliased
 * "disc", "diamond" or "square" (nil: disc) of radius r pixels centred on (x, y), filled
 * with fill, with an outline outline_width pixels wide outside it. An unknown shape raises. */
static int m_marker(lua_State *L) {
    static const char *const shapes[] = {"disc", "diamond", "square", NULL};
    psdl_canvas *c = check_canvas(L, 1);
    double x = (double)luaL_checknumber(L, 2), y = (double)luaL_checknumber(L, 3);
    double r = (double)luaL_checknumber(L, 4);
    int shape = luaL_checkoption(L, 5, "disc", shapes);
    uint32_t fill = check_rgba(L, 6);
    double ow = (double)luaL_optnumber(L, 7, 0);
    uint32_t outline = lua_isnoneornil(L, 8) ? 0 : check_rgba(L, 8);
    psdl_canvas_marker(c, x, y, r, shape, fill, ow, outline);
    return 0;
}

/* canvas:text(x, y, text, scale, rgba [, halo]) -> width in pixels: text in the built-in
 * font, top-left corner at integer (x, y), each font pixel scale x scale (1..64), over a
 * halo (scale + 1) / 2 pixels wide when halo is given; at most 4096 bytes are drawn. */
static int m_text(lua_State *L) {
    psdl_canvas *c = check_canvas(L, 1);
    int x = check_int_arg(L, 2, -(1 << 24), 1 << 24), y = check_int_arg(L, 3, -(1 << 24), 1 << 24);
    size_t len = 0;
    const char *s = luaL_checklstring(L, 4, &len);
    int scale = check_int_arg(L, 5, 1, 64);
    uint32_t rgba = check_rgba(L, 6);
    uint32_t halo = lua_isnoneornil(L, 7) ? 0 : check_rgba(L, 7);
    int w = psdl_canvas_text(c, x, y, s, len, scale, rgba, halo);
    if (w < 0) return luaL_error(L, "not enough memory");
    lua_pushinteger(L, w);
    return 1;
}

/* canvas:downsample(factor) -> canvas: a new canvas factor (1..64) times smaller on each
 * side, each pixel the alpha-weighted average of a factor x factor block. */
static int m_downsample(lua_State *L) {
    check_canvas(L, 1);
    int k = check_int_arg(L, 2, 1, 64);
    cbox *b = push_box(L, NULL);
    psdl_canvas *c = check_canvas(L, 1); /* after the allocation: a finalizer may close it */
    b->c = psdl_canvas_downsample(c, k);
    if (!b->c) return luaL_error(L, "not enough memory");
    return 1;
}

/* canvas:rgb() -> bytes: the pixels as 8-bit R, G, B triples, row 0 (y = 0) first, alpha
 * dropped (the minimap tiles of lua/psdl/package/minimap.lua). */
static int m_rgb(lua_State *L) {
    psdl_canvas *c = check_canvas(L, 1);
    luaL_Buffer b;
    size_t n = (size_t)c->width * (size_t)c->height * 3;
    char *p = luaL_buffinitsize(L, &b, n);
    size_t k = 0;
    for (int y = 0; y < c->height; y++)
        for (int x = 0; x < c->width; x++) {
            uint32_t rgba = psdl_canvas_get(c, x, y);
            p[k++] = (char)(rgba >> 24);
            p[k++] = (char)((rgba >> 16) & 0xFF);
            p[k++] = (char)((rgba >> 8) & 0xFF);
        }
    luaL_pushresultsize(&b, n);
    return 1;
}

/* An encoded PNG buffer held by a to-be-closed userdata while it is copied into a Lua
 * string (which may raise a memory error). */
#define PNGBUF "psdl.PngBuffer"

static int pngbuf_close(lua_State *L) {
    void **p = (void **)luaL_checkudata(L, 1, PNGBUF);
    psdl_canvas_png_free(*p);
    *p = NULL;
    return 0;
}

/* canvas:png([level = 9]) -> bytes | nil, message, code: the canvas as a PNG (8-bit RGB
 * when every pixel is opaque, else RGBA) at zlib level 0..9 (else raises). */
static int m_png(lua_State *L) {
    check_canvas(L, 1);
    int level = (int)luaL_optinteger(L, 2, 9);
    luaL_argcheck(L, level >= 0 && level <= 9, 2, "zlib level 0-9 expected");
    void **holder = (void **)lua_newuserdatauv(L, sizeof(void *), 0);
    *holder = NULL;
    luaL_setmetatable(L, PNGBUF);
    lua_toclose(L, -1);
    psdl_canvas *c = check_canvas(L, 1); /* after the allocation: a finalizer may close it */
    size_t size = 0;
    psdl_error err;
    if (psdl_canvas_png_encode(c, level, holder, &size, &err) != PSDL_OK) {
        return lpsdl_push_error(L, &err);
    }
    lua_pushlstring(L, (const char *)*holder, size);
    return 1;
}

static const luaL_Reg canvas_methods[] = {
    {"size", m_size},     {"get", m_get},       {"triangles", m_triangles},   {"polygon", m_polygon},
    {"rect", m_rect},     {"stroke", m_stroke}, {"marker", m_marker},         {"text", m_text},
    {"downsample", m_downsample}, {"png", m_png}, {"rgb", m_rgb}, {"close", canvas_close},    {NULL, NULL},
};

static const luaL_Reg canvas_meta[] = {
    {"__gc", canvas_close},
    {"__close", canvas_close},
    {"__tostring", canvas_tostring},
    {NULL, NULL},
};

static const luaL_Reg render_funcs[] = {
    {"canvas_new", l_canvas_new},
    {"canvas_png_decode", l_canvas_png_decode},
    {"text_width", l_text_width},
    {NULL, NULL},
};

void lpsdl_open_render(lua_State *L) {
    if (luaL_newmetatable(L, CANVAS)) {
        luaL_setfuncs(L, canvas_meta, 0);
        luaL_newlib(L, canvas_methods);
        lua_setfield(L, -2, "__index");
        lua_pushliteral(L, "psdl.core");
        lua_setfield(L, -2, "__metatable");
    }
    lua_pop(L, 1);
    if (luaL_newmetatable(L, PNGBUF)) {
        lua_pushcfunction(L, pngbuf_close);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, pngbuf_close);
        lua_setfield(L, -2, "__close");
    }
    lua_pop(L, 1);
    luaL_setfuncs(L, render_funcs, 0);
}
