/* psdl_read.c -- decode: bytes -> psdl_doc, with a bounds-checked cursor (§1). Every count
 * is checked against the bytes left before anything is allocated. */
#include "psdl_internal.h"

#include <stdio.h>

typedef struct rd {
    const uint8_t *start, *p, *end;
    psdl_error *err;
    long room; /* room being read, for messages, or -1 */
} rd;

static size_t rd_off(const rd *r) { return (size_t)(r->p - r->start); }
static size_t rd_left(const rd *r) { return (size_t)(r->end - r->p); }

static int rd_need(rd *r, size_t n, const char *what) {
    if (rd_left(r) >= n) return 1;
    psdl_fail(r->err, PSDL_E_TRUNCATED, rd_off(r), 1, r->room, -1, "need %zu bytes for %s, %zu remain", n, what,
              rd_left(r));
    return 0;
}

#define RD_U8(r, out, what) \
    do { if (!rd_need((r), 1, (what))) goto fail; (out) = *(r)->p++; } while (0)
#define RD_U16(r, out, what) \
    do { if (!rd_need((r), 2, (what))) goto fail; (out) = psdl_get_u16((r)->p); (r)->p += 2; } while (0)
#define RD_U32(r, out, what) \
    do { if (!rd_need((r), 4, (what))) goto fail; (out) = psdl_get_u32((r)->p); (r)->p += 4; } while (0)
#define RD_F32(r, out, what) \
    do { if (!rd_need((r), 4, (what))) goto fail; (out) = psdl_get_f32((r)->p); (r)->p += 4; } while (0)

/* A count read at count_off must leave room for count * elem bytes (and the limit). */
static int check_count(rd *r, uint64_t count, size_t elem, size_t limit, size_t count_off, const char *what) {
    if (limit && count > limit) {
        psdl_fail(r->err, PSDL_E_BAD_COUNT, count_off, 1, r->room, -1, "%s count %llu exceeds the limit %zu", what,
                  (unsigned long long)count, limit);
        return 0;
    }
    if (count > rd_left(r) / elem) {
        psdl_fail(r->err, PSDL_E_BAD_COUNT, count_off, 1, r->room, -1,
                  "%s count %llu needs %llu bytes, only %zu remain", what, (unsigned long long)count,
                  (unsigned long long)count * elem, rd_left(r));
        return 0;
    }
    return 1;
}

static void *doc_array(psdl_doc *doc, rd *r, uint64_t count, size_t elem) {
    if (count == 0) return NULL;
    void *p = psdl_doc_alloc(doc, (size_t)count * elem);
    if (!p) psdl_fail(r->err, PSDL_E_NOMEM, rd_off(r), 1, r->room, -1, "out of memory");
    return p;
}

static psdl_status read_vec3(rd *r, psdl_vec3 *v, const char *what) {
    if (!rd_need(r, 12, what)) return PSDL_E_TRUNCATED;
    v->x = psdl_get_f32(r->p);
    v->y = psdl_get_f32(r->p + 4);
    v->z = psdl_get_f32(r->p + 8);
    r->p += 12;
    return PSDL_OK;
}

static psdl_status read_room(psdl_doc *doc, rd *r, psdl_room *room, const psdl_limits *lim) {
    uint32_t np, nw;
    size_t off = rd_off(r);
    RD_U32(r, np, "the perimeter point count");
    RD_U32(r, nw, "the attribute word count");
    if (!check_count(r, np, 4, 0, off, "perimeter point")) goto fail;
    room->nperimeter = np;
    room->perimeter = doc_array(doc, r, np, sizeof *room->perimeter);
    if (np && !room->perimeter) goto fail;
    for (uint32_t i = 0; i < np; i++) {
        room->perimeter[i].vertex = psdl_get_u16(r->p);
        room->perimeter[i].neighbour = psdl_get_u16(r->p + 2);
        r->p += 4;
    }
    if (!check_count(r, nw, 2, lim->max_attr_words, off + 4, "attribute word")) goto fail;
    size_t words_off = rd_off(r);
    room->nwords = nw;
    room->words = doc_array(doc, r, nw, sizeof *room->words);
    if (nw && !room->words) goto fail;
    for (uint32_t i = 0; i < nw; i++) room->words[i] = psdl_get_u16(r->p + 2u * i);
    r->p += 2u * (size_t)nw;
    long n = psdl_attrs_decode(room->words, nw, NULL, r->room, words_off, r->err);
    if (n < 0) goto fail;
    room->nattrs = (uint32_t)n;
    room->attrs = doc_array(doc, r, (uint64_t)n, sizeof *room->attrs);
    if (n && !room->attrs) goto fail;
    psdl_attrs_decode(room->words, nw, room->attrs, r->room, words_off, r->err);
    return PSDL_OK;
fail:
    return r->err ? r->err->code : PSDL_E_TRUNCATED;
}

