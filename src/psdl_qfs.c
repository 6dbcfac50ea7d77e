/* psdl_qfs.c -- QFS / RefPack compression as The Sims 2 stores it in packages
 * (nhtg-format.md §8): a 9-byte header (u32 record size, 0x10 0xFB, u24 big-endian
 * uncompressed size) and a stream of opcodes, each copying 0..3 (or 4..112) literal bytes
 * from the input, then a back-reference into the output:
 *
 *   0ooLLLpp oooooooo                      p literals; copy L+3 (3..10) from o+1 (1..1024)
 *   10LLLLLL ppoooooo oooooooo             p literals; copy L+4 (4..67) from o+1 (1..16384)
 *   110oLLpp oooooooo oooooooo LLLLLLLL    p literals; copy L+5 (5..1028) from o+1 (1..131072)
 *   111ppppp (0xE0..0xFB)                  4 (p+1) literals (4..112), no copy
 *   111111pp (0xFC..0xFF)                  p literals, end of stream
 *
 * Written from the format description; the compressor is a plain greedy LZ77 with one hash
 * candidate per position. */
#include "psdl_internal.h"
#include "psdl_nhtg.h"

#include <stdlib.h>

#define QFS_MAX_OFFSET 131072u
#define QFS_MAX_LEN 1028u
#define HASH_BITS 15u

/* The detail of a formatted message: without "psdl: <code>: " and " at offset 0x..". */
static const char *qfs_detail(char *msg) {
    char *p = strstr(msg, ": ");
    p = p ? strstr(p + 2, ": ") : NULL;
    char *at = strstr(msg, " at offset 0x");
    if (at) *at = 0;
    return p ? p + 2 : msg;
}

psdl_status psdl_qfs_size(const void *src, size_t n, size_t *usize, psdl_error *err) {
    const uint8_t *s = src;
    if (n < PSDL_QFS_HEADER_SIZE)
        return psdl_fail(err, PSDL_E_TRUNCATED, 0, 1, -1, -1, "need %u bytes for the QFS header, %zu remain",
                         (unsigned)PSDL_QFS_HEADER_SIZE, n);
    if (s[4] != 0x10 || s[5] != 0xFB)
        return psdl_fail(err, PSDL_E_BAD_MAGIC, 4, 1, -1, -1,
                         "QFS signature is %02X %02X, expected 10 FB (a compressed resource)", s[4], s[5]);
    *usize = ((size_t)s[6] << 16) | ((size_t)s[7] << 8) | s[8];
    return PSDL_OK;
}

psdl_status psdl_qfs_decompress(const void *src, size_t n, void *dst, size_t cap, size_t *written,
                                psdl_error *err) {
    return psdl_qfs_decompress_at(src, n, 0, dst, cap, written, err);
}

