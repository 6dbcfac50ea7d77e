/*
 * lpsdl_terrain.c -- the terrain functions of `psdl.core` (NHTG, DBPF, QFS, heightmap
 * rasters; C API in psdl_nhtg.h). Registered into the module table by lpsdl_open_terrain.
 *
 *   core.nhtg_decode(bytes)               -> nhtg | nil, message, code
 *   core.nhtg_encode(nhtg)                -> bytes            (a bad model raises)
 *   core.nhtg_size(width, height, type_len) -> integer
 *   core.qfs_decompress(record)           -> bytes | fail
 *   core.qfs_compress(bytes)              -> record
 *   core.dbpf_decode(bytes)               -> package | fail   (header fields and index)
 *   core.dbpf_extract(bytes, i)           -> contents of entry i (1-based), decompressed | fail
 *   core.dbpf_replace(bytes, i, data [, compress]) -> new package bytes | fail
 *   core.png_decode(bytes) / core.pgm_decode(bytes) -> raster | fail
 *   core.png_encode(raster) / core.pgm_encode(raster) -> bytes   (a bad raster raises)
 *
 * Models (plain tables):
 *   nhtg   = {version, width, height, water_level, terrain_type, rows, cols,
 *             heights = a psdl.Heightfield of floats (lpsdl_heightfield.c; rows * cols, file
 *             order: heights[i * cols + j + 1] for slow index i and fast index j, both from
 *             0), extra = "<rows*cols bytes>"}; encoding also takes a plain table of numbers
 *   raster = {width, height, maxval, samples = a psdl.Heightfield samples view (integers,
 *             row-major, top row first), text}; encoding also takes a table of integers
 *   package entry = {type, group, instance, instance_hi, offset, size, compressed, usize}
 *
 * Longjmp safety as in lpsdl.c: every object the core allocates lives in a box userdata
 * ("psdl.TerrainBox", __gc and __close) created, and marked to-be-closed, before the call
 * that fills it. Arrays handed to the core for encoding live in Lua userdata.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lpsdl.h"
#include "psdl_heightfield.h"
#include "psdl_nhtg.h"

#define TBOX "psdl.TerrainBox"

enum { K_EMPTY, K_NHTG, K_DBPF, K_RASTER, K_BUFFER };

typedef struct tbox {
    int kind;
    void *p;
    size_t size; /* K_BUFFER */
    psdl_options opt;
} tbox;

static void tbox_release(tbox *b) {
    switch (b->kind) {
    case K_NHTG: psdl_nhtg_free(b->p); break;
    case K_DBPF: psdl_dbpf_free(b->p); break;
    case K_RASTER: psdl_raster_free(b->p); break;
    case K_BUFFER: psdl_buffer_free(&b->opt, b->p, b->size); break;
    default: break;
    }
    b->kind = K_EMPTY;
    b->p = NULL;
}

static int tbox_close(lua_State *L) {
    tbox_release((tbox *)luaL_checkudata(L, 1, TBOX));
    return 0;
}

static int tbox_tostring(lua_State *L) {
    tbox *b = (tbox *)luaL_checkudata(L, 1, TBOX);
    if (b->p)
        lua_pushfstring(L, TBOX " (%p)", b->p);
    else
        lua_pushliteral(L, TBOX " (closed)");
    return 1;
}

/* Pushes an empty box, marked to-be-closed, whose core objects use Lua's allocator. */
static tbox *tbox_new(lua_State *L) {
    tbox *b = (tbox *)lua_newuserdatauv(L, sizeof *b, 0);
    memset(b, 0, sizeof *b);
    luaL_setmetatable(L, TBOX);
    lua_toclose(L, -1);
    b->opt.alloc.realloc = lua_getallocf(L, &b->opt.alloc.ud);
    return b;
}

/* ---------------------------------------------------------------- field checks */

/* Raise "bad argument #arg to 'f' (field: msg)". */
static int field_error(lua_State *L, int arg, const char *field, const char *msg) {
    return luaL_argerror(L, arg, lua_pushfstring(L, "%s: %s", field, msg));
}