static psdl_status read_road(psdl_doc *doc, rd *r, psdl_road *road) {
    RD_U32(r, road->flags, "road flags");
    RD_U8(r, road->nleft, "the left lane count");
    RD_U8(r, road->nright, "the right lane count");
    unsigned nl = (unsigned)road->nleft + road->nright;
    if (!check_count(r, nl, 4, 0, rd_off(r) - 2, "lane value")) goto fail;
    road->lane_values = doc_array(doc, r, nl, sizeof(float));
    if (nl && !road->lane_values) goto fail;
    for (unsigned i = 0; i < nl; i++) RD_F32(r, road->lane_values[i], "a lane value");
    RD_U8(r, road->stop_light[0], "the stop-light bytes");
    RD_U8(r, road->stop_light[1], "the stop-light bytes");
    for (int i = 0; i < 4; i++) RD_U16(r, road->start_crossroads[i], "the start crossroads");
    for (int i = 0; i < 4; i++) RD_U16(r, road->end_crossroads[i], "the end crossroads");
    RD_U8(r, road->nrooms, "the road's room count");
    if (!check_count(r, road->nrooms, 2, 0, rd_off(r) - 1, "road room")) goto fail;
    road->rooms = doc_array(doc, r, road->nrooms, sizeof(int16_t));
    if (road->nrooms && !road->rooms) goto fail;
    for (unsigned i = 0; i < road->nrooms; i++) {
        road->rooms[i] = (int16_t)psdl_get_u16(r->p); /* two's complement, as stored */
        r->p += 2;
    }
    return PSDL_OK;
fail:
    return r->err ? r->err->code : PSDL_E_TRUNCATED;
}

