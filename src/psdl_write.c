/* psdl_write.c -- document lifetime and encode: psdl_doc -> bytes (size query, then fill
 * without allocating). The encoder writes each room's words[] as they are, so a decoded
 * document re-encodes to the identical bytes (§1). */
#include "psdl_internal.h"


psdl_doc *psdl_doc_new(const psdl_options *opt) {
    psdl_arena *arena = psdl_arena_new(opt ? &opt->alloc : NULL);
    if (!arena) return NULL;
    psdl_doc *doc = psdl_arena_alloc(arena, sizeof *doc);
    if (!doc) goto fail;
    doc->arena_ = arena;
    memcpy(doc->magic, "PSD0", 4);
    doc->target_size = 2;
    doc->ntextures = 1;
    doc->textures = psdl_arena_alloc(arena, sizeof *doc->textures);
    doc->nrooms = 1;
    doc->rooms = psdl_arena_alloc(arena, sizeof *doc->rooms);
    if (!doc->textures || !doc->rooms) goto fail;
    doc->rooms[0].prop_rule = 0xCD; /* retail's room-0 byte (§1.2) */
    doc->has_tail = 1;
    return doc;
fail:
    psdl_arena_free(arena);
    return NULL;
}

void *psdl_doc_alloc(psdl_doc *doc, size_t size) { return psdl_arena_alloc(doc->arena_, size); }

void psdl_doc_free(psdl_doc *doc) {
    if (doc) psdl_arena_free(doc->arena_);
}

/* Sum with overflow check: returns 0 on overflow (a valid file is never 0 bytes). */
static size_t add_size(size_t a, uint64_t b) {
    if (a == 0 || b > (uint64_t)((size_t)-1 - a)) return 0;
    return a + (size_t)b;
}

size_t psdl_encoded_size(const psdl_doc *doc) {
    int psd1 = memcmp(doc->magic, "PSD1", 4) == 0;
    size_t s = 8;
    s = add_size(s, 4 + 12ull * doc->nvertices);
    s = add_size(s, 4 + 4ull * doc->nheights);
    s = add_size(s, 4);
    for (uint32_t i = 1; i < doc->ntextures; i++) {
        const psdl_texture *t = &doc->textures[i];
        s = add_size(s, t->name ? 2u + t->name_len + (psd1 ? 1u : 0u) : 1u);
    }
    s = add_size(s, 8);
    for (uint32_t i = 1; i < doc->nrooms; i++) {
        const psdl_room *rm = &doc->rooms[i];
        s = add_size(s, 8 + 4ull * rm->nperimeter + 2ull * rm->nwords);
    }
    s = add_size(s, 2ull * doc->nrooms);
    if (doc->has_tail || !psd1) {
        s = add_size(s, 40 + 4);
        for (uint32_t i = 0; i < doc->nroads; i++) {
            const psdl_road *rd = &doc->roads[i];
            s = add_size(s, 25 + 4ull * (rd->nleft + rd->nright) + 2ull * rd->nrooms);
        }
    }
    return s;
}

typedef struct wr {
    uint8_t *p;
} wr;

static void w_u8(wr *w, uint8_t v) { *w->p++ = v; }
static void w_u16(wr *w, uint16_t v) { psdl_put_u16(w->p, v); w->p += 2; }
static void w_u32(wr *w, uint32_t v) { psdl_put_u32(w->p, v); w->p += 4; }
static void w_f32(wr *w, float v) { psdl_put_f32(w->p, v); w->p += 4; }
static void w_vec3(wr *w, psdl_vec3 v) { w_f32(w, v.x); w_f32(w, v.y); w_f32(w, v.z); }

