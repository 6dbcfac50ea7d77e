/*
 * lpsdl_companion.c -- Lua binding of the companion codecs (psdl_companion.h): decode turns
 * bytes into the plain tables of docs/companion.md, encode turns such a table back into
 * bytes. Registered into psdl.core as bai_decode/bai_encode, cpvs_..., inst_..., pathset_...,
 * pkg_..., tex_..., plus companion_detect and tex_mipchain.
 *
 * Conventions (the PSDL binding's, src/lpsdl.c):
 *   - decode returns the table, or nil, message, code for bad data (code = status name);
 *   - encode raises "bad argument #1 to '<f>_encode' (<path>: <problem>)" for a table the
 *     format cannot hold; the path is 1-based Lua ("roads[3].side_a.lanes[1][2]");
 *   - references to another Lua array are converted here and only here: file index + 1;
 *     room ids stay game room ids; floats are copied bit for bit (lpsdl_from_float).
 * The C document under construction lives in a to-be-closed box, so a raise frees it.
 */
#include "lpsdl.h"
#include "psdl_companion.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ================================================================ the document box */

#define CBOX "psdl.CompanionBox"

typedef struct cbox {
    void *doc;
    void (*release)(void *doc);
} cbox;

static int cbox_close(lua_State *L) {
    cbox *b = (cbox *)luaL_checkudata(L, 1, CBOX);
    if (b->doc) {
        b->release(b->doc);
        b->doc = NULL;
    }
    return 0;
}

/* Pushes a box owning doc (released by release) and marks it to-be-closed. */
static cbox *cbox_push(lua_State *L, void *doc, void (*release)(void *)) {
    cbox *b = (cbox *)lua_newuserdatauv(L, sizeof *b, 0);
    b->doc = doc;
    b->release = release;
    luaL_setmetatable(L, CBOX);
    lua_toclose(L, -1);
    return b;
}

static psdl_alloc lua_alloc_of(lua_State *L) {
    psdl_alloc a;
    a.realloc = lua_getallocf(L, &a.ud);
    return a;
}

static int push_fail(lua_State *L, const psdl_cerror *e) {
    return lpsdl_push_failure(L, e->message, psdl_status_name(e->code));
}

/* ================================================================ C -> Lua */

static void pnum(lua_State *L, float f) { lua_pushnumber(L, lpsdl_from_float(f)); }

static void set_num(lua_State *L, const char *k, float f) {
    pnum(L, f);
    lua_setfield(L, -2, k);
}

static void set_bool(lua_State *L, const char *k, int v) {
    lua_pushboolean(L, v);
    lua_setfield(L, -2, k);
}

static void set_bytes(lua_State *L, const char *k, const void *p, size_t n) {
    lua_pushlstring(L, (const char *)p, n);
    lua_setfield(L, -2, k);
}

static void push_vec3(lua_State *L, psdl_vec3 v) {
    lua_createtable(L, 3, 0);
    pnum(L, v.x);
    lua_rawseti(L, -2, 1);
    pnum(L, v.y);
    lua_rawseti(L, -2, 2);
    pnum(L, v.z);
    lua_rawseti(L, -2, 3);
}

static void set_vec3(lua_State *L, const char *k, psdl_vec3 v) {
    push_vec3(L, v);
    lua_setfield(L, -2, k);
}