psdl_status psdl_decode(const psdl_options *opt, const void *data, size_t size, psdl_doc **out,
                        psdl_error *err) {
    psdl_error local;
    if (!err) err = &local;
    memset(err, 0, sizeof *err);
    err->room = err->attribute = -1;
    *out = NULL;
    psdl_limits lim = {0, 0, 0};
    if (opt) lim = opt->limits;
    rd r = {data, data, (const uint8_t *)data + size, err, -1};
    if (size < 4) {
        psdl_fail(err, PSDL_E_TRUNCATED, 0, 1, -1, -1, "need 4 bytes for the magic, %zu remain", size);
        return PSDL_E_TRUNCATED;
    }
    if (memcmp(r.p, "PSD0", 4) != 0 && memcmp(r.p, "PSD1", 4) != 0) {
        char shown[20];
        size_t o = 0;
        for (int i = 0; i < 4; i++) {
            unsigned ch = r.p[i];
            o += (size_t)snprintf(shown + o, sizeof shown - o, ch >= 0x20 && ch < 0x7F && ch != '\\' ? "%c" : "\\x%02x", ch);
        }
        psdl_fail(err, PSDL_E_BAD_MAGIC, 0, 1, -1, -1, "magic is \"%s\", not \"PSD0\" (nor \"PSD1\"): not a PSDL file",
                  shown);
        return PSDL_E_BAD_MAGIC;
    }
    psdl_doc *doc = psdl_doc_new(opt);
    if (!doc) return psdl_fail(err, PSDL_E_NOMEM, 0, 0, -1, -1, "out of memory");
    /* a decoded document takes about 2.6 times its file (grid_n20: 1.2 MB for 468 KB) */
    if (size <= (size_t)-1 / 3u) psdl_arena_reserve(doc->arena_, size * 3u);
    int psd1 = r.p[3] == '1';
    memcpy(doc->magic, r.p, 4);
    r.p += 4;
    RD_U32(&r, doc->target_size, "the target size");

    size_t off = rd_off(&r);
    uint32_t n;
    RD_U32(&r, n, "the vertex count");
    if (!check_count(&r, n, 12, lim.max_vertices, off, "vertex")) goto fail;
    doc->nvertices = n;
    doc->vertices = doc_array(doc, &r, n, sizeof *doc->vertices);
    if (n && !doc->vertices) goto fail;
    for (uint32_t i = 0; i < n; i++) read_vec3(&r, &doc->vertices[i], "a vertex");

    off = rd_off(&r);
    RD_U32(&r, n, "the height count");
    if (!check_count(&r, n, 4, 0, off, "height")) goto fail;
    doc->nheights = n;
    doc->heights = doc_array(doc, &r, n, sizeof *doc->heights);
    if (n && !doc->heights) goto fail;
    for (uint32_t i = 0; i < n; i++) doc->heights[i] = psdl_get_f32(r.p + 4u * i);
    r.p += 4u * (size_t)n;

    off = rd_off(&r);
    RD_U32(&r, n, "the texture slot count");
    if (n == 0) {
        psdl_fail(err, PSDL_E_BAD_COUNT, off, 1, -1, -1, "texture slot count is 0; it counts the names plus slot 0");
        goto fail;
    }
    if (!check_count(&r, (uint64_t)n - 1, 1, 0, off, "texture name")) goto fail;
    doc->ntextures = n;
    doc->textures = doc_array(doc, &r, n, sizeof *doc->textures);
    if (!doc->textures) goto fail;
    for (uint32_t i = 1; i < n; i++) {
        uint8_t len;
        size_t name_off = rd_off(&r);
        RD_U8(&r, len, "a texture name length");
        if (len > 0) {
            if (!rd_need(&r, len, "a texture name")) goto fail;
            if (r.p[len - 1] != 0) {
                psdl_fail(err, PSDL_E_BAD_STRING, name_off, 1, -1, -1,
                          "texture slot %u: name of %u bytes does not end with a NUL", (unsigned)i, (unsigned)len);
                goto fail;
            }
            char *name = psdl_doc_alloc(doc, len);
            if (!name) goto nomem;
            memcpy(name, r.p, len);
            doc->textures[i].name = name;
            doc->textures[i].name_len = (uint8_t)(len - 1);
            r.p += len;
            if (psd1) RD_U8(&r, doc->textures[i].material, "a texture material byte");
        }
    }

    off = rd_off(&r);
    RD_U32(&r, n, "the room count");
    if (n == 0) {
        psdl_fail(err, PSDL_E_BAD_COUNT, off, 1, -1, -1, "room count is 0; it counts the records plus room 0");
        goto fail;
    }
    /* each record needs 8 bytes, and each room a flag and a prop-rule byte */
    if (!check_count(&r, (uint64_t)n - 1, 10, lim.max_rooms, off, "room")) goto fail;
    doc->nrooms = n;
    doc->rooms = doc_array(doc, &r, n, sizeof *doc->rooms);
    if (!doc->rooms) goto fail;
    RD_U32(&r, doc->first_road_room, "the u32 after the room count");
    for (uint32_t i = 1; i < n; i++) {
        r.room = (long)i;
        if (read_room(doc, &r, &doc->rooms[i], &lim) != PSDL_OK) goto fail;
    }
    r.room = -1;
    if (!rd_need(&r, 2u * (size_t)n, "the room flag and prop-rule bytes")) goto fail;
    for (uint32_t i = 0; i < n; i++) doc->rooms[i].flags = r.p[i];
    for (uint32_t i = 0; i < n; i++) doc->rooms[i].prop_rule = r.p[n + i];
    r.p += 2u * (size_t)n;

    doc->has_tail = 1;
    if (psd1 && rd_left(&r) == 0) {
        doc->has_tail = 0; /* Midnight Club files end after the per-room bytes (§1.9) */
    } else {
        if (read_vec3(&r, &doc->bounds_min, "the bounds") || read_vec3(&r, &doc->bounds_max, "the bounds") ||
            read_vec3(&r, &doc->sphere_center, "the bounds"))
            goto fail;
        RD_F32(&r, doc->sphere_radius, "the bounding-sphere radius");
        off = rd_off(&r);
        RD_U32(&r, n, "the road record count");
        if (!check_count(&r, n, 25, 0, off, "road record")) goto fail;
        doc->nroads = n;
        doc->roads = doc_array(doc, &r, n, sizeof *doc->roads);
        if (n && !doc->roads) goto fail;
        for (uint32_t i = 0; i < n; i++) {
            if (read_road(doc, &r, &doc->roads[i]) != PSDL_OK) {
                size_t len = strlen(err->message);
                if (len < sizeof err->message)
                    snprintf(err->message + len, sizeof err->message - len, " (road record %u)", (unsigned)i + 1);
                goto fail;
            }
        }
    }
    if (rd_left(&r) != 0) {
        psdl_fail(err, PSDL_E_TRAILING, rd_off(&r), 1, -1, -1, "%zu bytes after the last road record", rd_left(&r));
        goto fail;
    }
    *out = doc;
    return PSDL_OK;
nomem:
    psdl_fail(err, PSDL_E_NOMEM, rd_off(&r), 1, -1, -1, "out of memory");
fail:
    psdl_doc_free(doc);
    if (err->code == PSDL_OK) psdl_fail(err, PSDL_E_TRUNCATED, rd_off(&r), 1, -1, -1, "unexpected end of data");
    return err->code;
}
