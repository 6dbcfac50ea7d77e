/* psdl_companion.c -- what the companion codecs share: format detection, the error
 * formatter, the bounds-checked reader and the measuring writer (psdl_companion_internal.h). */
#include "psdl_companion_internal.h"

#include <stdio.h>

const char *psdl_companion_detect(const void *data, size_t size) {
    const char *d = data;
    if (size < 4) return NULL;
    if (!memcmp(d, "CAI1", 4)) return "bai";
    if (!memcmp(d, "PVS0", 4)) return "cpvs";
    if (!memcmp(d, "PTH1", 4)) return "pathset";
    if (!memcmp(d, "PKG3", 4) || !memcmp(d, "PKG2", 4)) return "pkg";
    if (!memcmp(d, "PSD0", 4) || !memcmp(d, "PSD1", 4)) return "psdl";
    return NULL;
}

psdl_status pc_fail(psdl_cerror *err, const char *fmt, psdl_status code, size_t offset, int has_offset,
                    long record, const char *detail, ...) {
    if (!err) return code;
    err->code = code;
    err->offset = offset;
    err->record = record;
    char buf[180];
    va_list ap;
    va_start(ap, detail);
    vsnprintf(buf, sizeof buf, detail, ap);
    va_end(ap);
    int n = snprintf(err->message, sizeof err->message, "%s: %s: %s", fmt, psdl_status_name(code), buf);
    size_t len = n < 0 ? 0 : (size_t)n;
    if (has_offset && len < sizeof err->message)
        len += (size_t)snprintf(err->message + len, sizeof err->message - len, " at offset 0x%zx", offset);
    if (record >= 0 && len < sizeof err->message)
        snprintf(err->message + len, sizeof err->message - len, " (record %ld)", record + 1);
    return code;
}

int pc_need(pc_in *in, size_t n, const char *what) {
    if (pc_left(in) >= n) return 0;
    pc_fail(in->err, in->fmt, PSDL_E_TRUNCATED, in->pos, 1, in->record, "need %zu bytes for %s, %zu left", n,
            what, pc_left(in));
    return -1;
}

int pc_count(pc_in *in, uint64_t count, size_t elem, const char *what) {
    uint64_t left = pc_left(in);
    if (elem == 0 || count <= left / elem) return 0;
    pc_fail(in->err, in->fmt, PSDL_E_BAD_COUNT, in->pos, 1, in->record,
            "%s: %llu x %zu bytes do not fit in the %llu bytes left", what, (unsigned long long)count, elem,
            (unsigned long long)left);
    return -1;
}

void pc_bytes(pc_out *o, const void *p, size_t n) {
    if (n == 0) return;
    if (o->cmp) {
        if (o->mismatch || o->cap - o->pos < n || memcmp(o->cmp + o->pos, p, n) != 0) o->mismatch = 1;
        else o->pos += n;
        return;
    }
    if (o->d) {
        if (o->cap - o->pos < n) {
            o->overflow = 1;
            return;
        }
        memcpy(o->d + o->pos, p, n);
    }
    o->pos += n;
}

void pc_zeros(pc_out *o, size_t n) {
    if (o->cmp) {
        for (size_t i = 0; i < n && !o->mismatch; i++) pc_put_u8(o, 0);
        return;
    }
    if (o->d) {
        if (o->cap - o->pos < n) {
            o->overflow = 1;
            return;
        }
        memset(o->d + o->pos, 0, n);
    }
    o->pos += n;
}

void pc_put_u8(pc_out *o, uint8_t v) { pc_bytes(o, &v, 1); }
void pc_put_u16(pc_out *o, uint16_t v) {
    uint8_t b[2];
    psdl_put_u16(b, v);
    pc_bytes(o, b, 2);
}
void pc_put_u32(pc_out *o, uint32_t v) {
    uint8_t b[4];
    psdl_put_u32(b, v);
    pc_bytes(o, b, 4);
}
void pc_put_f32(pc_out *o, float v) {
    uint8_t b[4];
    psdl_put_f32(b, v);
    pc_bytes(o, b, 4);
}
void pc_put_vec3(pc_out *o, psdl_vec3 v) {
    pc_put_f32(o, v.x);
    pc_put_f32(o, v.y);
    pc_put_f32(o, v.z);
}

psdl_status pc_encode(const void *doc, pc_write_fn write, const char *fmt, void *dst, size_t cap,
                      size_t *written, psdl_cerror *err) {
    pc_out m = {NULL, 0, 0, 0, NULL, 0};
    psdl_status st = write(doc, &m, err);
    if (st != PSDL_OK) return st;
    if (written) *written = m.pos;
    if (!dst) return PSDL_OK;
    if (cap < m.pos)
        return pc_fail(err, fmt, PSDL_E_INVALID, 0, 0, -1, "buffer of %zu bytes, %zu needed", cap, m.pos);
    pc_out o = {dst, cap, 0, 0, NULL, 0};
    st = write(doc, &o, err);
    if (st == PSDL_OK && (o.overflow || o.pos != m.pos))
        return pc_fail(err, fmt, PSDL_E_INVALID, 0, 0, -1, "document changed while encoding");
    return st;
}

void *pc_dup(psdl_arena *a, const void *p, size_t n) {
    void *q = psdl_arena_alloc(a, n);
    if (q) memcpy(q, p, n);
    return q;
}

void *psdl_companion_alloc(void *arena, size_t size) { return psdl_arena_alloc((psdl_arena *)arena, size); }