static void push_vecs(lua_State *L, const psdl_vec3 *v, size_t n) {
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        push_vec3(L, v[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

static void set_vecs(lua_State *L, const char *k, const psdl_vec3 *v, size_t n) {
    push_vecs(L, v, n);
    lua_setfield(L, -2, k);
}

static void push_floats(lua_State *L, const float *f, size_t n) {
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        pnum(L, f[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

static void set_floats(lua_State *L, const char *k, const float *f, size_t n) {
    push_floats(L, f, n);
    lua_setfield(L, -2, k);
}

/* An array of the n integers u16[i] + add, or u32[i] + add when u16 is NULL (add = 1: a
 * 0-based file index as a Lua position). */
static void push_ints(lua_State *L, const uint16_t *u16, const uint32_t *u32, size_t n, lua_Integer add) {
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_pushinteger(L, (lua_Integer)(u16 ? u16[i] : u32[i]) + add);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

/* ================================================================ Lua -> C */

/* Conversion state: the arena being filled and the path of the current value. */
typedef struct cv {
    lua_State *L;
    void *arena;
    char path[240];
    size_t plen;
} cv;

static size_t cv_key(cv *c, const char *k) {
    size_t old = c->plen;
    int n = snprintf(c->path + c->plen, sizeof c->path - c->plen, "%s%s", c->plen ? "." : "", k);
    if (n > 0) c->plen = c->plen + (size_t)n < sizeof c->path ? c->plen + (size_t)n : sizeof c->path - 1;
    return old;
}

static size_t cv_idx(cv *c, lua_Integer i) {
    size_t old = c->plen;
    int n = snprintf(c->path + c->plen, sizeof c->path - c->plen, "[%lld]", (long long)i);
    if (n > 0) c->plen = c->plen + (size_t)n < sizeof c->path ? c->plen + (size_t)n : sizeof c->path - 1;
    return old;
}

static void cv_pop(cv *c, size_t old) {
    c->plen = old;
    c->path[old] = 0;
}

/* Pops the value cv_table, cv_elem_table or cv_array pushed (or any one value) and
 * restores the path. */
static void cv_leave(cv *c, size_t old) {
    lua_pop(c->L, 1);
    cv_pop(c, old);
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3), noreturn))
#endif
static void cv_err(cv *c, const char *fmt, ...) {
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->plen)
        luaL_argerror(c->L, 1, lua_pushfstring(c->L, "%s: %s", c->path, msg));
    else
        luaL_argerror(c->L, 1, msg);
    abort(); /* not reached: luaL_argerror raises */
}

static void *cv_alloc(cv *c, size_t n, size_t elem) {
    if (n == 0) return NULL;
    if (n > SIZE_MAX / elem) cv_err(c, "too many elements");
    void *p = psdl_companion_alloc(c->arena, n * elem);
    if (!p) luaL_error(c->L, "not enough memory");
    return p;
}

static lua_Integer cv_toint(cv *c, int idx, lua_Integer lo, lua_Integer hi) {
    int isnum;
    lua_Integer v = lua_tointegerx(c->L, idx, &isnum);
    if (!isnum) cv_err(c, "integer expected, got %s", luaL_typename(c->L, idx));
    if (v < lo || v > hi) cv_err(c, "%lld is out of range %lld..%lld", (long long)v, (long long)lo, (long long)hi);
    return v;
}

static float cv_tofloat(cv *c, int idx) {
    if (lua_type(c->L, idx) != LUA_TNUMBER) cv_err(c, "number expected, got %s", luaL_typename(c->L, idx));
    int ok;
    float f = lpsdl_to_float(lua_tonumber(c->L, idx), &ok);
    if (!ok) cv_err(c, "%g is beyond the float range", (double)lua_tonumber(c->L, idx));
    return f;
}

/* t[k] as an integer in lo..hi; def when absent and has_def. */
static lua_Integer cv_int(cv *c, int t, const char *k, lua_Integer lo, lua_Integer hi, int has_def, lua_Integer def) {
    size_t o = cv_key(c, k);
    lua_Integer v = def;
    if (lua_getfield(c->L, t, k) != LUA_TNIL || !has_def) v = cv_toint(c, -1, lo, hi);
    cv_leave(c, o);
    return v;
}

static float cv_num(cv *c, int t, const char *k, int has_def, float def) {
    size_t o = cv_key(c, k);
    float v = def;
    if (lua_getfield(c->L, t, k) != LUA_TNIL || !has_def) v = cv_tofloat(c, -1);
    cv_leave(c, o);
    return v;
}

static int cv_bool(cv *c, int t, const char *k) {
    lua_getfield(c->L, t, k);
    int v = lua_toboolean(c->L, -1);
    lua_pop(c->L, 1);
    return v;
}

/* The value at idx as {x, y, z}. */
static psdl_vec3 cv_tovec3(cv *c, int idx) {
    lua_State *L = c->L;
    idx = lua_absindex(L, idx);
    if (!lua_istable(L, idx)) cv_err(c, "{x, y, z} expected, got %s", luaL_typename(L, idx));
    if (lua_rawlen(L, idx) != 3) cv_err(c, "{x, y, z} expected, got %d numbers", (int)lua_rawlen(L, idx));
    float f[3];
    for (int i = 0; i < 3; i++) {
        lua_rawgeti(L, idx, i + 1);
        size_t o = cv_idx(c, i + 1);
        f[i] = cv_tofloat(c, -1);
        cv_pop(c, o);
        lua_pop(L, 1);
    }
    psdl_vec3 v = {f[0], f[1], f[2]};
    return v;
}

static psdl_vec3 cv_vec3(cv *c, int t, const char *k, int optional) {
    psdl_vec3 v = {0, 0, 0};
    size_t o = cv_key(c, k);
    if (lua_getfield(c->L, t, k) != LUA_TNIL || !optional) v = cv_tovec3(c, -1);
    cv_leave(c, o);
    return v;
}

/* Pushes t[k] and returns 1 when it is a table; 0 (nothing pushed) when nil and optional;
 * raises otherwise. *old receives the path length to restore with cv_pop. */
static int cv_table(cv *c, int t, const char *k, int optional, size_t *old) {
    *old = cv_key(c, k);
    int ty = lua_getfield(c->L, t, k);
    if (ty == LUA_TTABLE) return 1;
    if (ty == LUA_TNIL && optional) {
        lua_pop(c->L, 1);
        cv_pop(c, *old);
        return 0;
    }
    cv_err(c, "table expected, got %s", luaL_typename(c->L, -1));
}

/* Pushes element i of the array at t (must be a table) and extends the path. */
static size_t cv_elem_table(cv *c, int t, lua_Integer i) {
    size_t o = cv_idx(c, i);
    if (lua_rawgeti(c->L, t, i) != LUA_TTABLE) cv_err(c, "table expected, got %s", luaL_typename(c->L, -1));
    return o;
}

static size_t cv_len(cv *c, int idx, size_t max) {
    size_t n = (size_t)lua_rawlen(c->L, idx);
    if (n > max) cv_err(c, "%zu elements, at most %zu", n, max);
    return n;
}

/* n points from the array at idx (exactly expect when expect != SIZE_MAX) into dst (or a
 * new array when dst is NULL). */
static psdl_vec3 *cv_tovecs(cv *c, int idx, size_t expect, psdl_vec3 *dst, size_t *nout) {
    idx = lua_absindex(c->L, idx);
    size_t n = cv_len(c, idx, 0x7FFFFFFF);
    if (expect != SIZE_MAX && n != expect) cv_err(c, "%zu points, %zu expected (one per section)", n, expect);
    if (!dst) dst = cv_alloc(c, n, sizeof *dst);
    for (size_t i = 0; i < n; i++) {
        size_t o = cv_idx(c, (lua_Integer)i + 1);
        lua_rawgeti(c->L, idx, (lua_Integer)i + 1);
        dst[i] = cv_tovec3(c, -1);
        cv_leave(c, o);
    }
    if (nout) *nout = n;
    return dst;
}

static psdl_vec3 *cv_vecs(cv *c, int t, const char *k, size_t expect) {
    size_t o;
    cv_table(c, t, k, 0, &o);
    psdl_vec3 *v = cv_tovecs(c, -1, expect, NULL, NULL);
    cv_leave(c, o);
    return v;
}

static float *cv_tofloats(cv *c, int idx, size_t expect, float *dst) {
    idx = lua_absindex(c->L, idx);
    size_t n = cv_len(c, idx, 0x7FFFFFFF);
    if (expect != SIZE_MAX && n != expect) cv_err(c, "%zu numbers, %zu expected", n, expect);
    if (!dst) dst = cv_alloc(c, n, sizeof *dst);
    for (size_t i = 0; i < n; i++) {
        size_t o = cv_idx(c, (lua_Integer)i + 1);
        lua_rawgeti(c->L, idx, (lua_Integer)i + 1);
        dst[i] = cv_tofloat(c, -1);
        cv_leave(c, o);
    }
    return dst;
}

static float *cv_floats(cv *c, int t, const char *k, size_t expect, float *dst) {
    size_t o;
    cv_table(c, t, k, 0, &o);
    float *f = cv_tofloats(c, -1, expect, dst);
    cv_leave(c, o);
    return f;
}

/* An optional string field; NULL when absent. */
static const char *cv_str(cv *c, int t, const char *k, size_t *len, int optional) {
    size_t o = cv_key(c, k);
    int ty = lua_getfield(c->L, t, k);
    const char *s = NULL;
    *len = 0;
    if (ty == LUA_TSTRING) {
        s = lua_tolstring(c->L, -1, len);
    } else if (!(ty == LUA_TNIL && optional)) {
        cv_err(c, "string expected, got %s", luaL_typename(c->L, -1));
    }
    lua_pop(c->L, 1); /* strings stay alive: the table holds them during the conversion */
    cv_pop(c, o);
    return s;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4), noreturn))
#endif
/* Raises naming field k of the table being converted: "<path>.k: <message>". */
static void cv_field_err(cv *c, const char *k, const char *fmt, ...) {
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cv_key(c, k);
    cv_err(c, "%s", msg);
}

/* Element i (1-based) of the array at t as an integer in lo..hi (the path names it). */
static lua_Integer cv_elem_int(cv *c, int t, lua_Integer i, lua_Integer lo, lua_Integer hi) {
    size_t o = cv_idx(c, i);
    lua_rawgeti(c->L, t, i);
    lua_Integer v = cv_toint(c, -1, lo, hi);
    cv_leave(c, o);
    return v;
}

/* Pushes the table t[k] (required; at most max elements) and returns a new array of as many
 * elem-byte elements as it has (*n; NULL when none). cv_leave(c, *old) pops the table. */
static void *cv_array(cv *c, int t, const char *k, size_t max, size_t elem, size_t *n, size_t *old) {
    cv_table(c, t, k, 0, old);
    *n = cv_len(c, lua_gettop(c->L), max);
    return cv_alloc(c, *n, elem);
}

/* A copy of the n bytes at s in the document's arena (NULL when n is 0). */
static uint8_t *cv_copy(cv *c, const char *s, size_t n) {
    uint8_t *p = cv_alloc(c, n, 1);
    if (n) memcpy(p, s, n);
    return p;
}

/* The optional `trailing` bytes of the document table (argument 1) into *dst and *n (both
 * left alone when absent or empty). */
static void cv_trailing(cv *c, const uint8_t **dst, size_t *n) {
    size_t tl;
    const char *tr = cv_str(c, 1, "trailing", &tl, 1);
    if (tr && tl) {
        *dst = cv_copy(c, tr, tl);
        *n = tl;
    }
}

/* Encodes with fn and pushes the bytes (raises on a failure, which is the document's). */
typedef psdl_status (*enc_fn)(const void *doc, void *dst, size_t cap, size_t *written, psdl_cerror *err);

typedef psdl_status (*dec_fn)(const psdl_alloc *alloc, const void *data, size_t size, void **out, psdl_cerror *err);
typedef void *(*new_fn)(const psdl_alloc *alloc);

/* The codec of format f (document type T) with the document as void *: rel_f frees it,
 * dec_f decodes, new_f makes an empty one, enc_f encodes. */
#define CODEC(f, T)                                                                             \
    static void rel_##f(void *d) { psdl_##f##_free((T *)d); }                                   \
    static psdl_status dec_##f(const psdl_alloc *a, const void *data, size_t n, void **out,     \
                               psdl_cerror *e) {                                                \
        T *doc = NULL;                                                                          \
        psdl_status st = psdl_##f##_decode(a, data, n, &doc, e);                                \
        *out = doc;                                                                             \
        return st;                                                                              \
    }                                                                                           \
    static void *new_##f(const psdl_alloc *a) { return psdl_##f##_new(a); }                     \
    static psdl_status enc_##f(const void *doc, void *dst, size_t cap, size_t *w, psdl_cerror *e) { \
        return psdl_##f##_encode((const T *)doc, dst, cap, w, e);                                \
    }
CODEC(bai, psdl_bai)
CODEC(cpvs, psdl_cpvs)
CODEC(inst, psdl_inst)
CODEC(pathset, psdl_pathset)
CODEC(pkg, psdl_pkg)
CODEC(tex, psdl_tex)

/* Decodes the string argument 1 with dec into a to-be-closed box (freed by rel when the
 * function returns or raises); NULL, with nil, message, code pushed, for bad data. */
static void *boxed_decode(lua_State *L, dec_fn dec, void (*rel)(void *)) {
    size_t size;
    const char *data = luaL_checklstring(L, 1, &size);
    psdl_alloc al = lua_alloc_of(L);
    void *doc = NULL;
    psdl_cerror err;
    if (dec(&al, data, size, &doc, &err) != PSDL_OK) {
        push_fail(L, &err);
        return NULL;
    }
    cbox_push(L, doc, rel);
    return doc;
}

/* Checks that argument 1 is a table (the only argument kept) and makes an empty document
 * with fn in a to-be-closed box freed by rel. */
static void *boxed_new(lua_State *L, new_fn fn, void (*rel)(void *)) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    psdl_alloc al = lua_alloc_of(L);
    void *doc = fn(&al);
    if (!doc) luaL_error(L, "not enough memory");
    cbox_push(L, doc, rel);
    return doc;
}