/* Integer field t[k] in [lo, hi]; def when absent (has_def), else required. */
static lua_Integer field_int(lua_State *L, int arg, int t, const char *k, lua_Integer lo, lua_Integer hi,
                             int has_def, lua_Integer def) {
    int ty = lua_getfield(L, t, k);
    lua_Integer v = def;
    if (ty == LUA_TNIL) {
        if (!has_def) field_error(L, arg, k, "integer expected, got nil");
    } else {
        int isint = 0;
        v = lua_tointegerx(L, -1, &isint);
        if (!isint) field_error(L, arg, k, lua_pushfstring(L, "integer expected, got %s", luaL_typename(L, -1)));
        if (v < lo || v > hi)
            field_error(L, arg, k,
                        lua_pushfstring(L, "%I is out of range %I..%I", (LUAI_UACINT)v, (LUAI_UACINT)lo, (LUAI_UACINT)hi));
    }
    lua_pop(L, 1);
    return v;
}

/* ================================================================ NHTG */

/* Push the model of t; its heights become a Heightfield that owns t (the box gives it up). */
static void push_nhtg(lua_State *L, psdl_nhtg *t, tbox *b) {
    size_t n = (size_t)t->rows * t->cols;
    lua_createtable(L, 0, 9);
    lpsdl_set_int(L, "version", t->version);
    lpsdl_set_int(L, "width", t->width);
    lpsdl_set_int(L, "height", t->height);
    lpsdl_set_number(L, "water_level", t->water_level);
    lua_pushlstring(L, t->terrain_type, t->type_len);
    lua_setfield(L, -2, "terrain_type");
    lpsdl_set_int(L, "rows", t->rows);
    lpsdl_set_int(L, "cols", t->cols);
    lua_pushlstring(L, (const char *)t->extra, n);
    lua_setfield(L, -2, "extra");
    lpsdl_hf *h = lpsdl_hf_push(L, t->rows, t->cols, PSDL_HF_F32, LPSDL_HF_HEIGHTS);
    b->kind = K_EMPTY; /* nothing may raise between these two lines */
    b->p = NULL;
    lpsdl_hf_own_nhtg(h, t);
    lua_setfield(L, -2, "heights");
}

/* core.nhtg_decode(bytes) -> nhtg | nil, message, code: a SimCity 4 / Sims 2 NHTG height
 * map (the nhtg model above; heights in metres, water_level in metres). Bad data returns
 * fail with a "psdl: <code>: <detail> at offset 0x..." message (truncated, bad_magic,
 * bad_count, invalid, nomem); a non-string argument raises. */
static int l_nhtg_decode(lua_State *L) {
    size_t size;
    const char *data = luaL_checklstring(L, 1, &size);
    lua_settop(L, 1);
    tbox *b = tbox_new(L);
    psdl_error err;
    psdl_nhtg *t = NULL;
    psdl_status st = psdl_nhtg_decode(&b->opt, data, size, &t, &err);
    if (st != PSDL_OK) return lpsdl_push_error(L, &err);
    b->kind = K_NHTG;
    b->p = t;
    push_nhtg(L, t, b);
    return 1;
}

static float field_height(void *ud, size_t k) { return psdl_hf_get_f32((const psdl_heightfield *)ud, k); }

/* Fill a psdl_nhtg from the table at index 1; arrays live in userdata pushed on the stack.
 * Heights held in a Heightfield are not copied: *field is set and t->heights left NULL. */
