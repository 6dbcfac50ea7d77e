/* psdl_cpvs.c -- potentially visible sets city/<map>.cpvs ("PVS0", docs/companion-formats.md
 * §3): header n = R + 1, then n - 1 u32 offsets (the starts of the rows of rooms 1 .. R-1
 * and the end offset, relative to the first byte after the table: the game's reading, not
 * the wiki's n - 2, CF §3.2), then the RLE rows. Lossless: rows keep their stored bytes. */
#include "psdl_companion_internal.h"

#define FMT "cpvs"

int psdl_cpvs_rle_decode(const uint8_t *rle, size_t len, uint8_t *dst, size_t cap, size_t *outlen) {
    size_t i = 0, n = 0;
    while (i < len) {
        uint8_t c = rle[i];
        if (c & 0x80) {
            size_t run = (size_t)(c & 0x7F) + 1;
            if (len - i - 1 < run) {
                *outlen = i;
                return -1;
            }
            if (dst && n < cap) {
                if (cap - n < run) run = cap - n; /* dst too small: write what fits */
                memcpy(dst + n, rle + i + 1, run);
            }
            n += (size_t)(c & 0x7F) + 1;
            i += (size_t)(c & 0x7F) + 2;
        } else {
            if (i + 1 >= len) {
                *outlen = i;
                return -1;
            }
            if (dst && c && n < cap) {
                size_t run = c;
                if (cap - n < run) run = cap - n;
                memset(dst + n, rle[i + 1], run);
            }
            n += c;
            i += 2;
        }
    }
    *outlen = n;
    return 0;
}

/* Writes the literal bytes src[lit .. end - 1] at dst + o (dst may be NULL: only counted) in
 * pieces of at most 128, each after its 0x80 | (count - 1) byte; returns the new offset. */
static size_t put_literals(const uint8_t *src, size_t lit, size_t end, uint8_t *dst, size_t o) {
    while (lit < end) {
        size_t k = end - lit > 128 ? 128 : end - lit;
        if (dst) {
            dst[o] = (uint8_t)(0x80 | (k - 1));
            memcpy(dst + o + 1, src + lit, k);
        }
        o += k + 1;
        lit += k;
    }
    return o;
}

size_t psdl_cpvs_rle_encode(const uint8_t *src, size_t len, uint8_t *dst) {
    size_t i = 0, o = 0, lit = 0; /* lit: start of the pending literal run */
    while (i < len) {
        size_t run = 1;
        while (i + run < len && run < 127 && src[i + run] == src[i]) run++;
        if (run >= 3) {
            o = put_literals(src, lit, i, dst, o);
            if (dst) {
                dst[o] = (uint8_t)run;
                dst[o + 1] = src[i];
            }
            o += 2;
            i += run;
            lit = i;
        } else {
            i += run;
        }
    }
    return put_literals(src, lit, len, dst, o);
}

psdl_cpvs *psdl_cpvs_new(const psdl_alloc *alloc) {
    psdl_arena *a = pc_arena_new(alloc);
    if (!a) return NULL;
    psdl_cpvs *c = psdl_arena_alloc(a, sizeof *c);
    if (!c) {
        psdl_arena_free(a);
        return NULL;
    }
    c->arena_ = a;
    c->n = 2;
    return c;
}

void psdl_cpvs_free(psdl_cpvs *cpvs) {
    if (cpvs) psdl_arena_free(cpvs->arena_);
}