static void push_encoded(lua_State *L, const void *doc, enc_fn fn) {
    psdl_cerror err;
    size_t n;
    if (fn(doc, NULL, 0, &n, &err) != PSDL_OK) luaL_argerror(L, 1, err.message);
    luaL_Buffer b;
    char *p = luaL_buffinitsize(L, &b, n);
    size_t w;
    if (fn(doc, p, n, &w, &err) != PSDL_OK) luaL_argerror(L, 1, err.message);
    luaL_pushresultsize(&b, w);
}

/* ================================================================ .bai */

static void push_end(lua_State *L, const psdl_bai_end *e) {
    lua_createtable(L, 0, 7);
    lpsdl_set_int(L, "intersection", (lua_Integer)e->intersection + 1);
    lpsdl_set_int(L, "light_index", e->light_index);
    lpsdl_set_int(L, "rule", e->rule);
    lpsdl_set_int(L, "flags", e->flags);
    lpsdl_set_int(L, "road_index", (lua_Integer)e->road_index + 1);
    set_vec3(L, "light_pos", e->light_pos);
    set_vec3(L, "light_axis", e->light_axis);
}

static void push_rows(lua_State *L, const char *k, const psdl_vec3 *v, size_t nrows, size_t ns) {
    lua_createtable(L, (int)nrows, 0);
    for (size_t r = 0; r < nrows; r++) {
        push_vecs(L, v + r * ns, ns);
        lua_rawseti(L, -2, (lua_Integer)r + 1);
    }
    lua_setfield(L, -2, k);
}

static void push_side(lua_State *L, const psdl_bai_side *s, size_t ns) {
    size_t rows = (size_t)s->nlanes + 1;
    lua_createtable(L, 0, 11);
    lpsdl_set_int(L, "flags", s->flags);
    lpsdl_set_int(L, "sidewalks", s->nsidewalks);
    push_rows(L, "lanes", s->lanes, s->nlanes, ns);
    lua_createtable(L, (int)rows, 0);
    for (size_t r = 0; r < rows; r++) {
        push_floats(L, s->lengths + r * ns, ns);
        lua_rawseti(L, -2, (lua_Integer)r + 1);
    }
    lua_setfield(L, -2, "lengths");
    set_floats(L, "lateral", s->lateral, rows);
    set_floats(L, "params", s->params, 10);
    set_vecs(L, "sidewalk", s->sidewalk, ns);
    push_rows(L, "trams", s->trams, s->ntrams, ns);
    push_rows(L, "trains", s->trains, s->ntrains, ns);
    set_vecs(L, "curb", s->curb, ns);
    set_vecs(L, "edge", s->edge, ns);
}

static void push_lists(lua_State *L, const char *k, const psdl_bai_list *lists, uint32_t n) {
    lua_createtable(L, (int)(n ? n - 1 : 0), 1);
    for (uint32_t r = 0; r < n; r++) {
        push_ints(L, lists[r].roads, NULL, lists[r].n, 1);
        lua_rawseti(L, -2, (lua_Integer)r);
    }
    lua_setfield(L, -2, k);
}

static void push_bai(lua_State *L, const psdl_bai *b) {
    lua_createtable(L, 0, 6);
    lua_createtable(L, b->nroads, 0);
    for (unsigned i = 0; i < b->nroads; i++) {
        const psdl_bai_road *r = &b->roads[i];
        size_t ns = r->nsections;
        lua_createtable(L, 0, 16);
        lpsdl_set_int(L, "id", r->id);
        lpsdl_set_int(L, "flags", r->flags);
        push_ints(L, r->rooms, NULL, r->nrooms, 0);
        lua_setfield(L, -2, "rooms");
        set_num(L, "half_width", r->half_width);
        set_num(L, "speed_limit", r->speed_limit);
        push_side(L, &r->side[0], ns);
        lua_setfield(L, -2, "side_a");
        push_side(L, &r->side[1], ns);
        lua_setfield(L, -2, "side_b");
        set_floats(L, "centre_length", r->centre_length, ns);
        set_vecs(L, "origin", r->origin, ns);
        set_vecs(L, "x_axis", r->x_axis, ns);
        set_vecs(L, "y_axis", r->y_axis, ns);
        set_vecs(L, "z_axis", r->z_axis, ns);
        set_vecs(L, "w_axis", r->w_axis, ns);
        push_end(L, &r->end[0]);
        lua_setfield(L, -2, "end_last");
        push_end(L, &r->end[1]);
        lua_setfield(L, -2, "end_first");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "roads");
    lua_createtable(L, b->nintersections, 0);
    for (unsigned i = 0; i < b->nintersections; i++) {
        const psdl_bai_intersection *x = &b->intersections[i];
        lua_createtable(L, 0, 4);
        lpsdl_set_int(L, "id", x->id);
        lpsdl_set_int(L, "room", x->room);
        set_vec3(L, "center", x->center);
        push_ints(L, NULL, x->roads, x->nroads, 1);
        lua_setfield(L, -2, "roads");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "intersections");
    lpsdl_set_int(L, "cull_rooms", b->ncull);
    push_lists(L, "near", b->near, b->ncull);
    push_lists(L, "in", b->in, b->ncull);
    if (b->ntrailing) set_bytes(L, "trailing", b->trailing, b->ntrailing);
}

static int l_bai_decode(lua_State *L) {
    const psdl_bai *b = boxed_decode(L, dec_bai, rel_bai);
    if (!b) return 3;
    push_bai(L, b);
    return 1;
}

static void cv_end(cv *c, int t, const char *k, psdl_bai_end *e) {
    size_t o;
    cv_table(c, t, k, 0, &o);
    int et = lua_gettop(c->L);
    e->intersection = (uint32_t)(cv_int(c, et, "intersection", 1, (lua_Integer)UINT32_MAX + 1, 0, 0) - 1);
    e->light_index = (uint16_t)cv_int(c, et, "light_index", 0, 0xFFFF, 1, 0xCDCD);
    e->rule = (uint16_t)cv_int(c, et, "rule", 0, 0xFFFF, 0, 0);
    e->flags = (uint16_t)cv_int(c, et, "flags", 0, 0xFFFF, 1, 0);
    e->road_index = (uint32_t)(cv_int(c, et, "road_index", 1, (lua_Integer)UINT32_MAX + 1, 0, 0) - 1);
    e->light_pos = cv_vec3(c, et, "light_pos", 1);
    e->light_axis = cv_vec3(c, et, "light_axis", 1);
    cv_leave(c, o);
}

/* rows of polylines t[k] (optional when optional) into one nrows * ns array. */
static psdl_vec3 *cv_rows(cv *c, int t, const char *k, size_t ns, int optional, uint16_t *nrows) {
    size_t o;
    *nrows = 0;
    if (!cv_table(c, t, k, optional, &o)) return NULL;
    int at = lua_gettop(c->L);
    size_t n = cv_len(c, at, 0xFFFF);
    psdl_vec3 *v = cv_alloc(c, n * ns, sizeof *v);
    for (size_t r = 0; r < n; r++) {
        size_t o2 = cv_elem_table(c, at, (lua_Integer)r + 1);
        cv_tovecs(c, -1, ns, v ? v + r * ns : NULL, NULL);
        cv_leave(c, o2);
    }
    cv_leave(c, o);
    *nrows = (uint16_t)n;
    return v;
}

static void cv_side(cv *c, int t, const char *k, psdl_bai_side *s, size_t ns) {
    size_t o;
    cv_table(c, t, k, 0, &o);
    int st = lua_gettop(c->L);
    s->flags = (uint16_t)cv_int(c, st, "flags", 0, 0xFFFF, 1, 0);
    s->nsidewalks = (uint16_t)cv_int(c, st, "sidewalks", 0, 0xFFFF, 1, 1);
    s->lanes = cv_rows(c, st, "lanes", ns, 0, &s->nlanes);
    s->trams = cv_rows(c, st, "trams", ns, 1, &s->ntrams);
    s->trains = cv_rows(c, st, "trains", ns, 1, &s->ntrains);
    size_t rows = (size_t)s->nlanes + 1;
    size_t o2;
    cv_table(c, st, "lengths", 0, &o2);
    int lt = lua_gettop(c->L);
    if (lua_rawlen(c->L, lt) != rows)
        cv_err(c, "%zu rows, %zu expected (one per lane, then the sidewalk)", (size_t)lua_rawlen(c->L, lt), rows);
    s->lengths = cv_alloc(c, rows * ns, sizeof(float));
    for (size_t r = 0; r < rows; r++) {
        size_t o3 = cv_elem_table(c, lt, (lua_Integer)r + 1);
        cv_tofloats(c, -1, ns, s->lengths ? s->lengths + r * ns : NULL);
        cv_leave(c, o3);
    }
    cv_leave(c, o2);
    s->lateral = cv_floats(c, st, "lateral", rows, NULL);
    cv_floats(c, st, "params", 10, s->params);
    s->sidewalk = cv_vecs(c, st, "sidewalk", ns);
    s->curb = cv_vecs(c, st, "curb", ns);
    s->edge = cv_vecs(c, st, "edge", ns);
    cv_leave(c, o);
}