static void check_nhtg(lua_State *L, psdl_nhtg *t, const psdl_heightfield **field) {
    *field = NULL;
    luaL_checktype(L, 1, LUA_TTABLE);
    memset(t, 0, sizeof *t);
    t->version = (uint32_t)field_int(L, 1, 1, "version", 0, 0xFFFFFFFF, 1, PSDL_NHTG_VERSION);
    if (t->version != PSDL_NHTG_VERSION)
        field_error(L, 1, "version", lua_pushfstring(L, "%d cannot be written (only %d is known)", (int)t->version,
                                                     (int)PSDL_NHTG_VERSION));
    t->width = (uint32_t)field_int(L, 1, 1, "width", 1, PSDL_NHTG_MAX_TILES, 0, 0);
    t->height = (uint32_t)field_int(L, 1, 1, "height", 1, PSDL_NHTG_MAX_TILES, 0, 0);
    t->rows = (uint32_t)field_int(L, 1, 1, "rows", 0, 0xFFFFFFFF, 1, t->width + 1);
    t->cols = (uint32_t)field_int(L, 1, 1, "cols", 0, 0xFFFFFFFF, 1, t->height + 1);
    if (t->rows != t->width + 1 || t->cols != t->height + 1)
        field_error(L, 1, "rows", lua_pushfstring(L, "%d x %d points do not match %d x %d tiles (W + 1, H + 1)",
                                                  (int)t->rows, (int)t->cols, (int)t->width, (int)t->height));
    if (lua_getfield(L, 1, "water_level") == LUA_TNIL) {
        t->water_level = PSDL_NHTG_WATER_LEVEL;
    } else {
        if (!lua_isnumber(L, -1))
            field_error(L, 1, "water_level", lua_pushfstring(L, "number expected, got %s", luaL_typename(L, -1)));
        t->water_level = (float)lua_tonumber(L, -1);
        if (!isfinite(t->water_level)) field_error(L, 1, "water_level", "not a finite float");
    }
    lua_pop(L, 1);
    if (lua_getfield(L, 1, "terrain_type") != LUA_TSTRING)
        field_error(L, 1, "terrain_type", lua_pushfstring(L, "string expected, got %s", luaL_typename(L, -1)));
    size_t tl;
    const char *type = lua_tolstring(L, -1, &tl);
    if (tl > PSDL_NHTG_MAX_TYPE_LEN)
        field_error(L, 1, "terrain_type", lua_pushfstring(L, "longer than %d bytes", (int)PSDL_NHTG_MAX_TYPE_LEN));
    t->terrain_type = (char *)(uintptr_t)type; /* read only by the encoder; stays on the stack */
    t->type_len = (uint32_t)tl;
    size_t n = (size_t)t->rows * t->cols;
    int hty = lua_getfield(L, 1, "heights");
    lpsdl_hf *hf = lpsdl_hf_test(L, -1);
    if (hf) {
        const psdl_heightfield *f = lpsdl_hf_field(hf);
        if (lpsdl_hf_view(hf) != LPSDL_HF_HEIGHTS || f->rows != t->rows || f->cols != t->cols)
            field_error(L, 1, "heights", lua_pushfstring(L, "a height grid of %d x %d points for %d x %d points",
                                                         (int)f->rows, (int)f->cols, (int)t->rows, (int)t->cols));
        t->heights = NULL; /* encoded from the field (field_height) */
        *field = f;
        size_t bad = 0;
        if (psdl_hf_check_f32(f, &bad) != PSDL_OK) {
            char path[48];
            snprintf(path, sizeof path, "heights[%zu]", bad + 1);
            field_error(L, 1, path,
                        lua_pushfstring(L, "not a finite float (row %d, column %d)", (int)(bad / t->cols),
                                        (int)(bad % t->cols)));
        }
    } else {
        if (hty != LUA_TTABLE)
            field_error(L, 1, "heights", lua_pushfstring(L, "table expected, got %s", luaL_typename(L, -1)));
        int ht = lua_gettop(L);
        if (luaL_len(L, ht) != (lua_Integer)n)
            field_error(L, 1, "heights", lua_pushfstring(L, "%I values for %d x %d points",
                                                         (LUAI_UACINT)luaL_len(L, ht), (int)t->rows, (int)t->cols));
        t->heights = (float *)lua_newuserdatauv(L, n * sizeof(float), 0);
        for (size_t k = 0; k < n; k++) {
            int ty = lua_rawgeti(L, ht, (lua_Integer)k + 1);
            if (ty != LUA_TNUMBER) {
                char path[48];
                snprintf(path, sizeof path, "heights[%zu]", k + 1);
                field_error(L, 1, path, lua_pushfstring(L, "number expected, got %s", luaL_typename(L, -1)));
            }
            float v = (float)lua_tonumber(L, -1);
            if (!isfinite(v)) {
                char path[48];
                snprintf(path, sizeof path, "heights[%zu]", k + 1);
                field_error(L, 1, path,
                            lua_pushfstring(L, "not a finite float (row %d, column %d)", (int)(k / t->cols),
                                            (int)(k % t->cols)));
            }
            t->heights[k] = v;
            lua_pop(L, 1);
        }
    }
    int ty = lua_getfield(L, 1, "extra");
    if (ty == LUA_TSTRING) {
        size_t el;
        const char *e = lua_tolstring(L, -1, &el);
        if (el != n)
            field_error(L, 1, "extra", lua_pushfstring(L, "%d bytes for %d points", (int)el, (int)n));
        t->extra = (uint8_t *)(uintptr_t)e;
    } else if (ty != LUA_TNIL) {
        field_error(L, 1, "extra", lua_pushfstring(L, "string expected, got %s", luaL_typename(L, -1)));
    }
}