psdl_status psdl_encode(const psdl_doc *doc, void *dst, size_t cap, size_t *written, psdl_error *err) {
    if (written) *written = 0;
    if (memcmp(doc->magic, "PSD0", 4) != 0 && memcmp(doc->magic, "PSD1", 4) != 0)
        return psdl_fail(err, PSDL_E_INVALID, 0, 0, -1, -1, "magic must be \"PSD0\" or \"PSD1\"");
    if (doc->ntextures == 0 || doc->nrooms == 0)
        return psdl_fail(err, PSDL_E_INVALID, 0, 0, -1, -1, "texture slot 0 and room 0 must exist");
    size_t need = psdl_encoded_size(doc);
    if (need == 0) return psdl_fail(err, PSDL_E_INVALID, 0, 0, -1, -1, "document too large to encode");
    if (cap < need)
        return psdl_fail(err, PSDL_E_INVALID, 0, 0, -1, -1, "destination holds %zu bytes, %zu needed", cap, need);
    int psd1 = memcmp(doc->magic, "PSD1", 4) == 0;
    wr w = {dst};
    memcpy(w.p, doc->magic, 4);
    w.p += 4;
    w_u32(&w, doc->target_size);
    w_u32(&w, doc->nvertices);
    for (uint32_t i = 0; i < doc->nvertices; i++) w_vec3(&w, doc->vertices[i]);
    w_u32(&w, doc->nheights);
    for (uint32_t i = 0; i < doc->nheights; i++) w_f32(&w, doc->heights[i]);
    w_u32(&w, doc->ntextures);
    for (uint32_t i = 1; i < doc->ntextures; i++) {
        const psdl_texture *t = &doc->textures[i];
        if (!t->name) {
            w_u8(&w, 0);
            continue;
        }
        w_u8(&w, (uint8_t)(t->name_len + 1u));
        memcpy(w.p, t->name, t->name_len);
        w.p += t->name_len;
        w_u8(&w, 0);
        if (psd1) w_u8(&w, t->material);
    }
    w_u32(&w, doc->nrooms);
    w_u32(&w, doc->first_road_room);
    for (uint32_t i = 1; i < doc->nrooms; i++) {
        const psdl_room *rm = &doc->rooms[i];
        w_u32(&w, rm->nperimeter);
        w_u32(&w, rm->nwords);
        for (uint32_t k = 0; k < rm->nperimeter; k++) {
            w_u16(&w, rm->perimeter[k].vertex);
            w_u16(&w, rm->perimeter[k].neighbour);
        }
        for (uint32_t k = 0; k < rm->nwords; k++) w_u16(&w, rm->words[k]);
    }
    for (uint32_t i = 0; i < doc->nrooms; i++) w_u8(&w, doc->rooms[i].flags);
    for (uint32_t i = 0; i < doc->nrooms; i++) w_u8(&w, doc->rooms[i].prop_rule);
    if (doc->has_tail || !psd1) {
        w_vec3(&w, doc->bounds_min);
        w_vec3(&w, doc->bounds_max);
        w_vec3(&w, doc->sphere_center);
        w_f32(&w, doc->sphere_radius);
        w_u32(&w, doc->nroads);
        for (uint32_t i = 0; i < doc->nroads; i++) {
            const psdl_road *rd = &doc->roads[i];
            w_u32(&w, rd->flags);
            w_u8(&w, rd->nleft);
            w_u8(&w, rd->nright);
            for (unsigned k = 0; k < (unsigned)rd->nleft + rd->nright; k++) w_f32(&w, rd->lane_values[k]);
            w_u8(&w, rd->stop_light[0]);
            w_u8(&w, rd->stop_light[1]);
            for (int k = 0; k < 4; k++) w_u16(&w, rd->start_crossroads[k]);
            for (int k = 0; k < 4; k++) w_u16(&w, rd->end_crossroads[k]);
            w_u8(&w, rd->nrooms);
            for (unsigned k = 0; k < rd->nrooms; k++) w_u16(&w, (uint16_t)rd->rooms[k]);
        }
    }
    if (written) *written = (size_t)(w.p - (uint8_t *)dst);
    return PSDL_OK;
}