static void cv_lists(cv *c, int t, const char *k, psdl_bai_list *lists, uint32_t n, uint16_t nroads) {
    size_t o;
    cv_table(c, t, k, 0, &o);
    int lt = lua_gettop(c->L);
    for (uint32_t r = 0; r < n; r++) {
        size_t o2 = cv_elem_table(c, lt, (lua_Integer)r);
        int it = lua_gettop(c->L);
        size_t m = cv_len(c, it, 0xFFFF);
        lists[r].n = (uint16_t)m;
        lists[r].roads = cv_alloc(c, m, sizeof(uint16_t));
        for (size_t i = 0; i < m; i++)
            lists[r].roads[i] = (uint16_t)(cv_elem_int(c, it, (lua_Integer)i + 1, 1, 0x10000) - 1);
        cv_leave(c, o2);
    }
    (void)nroads;
    cv_leave(c, o);
}

static int l_bai_encode(lua_State *L) {
    psdl_bai *b = boxed_new(L, new_bai, rel_bai);
    cv c = {L, b->arena_, {0}, 0};
    size_t o, nr;
    b->roads = cv_array(&c, 1, "roads", 0xFFFF, sizeof *b->roads, &nr, &o);
    b->nroads = (uint16_t)nr;
    int rt = lua_gettop(L);
    for (size_t i = 0; i < nr; i++) {
        psdl_bai_road *r = &b->roads[i];
        size_t o2 = cv_elem_table(&c, rt, (lua_Integer)i + 1);
        int t = lua_gettop(L);
        r->id = (uint16_t)cv_int(&c, t, "id", 0, 0xFFFF, 1, (lua_Integer)i);
        r->flags = (uint16_t)cv_int(&c, t, "flags", 0, 0xFFFF, 1, 0);
        size_t o3, nrooms;
        r->rooms = cv_array(&c, t, "rooms", 0xFFFF, sizeof *r->rooms, &nrooms, &o3);
        r->nrooms = (uint16_t)nrooms;
        for (size_t k = 0; k < nrooms; k++) /* the rooms table is at t + 1 */
            r->rooms[k] = (uint16_t)cv_elem_int(&c, t + 1, (lua_Integer)k + 1, 0, 0xFFFF);
        cv_leave(&c, o3);
        r->half_width = cv_num(&c, t, "half_width", 0, 0);
        r->speed_limit = cv_num(&c, t, "speed_limit", 1, 15.0f);
        size_t ns;
        cv_table(&c, t, "origin", 0, &o3);
        ns = cv_len(&c, -1, 0xFFFF);
        cv_leave(&c, o3);
        r->nsections = (uint16_t)ns;
        r->origin = cv_vecs(&c, t, "origin", ns);
        r->centre_length = cv_floats(&c, t, "centre_length", ns, NULL);
        r->x_axis = cv_vecs(&c, t, "x_axis", ns);
        r->y_axis = cv_vecs(&c, t, "y_axis", ns);
        r->z_axis = cv_vecs(&c, t, "z_axis", ns);
        r->w_axis = cv_vecs(&c, t, "w_axis", ns);
        cv_side(&c, t, "side_a", &r->side[0], ns);
        cv_side(&c, t, "side_b", &r->side[1], ns);
        cv_end(&c, t, "end_last", &r->end[0]);
        cv_end(&c, t, "end_first", &r->end[1]);
        cv_leave(&c, o2);
    }
    cv_leave(&c, o);

    size_t nx;
    b->intersections = cv_array(&c, 1, "intersections", 0xFFFF, sizeof *b->intersections, &nx, &o);
    b->nintersections = (uint16_t)nx;
    int xt = lua_gettop(L);
    for (size_t i = 0; i < nx; i++) {
        psdl_bai_intersection *x = &b->intersections[i];
        size_t o2 = cv_elem_table(&c, xt, (lua_Integer)i + 1);
        int t = lua_gettop(L);
        x->id = (uint16_t)cv_int(&c, t, "id", 0, 0xFFFF, 1, (lua_Integer)i);
        x->room = (uint16_t)cv_int(&c, t, "room", 0, 0xFFFF, 0, 0);
        x->center = cv_vec3(&c, t, "center", 0);
        size_t o3, n;
        x->roads = cv_array(&c, t, "roads", 0xFFFF, sizeof *x->roads, &n, &o3);
        x->nroads = (uint16_t)n;
        for (size_t k = 0; k < n; k++) /* the roads table is at t + 1 */
            x->roads[k] = (uint32_t)(cv_elem_int(&c, t + 1, (lua_Integer)k + 1, 1, (lua_Integer)UINT32_MAX + 1) - 1);
        lua_pop(L, 2);
        cv_pop(&c, o2);
    }
    cv_leave(&c, o);

    lua_Integer R = cv_int(&c, 1, "cull_rooms", 0, UINT32_MAX, 0, 0);
    b->ncull = (uint32_t)R;
    for (int which = 0; which < 2; which++) {
        const char *k = which ? "in" : "near";
        size_t o2;
        cv_table(&c, 1, k, 0, &o2);
        /* lists 0 .. R-1 must exist: refuse a count the table cannot back before allocating */
        if ((uint64_t)R > (uint64_t)lua_rawlen(L, -1) + 1)
            cv_err(&c, "%lld lists expected (cull_rooms, indexed by room id from 0), %lld given", (long long)R,
                   (long long)lua_rawlen(L, -1) + (lua_rawgeti(L, -1, 0) == LUA_TTABLE ? 1 : 0));
        cv_leave(&c, o2);
        psdl_bai_list *lists = cv_alloc(&c, (size_t)R, sizeof *lists);
        cv_lists(&c, 1, k, lists, (uint32_t)R, b->nroads);
        if (which)
            b->in = lists;
        else
            b->near = lists;
    }
    cv_trailing(&c, &b->trailing, &b->ntrailing);
    push_encoded(L, b, enc_bai);
    return 1;
}

/* ================================================================ .cpvs */

/* Most visible-room entries a decode turns into Lua integers (London: 1342 rooms, 1.8 M
 * at most); beyond this the file is refused as bad_count rather than exhausting memory. */
#define CPVS_MAX_PAIRS (1u << 25)

static int l_cpvs_decode(lua_State *L) {
    const psdl_cpvs *cp = boxed_decode(L, dec_cpvs, rel_cpvs);
    if (!cp) return 3;
    uint32_t nrows = cp->n - 2;
    size_t maxlen = 0;
    uint64_t pairs = 0;
    for (uint32_t i = 0; i < nrows; i++) {
        size_t len;
        psdl_cpvs_rle_decode(cp->rows[i].rle, cp->rows[i].len, NULL, 0, &len);
        if (len > maxlen) maxlen = len;
        pairs += 4 * (uint64_t)len;
    }
    if (pairs > CPVS_MAX_PAIRS) {
        psdl_cerror err;
        err.code = PSDL_E_BAD_COUNT;
        snprintf(err.message, sizeof err.message,
                 "cpvs: bad_count: the rows decompress to %llu room pairs, more than %u", (unsigned long long)pairs,
                 CPVS_MAX_PAIRS);
        return push_fail(L, &err);
    }
    uint8_t *buf = lua_newuserdatauv(L, maxlen ? maxlen : 1, 0);
    lua_createtable(L, 0, 3);
    lpsdl_set_int(L, "rooms", (lua_Integer)cp->n - 1);
    lua_createtable(L, (int)nrows, 0);
    for (uint32_t i = 0; i < nrows; i++) {
        size_t len;
        psdl_cpvs_rle_decode(cp->rows[i].rle, cp->rows[i].len, buf, maxlen, &len);
        lua_createtable(L, 0, 2);
        lua_newtable(L);
        lua_Integer k = 0;
        for (size_t byte = 0; byte < len; byte++) {
            if (!buf[byte]) continue;
            for (unsigned q = 0; q < 4; q++)
                if ((buf[byte] >> (2 * q)) & 3u) {
                    lua_pushinteger(L, (lua_Integer)(byte * 4 + q));
                    lua_rawseti(L, -2, ++k);
                }
        }
        lua_setfield(L, -2, "visible");
        set_bytes(L, "rle", cp->rows[i].rle ? (const void *)cp->rows[i].rle : "", cp->rows[i].len);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "rows");
    if (cp->ntrailing) set_bytes(L, "trailing", cp->trailing, cp->ntrailing);
    return 1;
}

/* Largest room id a visible list may name when encoding (16 M: far past any u16 room id). */
#define CPVS_MAX_ID 0xFFFFFF