/* core.nhtg_encode(nhtg) -> bytes: the file for an nhtg model (version, width and height
 * in tiles, rows = width + 1, cols = height + 1, heights row by row, terrain_type, optional
 * water_level and extra). A bad model raises "bad argument #1 (field: problem)". */
static int l_nhtg_encode(lua_State *L) {
    lua_settop(L, 1);
    psdl_nhtg t;
    const psdl_heightfield *field;
    check_nhtg(L, &t, &field);
    size_t need = psdl_nhtg_encoded_size(&t);
    luaL_Buffer buf;
    char *p = luaL_buffinitsize(L, &buf, need);
    psdl_error err;
    if (psdl_nhtg_encode_from(&t, field ? field_height : NULL, (void *)(uintptr_t)field, p, need, NULL, &err) !=
        PSDL_OK)
        return luaL_error(L, "%s", err.message);
    luaL_pushresultsize(&buf, need);
    return 1;
}

/* core.nhtg_size(width, height [, type_len = 9]) -> integer: the bytes of an NHTG file of
 * width x height tiles with a terrain type of type_len bytes. Out-of-range arguments raise. */
static int l_nhtg_size(lua_State *L) {
    lua_Integer w = luaL_checkinteger(L, 1), h = luaL_checkinteger(L, 2), l = luaL_optinteger(L, 3, 9);
    luaL_argcheck(L, w >= 1 && w <= PSDL_NHTG_MAX_TILES, 1, "width out of range");
    luaL_argcheck(L, h >= 1 && h <= PSDL_NHTG_MAX_TILES, 2, "height out of range");
    luaL_argcheck(L, l >= 0 && l <= PSDL_NHTG_MAX_TYPE_LEN, 3, "type length out of range");
    lua_pushinteger(L, (lua_Integer)psdl_nhtg_size((uint32_t)w, (uint32_t)h, (size_t)l));
    return 1;
}

/* ================================================================ QFS */

/* core.qfs_decompress(record) -> bytes | nil, message, code: a QFS (RefPack) compressed
 * record, header included, expanded. Corrupt or truncated records return fail. */
static int l_qfs_decompress(lua_State *L) {
    size_t n, usize;
    const char *src = luaL_checklstring(L, 1, &n);
    psdl_error err;
    if (psdl_qfs_size(src, n, &usize, &err) != PSDL_OK) return lpsdl_push_error(L, &err);
    luaL_Buffer buf;
    char *p = luaL_buffinitsize(L, &buf, usize ? usize : 1);
    if (psdl_qfs_decompress(src, n, p, usize, NULL, &err) != PSDL_OK) return lpsdl_push_error(L, &err);
    luaL_pushresultsize(&buf, usize);
    return 1;
}

/* core.qfs_compress(bytes) -> record: QFS-compressed bytes with their 9-byte header (what
 * a DBPF package stores for a compressed resource). Over 16 MiB raises. */
static int l_qfs_compress(lua_State *L) {
    size_t n, written;
    const char *src = luaL_checklstring(L, 1, &n);
    luaL_argcheck(L, n <= PSDL_QFS_MAX_SIZE, 1, "over 16 MiB: QFS cannot hold it");
    size_t bound = psdl_qfs_compress_bound(n);
    luaL_Buffer buf;
    char *p = luaL_buffinitsize(L, &buf, bound);
    psdl_options opt;
    memset(&opt, 0, sizeof opt);
    opt.alloc.realloc = lua_getallocf(L, &opt.alloc.ud);
    psdl_error err;
    if (psdl_qfs_compress(&opt, src, n, p, bound, &written, &err) != PSDL_OK) return luaL_error(L, "%s", err.message);
    luaL_pushresultsize(&buf, written);
    return 1;
}

