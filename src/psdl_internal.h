/* psdl_internal.h -- private helpers shared by the C core: arena, cursor, error helpers.
 * Not installed; no Lua. */
#ifndef PSDL_INTERNAL_H
#define PSDL_INTERNAL_H

#include "psdl.h"

#include <stdarg.h>
#include <string.h>

/* ---- arena (psdl_arena.c) */
typedef struct psdl_arena psdl_arena;
psdl_arena *psdl_arena_new(const psdl_alloc *alloc);
void *psdl_arena_alloc(psdl_arena *a, size_t size); /* zeroed, 8-byte aligned */
void psdl_arena_free(psdl_arena *a);
void psdl_arena_reserve(psdl_arena *a, size_t bytes); /* hint: first chunk of at least bytes */
/* The allocator of opt (may be NULL), or realloc/free when it has none. */
psdl_alloc psdl_alloc_of(const psdl_options *opt);

/* ---- errors (psdl_error.c) */
/* Fill err (may be NULL) with code, offset, room, attribute and a message
 * "psdl: <name>: <detail>[ at offset 0x..][ (room r, attribute a)]". Returns code. */
psdl_status psdl_fail(psdl_error *err, psdl_status code, size_t offset, int has_offset,
                      long room, long attribute, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 7, 8)))
#endif
    ;

/* ---- problem reports of the checks (psdl_validate.c, psdl_drivable.c; psdl_error.c) */
/* A check's run over a document: the callback (may be NULL) and its ud, the counts, and
 * whether the callback asked to stop. */
typedef struct psdl_check_run {
    const psdl_doc *doc;
    psdl_problem_fn fn;
    void *ud;
    psdl_validate_result *res;
    int stop;
} psdl_check_run;
/* Counts a problem of severity sev in c->res; returns whether to make it and pass it on (a
 * callback that has not asked to stop), and then starts *p: zeroed, with the severity, rule,
 * room, other room, attribute and road (-1: none). */
int psdl_problem_begin(psdl_check_run *c, psdl_problem *p, psdl_severity sev, const char *rule, long room, long other,
                       long attr, long road);
/* Fills p's path and message (printf fmt with ap) and passes p to the callback; a non-zero
 * answer stops the run. */
void psdl_problem_vsend(psdl_check_run *c, psdl_problem *p, const char *path, const char *fmt, va_list ap);

/* ---- PNG (psdl_png_io.c; the callbacks in psdl_png_io.h) */
/* Largest PNG chunk other than IDAT accepted (and libpng's chunk allocation limit). */
#define PSDL_PNG_CHUNK_LIMIT (1u << 20)
/* Walk the chunk list of the PNG d[0 .. size-1] (signature already checked) up to IEND:
 * every chunk must fit in the data (else truncated) and no chunk but IDAT may be over
 * PSDL_PNG_CHUNK_LIMIT (else bad_count), so libpng never allocates a chunk's claimed length
 * before the data is there. *idat_bytes (may be NULL) receives the total IDAT length. */
psdl_status psdl_png_prescan(const uint8_t *d, size_t size, size_t *idat_bytes, psdl_error *err);

/* ---- little-endian helpers */
static inline uint16_t psdl_get_u16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t psdl_get_u32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline float psdl_get_f32(const uint8_t *p) {
    uint32_t u = psdl_get_u32(p);
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline void psdl_put_u16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void psdl_put_u32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static inline void psdl_put_f32(uint8_t *p, float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    psdl_put_u32(p, u);
}

/* Standard subtype of a fixed-size attribute type (§2.2), 0 for variable types. */
static inline unsigned psdl_fixed_subtype(unsigned type) {
    switch (type) {
    case PSDL_ATTR_SLIVER:
    case PSDL_ATTR_CROSSWALK:
    case PSDL_ATTR_FACADE_BOUND: return 4;
    case PSDL_ATTR_FACADE: return 6;
    default: return 0;
    }
}

/* Payload length in words of a fixed-size type (after header and any count word). */
static inline unsigned psdl_fixed_len(unsigned type) { return type == PSDL_ATTR_FACADE ? 6u : 4u; }

/* Decode one room's attribute words into attrs (attrs may be NULL to count only).
 * Returns the number of attributes, or -1 with err filled (psdl_attr.c). base_offset is
 * the byte offset of words[0] in the file, for messages. */
long psdl_attrs_decode(uint16_t *words, uint32_t nwords, psdl_attr *attrs, long room,
                       size_t base_offset, psdl_error *err);

#endif