static int l_cpvs_encode(lua_State *L) {
    psdl_cpvs *cp = boxed_new(L, new_cpvs, rel_cpvs);
    cv c = {L, cp->arena_, {0}, 0};
    lua_Integer R = cv_int(&c, 1, "rooms", 1, (lua_Integer)UINT32_MAX - 1, 0, 0);
    cp->n = (uint32_t)R + 1;
    uint32_t nrows = (uint32_t)R - 1;
    size_t o;
    cv_table(&c, 1, "rows", 0, &o);
    int rt = lua_gettop(L);
    if (lua_rawlen(L, rt) < nrows)
        cv_err(&c, "%zu rows, %lu expected (rooms 1 .. rooms - 1)", (size_t)lua_rawlen(L, rt), (unsigned long)nrows);
    cp->rows = cv_alloc(&c, nrows, sizeof *cp->rows);
    for (uint32_t i = 0; i < nrows; i++) {
        size_t o2 = cv_elem_table(&c, rt, (lua_Integer)i + 1);
        int t = lua_gettop(L);
        size_t o3;
        cv_table(&c, t, "visible", 0, &o3);
        int vt = lua_gettop(L);
        size_t nv = cv_len(&c, vt, CPVS_MAX_ID + 1u);
        lua_Integer maxid = -1;
        for (size_t k = 0; k < nv; k++) {
            lua_Integer id = cv_elem_int(&c, vt, (lua_Integer)k + 1, 0, CPVS_MAX_ID);
            if (id > maxid) maxid = id;
        }
        size_t blen = (size_t)(maxid + 4) / 4; /* 0 when empty */
        uint8_t *bits = lua_newuserdatauv(L, blen ? blen : 1, 0);
        memset(bits, 0, blen ? blen : 1);
        for (size_t k = 0; k < nv; k++) {
            lua_rawgeti(L, vt, (lua_Integer)k + 1);
            lua_Integer id = lua_tointeger(L, -1);
            lua_pop(L, 1);
            bits[id / 4] |= (uint8_t)(3u << (2 * (id % 4)));
        }
        size_t rl;
        const char *rle = cv_str(&c, t, "rle", &rl, 1);
        int keep = 0;
        if (rle) {
            size_t dl;
            if (psdl_cpvs_rle_decode((const uint8_t *)rle, rl, NULL, 0, &dl) == 0) {
                uint8_t *dec = lua_newuserdatauv(L, dl ? dl : 1, 0);
                psdl_cpvs_rle_decode((const uint8_t *)rle, rl, dec, dl, &dl);
                size_t n = dl > blen ? dl : blen;
                keep = 1;
                for (size_t byte = 0; byte < n && keep; byte++) {
                    uint8_t a = byte < dl ? dec[byte] : 0, b2 = byte < blen ? bits[byte] : 0;
                    for (unsigned q = 0; q < 4; q++)
                        if ((((a >> (2 * q)) & 3u) != 0) != (((b2 >> (2 * q)) & 3u) != 0)) keep = 0;
                }
                lua_pop(L, 1);
            }
        }
        if (keep) {
            cp->rows[i].len = (uint32_t)rl;
            cp->rows[i].rle = cv_copy(&c, rle, rl);
        } else {
            size_t cl = psdl_cpvs_rle_encode(bits, blen, NULL);
            if (cl > UINT32_MAX) cv_err(&c, "row too long");
            uint8_t *p = cv_alloc(&c, cl, 1);
            if (cl) psdl_cpvs_rle_encode(bits, blen, p);
            cp->rows[i].rle = p;
            cp->rows[i].len = (uint32_t)cl;
        }
        lua_pop(L, 2); /* bits, visible */
        cv_pop(&c, o3);
        cv_leave(&c, o2);
    }
    cv_leave(&c, o);
    cv_trailing(&c, &cp->trailing, &cp->ntrailing);
    push_encoded(L, cp, enc_cpvs);
    return 1;
}

/* ================================================================ .inst */

