/*
 * lpsdl.c -- the Lua 5.4 binding of the PSDL C core: the module `psdl.core`.
 *
 * The only file of the project that includes lua.h. It converts between the C document
 * (psdl_doc, see psdl.h) and the Lua document model of docs/document-model.md, in both
 * directions, and is the one place where file indices (0-based) become Lua references
 * (1-based) and back.
 *
 *   core.decode(bytes [, limits]) -> doc | nil, message, code   (bad data returns fail)
 *   core.decode_file(file, path [, limits]) -> the same, from an open file handle
 *   core.encode(doc)              -> bytes                      (an invalid model raises)
 *   core.validate(doc [, bytes [, format_only]]) -> problems, nerrors, nwarnings [, bytes when asked]
 *   core.rules()                  -> {{name =, severity =, summary =}, ...}
 *
 * Longjmp safety: every psdl_doc lives in a userdata box (metatable "psdl.DocBox", __gc and
 * __close) created before the document exists and before any call that can raise, so an
 * error anywhere in a conversion frees the document. The core allocates through Lua's own
 * allocator (lua_getallocf).
 *
 * Model errors raise through luaL_argerror with a path to the bad value, built lazily from a
 * small stack of path segments as the converter descends, e.g.
 *   bad argument #1 to 'encode' (rooms[12].attributes[3].vertices[2]: integer expected, got nil)
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"
#include "lua.h"

#include "lpsdl.h"
#include "psdl.h"
#include "psdl_internal.h" /* psdl_fixed_subtype */

#if defined(_WIN32)
#define LPSDL_EXPORT __declspec(dllexport)
#elif defined(__GNUC__)
#define LPSDL_EXPORT __attribute__((visibility("default")))
#else
#define LPSDL_EXPORT
#endif

#if defined(__GNUC__)
#define LP_NORETURN __attribute__((noreturn))
#define LP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define LP_NORETURN
#define LP_PRINTF(f, a)
#endif

LPSDL_EXPORT int luaopen_psdl_core(lua_State *L);

#define DOCBOX "psdl.DocBox"

/* ================================================================ single-precision floats */

/* A file float as a Lua number. NaNs are built bit by bit: a C conversion would quiet a
 * signalling NaN and change the file's bytes on re-encoding. */
static lua_Number lp_from_float(float f) {
    if (f == f) return (lua_Number)f;
    uint32_t fb;
    memcpy(&fb, &f, 4);
    uint64_t db = ((uint64_t)(fb >> 31) << 63) | ((uint64_t)0x7FF << 52) | ((uint64_t)(fb & 0x7FFFFFu) << 29);
    double d;
    memcpy(&d, &db, 8);
    return (lua_Number)d;
}

/* The float a Lua number stands for; 0 with *ok = 0 when it is finite but beyond the
 * float range (a C conversion would be undefined). NaN payloads are kept bit by bit. */
static float lp_to_float(lua_Number n, int *ok) {
    double d = (double)n;
    *ok = 1;
    if (d != d) {
        uint64_t db;
        memcpy(&db, &d, 8);
        uint32_t mant = (uint32_t)(db >> 29) & 0x7FFFFFu;
        if (mant == 0) mant = 0x400000u; /* payload only in bits a float cannot hold */
        uint32_t fb = ((uint32_t)(db >> 63) << 31) | 0x7F800000u | mant;
        float f;
        memcpy(&f, &fb, 4);
        return f;
    }
    if (d > FLT_MAX || d < -FLT_MAX) {
        if (isinf(d)) return (float)d;
        /* below FLT_MAX + half an ulp (2^103) the value rounds to FLT_MAX */
        if (fabs(d) < (double)FLT_MAX + 0x1p103) return d < 0 ? -FLT_MAX : FLT_MAX;
        *ok = 0;
        return 0;
    }
    return (float)d;
}

/* ================================================================ the document box */

/* A userdata owning one psdl_doc (NULL when empty or closed). gc_stopped: the owner paused
 * the garbage collector and the box must restart it. */
typedef struct docbox {
    psdl_doc *doc;
    int gc_stopped;
} docbox;

/* Frees the document and restarts the collector if the box paused it (idempotent). */
static void box_release(lua_State *L, docbox *b) {
    psdl_doc_free(b->doc);
    b->doc = NULL;
    if (b->gc_stopped) {
        b->gc_stopped = 0;
        lua_gc(L, LUA_GCRESTART);
    }
}

/* __gc and __close: release the box. */
static int box_close(lua_State *L) {
    box_release(L, (docbox *)luaL_checkudata(L, 1, DOCBOX));
    return 0;
}

/* __tostring: "psdl.DocBox (closed)" or "psdl.DocBox (0x...)". */
static int box_tostring(lua_State *L) {
    docbox *b = (docbox *)luaL_checkudata(L, 1, DOCBOX);
    if (b->doc)
        lua_pushfstring(L, DOCBOX " (%p)", (void *)b->doc);
    else
        lua_pushliteral(L, DOCBOX " (closed)");
    return 1;
}

/* Pushes a new empty box and marks its slot to-be-closed. */
static docbox *box_new(lua_State *L) {
    docbox *b = (docbox *)lua_newuserdatauv(L, sizeof *b, 0);
    b->doc = NULL;
    b->gc_stopped = 0;
    luaL_setmetatable(L, DOCBOX);
    lua_toclose(L, -1);
    return b;
}

/* Options making the core allocate through the Lua state's allocator. */
static psdl_options box_options(lua_State *L) {
    psdl_options o;
    memset(&o, 0, sizeof o);
    o.alloc.realloc = lua_getallocf(L, &o.alloc.ud);
    return o;
}

/* ================================================================ attribute type table */

enum { K_VARIABLE, K_FIXED, K_TEXTURE, K_UNKNOWN };

typedef struct conv conv;
typedef struct pusher pusher;

/* One Lua attribute type: how to push a psdl_attr's fields into the table on top of the
 * stack, and how to fill a psdl_attr from the table at stack index t. */
typedef struct attr_codec {
    const char *name;
    uint8_t type; /* psdl_attr_type */
    uint8_t kind; /* K_* */
    void (*push)(const pusher *p, const psdl_attr *a);
    void (*check)(conv *c, int t, psdl_attr *a);
    const char *const *fields; /* type-specific keys (besides the form fields) */
    uint8_t nfields;           /* fields of a decoded attribute: type, last and its own */
} attr_codec;

enum { NCODECS = 15, CODEC_SIDEWALK = 1, CODEC_TUNNEL = 9, CODEC_JUNCTION = 10 };
static const attr_codec codecs[NCODECS]; /* defined after the handlers */

/* ================================================================ C -> Lua (decode) */

/* The field names and string values of the Lua document (docs/document-model.md). push_doc
 * pushes each once per decode onto the stack and sets fields with lua_rawset of these
 * stack strings: lua_setfield would look every C name up in Lua's string cache again (a hash
 * of its address and a strcmp) for each of the about 90,000 fields of a London-scale city. */
#define LP_KEYS(X)                                                                                 \
    X(magic) X(target_size) X(vertices) X(heights) X(textures) X(materials) X(first_road_room)     \
    X(room0) X(flags) X(prop_rule) X(rooms) X(bounds) X(min) X(max) X(center) X(radius) X(roads)  \
    X(missing_last) X(perimeter) X(attributes) X(vertex) X(neighbour) X(type) X(last)             \
    X(header_high) X(counted) X(subtype) X(count) X(data) X(value) X(cap) X(top) X(density)       \
    X(light) X(divider_type) X(cap_start) X(cap_end) X(divider_texture) X(divider_value) X(words) \
    X(height1) X(height2) X(ceiling_start) X(wall_mask) X(mask1) X(mask2) X(bottom) X(u_repeat)   \
    X(v_repeat) X(height) X(lanes_left) X(lanes_right) X(stop_lights) X(start_crossroads)         \
    X(end_crossroads) X(start) X(end)

#define LP_KEY_ENUM(n) KEY_##n,
#define LP_KEY_NAME(n) #n,
enum { LP_KEYS(LP_KEY_ENUM) KEY_COUNT_ };
static const char *const key_names[KEY_COUNT_] = {LP_KEYS(LP_KEY_NAME)};

/* Decoding state: the Lua state and the stack index of the first cached string (the
 * KEY_COUNT_ names of key_names, then the NCODECS attribute type names of codecs). */
struct pusher {
    lua_State *L;
    int keys;
};

/* Stack slots push_doc and the Lua -> C conversion need above the cached strings: the
 * document, rooms, a room, its attributes, an attribute, a list, a key and a value, the
 * strings of an error message, with room to spare. */
enum { PUSH_DEPTH = 24 };

/* Pushes the cached strings (see struct pusher) and returns the context. */
static pusher push_begin(lua_State *L) {
    luaL_checkstack(L, KEY_COUNT_ + NCODECS + PUSH_DEPTH, "converting a document");
    pusher p;
    p.L = L;
    p.keys = lua_gettop(L) + 1;
    for (int i = 0; i < KEY_COUNT_; i++) lua_pushstring(L, key_names[i]);
    for (int i = 0; i < NCODECS; i++) lua_pushstring(L, codecs[i].name);
    return p;
}

/* Pushes cached string k (KEY_*). */
static void push_key(const pusher *p, int k) { lua_pushvalue(p->L, p->keys + k); }

/* t[key] = the value on top of the stack, t just below it with the key pushed before the
 * value: the pattern is push_key, push the value, set_top. */
static void set_top(const pusher *p) { lua_rawset(p->L, -3); }

static void set_integer(const pusher *p, int k, lua_Integer v) {
    push_key(p, k);
    lua_pushinteger(p->L, v);
    set_top(p);
}

static void set_number(const pusher *p, int k, lua_Number v) {
    push_key(p, k);
    lua_pushnumber(p->L, v);
    set_top(p);
}

static void set_boolean(const pusher *p, int k, int v) {
    push_key(p, k);
    lua_pushboolean(p->L, v);
    set_top(p);
}