/* ================================================================ DBPF */

static const lpsdl_ufield DBPF_FIELDS[] = {
    LPSDL_UFIELD(psdl_dbpf, major),       LPSDL_UFIELD(psdl_dbpf, minor),        LPSDL_UFIELD(psdl_dbpf, index_major),
    LPSDL_UFIELD(psdl_dbpf, index_minor), LPSDL_UFIELD(psdl_dbpf, entry_size),   LPSDL_UFIELD(psdl_dbpf, index_offset),
    LPSDL_UFIELD(psdl_dbpf, index_size),  LPSDL_UFIELD(psdl_dbpf, hole_count),   LPSDL_UFIELD(psdl_dbpf, hole_offset),
    LPSDL_UFIELD(psdl_dbpf, hole_size),   LPSDL_UFIELD(psdl_dbpf, size)};
static const lpsdl_ufield ENTRY_FIELDS[] = {
    LPSDL_UFIELD(psdl_dbpf_entry, type),        LPSDL_UFIELD(psdl_dbpf_entry, group),
    LPSDL_UFIELD(psdl_dbpf_entry, instance),    LPSDL_UFIELD(psdl_dbpf_entry, instance_hi),
    LPSDL_UFIELD(psdl_dbpf_entry, offset),      LPSDL_UFIELD(psdl_dbpf_entry, size)};

