/* psdl_companion_internal.h -- private helpers of the companion codecs (psdl_companion.h):
 * a bounds-checked reader, a measuring writer and the error formatter. Not installed. */
#ifndef PSDL_COMPANION_INTERNAL_H
#define PSDL_COMPANION_INTERNAL_H

#include "psdl_companion.h"
#include "psdl_internal.h"

/* Reader over d[0 .. size-1]. fmt names the format in messages; record is the 0-based
 * record being read (-1 outside any). */
typedef struct pc_in {
    const uint8_t *d;
    size_t size, pos;
    const char *fmt;
    long record;
    psdl_cerror *err;
} pc_in;

/* Writer: with d == NULL it only counts; otherwise it refuses to pass cap (the encoders
 * measure first, so that is a programming error reported as invalid). With cmp set (and d
 * NULL) it compares what would be written with cmp[0 .. cap-1] instead: mismatch is set on
 * the first difference or when the output runs past cap. */
typedef struct pc_out {
    uint8_t *d;
    size_t cap, pos;
    int overflow;
    const uint8_t *cmp;
    int mismatch;
} pc_out;

/* Fill err (may be NULL): "<fmt>: <status>: <detail>[ at offset 0x..][ (record k)]" with k
 * the 1-based record; returns code. has_offset = 0 leaves the offset out of the message. */
psdl_status pc_fail(psdl_cerror *err, const char *fmt, psdl_status code, size_t offset, int has_offset,
                    long record, const char *detail, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 7, 8)))
#endif
    ;

/* Bytes left in the reader. */
static inline size_t pc_left(const pc_in *in) { return in->size - in->pos; }

/* 0 when n bytes remain at the cursor; else fills truncated ("need n bytes for what, m
 * left") and returns -1. */
int pc_need(pc_in *in, size_t n, const char *what);

/* 0 when count elements of elem bytes each (at least) can still fit in the bytes left;
 * else bad_count ("what: count x elem bytes, m left") and -1. Call before allocating. */
int pc_count(pc_in *in, uint64_t count, size_t elem, const char *what);

/* Reads (the caller has checked pc_need). */
static inline uint8_t pc_u8(pc_in *in) { return in->d[in->pos++]; }
static inline uint16_t pc_u16(pc_in *in) {
    uint16_t v = psdl_get_u16(in->d + in->pos);
    in->pos += 2;
    return v;
}
static inline uint32_t pc_u32(pc_in *in) {
    uint32_t v = psdl_get_u32(in->d + in->pos);
    in->pos += 4;
    return v;
}
static inline float pc_f32(pc_in *in) {
    float v = psdl_get_f32(in->d + in->pos);
    in->pos += 4;
    return v;
}
static inline psdl_vec3 pc_vec3(pc_in *in) {
    psdl_vec3 v;
    v.x = pc_f32(in);
    v.y = pc_f32(in);
    v.z = pc_f32(in);
    return v;
}

/* Writes (counting when o->d is NULL). */
void pc_bytes(pc_out *o, const void *p, size_t n);
void pc_zeros(pc_out *o, size_t n);
void pc_put_u8(pc_out *o, uint8_t v);
void pc_put_u16(pc_out *o, uint16_t v);
void pc_put_u32(pc_out *o, uint32_t v);
void pc_put_f32(pc_out *o, float v);
void pc_put_vec3(pc_out *o, psdl_vec3 v);

/* Shared encode driver: runs write(doc, out) once to measure, then (dst != NULL) into dst.
 * The write callback returns PSDL_OK or a failure it filled in err. */
typedef psdl_status (*pc_write_fn)(const void *doc, pc_out *o, psdl_cerror *err);
psdl_status pc_encode(const void *doc, pc_write_fn write, const char *fmt, void *dst, size_t cap,
                      size_t *written, psdl_cerror *err);

/* A document's arena, created from alloc (NULL: malloc). */
static inline psdl_arena *pc_arena_new(const psdl_alloc *alloc) { return psdl_arena_new(alloc); }

/* Arena copy of n bytes (NULL when n == 0 or out of memory: callers check n first). */
void *pc_dup(psdl_arena *a, const void *p, size_t n);

#endif