static int l_inst_decode(lua_State *L) {
    const psdl_inst *t = boxed_decode(L, dec_inst, rel_inst);
    if (!t) return 3;
    lua_createtable(L, (int)t->nrecords, 0);
    for (uint32_t i = 0; i < t->nrecords; i++) {
        const psdl_inst_record *r = &t->records[i];
        lua_createtable(L, 0, 8);
        lpsdl_set_int(L, "room", r->room);
        lpsdl_set_int(L, "flags", r->flags);
        set_bytes(L, "name", r->name, r->name_len);
        set_bool(L, "compact", r->compact);
        set_vec3(L, "x_axis", r->m[0]);
        if (!r->compact) {
            set_vec3(L, "y_axis", r->m[1]);
            set_vec3(L, "z_axis", r->m[2]);
        }
        set_vec3(L, "position", r->m[3]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

static int l_inst_encode(lua_State *L) {
    psdl_inst *t = boxed_new(L, new_inst, rel_inst);
    cv c = {L, t->arena_, {0}, 0};
    size_t n = cv_len(&c, 1, 0x7FFFFFFF);
    t->nrecords = (uint32_t)n;
    t->records = cv_alloc(&c, n, sizeof *t->records);
    for (size_t i = 0; i < n; i++) {
        psdl_inst_record *r = &t->records[i];
        size_t o = cv_elem_table(&c, 1, (lua_Integer)i + 1);
        int rt = lua_gettop(L);
        r->room = (uint16_t)cv_int(&c, rt, "room", 0, 0xFFFF, 0, 0);
        r->flags = (uint16_t)cv_int(&c, rt, "flags", 0, 0xFFFF, 1, 0);
        size_t nl;
        const char *name = cv_str(&c, rt, "name", &nl, 0);
        if (nl > 126)
            cv_field_err(&c, "name", "%zu bytes, at most 126 (the name byte holds the length with its NUL in 7 bits)",
                         nl);
        r->name_len = (uint8_t)nl;
        r->name = cv_alloc(&c, nl + 1, 1);
        memcpy(r->name, name, nl);
        r->compact = (uint8_t)cv_bool(&c, rt, "compact");
        r->m[0] = cv_vec3(&c, rt, "x_axis", 0);
        if (r->compact) {
            if (r->m[0].y != 0)
                cv_field_err(&c, "x_axis", "a compact record stores no y component: 0 expected, got %g",
                             (double)r->m[0].y);
        } else {
            r->m[1] = cv_vec3(&c, rt, "y_axis", 0);
            r->m[2] = cv_vec3(&c, rt, "z_axis", 0);
        }
        r->m[3] = cv_vec3(&c, rt, "position", 0);
        cv_leave(&c, o);
    }
    push_encoded(L, t, enc_inst);
    return 1;
}

/* ================================================================ .pathset */

static int l_pathset_decode(lua_State *L) {
    const psdl_pathset *p = boxed_decode(L, dec_pathset, rel_pathset);
    if (!p) return 3;
    lua_createtable(L, 0, 3);
    lpsdl_set_int(L, "current", p->current);
    lua_createtable(L, (int)p->npaths, 0);
    for (uint32_t i = 0; i < p->npaths; i++) {
        const psdl_path *q = &p->paths[i];
        lua_createtable(L, 0, 9);
        size_t nl = strlen(q->name); /* name[32] is 0: at most 32 */
        set_bytes(L, "name", q->name, nl);
        int clean = 1;
        for (size_t k = nl; k < 32; k++)
            if (q->name[k]) clean = 0;
        if (!clean) set_bytes(L, "name_field", q->name, 32);
        lpsdl_set_int(L, "selection", q->selection);
        set_vecs(L, "points", q->points, q->npoints);
        push_ints(L, NULL, q->words, q->npoints, 0);
        lua_setfield(L, -2, "words");
        lpsdl_set_int(L, "type", q->type);
        lpsdl_set_int(L, "spacing", q->spacing);
        lpsdl_set_int(L, "pad", q->pad);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "paths");
    if (p->ntrailing) set_bytes(L, "trailing", p->trailing, p->ntrailing);
    return 1;
}

static int l_pathset_encode(lua_State *L) {
    psdl_pathset *p = boxed_new(L, new_pathset, rel_pathset);
    cv c = {L, p->arena_, {0}, 0};
    p->current = (uint32_t)cv_int(&c, 1, "current", 0, UINT32_MAX, 1, 0);
    size_t o, n;
    p->paths = cv_array(&c, 1, "paths", 0x7FFFFFFF, sizeof *p->paths, &n, &o);
    p->npaths = (uint32_t)n;
    int pt = lua_gettop(L);
    for (size_t i = 0; i < n; i++) {
        psdl_path *q = &p->paths[i];
        size_t o2 = cv_elem_table(&c, pt, (lua_Integer)i + 1);
        int t = lua_gettop(L);
        size_t nl, fl;
        const char *name = cv_str(&c, t, "name", &nl, 0);
        if (nl > 32 || memchr(name, 0, nl))
            cv_field_err(&c, "name", "%zu bytes%s: at most 32, no NUL", nl, memchr(name, 0, nl) ? " with a NUL" : "");
        memcpy(q->name, name, nl);
        const char *field = cv_str(&c, t, "name_field", &fl, 1);
        if (field) {
            if (fl != 32) cv_field_err(&c, "name_field", "%zu bytes, 32 expected", fl);
            /* the raw field wins only while its text still is the name */
            size_t tl = 0;
            while (tl < 32 && field[tl]) tl++;
            if (tl == nl && memcmp(field, name, nl) == 0) memcpy(q->name, field, 32);
        }
        q->selection = (uint32_t)cv_int(&c, t, "selection", 0, UINT32_MAX, 1, 0);
        size_t o3, np;
        cv_table(&c, t, "points", 0, &o3);
        q->points = cv_tovecs(&c, -1, SIZE_MAX, NULL, &np);
        cv_leave(&c, o3);
        q->npoints = (uint32_t)np;
        q->words = cv_alloc(&c, np, sizeof *q->words);
        if (cv_table(&c, t, "words", 1, &o3)) {
            int wt = lua_gettop(L);
            if (lua_rawlen(L, wt) != np) cv_err(&c, "%zu words, %zu expected (one per point)", (size_t)lua_rawlen(L, wt), np);
            for (size_t k = 0; k < np; k++)
                q->words[k] = (uint32_t)cv_elem_int(&c, wt, (lua_Integer)k + 1, 0, UINT32_MAX);
            cv_leave(&c, o3);
        }
        q->type = (uint8_t)cv_int(&c, t, "type", 0, 255, 0, 0);
        q->spacing = (uint8_t)cv_int(&c, t, "spacing", 0, 255, 1, 0);
        q->pad = (uint16_t)cv_int(&c, t, "pad", 0, 0xFFFF, 1, 0);
        cv_leave(&c, o2);
    }
    cv_leave(&c, o);
    cv_trailing(&c, &p->trailing, &p->ntrailing);
    push_encoded(L, p, enc_pathset);
    return 1;
}

/* ================================================================ PKG3 */

static void push_u8x4(lua_State *L, const char *k, const uint8_t *b) {
    lua_createtable(L, 4, 0);
    for (int i = 0; i < 4; i++) {
        lua_pushinteger(L, b[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, k);
}

static void push_geometry(lua_State *L, const psdl_pkg_geometry *g) {
    lua_createtable(L, 0, 2);
    lpsdl_set_int(L, "fvf", g->fvf);
    lua_createtable(L, (int)g->nsections, 0);
    for (uint32_t s = 0; s < g->nsections; s++) {
        const psdl_pkg_section *sec = &g->sections[s];
        lua_createtable(L, 0, 2);
        lpsdl_set_int(L, "shader", (lua_Integer)sec->shader + 1);
        lua_createtable(L, (int)sec->npackets, 0);
        for (uint32_t k = 0; k < sec->npackets; k++) {
            const psdl_pkg_packet *pk = &sec->packets[k];
            lua_createtable(L, 0, 3);
            lpsdl_set_int(L, "primitive", pk->primitive);
            lua_createtable(L, (int)pk->nvertices, 0);
            for (uint32_t v = 0; v < pk->nvertices; v++) {
                const psdl_pkg_vertex *vx = &pk->vertices[v];
                lua_createtable(L, 0, 5);
                set_vec3(L, "position", vx->position);
                if (g->fvf & PSDL_FVF_NORMAL) set_vec3(L, "normal", vx->normal);
                if (g->fvf & PSDL_FVF_DIFFUSE) lpsdl_set_int(L, "diffuse", vx->diffuse);
                if (g->fvf & PSDL_FVF_SPECULAR) lpsdl_set_int(L, "specular", vx->specular);
                if (g->fvf & PSDL_FVF_TEX1) {
                    lua_createtable(L, 2, 0);
                    pnum(L, vx->u);
                    lua_rawseti(L, -2, 1);
                    pnum(L, vx->v);
                    lua_rawseti(L, -2, 2);
                    lua_setfield(L, -2, "uv");
                }
                lua_rawseti(L, -2, (lua_Integer)v + 1);
            }
            lua_setfield(L, -2, "vertices");
            lua_createtable(L, (int)pk->nindices, 0);
            for (uint32_t i = 0; i < pk->nindices; i++) {
                lua_pushinteger(L, (lua_Integer)pk->indices[i] + 1);
                lua_rawseti(L, -2, (lua_Integer)i + 1);
            }
            lua_setfield(L, -2, "indices");
            lua_rawseti(L, -2, (lua_Integer)k + 1);
        }
        lua_setfield(L, -2, "packets");
        lua_rawseti(L, -2, (lua_Integer)s + 1);
    }
    lua_setfield(L, -2, "sections");
}

static void push_shaders(lua_State *L, const psdl_pkg_shaders *sh) {
    static const char *const full[] = {"diffuse", "ambient", "specular", "emissive"};
    static const char *const compact[] = {"diffuse", "second", "emissive"};
    lua_createtable(L, 0, 2);
    set_bool(L, "compact", sh->compact);
    lua_createtable(L, (int)sh->paint_jobs, 0);
    for (uint32_t j = 0; j < sh->paint_jobs; j++) {
        lua_createtable(L, (int)sh->per_job, 0);
        for (uint32_t k = 0; k < sh->per_job; k++) {
            const psdl_pkg_shader *s = &sh->shaders[(size_t)j * sh->per_job + k];
            lua_createtable(L, 0, 6);
            if (s->textured)
                set_bytes(L, "texture", s->name, s->name_len);
            else
                set_bool(L, "texture", 0);
            if (sh->compact) {
                for (int c = 0; c < 3; c++) push_u8x4(L, compact[c], s->bytes[c]);
            } else {
                for (int c = 0; c < 4; c++) {
                    push_floats(L, s->colour[c], 4);
                    lua_setfield(L, -2, full[c]);
                }
            }
            set_num(L, "power", s->power);
            lua_rawseti(L, -2, (lua_Integer)k + 1);
        }
        lua_rawseti(L, -2, (lua_Integer)j + 1);
    }
    lua_setfield(L, -2, "paint_jobs");
}

static int l_pkg_decode(lua_State *L) {
    const psdl_pkg *p = boxed_decode(L, dec_pkg, rel_pkg);
    if (!p) return 3;
    lua_createtable(L, 0, 2);
    set_bytes(L, "magic", p->magic, 4);
    lua_createtable(L, (int)p->nchunks, 0);
    for (uint32_t i = 0; i < p->nchunks; i++) {
        const psdl_pkg_chunk *c = &p->chunks[i];
        lua_createtable(L, 0, 2);
        set_bytes(L, "name", c->name, c->name_len);
        switch (c->kind) {
        case PSDL_PKG_GEOMETRY:
            push_geometry(L, &c->geometry);
            lua_setfield(L, -2, "geometry");
            break;
        case PSDL_PKG_SHADERS:
            push_shaders(L, &c->shaders);
            lua_setfield(L, -2, "shaders");
            break;
        case PSDL_PKG_XREFS:
            lua_createtable(L, (int)c->nxrefs, 0);
            for (uint32_t x = 0; x < c->nxrefs; x++) {
                lua_createtable(L, 0, 2);
                lua_createtable(L, 4, 0);
                for (int r = 0; r < 4; r++) {
                    psdl_vec3 v = {c->xrefs[x].m[3 * r], c->xrefs[x].m[3 * r + 1], c->xrefs[x].m[3 * r + 2]};
                    push_vec3(L, v);
                    lua_rawseti(L, -2, r + 1);
                }
                lua_setfield(L, -2, "matrix");
                lua_pushstring(L, c->xrefs[x].name);
                lua_setfield(L, -2, "name");
                lua_rawseti(L, -2, (lua_Integer)x + 1);
            }
            lua_setfield(L, -2, "xrefs");
            break;
        default: set_bytes(L, "data", c->data ? (const void *)c->data : "", c->size); break;
        }
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "chunks");
    return 1;
}

static void cv_u8x4(cv *c, int t, const char *k, uint8_t *dst) {
    size_t o;
    cv_table(c, t, k, 0, &o);
    int at = lua_gettop(c->L);
    if (lua_rawlen(c->L, at) != 4) cv_err(c, "{r, g, b, a} expected");
    for (int i = 0; i < 4; i++) dst[i] = (uint8_t)cv_elem_int(c, at, i + 1, 0, 255);
    cv_leave(c, o);
}

static void cv_geometry(cv *c, int gt, psdl_pkg_geometry *g) {
    lua_State *L = c->L;
    g->fvf = (uint32_t)cv_int(c, gt, "fvf", 0, UINT32_MAX, 0, 0);
    size_t o, ns;
    g->sections = cv_array(c, gt, "sections", 127, sizeof *g->sections, &ns, &o);
    g->nsections = (uint32_t)ns;
    int st = lua_gettop(L);
    for (size_t s = 0; s < ns; s++) {
        psdl_pkg_section *sec = &g->sections[s];
        size_t o2 = cv_elem_table(c, st, (lua_Integer)s + 1);
        int sect = lua_gettop(L);
        sec->shader = (uint32_t)(cv_int(c, sect, "shader", 1, (lua_Integer)UINT32_MAX + 1, 0, 0) - 1);
        size_t o3, np;
        sec->packets = cv_array(c, sect, "packets", 0x7FFFFFFF, sizeof *sec->packets, &np, &o3);
        sec->npackets = (uint32_t)np;
        int pt = lua_gettop(L);
        for (size_t k = 0; k < np; k++) {
            psdl_pkg_packet *pk = &sec->packets[k];
            size_t o4 = cv_elem_table(c, pt, (lua_Integer)k + 1);
            int kt = lua_gettop(L);
            pk->primitive = (uint32_t)cv_int(c, kt, "primitive", 0, UINT32_MAX, 1, 3);
            size_t o5, nv, ni;
            pk->vertices = cv_array(c, kt, "vertices", 65535, sizeof *pk->vertices, &nv, &o5);
            pk->nvertices = (uint32_t)nv;
            int vt = lua_gettop(L);
            for (size_t v = 0; v < nv; v++) {
                psdl_pkg_vertex *vx = &pk->vertices[v];
                size_t o6 = cv_elem_table(c, vt, (lua_Integer)v + 1);
                int xt = lua_gettop(L);
                vx->position = cv_vec3(c, xt, "position", 0);
                if (g->fvf & PSDL_FVF_NORMAL) vx->normal = cv_vec3(c, xt, "normal", 0);
                if (g->fvf & PSDL_FVF_DIFFUSE) vx->diffuse = (uint32_t)cv_int(c, xt, "diffuse", 0, UINT32_MAX, 0, 0);
                if (g->fvf & PSDL_FVF_SPECULAR)
                    vx->specular = (uint32_t)cv_int(c, xt, "specular", 0, UINT32_MAX, 0, 0);
                if (g->fvf & PSDL_FVF_TEX1) {
                    float uv[2];
                    cv_floats(c, xt, "uv", 2, uv);
                    vx->u = uv[0];
                    vx->v = uv[1];
                }
                cv_leave(c, o6);
            }
            cv_leave(c, o5);
            pk->indices = cv_array(c, kt, "indices", 0x7FFFFFFF, sizeof *pk->indices, &ni, &o5);
            pk->nindices = (uint32_t)ni;
            int it = lua_gettop(L);
            for (size_t i = 0; i < ni; i++)
                pk->indices[i] = (uint16_t)(cv_elem_int(c, it, (lua_Integer)i + 1, 1, (lua_Integer)(nv ? nv : 1)) - 1);
            cv_leave(c, o5);
            cv_leave(c, o4);
        }
        cv_leave(c, o3);
        cv_leave(c, o2);
    }
    cv_leave(c, o);
}

static void cv_shaders(cv *c, int ht, psdl_pkg_shaders *sh) {
    static const char *const full[] = {"diffuse", "ambient", "specular", "emissive"};
    static const char *const compact[] = {"diffuse", "second", "emissive"};
    lua_State *L = c->L;
    sh->compact = cv_bool(c, ht, "compact");
    size_t o;
    cv_table(c, ht, "paint_jobs", 0, &o);
    int jt = lua_gettop(L);
    size_t nj = cv_len(c, jt, 127);
    size_t per = 0;
    if (nj) {
        size_t o2 = cv_elem_table(c, jt, 1);
        per = cv_len(c, -1, 0xFFFFFF);
        cv_leave(c, o2);
    }
    sh->paint_jobs = (uint32_t)nj;
    sh->per_job = (uint32_t)per;
    sh->shaders = cv_alloc(c, nj * per, sizeof *sh->shaders);
    for (size_t j = 0; j < nj; j++) {
        size_t o2 = cv_elem_table(c, jt, (lua_Integer)j + 1);
        int pt = lua_gettop(L);
        if (lua_rawlen(L, pt) != per)
            cv_err(c, "%zu shaders, %zu expected (every paint job has as many as the first)", (size_t)lua_rawlen(L, pt),
                   per);
        for (size_t k = 0; k < per; k++) {
            psdl_pkg_shader *s = &sh->shaders[j * per + k];
            size_t o3 = cv_elem_table(c, pt, (lua_Integer)k + 1);
            int st = lua_gettop(L);
            size_t o4 = cv_key(c, "texture");
            int ty = lua_getfield(L, st, "texture");
            if (ty == LUA_TSTRING) {
                size_t nl;
                const char *name = lua_tolstring(L, -1, &nl);
                if (nl > 254) cv_err(c, "%zu bytes, at most 254", nl);
                s->textured = 1;
                s->name_len = (uint8_t)nl;
                s->name = cv_alloc(c, nl + 1, 1);
                memcpy(s->name, name, nl);
            } else if (!(ty == LUA_TNIL || (ty == LUA_TBOOLEAN && !lua_toboolean(L, -1)))) {
                cv_err(c, "string or false expected, got %s", luaL_typename(L, -1));
            }
            cv_leave(c, o4);
            if (sh->compact) {
                for (int q = 0; q < 3; q++) cv_u8x4(c, st, compact[q], s->bytes[q]);
            } else {
                for (int q = 0; q < 4; q++) cv_floats(c, st, full[q], 4, s->colour[q]);
            }
            s->power = cv_num(c, st, "power", 1, 0.0f);
            cv_leave(c, o3);
        }
        cv_leave(c, o2);
    }
    cv_leave(c, o);
}

static int l_pkg_encode(lua_State *L) {
    psdl_pkg *p = boxed_new(L, new_pkg, rel_pkg);
    cv c = {L, p->arena_, {0}, 0};
    size_t ml;
    const char *magic = cv_str(&c, 1, "magic", &ml, 1);
    if (magic && !(ml == 4 && memcmp(magic, "PKG3", 4) == 0)) cv_field_err(&c, "magic", "only \"PKG3\" can be written");
    size_t o, n;
    p->chunks = cv_array(&c, 1, "chunks", 0x7FFFFFFF, sizeof *p->chunks, &n, &o);
    p->nchunks = (uint32_t)n;
    int ct = lua_gettop(L);
    for (size_t i = 0; i < n; i++) {
        psdl_pkg_chunk *ch = &p->chunks[i];
        size_t o2 = cv_elem_table(&c, ct, (lua_Integer)i + 1);
        int t = lua_gettop(L);
        size_t nl;
        const char *name = cv_str(&c, t, "name", &nl, 0);
        if (nl == 0 || nl > 254) cv_field_err(&c, "name", "%zu bytes: 1 to 254 expected", nl);
        ch->name_len = (uint8_t)nl;
        ch->name = cv_alloc(&c, nl + 1, 1);
        memcpy(ch->name, name, nl);
        int views = 0;
        size_t o3;
        if (cv_table(&c, t, "geometry", 1, &o3)) {
            views++;
            ch->kind = PSDL_PKG_GEOMETRY;
            cv_geometry(&c, lua_gettop(L), &ch->geometry);
            cv_leave(&c, o3);
        }
        if (cv_table(&c, t, "shaders", 1, &o3)) {
            views++;
            ch->kind = PSDL_PKG_SHADERS;
            cv_shaders(&c, lua_gettop(L), &ch->shaders);
            cv_leave(&c, o3);
        }
        if (cv_table(&c, t, "xrefs", 1, &o3)) {
            views++;
            ch->kind = PSDL_PKG_XREFS;
            int xt = lua_gettop(L);
            size_t nx = cv_len(&c, xt, 0x7FFFFFFF);
            ch->nxrefs = (uint32_t)nx;
            ch->xrefs = cv_alloc(&c, nx, sizeof *ch->xrefs);
            for (size_t x = 0; x < nx; x++) {
                size_t o4 = cv_elem_table(&c, xt, (lua_Integer)x + 1);
                int et = lua_gettop(L);
                size_t o5;
                cv_table(&c, et, "matrix", 0, &o5);
                psdl_vec3 m[4];
                cv_tovecs(&c, -1, 4, m, NULL);
                for (int r = 0; r < 4; r++) {
                    ch->xrefs[x].m[3 * r] = m[r].x;
                    ch->xrefs[x].m[3 * r + 1] = m[r].y;
                    ch->xrefs[x].m[3 * r + 2] = m[r].z;
                }
                cv_leave(&c, o5);
                size_t xl;
                const char *xn = cv_str(&c, et, "name", &xl, 0);
                if (xl > 31 || memchr(xn, 0, xl)) cv_field_err(&c, "name", "%zu bytes: at most 31, no NUL", xl);
                memcpy(ch->xrefs[x].name, xn, xl);
                cv_leave(&c, o4);
            }
            cv_leave(&c, o3);
        }
        size_t dl;
        const char *d = cv_str(&c, t, "data", &dl, 1);
        if (d) {
            views++;
            ch->kind = PSDL_PKG_RAW;
            ch->size = dl;
            ch->data = cv_copy(&c, d, dl);
        }
        if (views != 1) cv_err(&c, "exactly one of geometry, shaders, xrefs or data expected, %d given", views);
        cv_leave(&c, o2);
    }
    cv_leave(&c, o);
    push_encoded(L, p, enc_pkg);
    return 1;
}

/* ================================================================ .tex */

static int l_tex_decode(lua_State *L) {
    const psdl_tex *t = boxed_decode(L, dec_tex, rel_tex);
    if (!t) return 3;
    static const lpsdl_ufield fields[] = {LPSDL_UFIELD(psdl_tex, width), LPSDL_UFIELD(psdl_tex, height),
                                          LPSDL_UFIELD(psdl_tex, format), LPSDL_UFIELD(psdl_tex, mips),
                                          LPSDL_UFIELD(psdl_tex, unknown), LPSDL_UFIELD(psdl_tex, flags)};
    lua_createtable(L, 0, 9);
    lpsdl_set_ufields(L, t, fields, sizeof fields / sizeof *fields);
    if (!t->layout_known) {
        set_bytes(L, "data", t->data ? (const void *)t->data : "", t->ndata);
        return 1;
    }
    if (t->npalette) set_bytes(L, "palette", t->palette, t->npalette);
    lua_createtable(L, (int)t->nlevels, 0);
    for (uint32_t i = 0; i < t->nlevels; i++) {
        lua_pushlstring(L, (const char *)t->levels[i], t->level_size[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "levels");
    if (t->ntrailing) set_bytes(L, "trailing", t->trailing, t->ntrailing);
    return 1;
}

static int l_tex_encode(lua_State *L) {
    psdl_tex *t = boxed_new(L, new_tex, rel_tex);
    cv c = {L, t->arena_, {0}, 0};
    t->width = (uint16_t)cv_int(&c, 1, "width", 1, 0xFFFF, 0, 0);
    t->height = (uint16_t)cv_int(&c, 1, "height", 1, 0xFFFF, 0, 0);
    t->format = (uint16_t)cv_int(&c, 1, "format", 0, 0xFFFF, 0, 0);
    t->unknown = (uint16_t)cv_int(&c, 1, "unknown", 0, 0xFFFF, 1, 1);
    t->flags = (uint32_t)cv_int(&c, 1, "flags", 0, UINT32_MAX, 1, 0);
    size_t dl;
    const char *d = cv_str(&c, 1, "data", &dl, 1);
    if (d) {
        t->mips = (uint16_t)cv_int(&c, 1, "mips", 0, 0xFFFF, 0, 0);
        t->ndata = dl;
        t->data = cv_copy(&c, d, dl);
        push_encoded(L, t, enc_tex);
        return 1;
    }
    if (psdl_tex_bpp(t->format) == 0)
        cv_field_err(&c, "format", "%u has no known texel layout: give the raw bytes as `data`", t->format);
    t->layout_known = 1;
    size_t o;
    cv_table(&c, 1, "levels", 0, &o);
    int lt = lua_gettop(L);
    size_t nl = cv_len(&c, lt, 0xFFFF);
    cv_leave(&c, o);
    t->mips = (uint16_t)cv_int(&c, 1, "mips", 0, 0xFFFF, 1, (lua_Integer)nl);
    uint32_t want = psdl_tex_level_count(t->width, t->height, t->mips);
    if (nl != want) cv_err(&c, "levels: %zu given, mips = %u describes %u", nl, t->mips, (unsigned)want);
    size_t pl;
    const char *pal = cv_str(&c, 1, "palette", &pl, psdl_tex_palette_size(t->format) == 0);
    size_t np = psdl_tex_palette_size(t->format);
    if (np && pl != np) cv_field_err(&c, "palette", "%zu bytes, %zu expected for format %u", pl, np, t->format);
    if (np) {
        t->palette = cv_copy(&c, pal, np);
        t->npalette = np;
    }
    t->nlevels = (uint32_t)nl;
    t->levels = cv_alloc(&c, nl, sizeof *t->levels);
    t->level_size = cv_alloc(&c, nl, sizeof *t->level_size);
    cv_table(&c, 1, "levels", 0, &o);
    for (size_t i = 0; i < nl; i++) {
        size_t o2 = cv_idx(&c, (lua_Integer)i + 1);
        size_t ls;
        if (lua_rawgeti(L, lt, (lua_Integer)i + 1) != LUA_TSTRING) cv_err(&c, "string expected");
        const char *lv = lua_tolstring(L, -1, &ls);
        size_t want_size = psdl_tex_level_size(t->width, t->height, t->format, (uint32_t)i);
        if (ls != want_size) cv_err(&c, "%zu bytes, %zu expected", ls, want_size);
        t->levels[i] = cv_copy(&c, lv, ls);
        t->level_size[i] = ls;
        cv_leave(&c, o2);
    }
    cv_leave(&c, o);
    cv_trailing(&c, &t->trailing, &t->ntrailing);
    push_encoded(L, t, enc_tex);
    return 1;
}

/***
 * The full mip chain of an RGB888 or RGBA8888 image (2 x 2 box filter, CF §9).
 * @function tex_mipchain
 * @tparam integer width power of two, 1..32768
 * @tparam integer height power of two
 * @tparam integer format 17 (RGB888) or 18 (RGBA8888)
 * @tparam string pixels width * height texels, row 0 first
 * @treturn table the level strings, largest first, down to a side of 1
 */
static int l_tex_mipchain(lua_State *L) {
    lua_Integer w = luaL_checkinteger(L, 1), h = luaL_checkinteger(L, 2), f = luaL_checkinteger(L, 3);
    size_t n;
    luaL_checklstring(L, 4, &n);
    luaL_argcheck(L, w >= 1 && w <= 32768 && (w & (w - 1)) == 0, 1, "power of two 1..32768 expected");
    luaL_argcheck(L, h >= 1 && h <= 32768 && (h & (h - 1)) == 0, 2, "power of two 1..32768 expected");
    luaL_argcheck(L, f == 17 || f == 18, 3, "17 (RGB888) or 18 (RGBA8888) expected");
    unsigned bpp = f == 17 ? 3 : 4;
    if (n != (size_t)w * (size_t)h * bpp)
        return luaL_argerror(L, 4, lua_pushfstring(L, "%d bytes, %d expected", (int)n, (int)(w * h * bpp)));
    uint32_t nl = psdl_tex_level_count((unsigned)w, (unsigned)h, 0);
    lua_createtable(L, (int)nl, 0);
    lua_pushvalue(L, 4);
    lua_rawseti(L, -2, 1);
    unsigned cw = (unsigned)w, ch = (unsigned)h;
    for (uint32_t i = 1; i < nl; i++) {
        lua_rawgeti(L, -1, (lua_Integer)i);
        const uint8_t *src = (const uint8_t *)lua_tostring(L, -1);
        unsigned nw = cw > 1 ? cw / 2 : 1, nh = ch > 1 ? ch / 2 : 1;
        luaL_Buffer b;
        uint8_t *dst = (uint8_t *)luaL_buffinitsize(L, &b, (size_t)nw * nh * bpp);
        psdl_tex_halve(src, cw, ch, bpp, dst);
        luaL_pushresultsize(&b, (size_t)nw * nh * bpp);
        lua_rawseti(L, -3, (lua_Integer)i + 1);
        lua_pop(L, 1);
        cw = nw;
        ch = nh;
    }
    return 1;
}

/***
 * The companion format a buffer's magic names ("bai", "cpvs", "pathset", "pkg", "psdl"), or
 * nil (.inst and .tex have no magic).
 * @function companion_detect
 */
static int l_detect(lua_State *L) {
    size_t n;
    const char *d = luaL_checklstring(L, 1, &n);
    const char *f = psdl_companion_detect(d, n);
    if (f)
        lua_pushstring(L, f);
    else
        lua_pushnil(L);
    return 1;
}

static const luaL_Reg companion_funcs[] = {
    {"bai_decode", l_bai_decode},         {"bai_encode", l_bai_encode},
    {"cpvs_decode", l_cpvs_decode},       {"cpvs_encode", l_cpvs_encode},
    {"inst_decode", l_inst_decode},       {"inst_encode", l_inst_encode},
    {"pathset_decode", l_pathset_decode}, {"pathset_encode", l_pathset_encode},
    {"pkg_decode", l_pkg_decode},         {"pkg_encode", l_pkg_encode},
    {"tex_decode", l_tex_decode},         {"tex_encode", l_tex_encode},
    {"tex_mipchain", l_tex_mipchain},     {"companion_detect", l_detect},
    {NULL, NULL},
};

void lpsdl_open_companion(lua_State *L) {
    if (luaL_newmetatable(L, CBOX)) {
        lua_pushcfunction(L, cbox_close);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, cbox_close);
        lua_setfield(L, -2, "__close");
        lua_pushliteral(L, "psdl.core");
        lua_setfield(L, -2, "__metatable");
    }
    lua_pop(L, 1);
    luaL_setfuncs(L, companion_funcs, 0);
}