static void push_dbpf(lua_State *L, const psdl_dbpf *p) {
    lua_createtable(L, 0, 14);
    lpsdl_set_ufields(L, p, DBPF_FIELDS, sizeof DBPF_FIELDS / sizeof *DBPF_FIELDS);
    if (p->dir >= 0) lpsdl_set_int(L, "dir", p->dir + 1);
    lua_createtable(L, (int)p->nentries, 0);
    for (uint32_t k = 0; k < p->nentries; k++) {
        const psdl_dbpf_entry *e = &p->entries[k];
        lua_createtable(L, 0, 8);
        lpsdl_set_ufields(L, e, ENTRY_FIELDS, sizeof ENTRY_FIELDS / sizeof *ENTRY_FIELDS);
        lua_pushboolean(L, e->compressed);
        lua_setfield(L, -2, "compressed");
        lpsdl_set_int(L, "usize", e->usize);
        lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    lua_setfield(L, -2, "entries");
}

/* Decode the package at index 1 into a new box; returns NULL after pushing fail. */
static psdl_dbpf *decode_box(lua_State *L, const char *data, size_t size, psdl_error *err) {
    tbox *b = tbox_new(L);
    psdl_dbpf *p = NULL;
    if (psdl_dbpf_decode(&b->opt, data, size, &p, err) != PSDL_OK) return NULL;
    b->kind = K_DBPF;
    b->p = p;
    return p;
}

/* core.dbpf_decode(bytes) -> package | nil, message, code: a DBPF 1.x package's header
 * fields and index: {major, minor, index_major, index_minor, entry_size, index_offset,
 * index_size, hole_count, hole_offset, hole_size, size, dir (1-based DIR entry, nil when
 * none), entries = {{type, group, instance, instance_hi, offset, size (bytes in the file),
 * compressed, usize (uncompressed bytes)}, ...}}. Bad packages return fail. */
static int l_dbpf_decode(lua_State *L) {
    size_t size;
    const char *data = luaL_checklstring(L, 1, &size);
    lua_settop(L, 1);
    psdl_error err;
    psdl_dbpf *p = decode_box(L, data, size, &err);
    if (!p) return lpsdl_push_error(L, &err);
    push_dbpf(L, p);
    return 1;
}

/* core.dbpf_extract(bytes, i) -> contents | nil, message, code: entry i (1-based) of the
 * package, decompressed when the DIR lists it. An index out of range raises; bad data
 * returns fail. */
static int l_dbpf_extract(lua_State *L) {
    size_t size, usize;
    const char *data = luaL_checklstring(L, 1, &size);
    lua_Integer i = luaL_checkinteger(L, 2);
    lua_settop(L, 2);
    psdl_error err;
    psdl_dbpf *p = decode_box(L, data, size, &err);
    if (!p) return lpsdl_push_error(L, &err);
    luaL_argcheck(L, i >= 1 && i <= (lua_Integer)p->nentries, 2, "no such index entry");
    if (psdl_dbpf_resource_size(p, (size_t)i - 1, &usize, &err) != PSDL_OK) return lpsdl_push_error(L, &err);
    luaL_Buffer buf;
    char *dst = luaL_buffinitsize(L, &buf, usize ? usize : 1);
    if (psdl_dbpf_extract(p, (size_t)i - 1, dst, usize, NULL, &err) != PSDL_OK) return lpsdl_push_error(L, &err);
    luaL_pushresultsize(&buf, usize);
    return 1;
}

/* core.dbpf_replace(bytes, i, data [, compress]) -> bytes | nil, message, code: the package
 * rebuilt with entry i (1-based) holding data, QFS-compressed when compress is true (nil:
 * as the entry was), the DIR updated, every other resource byte-identical. An index out of
 * range or data over 16 MiB to compress raises; a package that cannot be rebuilt (the DIR
 * entry itself, duplicate keys, over 4 GiB) returns fail. */
static int l_dbpf_replace(lua_State *L) {
    size_t size, n;
    const char *data = luaL_checklstring(L, 1, &size);
    lua_Integer i = luaL_checkinteger(L, 2);
    const char *contents = luaL_checklstring(L, 3, &n);
    int compress_arg = lua_isnoneornil(L, 4) ? -1 : lua_toboolean(L, 4);
    lua_settop(L, 4);
    psdl_error err;
    psdl_dbpf *p = decode_box(L, data, size, &err); /* slot 5 */
    if (!p) return lpsdl_push_error(L, &err);
    luaL_argcheck(L, i >= 1 && i <= (lua_Integer)p->nentries, 2, "no such index entry");
    size_t k = (size_t)i - 1;
    int compress = compress_arg < 0 ? p->entries[k].compressed : compress_arg;
    const char *record = contents;
    size_t record_size = n;
    if (compress) {
        luaL_argcheck(L, n <= PSDL_QFS_MAX_SIZE, 3, "over 16 MiB: QFS cannot hold it");
        size_t bound = psdl_qfs_compress_bound(n);
        char *q = (char *)lua_newuserdatauv(L, bound, 0); /* slot 6, collected with the call */
        tbox *b = (tbox *)lua_touserdata(L, 5);
        if (psdl_qfs_compress(&b->opt, contents, n, q, bound, &record_size, &err) != PSDL_OK)
            return lpsdl_push_error(L, &err);
        record = q;
    }
    size_t need = psdl_dbpf_rebuild_size(p, k, record_size, compress);
    if (need == 0) {
        if (psdl_dbpf_rebuild(p, k, record, record_size, compress, (uint32_t)n, NULL, 0, NULL, &err) != PSDL_OK)
            return lpsdl_push_error(L, &err);
    }
    luaL_Buffer buf;
    char *dst = luaL_buffinitsize(L, &buf, need);
    if (psdl_dbpf_rebuild(p, k, record, record_size, compress, (uint32_t)n, dst, need, NULL, &err) != PSDL_OK)
        return lpsdl_push_error(L, &err);
    luaL_pushresultsize(&buf, need);
    return 1;
}

/* ================================================================ rasters */

/* Push the model of r; its samples become a Heightfield samples view that owns r (the box
 * gives it up). */
static void push_raster(lua_State *L, psdl_raster *r, tbox *b) {
    lua_createtable(L, 0, 5);
    lpsdl_set_int(L, "width", r->width);
    lpsdl_set_int(L, "height", r->height);
    lpsdl_set_int(L, "maxval", r->maxval);
    if (r->text) {
        lua_pushstring(L, r->text);
        lua_setfield(L, -2, "text");
    }
    lpsdl_hf *h = lpsdl_hf_push(L, r->height, r->width, PSDL_HF_U16, LPSDL_HF_SAMPLES);
    b->kind = K_EMPTY; /* nothing may raise between these two lines */
    b->p = NULL;
    lpsdl_hf_own_raster(h, r);
    lua_setfield(L, -2, "samples");
}

typedef psdl_status (*raster_decoder)(const psdl_options *, const void *, size_t, psdl_raster **, psdl_error *);

static int raster_decode(lua_State *L, raster_decoder dec) {
    size_t size;
    const char *data = luaL_checklstring(L, 1, &size);
    lua_settop(L, 1);
    tbox *b = tbox_new(L);
    psdl_error err;
    psdl_raster *r = NULL;
    if (dec(&b->opt, data, size, &r, &err) != PSDL_OK) return lpsdl_push_error(L, &err);
    b->kind = K_RASTER;
    b->p = r;
    push_raster(L, r, b);
    return 1;
}

/* core.png_decode(bytes) / core.pgm_decode(bytes) -> raster | nil, message, code: an 8- or
 * 16-bit grayscale PNG, or a binary PGM (P5), as the raster model above (samples 0..maxval,
 * row-major, top row first; text from the psdlkit:heightmap tEXt chunk or the PGM comment).
 * Colour PNGs (bad_magic), images over the pixel limit (bad_count) and bad data return
 * fail. */
static int l_png_decode(lua_State *L) { return raster_decode(L, psdl_png_decode); }
static int l_pgm_decode(lua_State *L) { return raster_decode(L, psdl_pgm_decode); }

/* Fill r from the table at index 1 (samples in a userdata left on the stack). */
static void check_raster(lua_State *L, psdl_raster *r, lua_Integer max_maxval) {
    luaL_checktype(L, 1, LUA_TTABLE);
    memset(r, 0, sizeof *r);
    r->width = (uint32_t)field_int(L, 1, 1, "width", 1, 0xFFFFFFFF, 0, 0);
    r->height = (uint32_t)field_int(L, 1, 1, "height", 1, 0xFFFFFFFF, 0, 0);
    if ((uint64_t)r->width * r->height > PSDL_RASTER_MAX_PIXELS)
        field_error(L, 1, "width", lua_pushfstring(L, "%d x %d pixels is over the limit of %d", (int)r->width,
                                                   (int)r->height, (int)PSDL_RASTER_MAX_PIXELS));
    r->maxval = (uint32_t)field_int(L, 1, 1, "maxval", 1, max_maxval, 1, 65535);
    int ty = lua_getfield(L, 1, "text");
    if (ty == LUA_TSTRING) {
        r->text = lua_tostring(L, -1); /* stays on the stack */
        if (strlen(r->text) != lua_rawlen(L, -1)) field_error(L, 1, "text", "holds a NUL byte");
    } else if (ty != LUA_TNIL) {
        field_error(L, 1, "text", lua_pushfstring(L, "string expected, got %s", luaL_typename(L, -1)));
    }
    size_t n = (size_t)r->width * r->height;
    int sty = lua_getfield(L, 1, "samples");
    lpsdl_hf *hf = lpsdl_hf_test(L, -1);
    if (hf) {
        const psdl_heightfield *f = lpsdl_hf_field(hf);
        if (lpsdl_hf_view(hf) != LPSDL_HF_SAMPLES || (f->type != PSDL_HF_U16 && f->type != PSDL_HF_U8) ||
            (size_t)f->rows * f->cols != n || f->cols != r->width)
            field_error(L, 1, "samples", lua_pushfstring(L, "a samples grid of %d x %d for %d x %d pixels expected",
                                                         (int)f->cols, (int)f->rows, (int)r->width, (int)r->height));
        if (f->type == PSDL_HF_U16) {
            r->samples = (uint16_t *)f->data; /* the field stays on the stack */
        } else {
            r->samples = (uint16_t *)lua_newuserdatauv(L, n * sizeof(uint16_t), 0);
            for (size_t k = 0; k < n; k++) r->samples[k] = ((const uint8_t *)f->data)[k];
        }
        for (size_t k = 0; k < n; k++)
            if (r->samples[k] > r->maxval) {
                char path[48];
                snprintf(path, sizeof path, "samples[%zu]", k + 1);
                field_error(L, 1, path, lua_pushfstring(L, "integer 0..%d expected", (int)r->maxval));
            }
        return;
    }
    if (sty != LUA_TTABLE)
        field_error(L, 1, "samples", lua_pushfstring(L, "table expected, got %s", luaL_typename(L, -1)));
    int st = lua_gettop(L);
    if (luaL_len(L, st) != (lua_Integer)n)
        field_error(L, 1, "samples", lua_pushfstring(L, "%I values for %d x %d pixels", (LUAI_UACINT)luaL_len(L, st),
                                                     (int)r->width, (int)r->height));
    r->samples = (uint16_t *)lua_newuserdatauv(L, n * sizeof(uint16_t), 0);
    for (size_t k = 0; k < n; k++) {
        lua_rawgeti(L, st, (lua_Integer)k + 1);
        int isint = 0;
        lua_Integer v = lua_tointegerx(L, -1, &isint);
        if (!isint || v < 0 || v > (lua_Integer)r->maxval) {
            char path[48];
            snprintf(path, sizeof path, "samples[%zu]", k + 1);
            field_error(L, 1, path, lua_pushfstring(L, "integer 0..%d expected", (int)r->maxval));
        }
        r->samples[k] = (uint16_t)v;
        lua_pop(L, 1);
    }
}

/* core.png_encode(raster) -> bytes: a grayscale PNG, 8-bit for maxval 255 and 16-bit for
 * 65535 (other maxvals raise), text as a tEXt chunk. A bad raster raises. */
static int l_png_encode(lua_State *L) {
    lua_settop(L, 1);
    psdl_raster r;
    check_raster(L, &r, 65535);
    luaL_argcheck(L, r.maxval == 255 || r.maxval == 65535, 1, "maxval: a PNG holds 255 or 65535");
    tbox *b = tbox_new(L);
    psdl_error err;
    void *out = NULL;
    size_t out_size = 0;
    if (psdl_png_encode(&b->opt, &r, &out, &out_size, &err) != PSDL_OK) return lpsdl_push_error(L, &err);
    b->kind = K_BUFFER;
    b->p = out;
    b->size = out_size;
    lua_pushlstring(L, (const char *)out, out_size);
    tbox_release(b);
    return 1;
}

/* core.pgm_encode(raster) -> bytes: a binary PGM (P5) of maxval 1..65535, text as a comment
 * line (a line break in it raises). A bad raster raises. */
static int l_pgm_encode(lua_State *L) {
    lua_settop(L, 1);
    psdl_raster r;
    check_raster(L, &r, 65535);
    if (r.text && strpbrk(r.text, "\r\n")) field_error(L, 1, "text", "holds a line break");
    size_t need = psdl_pgm_encoded_size(&r);
    luaL_Buffer buf;
    char *p = luaL_buffinitsize(L, &buf, need);
    psdl_error err;
    if (psdl_pgm_encode(&r, p, need, NULL, &err) != PSDL_OK) return luaL_error(L, "%s", err.message);
    luaL_pushresultsize(&buf, need);
    return 1;
}

/* ================================================================ registration */

static const luaL_Reg terrain_funcs[] = {
    {"nhtg_decode", l_nhtg_decode},   {"nhtg_encode", l_nhtg_encode},   {"nhtg_size", l_nhtg_size},
    {"qfs_decompress", l_qfs_decompress}, {"qfs_compress", l_qfs_compress}, {"dbpf_decode", l_dbpf_decode},
    {"dbpf_extract", l_dbpf_extract}, {"dbpf_replace", l_dbpf_replace}, {"png_decode", l_png_decode},
    {"png_encode", l_png_encode},     {"pgm_decode", l_pgm_decode},     {"pgm_encode", l_pgm_encode},
    {NULL, NULL}};

static const luaL_Reg tbox_metameth[] = {
    {"__gc", tbox_close}, {"__close", tbox_close}, {"__tostring", tbox_tostring}, {NULL, NULL}};

void lpsdl_open_terrain(lua_State *L) {
    if (luaL_newmetatable(L, TBOX)) {
        luaL_setfuncs(L, tbox_metameth, 0);
        lua_pushliteral(L, "psdl.core");
        lua_setfield(L, -2, "__metatable");
    }
    lua_pop(L, 1);
    luaL_setfuncs(L, terrain_funcs, 0);
    lua_pushinteger(L, PSDL_NHTG_TYPE);
    lua_setfield(L, -2, "NHTG_TYPE");
}