psdl_status psdl_qfs_decompress_at(const void *src, size_t n, size_t base, void *dst, size_t cap,
                                   size_t *written, psdl_error *err) {
    const uint8_t *s = src, *ip, *end = s + n;
    uint8_t *out = dst;
    size_t usize, o = 0;
    if (written) *written = 0;
    psdl_error herr;
    psdl_status st = psdl_qfs_size(src, n, &usize, &herr);
    if (st != PSDL_OK) return psdl_fail(err, st, base + herr.offset, 1, -1, -1, "%s", qfs_detail(herr.message));
    if (cap < usize)
        return psdl_fail(err, PSDL_E_BAD_COUNT, base + 6, 1, -1, -1,
                         "destination of %zu bytes is smaller than the uncompressed size %zu", cap, usize);
    ip = s + PSDL_QFS_HEADER_SIZE;
    for (;;) {
        if (ip == end) break; /* no stop opcode: the record ends at an opcode boundary */
        size_t op_off = (size_t)(ip - s);
        unsigned b0 = ip[0], lit, len = 0, dist = 0, oplen;
        int stop = 0;
        if (b0 < 0x80) {
            oplen = 2;
        } else if (b0 < 0xC0) {
            oplen = 3;
        } else if (b0 < 0xE0) {
            oplen = 4;
        } else {
            oplen = 1;
        }
        if ((size_t)(end - ip) < oplen)
            return psdl_fail(err, PSDL_E_TRUNCATED, base + op_off, 1, -1, -1,
                             "opcode 0x%02X needs %u bytes, %zu remain", b0, oplen, (size_t)(end - ip));
        if (b0 < 0x80) {
            lit = b0 & 3u;
            len = ((b0 >> 2) & 7u) + 3u;
            dist = ((b0 & 0x60u) << 3) + ip[1] + 1u;
        } else if (b0 < 0xC0) {
            lit = (unsigned)ip[1] >> 6;
            len = (b0 & 0x3Fu) + 4u;
            dist = (((unsigned)ip[1] & 0x3Fu) << 8) + ip[2] + 1u;
        } else if (b0 < 0xE0) {
            lit = b0 & 3u;
            len = ((b0 & 0x0Cu) << 6) + ip[3] + 5u;
            dist = ((b0 & 0x10u) << 12) + ((unsigned)ip[1] << 8) + ip[2] + 1u;
        } else if (b0 < 0xFC) {
            lit = ((b0 & 0x1Fu) + 1u) * 4u;
        } else {
            lit = b0 & 3u;
            stop = 1;
        }
        ip += oplen;
        if ((size_t)(end - ip) < lit)
            return psdl_fail(err, PSDL_E_TRUNCATED, base + op_off, 1, -1, -1,
                             "opcode 0x%02X announces %u literal bytes, %zu remain", b0, lit, (size_t)(end - ip));
        if (usize - o < lit)
            return psdl_fail(err, PSDL_E_BAD_COUNT, base + op_off, 1, -1, -1,
                             "literals run past the uncompressed size %zu", usize);
        memcpy(out + o, ip, lit);
        ip += lit;
        o += lit;
        if (stop) break;
        if (len) {
            if (dist > o)
                return psdl_fail(err, PSDL_E_BAD_INDEX, base + op_off, 1, -1, -1,
                                 "back-reference %u bytes back with only %zu bytes of output", dist, o);
            if (usize - o < len)
                return psdl_fail(err, PSDL_E_BAD_COUNT, base + op_off, 1, -1, -1,
                                 "copy of %u bytes runs past the uncompressed size %zu", len, usize);
            /* byte by byte: the source may overlap the bytes being written */
            for (unsigned k = 0; k < len; k++, o++) out[o] = out[o - dist];
        }
    }
    if (o != usize)
        return psdl_fail(err, PSDL_E_BAD_COUNT, base + (size_t)(ip - s), 1, -1, -1,
                         "stream ends after %zu of the %zu announced bytes", o, usize);
    if (written) *written = usize;
    return PSDL_OK;
}

size_t psdl_qfs_compress_bound(size_t n) {
    /* all literals: one 0xE0.. opcode per 112 bytes, the stop opcode, the header */
    return PSDL_QFS_HEADER_SIZE + n + n / 112u + 2u;
}

typedef struct qw {
    uint8_t *p;
} qw;

/* Emit literal runs of 4..112 bytes (multiples of 4) until fewer than 4 remain; returns the
 * number left (0..3) for the next opcode to carry. */
static size_t emit_runs(qw *w, const uint8_t *lit, size_t n) {
    while (n >= 4) {
        size_t k = n >= 112 ? 112 : (n & ~(size_t)3);
        *w->p++ = (uint8_t)(0xE0u | (unsigned)(k / 4 - 1));
        memcpy(w->p, lit, k);
        w->p += k;
        lit += k;
        n -= k;
    }
    return n;
}

static uint32_t hash3(const uint8_t *p) {
    uint32_t v = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16);
    return (v * 2654435761u) >> (32u - HASH_BITS);
}

/* Longest match length usable by some opcode for distance dist, or 0 when none is. */
static size_t usable(size_t len, size_t dist) {
    if (dist <= 1024 && len >= 3) return len;
    if (dist <= 16384 && len >= 4) return len;
    if (dist <= QFS_MAX_OFFSET && len >= 5) return len;
    return 0;
}