/* t[k] = {r[0] + base, r[1] + base, ...}: base 1 for references, 0 for raw words. */
static void set_list(const pusher *p, int k, const uint16_t *r, uint32_t n, lua_Integer base) {
    lua_State *L = p->L;
    push_key(p, k);
    lua_createtable(L, (int)n, 0);
    for (uint32_t i = 0; i < n; i++) {
        lua_pushinteger(L, (lua_Integer)r[i] + base);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    set_top(p);
}

static void push_vec3(lua_State *L, psdl_vec3 v) {
    lua_createtable(L, 3, 0);
    lua_pushnumber(L, lp_from_float(v.x));
    lua_rawseti(L, -2, 1);
    lua_pushnumber(L, lp_from_float(v.y));
    lua_rawseti(L, -2, 2);
    lua_pushnumber(L, lp_from_float(v.z));
    lua_rawseti(L, -2, 3);
}

static void push_vertices(const pusher *p, const psdl_attr *a) { set_list(p, KEY_vertices, a->refs, a->nrefs, 1); }

static void push_sidewalk(const pusher *p, const psdl_attr *a) {
    if (a->cap) {
        push_key(p, KEY_cap);
        push_key(p, a->cap == PSDL_CAP_START ? KEY_start : KEY_end);
        set_top(p);
    }
    push_vertices(p, a);
}

static void push_sliver(const pusher *p, const psdl_attr *a) {
    set_integer(p, KEY_top, (lua_Integer)a->param[0] + 1);
    set_integer(p, KEY_density, (lua_Integer)a->param[1] + 1);
    push_vertices(p, a);
}

static void push_facade_bound(const pusher *p, const psdl_attr *a) {
    set_integer(p, KEY_light, a->param[0]);
    set_integer(p, KEY_top, (lua_Integer)a->param[1] + 1);
    push_vertices(p, a);
}

static void push_divided(const pusher *p, const psdl_attr *a) {
    set_integer(p, KEY_divider_type, a->param[0]);
    set_boolean(p, KEY_cap_start, (a->param[1] & 1u) != 0);
    set_boolean(p, KEY_cap_end, (a->param[1] & 2u) != 0);
    set_integer(p, KEY_divider_texture, a->param[2]);
    set_number(p, KEY_divider_value, a->param[3] / 256.0);
    push_vertices(p, a);
}

static void push_tunnel(const pusher *p, const psdl_attr *a) {
    if (a->nrefs == 2 || a->nrefs == 3) {
        set_integer(p, KEY_flags, a->refs[0]);
        set_number(p, KEY_height1, a->refs[1] / 256.0);
        if (a->nrefs == 3) set_number(p, KEY_height2, a->refs[2] / 256.0);
    } else {
        set_list(p, KEY_words, a->refs, a->nrefs, 0);
    }
}

static void push_junction(const pusher *p, const psdl_attr *a) {
    const uint16_t *w = a->refs;
    set_integer(p, KEY_flags, w[0]);
    set_number(p, KEY_height1, w[1] / 256.0);
    set_number(p, KEY_height2, w[2] / 256.0);
    set_integer(p, KEY_ceiling_start, (lua_Integer)w[3] + 1);
    set_integer(p, KEY_wall_mask, (lua_Integer)w[4] | ((lua_Integer)w[5] << 16));
    set_integer(p, KEY_mask1, (lua_Integer)w[6] | ((lua_Integer)w[7] << 16));
    set_integer(p, KEY_mask2, (lua_Integer)w[8] | ((lua_Integer)w[9] << 16));
}

static void push_texture(const pusher *p, const psdl_attr *a) { set_integer(p, KEY_value, a->param[0]); }

static void push_facade(const pusher *p, const psdl_attr *a) {
    set_integer(p, KEY_bottom, (lua_Integer)a->param[0] + 1);
    set_integer(p, KEY_top, (lua_Integer)a->param[1] + 1);
    set_integer(p, KEY_u_repeat, a->param[2]);
    set_integer(p, KEY_v_repeat, a->param[3]);
    push_vertices(p, a);
}

static void push_roof(const pusher *p, const psdl_attr *a) {
    set_integer(p, KEY_height, (lua_Integer)a->param[0] + 1);
    push_vertices(p, a);
}

static void push_unknown(const pusher *p, const psdl_attr *a) { set_list(p, KEY_words, a->refs, a->nrefs, 0); }

/* Index in codecs[] of each 4-bit attribute type (the junction tunnel is told apart by its
 * ten words in codec_of; 13..15 are unknown). luaopen_psdl_core checks it against codecs[]. */
static const int8_t codec_by_type[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 14, 14};

/* The codec of a decoded attribute. */
static const attr_codec *codec_of(const psdl_attr *a) {
    if (a->type == PSDL_ATTR_TUNNEL && a->nrefs == 10) return &codecs[CODEC_JUNCTION];
    return &codecs[a->type < 16 ? codec_by_type[a->type] : NCODECS - 1];
}

/* The form fields push_attr sets on a decoded attribute (docs/document-model.md, "Form
 * fields"), as bits. They are worked out before the table is made so that it is made at its
 * exact size. */
enum {
    PF_COUNTED = 1,  /* counted = true: counted although the subtype could hold the count */
    PF_INLINE = 2,   /* counted = false: subtype 1 of a strip or roof (see form_of) */
    PF_SUBTYPE = 4,  /* subtype (a fixed type's non-standard subtype, or 0 when counted) */
    PF_COUNT = 8,    /* count: a fixed type's count word */
    PF_TEXTURE = 16, /* subtype and data of a texture stored non-canonically */
};

/* The PF_* bits of decoded attribute a of codec k (not K_UNKNOWN, which has no form fields). */
static unsigned form_of(const attr_codec *k, const psdl_attr *a) {
    switch (k->kind) {
    case K_VARIABLE:
        if (a->form == PSDL_FORM_COUNTED && a->count >= 1 && a->count <= 7) return PF_COUNTED;
        /* subtype 1 of a sidewalk/rectangle strip or roof: the encoder would pick the counted
         * form for it (psdl_attr.c auto_counted), so the inline form is marked */
        if (a->form == PSDL_FORM_INLINE && a->subtype == 1 &&
            (a->type == PSDL_ATTR_SIDEWALK_STRIP || a->type == PSDL_ATTR_WALKWAY || a->type == PSDL_ATTR_ROOF))
            return PF_INLINE;
        return 0;
    case K_FIXED:
        if (a->form == PSDL_FORM_COUNTED) return PF_SUBTYPE | PF_COUNT;
        return a->subtype != psdl_fixed_subtype(a->type) ? PF_SUBTYPE : 0;
    case K_TEXTURE: {
        uint32_t v = a->param[0];
        if (a->subtype != (v >> 8) || a->param[1] != (v & 0xFFu) || v > PSDL_MAX_TEXTURE_VALUE) return PF_TEXTURE;
        return 0;
    }
    default: return 0;
    }
}

/* The number of fields the push function of codec k sets on decoded attribute a (type, last
 * and the form fields not included): push_vertices ... push_unknown above. */
static int own_fields(const attr_codec *k, const psdl_attr *a) {
    /* road, sidewalk_strip, walkway, sliver, crosswalk, road_fan, fan, facade_bound,
     * divided_road, tunnel, junction_tunnel, texture, facade, roof, unknown */
    static const int8_t own[NCODECS] = {1, 1, 1, 3, 1, 1, 1, 3, 6, 1, 7, 1, 5, 2, 1};
    int c = (int)(k - codecs);
    if (c == CODEC_SIDEWALK && a->cap) return 2;                        /* cap, vertices */
    if (c == CODEC_TUNNEL && (a->nrefs == 2 || a->nrefs == 3)) return (int)a->nrefs; /* flags, heights */
    return own[c];
}

/* Pushes the Lua table of one decoded attribute, form fields included. */
static void push_attr(const pusher *p, const psdl_attr *a) {
    lua_State *L = p->L;
    const attr_codec *k = codec_of(a);
    unsigned form = k->kind == K_UNKNOWN ? 0 : form_of(k, a);
    int high = k->kind != K_UNKNOWN && a->header_high;
    /* sized for exactly the fields it will hold: a rehash would cost more than the fields,
     * and a size above a power of two would double the hash part */
    int n = 2 + own_fields(k, a) + high + ((form & (PF_COUNTED | PF_INLINE)) != 0) +
            ((form & PF_SUBTYPE) != 0) + ((form & PF_COUNT) != 0) + ((form & PF_TEXTURE) ? 2 : 0);
    lua_createtable(L, 0, n);
    push_key(p, KEY_type);
    push_key(p, KEY_COUNT_ + (int)(k - codecs));
    set_top(p);
    k->push(p, a);
    set_boolean(p, KEY_last, a->last);
    if (high) set_integer(p, KEY_header_high, a->header_high);
    if (form & PF_COUNTED) set_boolean(p, KEY_counted, 1);
    if (form & PF_INLINE) set_boolean(p, KEY_counted, 0);
    if (form & PF_SUBTYPE) set_integer(p, KEY_subtype, (form & PF_COUNT) ? 0 : a->subtype);
    if (form & PF_COUNT) set_integer(p, KEY_count, a->count);
    if (form & PF_TEXTURE) {
        set_integer(p, KEY_subtype, a->subtype);
        set_integer(p, KEY_data, a->param[1]);
    }
}

static void push_room(const pusher *p, const psdl_room *rm) {
    lua_State *L = p->L;
    lua_createtable(L, 0, 4);
    set_integer(p, KEY_flags, rm->flags);
    set_integer(p, KEY_prop_rule, rm->prop_rule);
    if (rm->nwords > 0) {
        /* a stream without LAST (an invalid file): keep it so, the encoder must not add one */
        int any = 0;
        for (uint32_t k = 0; k < rm->nattrs && !any; k++) any = rm->attrs[k].last;
        if (!any) set_boolean(p, KEY_missing_last, 1);
    }
    push_key(p, KEY_perimeter);
    lua_createtable(L, (int)rm->nperimeter, 0);
    for (uint32_t i = 0; i < rm->nperimeter; i++) {
        lua_createtable(L, 0, 2);
        set_integer(p, KEY_vertex, (lua_Integer)rm->perimeter[i].vertex + 1);
        set_integer(p, KEY_neighbour, rm->perimeter[i].neighbour);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    set_top(p);
    push_key(p, KEY_attributes);
    lua_createtable(L, (int)rm->nattrs, 0);
    for (uint32_t i = 0; i < rm->nattrs; i++) {
        push_attr(p, &rm->attrs[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    set_top(p);
}

/* t[k] = {f[0], ..., f[n - 1]} of file floats. */
static void set_floats(const pusher *p, int k, const float *f, uint32_t n) {
    lua_State *L = p->L;
    push_key(p, k);
    lua_createtable(L, (int)n, 0);
    for (uint32_t i = 0; i < n; i++) {
        lua_pushnumber(L, lp_from_float(f[i]));
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    set_top(p);
}

static void push_road(const pusher *p, const psdl_road *rd) {
    lua_State *L = p->L;
    lua_createtable(L, 0, 8);
    set_integer(p, KEY_flags, rd->flags);
    set_floats(p, KEY_lanes_left, rd->lane_values, rd->nleft);
    set_floats(p, KEY_lanes_right, rd->lane_values ? rd->lane_values + rd->nleft : NULL, rd->nright);
    push_key(p, KEY_stop_lights);
    lua_createtable(L, 2, 0);
    for (int i = 0; i < 2; i++) {
        lua_pushinteger(L, rd->stop_light[i]);
        lua_rawseti(L, -2, i + 1);
    }
    set_top(p);
    set_list(p, KEY_start_crossroads, rd->start_crossroads, 4, 1);
    set_list(p, KEY_end_crossroads, rd->end_crossroads, 4, 1);
    push_key(p, KEY_rooms);
    lua_createtable(L, rd->nrooms, 0);
    for (unsigned i = 0; i < rd->nrooms; i++) {
        lua_pushinteger(L, rd->rooms[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    set_top(p);
}

/* t[k] = {x, y, z} of a vector. */
static void set_vec3(const pusher *p, int k, psdl_vec3 v) {
    push_key(p, k);
    push_vec3(p->L, v);
    set_top(p);
}

/* Pushes the Lua document of a decoded psdl_doc (docs/document-model.md). */
static void push_doc(const pusher *p, const psdl_doc *doc) {
    lua_State *L = p->L;
    int psd1 = memcmp(doc->magic, "PSD1", 4) == 0;
    lua_createtable(L, 0, 12);
    push_key(p, KEY_magic);
    lua_pushlstring(L, doc->magic, 4);
    set_top(p);
    set_integer(p, KEY_target_size, doc->target_size);

    push_key(p, KEY_vertices);
    lua_createtable(L, (int)doc->nvertices, 0);
    for (uint32_t i = 0; i < doc->nvertices; i++) {
        push_vec3(L, doc->vertices[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    set_top(p);

    set_floats(p, KEY_heights, doc->heights, doc->nheights);

    uint32_t nt = doc->ntextures ? doc->ntextures - 1 : 0;
    push_key(p, KEY_textures);
    lua_createtable(L, (int)nt, 0);
    for (uint32_t v = 1; v <= nt; v++) {
        const psdl_texture *t = &doc->textures[v];
        if (t->name)
            lua_pushlstring(L, t->name, t->name_len);
        else
            lua_pushboolean(L, 0);
        lua_rawseti(L, -2, (lua_Integer)v);
    }
    set_top(p);
    if (psd1) {
        push_key(p, KEY_materials);
        lua_createtable(L, (int)nt, 0);
        for (uint32_t v = 1; v <= nt; v++) {
            lua_pushinteger(L, doc->textures[v].material);
            lua_rawseti(L, -2, (lua_Integer)v);
        }
        set_top(p);
    }

    set_integer(p, KEY_first_road_room, doc->first_road_room);
    push_key(p, KEY_room0);
    lua_createtable(L, 0, 2);
    set_integer(p, KEY_flags, doc->nrooms ? doc->rooms[0].flags : 0);
    set_integer(p, KEY_prop_rule, doc->nrooms ? doc->rooms[0].prop_rule : 0xCD);
    set_top(p);

    uint32_t nr = doc->nrooms ? doc->nrooms - 1 : 0;
    push_key(p, KEY_rooms);
    lua_createtable(L, (int)nr, 0);
    for (uint32_t r = 1; r <= nr; r++) {
        push_room(p, &doc->rooms[r]);
        lua_rawseti(L, -2, (lua_Integer)r);
    }
    set_top(p);

    if (doc->has_tail || !psd1) {
        push_key(p, KEY_bounds);
        lua_createtable(L, 0, 4);
        set_vec3(p, KEY_min, doc->bounds_min);
        set_vec3(p, KEY_max, doc->bounds_max);
        set_vec3(p, KEY_center, doc->sphere_center);
        set_number(p, KEY_radius, lp_from_float(doc->sphere_radius));
        set_top(p);

        push_key(p, KEY_roads);
        lua_createtable(L, (int)doc->nroads, 0);
        for (uint32_t i = 0; i < doc->nroads; i++) {
            push_road(p, &doc->roads[i]);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        set_top(p);
    }
}

/* Optional integer field of the limits table at index t. */
static size_t opt_limit(lua_State *L, int t, const char *k) {
    lua_Integer v = 0;
    if (lua_getfield(L, t, k) != LUA_TNIL) {
        int isnum;
        v = lua_tointegerx(L, -1, &isnum);
        if (!isnum || v < 0) luaL_argerror(L, 2, lua_pushfstring(L, "%s: non-negative integer expected", k));
    }
    lua_pop(L, 1);
    return (size_t)v;
}

/* The limits table at index t (nil or none: no limits) into opt. */
static void read_limits(lua_State *L, int t, psdl_options *opt) {
    if (lua_isnoneornil(L, t)) return;
    luaL_checktype(L, t, LUA_TTABLE);
    opt->limits.max_vertices = opt_limit(L, t, "max_vertices");
    opt->limits.max_rooms = opt_limit(L, t, "max_rooms");
    opt->limits.max_attr_words = opt_limit(L, t, "max_attr_words");
}

/* (lpsdl.h) */
void lpsdl_set_ufields(lua_State *L, const void *obj, const lpsdl_ufield *f, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const unsigned char *p = (const unsigned char *)obj + f[i].offset;
        uint64_t v = 0;
        if (f[i].size == 1) v = *p;
        else if (f[i].size == 2) { uint16_t x; memcpy(&x, p, 2); v = x; }
        else if (f[i].size == 4) { uint32_t x; memcpy(&x, p, 4); v = x; }
        else memcpy(&v, p, 8);
        lpsdl_set_int(L, f[i].name, (lua_Integer)v);
    }
}

/* (lpsdl.h) */
int lpsdl_push_failure(lua_State *L, const char *message, const char *status) {
    luaL_pushfail(L);
    lua_pushstring(L, message);
    lua_pushstring(L, status);
    return 3;
}

/* (lpsdl.h) */
int lpsdl_push_error(lua_State *L, const psdl_error *err) {
    return lpsdl_push_failure(L, err->message, psdl_status_name(err->code));
}

/* Pushes the Lua document of the decoded document in box b and frees it; returns 1. */
static int push_decoded(lua_State *L, docbox *b) {
    /* Everything built below stays reachable, so collecting now finds nothing, while the
     * write barriers of the growing arrays make the collector re-traverse them: pausing it
     * saves about a sixth of the time. The box restarts it should anything raise. */
    if (lua_gc(L, LUA_GCISRUNNING) == 1) {
        lua_gc(L, LUA_GCSTOP);
        b->gc_stopped = 1;
    }
    pusher p = push_begin(L);
    push_doc(&p, b->doc);
    box_release(L, b);
    return 1;
}

/***
 * Decode PSDL bytes into a Lua document.
 * @function decode
 * @tparam string bytes the whole file
 * @tparam[opt] table limits `max_vertices`, `max_rooms`, `max_attr_words` (0 = none)
 * @treturn table the document (docs/document-model.md)
 * @return[2] nil
 * @treturn[2] string message "psdl: <code>: <detail> at offset 0x... (room r, attribute a)"
 * @treturn[2] string code the status name ("truncated", "bad_magic", ...)
 */
static int l_decode(lua_State *L) {
    size_t size;
    const char *data = luaL_checklstring(L, 1, &size);
    psdl_options opt = box_options(L);
    read_limits(L, 2, &opt);
    lua_settop(L, 2);
    docbox *b = box_new(L); /* before anything exists that could leak */
    psdl_error err;
    psdl_status st = psdl_decode(&opt, data, size, &b->doc, &err);
    if (st != PSDL_OK) {
        box_release(L, b);
        return lpsdl_push_error(L, &err);
    }
    return push_decoded(L, b);
}

/***
 * Read the rest of an open file and decode it into a Lua document: `decode` without the
 * Lua string of the whole file (one block of the file's size, freed before the document is
 * built). psdl.read opens the file (with io.open, so that a sandbox's rules apply) and
 * hands it here.
 * @function decode_file
 * @tparam file file a Lua file handle open for reading (io.open(path, "rb"))
 * @tparam string path the file's name, for messages
 * @tparam[opt] table limits as for `decode`
 * @treturn table the document
 * @return[2] nil
 * @treturn[2] string message "psdl: io: <path>: <reason>" or a decode message
 * @treturn[2] string code "io", "nomem" or a decode status name
 * @raise `bad argument #1 to 'decode_file'` for something that is not an open file
 */
static int l_decode_file(lua_State *L) {
    luaL_Stream *fh = (luaL_Stream *)luaL_checkudata(L, 1, LUA_FILEHANDLE);
    if (!fh->closef || !fh->f) luaL_argerror(L, 1, "an open file expected, got a closed one");
    const char *path = luaL_checkstring(L, 2);
    psdl_options opt = box_options(L);
    read_limits(L, 3, &opt);
    lua_settop(L, 3);
    docbox *b = box_new(L);
    psdl_bytes bytes;
    psdl_error err;
    /* nothing below raises before the bytes are freed */
    psdl_status st = psdl_read_stream(fh->f, path, &opt, &bytes, &err);
    if (st == PSDL_OK) {
        st = psdl_decode(&opt, bytes.data, bytes.size, &b->doc, &err);
        psdl_bytes_free(&opt, &bytes);
    }
    if (st != PSDL_OK) {
        box_release(L, b);
        return lpsdl_push_error(L, &err);
    }
    return push_decoded(L, b);
}

/* ================================================================ Lua -> C (encode) */

#define CONV_DEPTH 8

/* Conversion state: the document being filled and the path to the current value, kept as
 * segments (a key, or an index when key is NULL) and formatted only on error. */
#define CONV_KEYS 12 /* attribute keys remembered per type */

struct conv {
    lua_State *L;
    psdl_doc *doc;
    int arg;
    int keys; /* stack index of the cached field names (as struct pusher) */
    int depth;
    struct {
        const char *key;
        lua_Integer index;
    } seg[CONV_DEPTH];
    /* Strings already matched, by address: the `type` string of each codec and the keys
     * found valid for it, so that the tens of thousands of attributes of a city cost a
     * pointer comparison each instead of string comparisons. Each remembered string is
     * kept alive in the `anchor` table (stack index), so its address cannot be reused by
     * another string during the conversion. */
    int anchor, nanchor;
    const char *type_ptr[NCODECS];
    const char *key_ptr[NCODECS][CONV_KEYS];
    unsigned char key_bit[NCODECS][CONV_KEYS]; /* FORM_* bit of a remembered key (0: none) */
};

/* The optional form keys of an attribute (form_fields), as bits: check_attr reads only the
 * ones check_attr_keys saw in a table without a metatable. */
enum { FORM_LAST = 1, FORM_HEADER_HIGH = 2, FORM_COUNTED = 4, FORM_SUBTYPE = 8, FORM_COUNT = 16, FORM_ALL = 31 };

/* Remembers the string on top of the stack in c->anchor (see struct conv). */
static void conv_keep(conv *c) {
    lua_pushvalue(c->L, -1);
    lua_rawseti(c->L, c->anchor, ++c->nanchor);
}

static void path_key(conv *c, const char *key) {
    if (c->depth < CONV_DEPTH) c->seg[c->depth].key = key;
    c->depth++;
}

static void path_index(conv *c, lua_Integer i) {
    if (c->depth < CONV_DEPTH) {
        c->seg[c->depth].key = NULL;
        c->seg[c->depth].index = i;
    }
    c->depth++;
}

/* Raises "bad argument #arg to 'f' (<path>: <detail>)". */
static LP_NORETURN void conv_error(conv *c, const char *fmt, ...) {
    lua_State *L = c->L;
    char path[256];
    size_t len = 0;
    path[0] = '\0';
    for (int i = 0; i < c->depth && i < CONV_DEPTH && len < sizeof path; i++) {
        int n;
        if (c->seg[i].key)
            n = snprintf(path + len, sizeof path - len, "%s%s", i ? "." : "", c->seg[i].key);
        else
            n = snprintf(path + len, sizeof path - len, "[%lld]", (long long)c->seg[i].index);
        if (n > 0) len += (size_t)n;
    }
    va_list ap;
    va_start(ap, fmt);
    const char *detail = lua_pushvfstring(L, fmt, ap);
    va_end(ap);
    if (path[0]) detail = lua_pushfstring(L, "%s: %s", path, detail);
    luaL_argerror(L, c->arg, detail);
    for (;;) {} /* not reached: luaL_argerror raises */
}

/* Pushes t[key] (t absolute) and extends the path; returns the value's type. */
static int enter_field(conv *c, int t, int key) {
    path_key(c, key_names[key]);
    lua_pushvalue(c->L, c->keys + key);
    return lua_gettable(c->L, t);
}

/* Pushes t[i] (raw) and extends the path; returns the value's type. */
static int enter_index(conv *c, int t, lua_Integer i) {
    path_index(c, i);
    return lua_rawgeti(c->L, t, i);
}

/* Pops the value entered last and its path segment. */
static void leave(conv *c) {
    c->depth--;
    lua_pop(c->L, 1);
}

static LP_NORETURN void type_error(conv *c, const char *expected) {
    conv_error(c, "%s expected, got %s", expected, luaL_typename(c->L, -1));
}

/* The integer on top of the stack, in lo..hi. Integral floats are accepted (cjson). */
static lua_Integer top_integer(conv *c, lua_Integer lo, lua_Integer hi) {
    lua_State *L = c->L;
    int isnum = 0;
    lua_Integer v = 0;
    if (lua_type(L, -1) != LUA_TNUMBER) type_error(c, "integer");
    v = lua_tointegerx(L, -1, &isnum);
    if (!isnum) conv_error(c, "number has no integer representation (%f)", lua_tonumber(L, -1));
    if (v < lo || v > hi) conv_error(c, "%I is out of range (%I..%I)", v, lo, hi);
    return v;
}

static lua_Number top_number(conv *c) {
    if (lua_type(c->L, -1) != LUA_TNUMBER) type_error(c, "number");
    return lua_tonumber(c->L, -1);
}

/* The number on top as a file float (raises when beyond the float range). */
static float top_float(conv *c) {
    int ok;
    float f = lp_to_float(top_number(c), &ok);
    if (!ok) conv_error(c, "%f is beyond the single-precision range of the file", (double)lua_tonumber(c->L, -1));
    return f;
}

static lua_Integer field_integer(conv *c, int t, int key, lua_Integer lo, lua_Integer hi) {
    enter_field(c, t, key);
    lua_Integer v = top_integer(c, lo, hi);
    leave(c);
    return v;
}

static lua_Integer field_opt_integer(conv *c, int t, int key, lua_Integer lo, lua_Integer hi,
                                     lua_Integer def) {
    lua_Integer v = def;
    if (enter_field(c, t, key) != LUA_TNIL) v = top_integer(c, lo, hi);
    leave(c);
    return v;
}

/* A height or vertex reference: 1..65536 in Lua, returned 0-based. */
static uint32_t field_ref(conv *c, int t, int key) {
    return (uint32_t)(field_integer(c, t, key, 1, 65536) - 1);
}

/* t[key] as a file float. */
static float field_float(conv *c, int t, int key) {
    enter_field(c, t, key);
    float f = top_float(c);
    leave(c);
    return f;
}

/* An 8.8 fixed-point value (metres or repeats): rounded to 1/256, 0 .. 65535/256. */
static uint32_t field_fixed88(conv *c, int t, int key) {
    enter_field(c, t, key);
    lua_Number v = top_number(c);
    lua_Number w = floor(v * 256.0 + 0.5);
    if (!(w >= 0.0 && w <= 65535.0))
        conv_error(c, "%f is out of range (0..255.99609375, 8.8 fixed point)", v);
    leave(c);
    return (uint32_t)w;
}

/* Boolean field: 1, 0, or def when nil. */
static int field_opt_boolean(conv *c, int t, int key, int def) {
    int v = def;
    int tp = enter_field(c, t, key);
    if (tp == LUA_TBOOLEAN)
        v = lua_toboolean(c->L, -1);
    else if (tp != LUA_TNIL)
        type_error(c, "boolean");
    leave(c);
    return v;
}

/* Pushes the table t[key] and returns its absolute index (path extended: pair with
 * leave()). An absent optional table returns 0 with nothing pushed. */
static int field_table(conv *c, int t, int key, int required) {
    int tp = enter_field(c, t, key);
    if (tp == LUA_TNIL && !required) {
        leave(c);
        return 0;
    }
    if (tp != LUA_TTABLE) type_error(c, "table");
    return lua_gettop(c->L);
}

/* Pushes the table t[i] (raw) and returns its absolute index; pair with leave(). */
static int index_table(conv *c, int t, lua_Integer i) {
    if (enter_index(c, t, i) != LUA_TTABLE) type_error(c, "table");
    return lua_gettop(c->L);
}

/* Length of the array at t, at most max. The array must be a sequence with exactly the
 * keys 1..n: anything else (a gap, rooms[0], a name) would be dropped without a word. */
static size_t array_len(conv *c, int t, size_t max, const char *what) {
    lua_State *L = c->L;
    size_t n = lua_rawlen(L, t);
    if (n > max) conv_error(c, "%I %s, at most %I fit the format", (lua_Integer)n, what, (lua_Integer)max);
    size_t count = 0;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        count++;
    }
    if (count == n) return n;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        int isint = 0;
        lua_Integer k = lua_tointegerx(L, -1, &isint);
        if (isint && k >= 1 && (size_t)k <= n) continue;
        const char *key = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : luaL_tolstring(L, -1, NULL);
        conv_error(c, "key %s is outside the sequence 1..%I of %s (a gap or a stray key; it would be lost%s)", key,
                   (lua_Integer)n, what, isint && k == 0 ? "; room 0's bytes go in doc.room0" : "");
    }
    return n;
}

/* Zeroed arena memory for n elements of the document (NULL when n == 0). */
static void *conv_alloc(conv *c, size_t n, size_t size) {
    if (n == 0) return NULL;
    if (n > SIZE_MAX / size) conv_error(c, "too many elements");
    void *p = psdl_doc_alloc(c->doc, n * size);
    if (!p) luaL_error(c->L, "not enough memory");
    return p;
}

/* The array t[key] of 16-bit values: references (base 1, stored 0-based) or raw words
 * (base 0). */
/* One traversal (lua_next) of the list at lt of rawlen len into r[0 .. len-1]: 1 when its
 * keys are exactly 1..len and every value is an integer in base .. 65535 + base, else 0
 * (r then partly filled; the caller takes the long way, which names the problem). Reads
 * each value once instead of counting the keys (array_len) and reading them again. */
static int read_list16(lua_State *L, int lt, size_t len, lua_Integer base, uint16_t *r) {
    size_t count = 0;
    int ok = 1;
    lua_pushnil(L);
    while (lua_next(L, lt)) {
        int kint = 0, vint = 0;
        lua_Integer k = lua_type(L, -2) == LUA_TNUMBER ? lua_tointegerx(L, -2, &kint) : 0;
        lua_Integer v = lua_type(L, -1) == LUA_TNUMBER ? lua_tointegerx(L, -1, &vint) : 0;
        lua_pop(L, 1);
        count++;
        if (!kint || k < 1 || (lua_Unsigned)k > (lua_Unsigned)len || !vint || v < base || v > 65535 + base) {
            ok = 0;
            lua_pop(L, 1); /* the key: stop the traversal */
            break;
        }
        r[k - 1] = (uint16_t)(v - base);
    }
    return ok && count == len;
}

static uint16_t *field_list16(conv *c, int t, int key, lua_Integer base, uint32_t *n) {
    int lt = field_table(c, t, key, 1);
    lua_State *L = c->L;
    size_t len = lua_rawlen(L, lt);
    if (len <= UINT32_MAX) {
        uint16_t *r = (uint16_t *)conv_alloc(c, len, sizeof *r);
        if (read_list16(L, lt, len, base, r)) {
            leave(c);
            *n = (uint32_t)len;
            return r;
        }
    }
    /* the long way: array_len names a stray key or a count beyond the format, the loop a
     * bad value (the first in index order) */
    len = array_len(c, lt, UINT32_MAX, "values");
    uint16_t *r = (uint16_t *)conv_alloc(c, len, sizeof *r);
    for (size_t i = 0; i < len; i++) {
        /* the usual case without the path bookkeeping; anything else goes the long way,
         * which raises naming the value */
        lua_rawgeti(L, lt, (lua_Integer)i + 1);
        int isint = 0;
        lua_Integer v = lua_type(L, -1) == LUA_TNUMBER ? lua_tointegerx(L, -1, &isint) : 0;
        lua_pop(L, 1);
        if (!isint || v < base || v > 65535 + base) {
            enter_index(c, lt, (lua_Integer)i + 1);
            v = top_integer(c, base, 65535 + base);
            leave(c);
        }
        r[i] = (uint16_t)(v - base);
    }
    leave(c);
    *n = (uint32_t)len;
    return r;
}

static void check_vertices(conv *c, int t, psdl_attr *a) { a->refs = field_list16(c, t, KEY_vertices, 1, &a->nrefs); }

static void check_sidewalk(conv *c, int t, psdl_attr *a) {
    static const char *const caps[] = {"start", "end", NULL};
    int tp = enter_field(c, t, KEY_cap);
    if (tp != LUA_TNIL) {
        const char *s = tp == LUA_TSTRING ? lua_tostring(c->L, -1) : NULL;
        int i = 0;
        if (!s) type_error(c, "string");
        while (caps[i] && strcmp(caps[i], s) != 0) i++;
        if (!caps[i]) conv_error(c, "invalid cap '%s' (expected \"start\" or \"end\")", s);
        a->cap = (uint8_t)(i == 0 ? PSDL_CAP_START : PSDL_CAP_END);
    }
    leave(c);
    check_vertices(c, t, a);
}

static void check_sliver(conv *c, int t, psdl_attr *a) {
    a->param[0] = field_ref(c, t, KEY_top);
    a->param[1] = field_ref(c, t, KEY_density);
    check_vertices(c, t, a);
}

static void check_facade_bound(conv *c, int t, psdl_attr *a) {
    a->param[0] = (uint32_t)field_integer(c, t, KEY_light, 0, 65535);
    a->param[1] = field_ref(c, t, KEY_top);
    check_vertices(c, t, a);
}

static void check_divided(conv *c, int t, psdl_attr *a) {
    a->param[0] = (uint32_t)field_integer(c, t, KEY_divider_type, 0, 63);
    a->param[1] = (uint32_t)(field_opt_boolean(c, t, KEY_cap_start, 0) | (field_opt_boolean(c, t, KEY_cap_end, 0) << 1));
    /* the core explains the one-byte limit of the divider texture (psdl-format.md §2.4) */
    a->param[2] = (uint32_t)field_integer(c, t, KEY_divider_texture, 0, 65535);
    a->param[3] = field_fixed88(c, t, KEY_divider_value);
    check_vertices(c, t, a);
}

static void check_tunnel(conv *c, int t, psdl_attr *a) {
    int has_words = enter_field(c, t, KEY_words) != LUA_TNIL;
    leave(c);
    if (has_words) {
        static const int others[] = {KEY_flags, KEY_height1, KEY_height2};
        for (int i = 0; i < 3; i++) {
            if (enter_field(c, t, others[i]) != LUA_TNIL) conv_error(c, "not allowed together with 'words'");
            leave(c);
        }
        a->refs = field_list16(c, t, KEY_words, 0, &a->nrefs);
        return;
    }
    int has_h2 = enter_field(c, t, KEY_height2) != LUA_TNIL;
    leave(c);
    a->nrefs = has_h2 ? 3 : 2;
    a->refs = (uint16_t *)conv_alloc(c, a->nrefs, sizeof *a->refs);
    a->refs[0] = (uint16_t)field_integer(c, t, KEY_flags, 0, 65535);
    a->refs[1] = (uint16_t)field_fixed88(c, t, KEY_height1);
    if (has_h2) a->refs[2] = (uint16_t)field_fixed88(c, t, KEY_height2);
}

static void check_junction(conv *c, int t, psdl_attr *a) {
    static const int masks[] = {KEY_wall_mask, KEY_mask1, KEY_mask2};
    uint16_t *w = (uint16_t *)conv_alloc(c, 10, sizeof *w);
    w[0] = (uint16_t)field_integer(c, t, KEY_flags, 0, 65535);
    w[1] = (uint16_t)field_fixed88(c, t, KEY_height1);
    w[2] = (uint16_t)field_fixed88(c, t, KEY_height2);
    w[3] = (uint16_t)(field_integer(c, t, KEY_ceiling_start, 1, 65536) - 1);
    for (int i = 0; i < 3; i++) {
        lua_Integer m = field_integer(c, t, masks[i], 0, 0xFFFFFFFF);
        w[4 + 2 * i] = (uint16_t)(m & 0xFFFF);
        w[5 + 2 * i] = (uint16_t)(m >> 16);
    }
    a->refs = w;
    a->nrefs = 10;
}

static void check_texture(conv *c, int t, psdl_attr *a) {
    /* values above 2047 are left to the core, which explains the limit (§2.3) */
    lua_Integer v = field_integer(c, t, KEY_value, 0, 0xFFFF);
    int has_sub = enter_field(c, t, KEY_subtype) != LUA_TNIL;
    leave(c);
    int has_data = enter_field(c, t, KEY_data) != LUA_TNIL;
    leave(c);
    a->param[0] = (uint32_t)v;
    if (has_sub || has_data) {
        /* stored non-canonically: the core checks that subtype and data give the value */
        unsigned sub = (unsigned)field_opt_integer(c, t, KEY_subtype, 0, 7, (v >> 8) & 7);
        a->subtype = (uint8_t)sub;
        a->param[1] = (uint32_t)field_opt_integer(c, t, KEY_data, 0, 65535, sub ? (v & 0xFF) : (v & 0xFFFF));
        a->form = sub ? PSDL_FORM_INLINE : PSDL_FORM_COUNTED; /* subtype 0: data is the "count" */
    }
}

static void check_facade(conv *c, int t, psdl_attr *a) {
    a->param[0] = field_ref(c, t, KEY_bottom);
    a->param[1] = field_ref(c, t, KEY_top);
    a->param[2] = (uint32_t)field_integer(c, t, KEY_u_repeat, 0, 65535);
    a->param[3] = (uint32_t)field_integer(c, t, KEY_v_repeat, 0, 65535);
    check_vertices(c, t, a);
}

static void check_roof(conv *c, int t, psdl_attr *a) {
    a->param[0] = field_ref(c, t, KEY_height);
    check_vertices(c, t, a);
}

static void check_unknown(conv *c, int t, psdl_attr *a) { a->refs = field_list16(c, t, KEY_words, 0, &a->nrefs); }

static const char *const f_vertices[] = {"vertices", NULL};
static const char *const f_sidewalk[] = {"vertices", "cap", NULL};
static const char *const f_sliver[] = {"top", "density", "vertices", NULL};
static const char *const f_facade_bound[] = {"light", "top", "vertices", NULL};
static const char *const f_divided[] = {"divider_type", "cap_start", "cap_end", "divider_texture",
                                        "divider_value", "vertices", NULL};
static const char *const f_tunnel[] = {"flags", "height1", "height2", "words", NULL};
static const char *const f_junction[] = {"flags", "height1", "height2", "ceiling_start",
                                         "wall_mask", "mask1", "mask2", NULL};
static const char *const f_texture[] = {"value", "subtype", "data", NULL};
static const char *const f_facade[] = {"bottom", "top", "u_repeat", "v_repeat", "vertices", NULL};
static const char *const f_roof[] = {"height", "vertices", NULL};
static const char *const f_unknown[] = {"words", NULL};

/* Form fields per kind (docs/document-model.md, "Form fields"). */
static const char *const form_fields[4][5] = {
    {"type", "last", "header_high", "counted", NULL},  /* K_VARIABLE */
    {"type", "last", "header_high", "subtype", "count"}, /* K_FIXED */
    {"type", "last", "header_high", NULL, NULL},       /* K_TEXTURE (subtype, data: f_texture) */
    {"type", "last", NULL, NULL, NULL},                /* K_UNKNOWN */
};

static const attr_codec codecs[NCODECS] = {
    {"road", PSDL_ATTR_ROAD, K_VARIABLE, push_vertices, check_vertices, f_vertices, 4},
    {"sidewalk_strip", PSDL_ATTR_SIDEWALK_STRIP, K_VARIABLE, push_sidewalk, check_sidewalk, f_sidewalk, 4},
    {"walkway", PSDL_ATTR_WALKWAY, K_VARIABLE, push_vertices, check_vertices, f_vertices, 4},
    {"sliver", PSDL_ATTR_SLIVER, K_FIXED, push_sliver, check_sliver, f_sliver, 5},
    {"crosswalk", PSDL_ATTR_CROSSWALK, K_FIXED, push_vertices, check_vertices, f_vertices, 3},
    {"road_fan", PSDL_ATTR_ROAD_FAN, K_VARIABLE, push_vertices, check_vertices, f_vertices, 4},
    {"fan", PSDL_ATTR_FAN, K_VARIABLE, push_vertices, check_vertices, f_vertices, 4},
    {"facade_bound", PSDL_ATTR_FACADE_BOUND, K_FIXED, push_facade_bound, check_facade_bound, f_facade_bound, 5},
    {"divided_road", PSDL_ATTR_DIVIDED_ROAD, K_VARIABLE, push_divided, check_divided, f_divided, 9},
    {"tunnel", PSDL_ATTR_TUNNEL, K_VARIABLE, push_tunnel, check_tunnel, f_tunnel, 6},
    {"junction_tunnel", PSDL_ATTR_TUNNEL, K_VARIABLE, push_junction, check_junction, f_junction, 9},
    {"texture", PSDL_ATTR_TEXTURE, K_TEXTURE, push_texture, check_texture, f_texture, 3},
    {"facade", PSDL_ATTR_FACADE, K_FIXED, push_facade, check_facade, f_facade, 7},
    {"roof", PSDL_ATTR_ROOF, K_VARIABLE, push_roof, check_roof, f_roof, 5},
    {"unknown", PSDL_ATTR_UNKNOWN, K_UNKNOWN, push_unknown, check_unknown, f_unknown, 3},
};

static int in_list(const char *const *list, size_t n, const char *s) {
    for (size_t i = 0; i < n && list[i]; i++)
        if (strcmp(list[i], s) == 0) return 1;
    return 0;
}

/* Rejects keys of the attribute table t that its type does not define (catches typos such
 * as `heigth1`, which would otherwise be silently ignored). */
/* The FORM_* bit of a form key (0 for "type" and the type's own fields). */
static unsigned form_bit(const char *key) {
    static const char *const names[] = {"last", "header_high", "counted", "subtype", "count"};
    for (unsigned i = 0; i < 5; i++)
        if (strcmp(names[i], key) == 0) return 1u << i;
    return 0;
}

/* Returns the FORM_* bits of the optional form keys present (all of them when t has a
 * metatable, whose __index could supply any). */
static unsigned check_attr_keys(conv *c, int t, const attr_codec *k) {
    lua_State *L = c->L;
    const char **known = c->key_ptr[k - codecs];
    unsigned char *bit = c->key_bit[k - codecs];
    unsigned present = 0;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING)
            conv_error(c, "unexpected %s key in a %s attribute", luaL_typename(L, -1), k->name);
        const char *key = lua_tostring(L, -1);
        int i = 0;
        while (i < CONV_KEYS && known[i] && known[i] != key) i++;
        if (i < CONV_KEYS && known[i]) { /* seen before */
            present |= bit[i];
            continue;
        }
        int form = in_list(form_fields[k->kind], 5, key);
        if (!form && !in_list(k->fields, 16, key))
            conv_error(c, "unknown field '%s' for a %s attribute", key, k->name);
        unsigned b = form ? form_bit(key) : 0;
        present |= b;
        if (i < CONV_KEYS) {
            known[i] = key;
            bit[i] = (unsigned char)b;
            conv_keep(c);
        }
    }
    if (lua_getmetatable(L, t)) {
        lua_pop(L, 1);
        present = FORM_ALL;
    }
    return present;
}

/* The codec named by t.type, or a raise listing the valid names. */
static const attr_codec *check_attr_type(conv *c, int t) {
    lua_State *L = c->L;
    int tp = enter_field(c, t, KEY_type);
    if (tp != LUA_TSTRING) type_error(c, "string");
    const char *name = lua_tostring(L, -1);
    for (int i = 0; i < NCODECS; i++) {
        if (c->type_ptr[i] == name) {
            leave(c);
            return &codecs[i];
        }
    }
    for (int i = 0; i < NCODECS; i++) {
        if (strcmp(codecs[i].name, name) == 0) {
            if (!c->type_ptr[i]) {
                c->type_ptr[i] = name;
                conv_keep(c);
            }
            leave(c);
            return &codecs[i];
        }
    }
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 0; i < NCODECS; i++) {
        if (i) luaL_addstring(&b, ", ");
        luaL_addstring(&b, codecs[i].name);
    }
    luaL_pushresult(&b);
    conv_error(c, "unknown attribute type '%s' (expected one of %s)", name, lua_tostring(L, -1));
}

/* Fills a from the attribute table t; returns 1 if t has a `last` field. */
static int check_attr(conv *c, int t, psdl_attr *a) {
    const attr_codec *k = check_attr_type(c, t);
    unsigned present = check_attr_keys(c, t, k);
    a->type = k->type;
    k->check(c, t, a);
    /* the optional form keys: looked up only when present (most attributes have none) */
    int has_last = 0;
    if (present & FORM_LAST) {
        has_last = enter_field(c, t, KEY_last) != LUA_TNIL;
        leave(c);
        a->last = (uint8_t)field_opt_boolean(c, t, KEY_last, 0);
    }
    if (k->kind == K_UNKNOWN) return has_last;
    if (present & FORM_HEADER_HIGH) a->header_high = (uint8_t)field_opt_integer(c, t, KEY_header_high, 0, 255, 0);
    if (k->kind == K_VARIABLE) {
        if (present & FORM_COUNTED) {
            int given = enter_field(c, t, KEY_counted) != LUA_TNIL;
            leave(c);
            /* true: counted form; false: the inline (subtype) form even where AUTO would count */
            if (given) a->form = field_opt_boolean(c, t, KEY_counted, 0) ? PSDL_FORM_COUNTED : PSDL_FORM_INLINE;
        }
    } else if (k->kind == K_FIXED) {
        lua_Integer sub = (present & FORM_SUBTYPE) ? field_opt_integer(c, t, KEY_subtype, 0, 7, -1) : -1;
        int has_count = 0;
        if (present & FORM_COUNT) {
            has_count = enter_field(c, t, KEY_count) != LUA_TNIL;
            if (has_count && sub != 0) conv_error(c, "only used with subtype 0");
            leave(c);
        }
        if (sub == 0) {
            a->form = PSDL_FORM_COUNTED;
            a->count = (uint16_t)field_opt_integer(c, t, KEY_count, 0, 65535, 0);
        } else if (sub > 0) {
            a->form = PSDL_FORM_INLINE;
            a->subtype = (uint8_t)sub;
        }
    }
    return has_last;
}

/* The detail of a core message: "psdl: invalid: texture value ..." -> "texture value ...". */
static const char *core_detail(const char *msg) {
    if (strncmp(msg, "psdl: ", 6) == 0) {
        const char *p = strstr(msg + 6, ": ");
        if (p) return p + 2;
    }
    return msg;
}

/* Fills room rm from the room table t, then packs its attribute stream. */
static void check_room(conv *c, int t, psdl_room *rm) {
    lua_State *L = c->L;
    rm->flags = (uint8_t)field_integer(c, t, KEY_flags, 0, 255);
    rm->prop_rule = (uint8_t)field_integer(c, t, KEY_prop_rule, 0, PSDL_MAX_PROP_RULE);

    int pt = field_table(c, t, KEY_perimeter, 1);
    size_t np = array_len(c, pt, UINT32_MAX, "perimeter points");
    rm->nperimeter = (uint32_t)np;
    rm->perimeter = (psdl_perimeter_point *)conv_alloc(c, np, sizeof *rm->perimeter);
    for (size_t i = 0; i < np; i++) {
        int p = index_table(c, pt, (lua_Integer)i + 1);
        rm->perimeter[i].vertex = (uint16_t)field_ref(c, p, KEY_vertex);
        rm->perimeter[i].neighbour = (uint16_t)field_integer(c, p, KEY_neighbour, 0, 65535);
        leave(c);
    }
    leave(c);

    int at = field_table(c, t, KEY_attributes, 1);
    size_t na = array_len(c, at, UINT32_MAX, "attributes");
    rm->nattrs = (uint32_t)na;
    rm->attrs = (psdl_attr *)conv_alloc(c, na, sizeof *rm->attrs);
    int final_has_last = 0, any_true = 0;
    for (size_t i = 0; i < na; i++) {
        int a = index_table(c, at, (lua_Integer)i + 1);
        final_has_last = check_attr(c, a, &rm->attrs[i]);
        any_true |= rm->attrs[i].last;
        leave(c);
    }
    leave(c); /* attributes */
    /* LAST (docs/document-model.md): on the final attribute alone, unless the final one says
     * explicitly what it is and some attribute carries LAST (a room read from a file, edited
     * in place), or the room was read without any LAST (missing_last) */
    if (na > 0 && !field_opt_boolean(c, t, KEY_missing_last, 0) && (!final_has_last || !any_true)) {
        for (size_t i = 0; i < na; i++) rm->attrs[i].last = 0;
        rm->attrs[na - 1].last = 1;
    }
    field_table(c, t, KEY_attributes, 1); /* the path again, for the pack errors below */

    psdl_error err;
    memset(&err, 0, sizeof err);
    if (psdl_room_pack(c->doc, rm, &err) != PSDL_OK) {
        if (err.code == PSDL_E_NOMEM) luaL_error(L, "not enough memory");
        if (err.attribute >= 0) path_index(c, (lua_Integer)err.attribute + 1);
        conv_error(c, "%s", core_detail(err.message));
    }
    leave(c); /* attributes */
}

static psdl_vec3 field_vec3(conv *c, int t, int key) {
    int v = field_table(c, t, key, 1);
    float f[3];
    for (int i = 0; i < 3; i++) {
        enter_index(c, v, i + 1);
        f[i] = top_float(c);
        leave(c);
    }
    leave(c);
    psdl_vec3 r = {f[0], f[1], f[2]};
    return r;
}

/* Bounds recommended by psdl-format.md §1.6: AABB, its centre, and the largest distance
 * from the centre to a vertex. */
static void compute_bounds(psdl_doc *doc) {
    if (doc->nvertices == 0) return;
    psdl_vec3 lo = doc->vertices[0], hi = lo;
    for (uint32_t i = 1; i < doc->nvertices; i++) {
        psdl_vec3 v = doc->vertices[i];
        if (v.x < lo.x) lo.x = v.x;
        if (v.y < lo.y) lo.y = v.y;
        if (v.z < lo.z) lo.z = v.z;
        if (v.x > hi.x) hi.x = v.x;
        if (v.y > hi.y) hi.y = v.y;
        if (v.z > hi.z) hi.z = v.z;
    }
    psdl_vec3 ctr = {(lo.x + hi.x) / 2, (lo.y + hi.y) / 2, (lo.z + hi.z) / 2};
    double r2 = 0;
    for (uint32_t i = 0; i < doc->nvertices; i++) {
        double dx = doc->vertices[i].x - ctr.x, dy = doc->vertices[i].y - ctr.y, dz = doc->vertices[i].z - ctr.z;
        double d = dx * dx + dy * dy + dz * dz;
        if (d > r2) r2 = d;
    }
    doc->bounds_min = lo;
    doc->bounds_max = hi;
    doc->sphere_center = ctr;
    doc->sphere_radius = (float)sqrt(r2);
}

/* Fills road rd from the road-record table t. */
static void check_road(conv *c, int t, psdl_road *rd) {
    static const int lanes[] = {KEY_lanes_left, KEY_lanes_right};
    rd->flags = (uint32_t)field_integer(c, t, KEY_flags, 0, 0xFFFFFFFF);
    size_t nl[2];
    int lt[2];
    for (int s = 0; s < 2; s++) {
        lt[s] = field_table(c, t, lanes[s], 1);
        nl[s] = array_len(c, lt[s], PSDL_MAX_LANE_VALUES, "lane values");
        leave(c);
    }
    rd->nleft = (uint8_t)nl[0];
    rd->nright = (uint8_t)nl[1];
    rd->lane_values = (float *)conv_alloc(c, nl[0] + nl[1], sizeof(float));
    for (int s = 0, o = 0; s < 2; s++) {
        int l = field_table(c, t, lanes[s], 1);
        for (size_t i = 0; i < nl[s]; i++) {
            enter_index(c, l, (lua_Integer)i + 1);
            rd->lane_values[o++] = top_float(c);
            leave(c);
        }
        leave(c);
    }
    int sl = field_table(c, t, KEY_stop_lights, 1);
    for (int i = 0; i < 2; i++) {
        enter_index(c, sl, i + 1);
        rd->stop_light[i] = (uint8_t)top_integer(c, 0, 255);
        leave(c);
    }
    leave(c);
    static const int cross[] = {KEY_start_crossroads, KEY_end_crossroads};
    for (int s = 0; s < 2; s++) {
        int x = field_table(c, t, cross[s], 1);
        uint16_t *dst = s ? rd->end_crossroads : rd->start_crossroads;
        for (int i = 0; i < 4; i++) {
            enter_index(c, x, i + 1);
            dst[i] = (uint16_t)(top_integer(c, 1, 65536) - 1);
            leave(c);
        }
        leave(c);
    }
    int rt = field_table(c, t, KEY_rooms, 1);
    size_t nr = array_len(c, rt, 255, "rooms");
    rd->nrooms = (uint8_t)nr;
    rd->rooms = (int16_t *)conv_alloc(c, nr, sizeof *rd->rooms);
    for (size_t i = 0; i < nr; i++) {
        enter_index(c, rt, (lua_Integer)i + 1);
        rd->rooms[i] = (int16_t)top_integer(c, -32768, 32767);
        leave(c);
    }
    leave(c);
}

/* Fills c->doc from the document table at index t (docs/document-model.md). Raises on any
 * value the format cannot hold. */
static void check_doc(conv *c, int t) {
    lua_State *L = c->L;
    psdl_doc *doc = c->doc;

    if (enter_field(c, t, KEY_magic) != LUA_TNIL) {
        size_t len;
        const char *m = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : NULL;
        if (!m) type_error(c, "string");
        if (len != 4 || (memcmp(m, "PSD0", 4) != 0 && memcmp(m, "PSD1", 4) != 0))
            conv_error(c, "\"PSD0\" or \"PSD1\" expected, got \"%s\"", m);
        memcpy(doc->magic, m, 4);
    }
    leave(c);
    int psd1 = memcmp(doc->magic, "PSD1", 4) == 0;
    doc->target_size = (uint32_t)field_opt_integer(c, t, KEY_target_size, 0, 0xFFFFFFFF, 2);
    doc->first_road_room = (uint32_t)field_opt_integer(c, t, KEY_first_road_room, 0, 0xFFFFFFFF, 0);

    int vt = field_table(c, t, KEY_vertices, 1);
    size_t nv = array_len(c, vt, UINT32_MAX, "vertices");
    doc->nvertices = (uint32_t)nv;
    doc->vertices = (psdl_vec3 *)conv_alloc(c, nv, sizeof *doc->vertices);
    for (size_t i = 0; i < nv; i++) {
        int v = index_table(c, vt, (lua_Integer)i + 1);
        float f[3];
        for (int j = 0; j < 3; j++) {
            /* the usual case without the path bookkeeping (as field_list16) */
            int ok = 0;
            if (lua_rawgeti(L, v, j + 1) == LUA_TNUMBER) f[j] = lp_to_float(lua_tonumber(L, -1), &ok);
            lua_pop(L, 1);
            if (!ok) {
                enter_index(c, v, j + 1);
                f[j] = top_float(c);
                leave(c);
            }
        }
        doc->vertices[i].x = f[0];
        doc->vertices[i].y = f[1];
        doc->vertices[i].z = f[2];
        leave(c);
    }
    leave(c);

    int ht = field_table(c, t, KEY_heights, 0);
    if (ht) {
        size_t nh = array_len(c, ht, UINT32_MAX, "heights");
        doc->nheights = (uint32_t)nh;
        doc->heights = (float *)conv_alloc(c, nh, sizeof *doc->heights);
        for (size_t i = 0; i < nh; i++) {
            enter_index(c, ht, (lua_Integer)i + 1);
            doc->heights[i] = top_float(c);
            leave(c);
        }
        leave(c);
    }

    int tt = field_table(c, t, KEY_textures, 0);
    size_t ntex = 0;
    if (tt) {
        ntex = array_len(c, tt, UINT32_MAX - 1, "textures");
        doc->ntextures = (uint32_t)ntex + 1;
        doc->textures = (psdl_texture *)conv_alloc(c, ntex + 1, sizeof *doc->textures);
        for (size_t v = 1; v <= ntex; v++) {
            int tp = enter_index(c, tt, (lua_Integer)v);
            if (tp == LUA_TSTRING) {
                size_t len;
                const char *s = lua_tolstring(L, -1, &len);
                if (len > 254) conv_error(c, "texture name of %I bytes, at most 254 fit the format", (lua_Integer)len);
                char *name = (char *)conv_alloc(c, len + 1, 1);
                memcpy(name, s, len);
                doc->textures[v].name = name;
                doc->textures[v].name_len = (uint8_t)len;
            } else if (tp != LUA_TBOOLEAN || lua_toboolean(L, -1)) {
                type_error(c, "string or false");
            }
            leave(c);
        }
        leave(c);
    }
    int mt = field_table(c, t, KEY_materials, 0);
    if (mt) {
        size_t nm = array_len(c, mt, ntex, "materials (one per texture)");
        for (size_t v = 1; v <= nm; v++) {
            enter_index(c, mt, (lua_Integer)v);
            doc->textures[v].material = (uint8_t)top_integer(c, 0, 255);
            leave(c);
        }
        leave(c);
    }

    int rt = field_table(c, t, KEY_rooms, 1);
    size_t nr = array_len(c, rt, UINT32_MAX - 1, "rooms");
    doc->nrooms = (uint32_t)nr + 1;
    doc->rooms = (psdl_room *)conv_alloc(c, nr + 1, sizeof *doc->rooms);
    doc->rooms[0].prop_rule = 0xCD;
    int r0 = field_table(c, t, KEY_room0, 0);
    if (r0) {
        doc->rooms[0].flags = (uint8_t)field_opt_integer(c, r0, KEY_flags, 0, 255, 0);
        doc->rooms[0].prop_rule = (uint8_t)field_opt_integer(c, r0, KEY_prop_rule, 0, PSDL_MAX_PROP_RULE, 0xCD);
        leave(c);
    }
    for (size_t r = 1; r <= nr; r++) {
        int rm = index_table(c, rt, (lua_Integer)r);
        check_room(c, rm, &doc->rooms[r]);
        leave(c);
    }
    leave(c);

    int bt = field_table(c, t, KEY_bounds, 0);
    if (bt) {
        doc->bounds_min = field_vec3(c, bt, KEY_min);
        doc->bounds_max = field_vec3(c, bt, KEY_max);
        doc->sphere_center = field_vec3(c, bt, KEY_center);
        doc->sphere_radius = field_float(c, bt, KEY_radius);
        leave(c);
    } else {
        compute_bounds(doc);
    }
    int pt = field_table(c, t, KEY_roads, 0);
    if (pt) {
        size_t np = array_len(c, pt, UINT32_MAX, "road records");
        doc->nroads = (uint32_t)np;
        doc->roads = (psdl_road *)conv_alloc(c, np, sizeof *doc->roads);
        for (size_t i = 0; i < np; i++) {
            int rd = index_table(c, pt, (lua_Integer)i + 1);
            check_road(c, rd, &doc->roads[i]);
            leave(c);
        }
        leave(c);
    }
    /* PSD1 files may end after the per-room bytes: only when the model has neither part */
    doc->has_tail = !psd1 || bt || pt;
}

/* Converts the document table at argument 1 into a new psdl_doc owned by a to-be-closed
 * box pushed on the stack; returns the box. Raises on an invalid model. */
static docbox *to_doc(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    /* conv.anchor, sized for every string it can keep (NCODECS type names and CONV_KEYS
     * keys per codec), so that keeping one never allocates (no collector step, no
     * finalizer, in the middle of a table traversal) */
    lua_createtable(L, NCODECS * (CONV_KEYS + 1), 0);
    docbox *b = box_new(L);
    psdl_options opt = box_options(L);
    b->doc = psdl_doc_new(&opt);
    if (!b->doc) luaL_error(L, "not enough memory");
    conv c;
    memset(&c, 0, sizeof c);
    c.L = L;
    c.doc = b->doc;
    c.arg = 1;
    c.anchor = 2;
    c.keys = push_begin(L).keys; /* the field names, looked up without lua_getfield's string cache */
    check_doc(&c, 1);
    return b;
}

/***
 * Encode a Lua document into PSDL bytes.
 * @function encode
 * @tparam table doc the document (docs/document-model.md)
 * @treturn string the file's bytes
 * @raise `bad argument #1 to 'encode' (<path>: <problem>)` when the model has a value the
 * format cannot hold (wrong type, out of its field's range, wrong vertex count, ...)
 */
/* A C buffer owned by a userdata ("psdl.CBuffer", __gc frees it), so that a raise between
 * its malloc and its free leaks nothing. */
typedef struct cbuf {
    char *p;
} cbuf;

static int cbuf_gc(lua_State *L) {
    cbuf *c = (cbuf *)lua_touserdata(L, 1);
    free(c->p);
    c->p = NULL;
    return 0;
}

/* Pushes the bytes of the document in box b (argument 1 names it in errors). They are
 * encoded into C memory and copied into the string once: a luaL_Buffer of that size would
 * be a second block of Lua memory as large as the file (1.4 MB for a London-scale city),
 * first touched on every build. */
static void push_encoded(lua_State *L, docbox *b) {
    size_t size = psdl_encoded_size(b->doc);
    if (size == 0) luaL_argerror(L, 1, "a count does not fit the format");
    cbuf *c = (cbuf *)lua_newuserdatauv(L, sizeof *c, 0);
    c->p = NULL;
    if (luaL_newmetatable(L, "psdl.CBuffer")) {
        lua_pushcfunction(L, cbuf_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    c->p = (char *)malloc(size);
    if (!c->p) luaL_error(L, "not enough memory");
    size_t written = 0;
    psdl_error err;
    if (psdl_encode(b->doc, c->p, size, &written, &err) != PSDL_OK) luaL_argerror(L, 1, core_detail(err.message));
    lua_pushlstring(L, c->p, written);
    free(c->p);
    c->p = NULL;
    lua_remove(L, -2); /* the buffer's userdata */
}

static int l_encode(lua_State *L) {
    docbox *b = to_doc(L);
    push_encoded(L, b);
    box_release(L, b);
    return 1;
}

static int problems_gc(lua_State *L) {
    lpsdl_problems *p = (lpsdl_problems *)lua_touserdata(L, 1);
    free(p->items);
    p->items = NULL;
    p->n = p->cap = 0;
    return 0;
}

/* (lpsdl.h) */
lpsdl_problems *lpsdl_problems_push(lua_State *L) {
    lpsdl_problems *p = (lpsdl_problems *)lua_newuserdatauv(L, sizeof *p, 0);
    memset(p, 0, sizeof *p);
    if (luaL_newmetatable(L, "psdl.ProblemList")) {
        lua_pushcfunction(L, problems_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    return p;
}

/* (lpsdl.h) */
int lpsdl_problems_add(void *ud, const psdl_problem *pr) {
    lpsdl_problems *p = (lpsdl_problems *)ud;
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;
        psdl_problem *items = (psdl_problem *)realloc(p->items, cap * sizeof *items);
        if (!items) {
            p->nomem = 1;
            return 1;
        }
        p->items = items;
        p->cap = cap;
    }
    p->items[p->n++] = *pr;
    return 0;
}

/* One problem as a Lua table. */
static void push_problem(lua_State *L, const psdl_problem *p) {
    lua_createtable(L, 0, 10);
    lua_pushstring(L, p->severity == PSDL_SEV_ERROR ? "error" : "warning");
    lua_setfield(L, -2, "severity");
    lua_pushstring(L, p->rule);
    lua_setfield(L, -2, "rule");
    lua_pushstring(L, p->path);
    lua_setfield(L, -2, "path");
    lua_pushstring(L, p->message);
    lua_setfield(L, -2, "message");
    if (p->room >= 0) lpsdl_set_int(L, "room", p->room);
    if (p->attribute >= 0) lpsdl_set_int(L, "attribute", p->attribute + 1);
    if (p->road >= 0) lpsdl_set_int(L, "road", p->road + 1);
    if (p->room >= 0) {
        lua_createtable(L, 2, 0);
        lua_pushinteger(L, p->room);
        lua_rawseti(L, -2, 1);
        if (p->other_room >= 0) {
            lua_pushinteger(L, p->other_room);
            lua_rawseti(L, -2, 2);
        }
        lua_setfield(L, -2, "rooms");
    }
    if (p->has_position) {
        lua_pushnumber(L, p->x);
        lua_setfield(L, -2, "x");
        lua_pushnumber(L, p->z);
        lua_setfield(L, -2, "z");
    }
}

/***
 * Check a Lua document against the format's rules (psdl-format.md §3) and the drivability
 * rules (docs/validate.md).
 * @function validate
 * @tparam table doc the document
 * @tparam[opt] boolean want_bytes also return the encoded bytes
 * @tparam[opt] boolean format_only skip the drivability rules (PSDL_VALIDATE_NO_DRIVABLE)
 * @treturn table problems, each `{severity = "error"|"warning", rule, path, message,
 * room, attribute, road, rooms, x, z}` (room, attribute, road when they apply; attribute and
 * road 1-based; `rooms` = {room[, other room]}; `x`, `z` the position in metres when known)
 * @treturn integer the number of errors
 * @treturn integer the number of warnings
 * @raise as `encode` when the document cannot be converted at all; "not enough memory"
 */
/* Validates the document of box b (the box at stack index `idx`, which stays there) and
 * pushes the results of core.validate; releases the box. */
static int validate_box(lua_State *L, docbox *b, int want_bytes, unsigned flags) {
    lpsdl_problems *pl = lpsdl_problems_push(L);
    psdl_validate_result res = {0, 0};
    psdl_validate_ex(b->doc, flags, lpsdl_problems_add, pl, &res);
    if (pl->nomem) return luaL_error(L, "not enough memory");
    lua_createtable(L, pl->n > INT32_MAX ? 0 : (int)pl->n, 0);
    for (size_t i = 0; i < pl->n; i++) {
        push_problem(L, &pl->items[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_pushinteger(L, (lua_Integer)res.errors);
    lua_pushinteger(L, (lua_Integer)res.warnings);
    if (!want_bytes) {
        box_release(L, b);
        return 3;
    }
    /* the bytes of the document just checked: psdl.write converts the document once */
    push_encoded(L, b);
    box_release(L, b);
    return 4;
}

static int l_validate(lua_State *L) {
    int want_bytes = lua_toboolean(L, 2);
    unsigned flags = lua_toboolean(L, 3) ? PSDL_VALIDATE_NO_DRIVABLE : 0u;
    docbox *b = to_doc(L);
    return validate_box(L, b, want_bytes, flags);
}

psdl_doc *lpsdl_doc_push(lua_State *L) {
    docbox *b = (docbox *)lua_newuserdatauv(L, sizeof *b, 0);
    b->doc = NULL;
    b->gc_stopped = 0;
    luaL_setmetatable(L, DOCBOX);
    psdl_options opt = box_options(L);
    b->doc = psdl_doc_new(&opt);
    if (!b->doc) luaL_error(L, "not enough memory");
    return b->doc;
}

psdl_doc *lpsdl_doc_check(lua_State *L, int idx) {
    docbox *b = (docbox *)luaL_checkudata(L, idx, DOCBOX);
    if (!b->doc) luaL_argerror(L, idx, "the document was released");
    return b->doc;
}

int lpsdl_doc_validate(lua_State *L, int idx, int want_bytes, unsigned flags) {
    lpsdl_doc_check(L, idx);
    return validate_box(L, (docbox *)lua_touserdata(L, idx), want_bytes, flags);
}

/***
 * Every rule `validate` can report.
 * @function rules
 * @treturn table list of `{name, severity = "error"|"warning"|"error/warning", summary}`
 */
static int l_rules(lua_State *L) {
    size_t n;
    const psdl_rule_info *r = psdl_rules(&n);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_createtable(L, 0, 3);
        lua_pushstring(L, r[i].name);
        lua_setfield(L, -2, "name");
        lua_pushstring(L, r[i].severity);
        lua_setfield(L, -2, "severity");
        lua_pushstring(L, r[i].summary);
        lua_setfield(L, -2, "summary");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

/* ================================================================ module */

/* core.write_file(path, bytes) -> true | nil, message, "io": replace a file atomically
 * (psdl_write_file: temporary file in the same folder, synced, old permissions kept,
 * renamed; symbolic links followed; devices written directly). */
static int l_write_file(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    size_t len;
    const char *bytes = luaL_checklstring(L, 2, &len);
    psdl_error err;
    if (lpsdl_memory_exceeded(L)) {
        luaL_pushfail(L);
        lua_pushfstring(L, "psdl: io: %s: not written: the memory limit (--max-memory) was reached", path);
        lua_pushstring(L, "io");
        return 3;
    }
    if (lpsdl_writes_denied()) {
        luaL_pushfail(L);
        lua_pushfstring(L, "psdl: io: %s: writing files is not allowed in a sandboxed city script "
                           "(psdl build --trust allows it)", path);
        lua_pushstring(L, "io");
        return 3;
    }
    if (psdl_write_file(path, bytes, len, &err) != PSDL_OK) {
        return lpsdl_push_error(L, &err);
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* core.real_path(path) -> absolute name | nil, message, "io": the file's canonical name
 * (psdl_real_path: symbolic links, "." and ".." resolved); the file must exist. */
static int l_real_path(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    char out[4096];
    psdl_error err;
    if (psdl_real_path(path, out, sizeof out, &err) != PSDL_OK) {
        return lpsdl_push_error(L, &err);
    }
    lua_pushstring(L, out);
    return 1;
}

/* core.check_output(path) -> true | nil, message, "io": whether a write of path could
 * succeed (psdl_check_output: not a folder; its folder exists and is writable). */
static int l_check_output(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    psdl_error err;
    if (psdl_check_output(path, &err) != PSDL_OK) {
        return lpsdl_push_error(L, &err);
    }
    lua_pushboolean(L, 1);
    return 1;
}

static const luaL_Reg funcs[] = {
    {"write_file", l_write_file},
    {"check_output", l_check_output},
    {"real_path", l_real_path},
    {"decode", l_decode},
    {"decode_file", l_decode_file},
    {"encode", l_encode},
    {"validate", l_validate},
    {"rules", l_rules},
    {NULL, NULL},
};

static const luaL_Reg box_metameth[] = {
    {"__gc", box_close},
    {"__close", box_close},
    {"__tostring", box_tostring},
    {NULL, NULL},
};

/***
 * Opens `psdl.core`: decode, encode, validate, plus `_NAME`, `_VERSION`,
 * `status_names` (status code + 1 -> stable name), `attribute_types` (valid `type`
 * strings of the document model) and `limits`, the format's counts and values as
 * integers: `lane_values` (lane values per side of a road record, §1.7), `prop_rule`
 * (largest prop rule, §1.6), `texture_value` (largest texture value, §2.3),
 * `texture_rendered` (511: higher values are reported not to render, §3.2),
 * `texture_stock` (767: stock MM2 is reported not to load higher ones, §3.2),
 * `divider_texture` (largest divider texture, one byte, §2.4 0x8), `perimeter` (perimeter
 * points per room, §3.2), `vertex_budget` (65,024: the vertex pool plus the game's 512
 * generated collision vertices fit 16-bit indices, §3.2).
 * The process's switches (the sandbox's write switch and limits, the heap, Ctrl-C) are not
 * in this table: they go to `psdl.control` (lpsdl_open_control, src/lpsdl_sandbox.c).
 */
int luaopen_psdl_core(lua_State *L) {
    luaL_checkversion(L);
    for (int t = 0; t < 16; t++) { /* codec_by_type must agree with codecs[] */
        const attr_codec *k = &codecs[codec_by_type[t]];
        if (k->type != (t <= PSDL_ATTR_ROOF ? t : PSDL_ATTR_UNKNOWN) || k == &codecs[CODEC_JUNCTION])
            return luaL_error(L, "psdl.core: codec table out of order at type %d", t);
    }
    if (luaL_newmetatable(L, DOCBOX)) {
        luaL_setfuncs(L, box_metameth, 0);
        lua_pushliteral(L, "psdl.core");
        lua_setfield(L, -2, "__metatable"); /* keep the box opaque */
    }
    lua_pop(L, 1);
    luaL_newlib(L, funcs);
    lua_pushliteral(L, "psdl.core");
    lua_setfield(L, -2, "_NAME");
    lua_pushliteral(L, PSDL_VERSION);
    lua_setfield(L, -2, "_VERSION");
    lua_createtable(L, PSDL_E_COUNT_, 0);
    for (int i = 0; i < PSDL_E_COUNT_; i++) {
        lua_pushstring(L, psdl_status_name((psdl_status)i));
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "status_names");
    lua_createtable(L, NCODECS, 0);
    for (int i = 0; i < NCODECS; i++) {
        lua_pushstring(L, codecs[i].name);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "attribute_types");
    static const struct {
        const char *name;
        lua_Integer value;
    } limits[] = {
        {"vertex_budget", PSDL_SAFE_VERTEX_BUDGET},   {"texture_rendered", PSDL_RENDERED_TEXTURE_VALUE},
        {"texture_stock", PSDL_STOCK_TEXTURE_VALUE},  {"divider_texture", PSDL_MAX_DIVIDER_TEXTURE},
        {"lane_values", PSDL_MAX_LANE_VALUES},        {"prop_rule", PSDL_MAX_PROP_RULE},
        {"texture_value", PSDL_MAX_TEXTURE_VALUE},    {"perimeter", PSDL_MAX_PERIMETER},
    };
    lua_createtable(L, 0, (int)(sizeof limits / sizeof limits[0]));
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        lua_pushinteger(L, limits[i].value);
        lua_setfield(L, -2, limits[i].name);
    }
    lua_setfield(L, -2, "limits");
    lpsdl_open_terrain(L);
    lpsdl_open_heightfield(L);
    lpsdl_open_render(L);
    lpsdl_open_geom(L);
    lpsdl_open_package(L);
    lpsdl_open_companion(L);
    lpsdl_open_control(L);
    lpsdl_open_blocks(L);
    lpsdl_open_store(L);
    lpsdl_open_perims(L);
    lpsdl_open_rows(L);
    return 1;
}

/* Float conversions for the other binding files (lpsdl.h). */
lua_Number lpsdl_from_float(float f) { return lp_from_float(f); }
float lpsdl_to_float(lua_Number n, int *ok) { return lp_to_float(n, ok); }