psdl_status psdl_cpvs_decode(const psdl_alloc *alloc, const void *data, size_t size, psdl_cpvs **out,
                             psdl_cerror *err) {
    psdl_cerror local;
    if (!err) err = &local;
    *out = NULL;
    pc_in in = {data, size, 0, FMT, -1, err};
    if (size < 4 || memcmp(data, "PVS0", 4) != 0)
        return pc_fail(err, FMT, PSDL_E_BAD_MAGIC, 0, 1, -1, "not a PVS0 file");
    in.pos = 4;
    if (pc_need(&in, 4, "count")) return err->code;
    uint32_t n = pc_u32(&in);
    if (n < 2) return pc_fail(err, FMT, PSDL_E_BAD_COUNT, 4, 1, -1, "count %u: at least 2 (R + 1, R >= 1)", n);
    if (pc_count(&in, (uint64_t)n - 1, 4, "offset table")) return err->code;
    size_t table = in.pos;
    size_t base = table + 4 * (size_t)(n - 1);
    size_t dlen = size - base;
    uint32_t nrows = n - 2;
    uint32_t prev = 0;
    for (uint32_t i = 0; i + 1 < n; i++) {
        uint32_t off = psdl_get_u32(in.d + table + 4 * (size_t)i);
        long rec = i < nrows ? (long)i : -1;
        if (i == 0 && off != 0)
            return pc_fail(err, FMT, PSDL_E_BAD_INDEX, table, 1, rec, "first offset %u, must be 0", off);
        if (off < prev)
            return pc_fail(err, FMT, PSDL_E_BAD_INDEX, table + 4 * (size_t)i, 1, rec,
                           "offset %u is below the previous %u", off, prev);
        if (off > dlen)
            return pc_fail(err, FMT, PSDL_E_BAD_INDEX, table + 4 * (size_t)i, 1, rec,
                           "offset %u beyond the %zu data bytes", off, dlen);
        prev = off;
    }
    psdl_cpvs *c = psdl_cpvs_new(alloc);
    if (!c) return pc_fail(err, FMT, PSDL_E_NOMEM, 0, 0, -1, "out of memory");
    psdl_arena *a = c->arena_;
    c->n = n;
    if (nrows && !(c->rows = psdl_arena_alloc(a, nrows * sizeof *c->rows))) goto oom;
    for (uint32_t i = 0; i < nrows; i++) {
        uint32_t s = psdl_get_u32(in.d + table + 4 * (size_t)i);
        uint32_t e = psdl_get_u32(in.d + table + 4 * (size_t)i + 4);
        size_t bad;
        if (psdl_cpvs_rle_decode(in.d + base + s, e - s, NULL, 0, &bad) != 0) {
            pc_fail(err, FMT, PSDL_E_BAD_COUNT, base + s + bad, 1, (long)i,
                    "row of room %u: run cut off by the end of the row", i + 1);
            goto fail;
        }
        c->rows[i].len = e - s;
        if (e > s && !(c->rows[i].rle = pc_dup(a, in.d + base + s, e - s))) goto oom;
    }
    if (dlen > prev) {
        c->ntrailing = dlen - prev;
        if (!(c->trailing = pc_dup(a, in.d + base + prev, c->ntrailing))) goto oom;
    }
    *out = c;
    return PSDL_OK;
oom:
    pc_fail(err, FMT, PSDL_E_NOMEM, 0, 0, -1, "out of memory");
fail:
    psdl_cpvs_free(c);
    return err->code;
}

static psdl_status write_cpvs(const void *doc, pc_out *o, psdl_cerror *err) {
    const psdl_cpvs *c = doc;
    if (c->n < 2) return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, -1, "count %u: at least 2", c->n);
    uint32_t nrows = c->n - 2;
    if (nrows && !c->rows) return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, -1, "rows missing");
    pc_bytes(o, "PVS0", 4);
    pc_put_u32(o, c->n);
    uint64_t off = 0;
    for (uint32_t i = 0; i <= nrows; i++) {
        if (off > UINT32_MAX) return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, (long)i, "data beyond 4 GiB");
        pc_put_u32(o, (uint32_t)off);
        if (i < nrows) {
            if (c->rows[i].len && !c->rows[i].rle)
                return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, (long)i, "row bytes missing");
            off += c->rows[i].len;
        }
    }
    for (uint32_t i = 0; i < nrows; i++) pc_bytes(o, c->rows[i].rle, c->rows[i].len);
    pc_bytes(o, c->trailing, c->ntrailing);
    return PSDL_OK;
}

psdl_status psdl_cpvs_encode(const psdl_cpvs *cpvs, void *dst, size_t cap, size_t *written, psdl_cerror *err) {
    return pc_encode(cpvs, write_cpvs, FMT, dst, cap, written, err);
}