psdl_status psdl_qfs_compress(const psdl_options *opt, const void *src, size_t n, void *dst, size_t cap,
                              size_t *written, psdl_error *err) {
    const uint8_t *s = src;
    if (written) *written = 0;
    if (n > PSDL_QFS_MAX_SIZE)
        return psdl_fail(err, PSDL_E_BAD_COUNT, 0, 0, -1, -1, "%zu bytes is over the QFS limit of %u", n,
                         (unsigned)PSDL_QFS_MAX_SIZE);
    if (cap < psdl_qfs_compress_bound(n))
        return psdl_fail(err, PSDL_E_BAD_COUNT, 0, 0, -1, -1, "destination of %zu bytes is smaller than %zu", cap,
                         psdl_qfs_compress_bound(n));
    psdl_alloc al = {NULL, NULL};
    if (opt) al = opt->alloc;
    size_t tsize = sizeof(uint32_t) << HASH_BITS;
    uint32_t *table = al.realloc ? al.realloc(al.ud, NULL, 0, tsize) : malloc(tsize);
    if (!table) return psdl_fail(err, PSDL_E_NOMEM, 0, 0, -1, -1, "out of memory");
    /* positions are stored + 1 so that 0 means "none" */
    memset(table, 0, tsize);

    qw w = {(uint8_t *)dst + PSDL_QFS_HEADER_SIZE};
    size_t pos = 0, lit_start = 0;
    while (n >= 3 && pos + 3 <= n) {
        uint32_t h = hash3(s + pos);
        size_t cand = table[h];
        table[h] = (uint32_t)(pos + 1);
        size_t len = 0, dist = 0;
        if (cand) {
            cand -= 1;
            dist = pos - cand;
            if (dist <= QFS_MAX_OFFSET && memcmp(s + cand, s + pos, 3) == 0) {
                size_t max = n - pos < QFS_MAX_LEN ? n - pos : QFS_MAX_LEN;
                len = 3;
                while (len < max && s[cand + len] == s[pos + len]) len++;
                len = usable(len, dist);
            }
        }
        if (!len) {
            pos++;
            continue;
        }
        size_t lit = emit_runs(&w, s + lit_start, pos - lit_start);
        const uint8_t *lp = s + pos - lit;
        unsigned d = (unsigned)(dist - 1);
        if (dist <= 1024 && len <= 10) {
            *w.p++ = (uint8_t)(((d >> 3) & 0x60u) | ((unsigned)(len - 3) << 2) | (unsigned)lit);
            *w.p++ = (uint8_t)(d & 0xFFu);
        } else if (dist <= 16384 && len >= 4 && len <= 67) {
            *w.p++ = (uint8_t)(0x80u | (unsigned)(len - 4));
            *w.p++ = (uint8_t)(((unsigned)lit << 6) | (d >> 8));
            *w.p++ = (uint8_t)(d & 0xFFu);
        } else {
            /* dist > 16384, or len > 67: usable() guarantees len >= 5 here */
            unsigned l = (unsigned)(len - 5);
            *w.p++ = (uint8_t)(0xC0u | ((d >> 16) << 4) | ((l >> 8) << 2) | (unsigned)lit);
            *w.p++ = (uint8_t)((d >> 8) & 0xFFu);
            *w.p++ = (uint8_t)(d & 0xFFu);
            *w.p++ = (uint8_t)(l & 0xFFu);
        }
        memcpy(w.p, lp, lit);
        w.p += lit;
        /* index the positions inside the match so later data can refer to them */
        for (size_t k = pos + 1; k < pos + len && k + 3 <= n; k++) table[hash3(s + k)] = (uint32_t)(k + 1);
        pos += len;
        lit_start = pos;
    }
    size_t lit = emit_runs(&w, s + lit_start, n - lit_start);
    *w.p++ = (uint8_t)(0xFCu | (unsigned)lit);
    memcpy(w.p, s + n - lit, lit);
    w.p += lit;

    if (al.realloc)
        al.realloc(al.ud, table, tsize, 0);
    else
        free(table);

    uint8_t *d0 = dst;
    size_t total = (size_t)(w.p - d0);
    psdl_put_u32(d0, (uint32_t)total);
    d0[4] = 0x10;
    d0[5] = 0xFB;
    d0[6] = (uint8_t)(n >> 16);
    d0[7] = (uint8_t)(n >> 8);
    d0[8] = (uint8_t)n;
    if (written) *written = total;
    return PSDL_OK;
}
