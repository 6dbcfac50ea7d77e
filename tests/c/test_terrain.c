/* test_terrain.c -- plain-C tests of the terrain core (psdl_nhtg.h): NHTG, QFS, DBPF, PNG
 * and PGM rasters. No Lua.
 *
 *   psdl_ctest_terrain <fixtures-dir>      (reads the files in <fixtures-dir>/terrain)
 *
 * Every CHECK counts once; the last line printed is "c: N passed, N failed" and the exit
 * status is non-zero when a check failed. Inputs cut short are copied into buffers of
 * exactly their size, so under AddressSanitizer any read past the end is reported.
 *
 * Sections: a) NHTG fixtures, exact format values, sizes; b) NHTG errors, each with its
 * code and byte offset, and a truncation sweep; c) NHTG built in memory (256 grid, encode
 * refusals); d) QFS: hand-made streams per opcode, errors, compression round trips;
 * e) DBPF: fixture packages, extraction, replace-and-rebuild, errors and a truncation
 * sweep; f) heightmap rasters: PNG and PGM fixtures, round trips, errors, truncation;
 * g) heightfields (psdl_heightfield.h): reading every sample type, clamped and bilinear
 * sampling, statistics, quantising, float conversion, NHTG encoding from a field,
 * rasterising and filling; interlaced PNGs decoded in place. */
#define _POSIX_C_SOURCE 200809L
#include "psdl_heightfield.h"
#include "psdl_nhtg.h"
#include "test_util.h"

#include <math.h>
#include <png.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ==================================================================== check framework */

#include "check.h"

/* st is evaluated once (it is often the call under test) */
static int check_status_impl(psdl_status st, psdl_status want, const psdl_error *err, const char *file, int line,
                             const char *expr) {
    return check_impl(st == want, file, line, expr, "got %s, want %s: %s", psdl_status_name(st),
                      psdl_status_name(want), st == PSDL_OK ? "" : err->message);
}
#define CHECK_STATUS(st, want, err) check_status_impl((st), (want), &(err), __FILE__, __LINE__, #st " == " #want)
#define CHECK_MSG(err, sub)                                                                                    \
    check_impl(strstr((err).message, (sub)) != NULL, __FILE__, __LINE__, "message contains " #sub, "\"%s\"",  \
               (err).message)

/* ==================================================================== helpers */


static char g_dir[1024];

static unsigned char *fixture(const char *name, size_t *size) {
    char path[1200];
    snprintf(path, sizeof path, "%s/terrain/%s", g_dir, name);
    unsigned char *b = read_file(path, size);
    CHECKF(b != NULL, "cannot read %s", path);
    return b;
}

static void put32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static uint32_t get32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void putf(unsigned char *p, float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    put32(p, u);
}

static unsigned char *dup_bytes(const void *p, size_t n) {
    unsigned char *b = malloc(n ? n : 1);
    if (!b) abort();
    if (n) memcpy(b, p, n);
    return b;
}

/* A small deterministic generator. */
static uint32_t g_rng = 12345u;
static uint32_t rnd(void) {
    g_rng = g_rng * 1103515245u + 12345u;
    return g_rng >> 8;
}

/* ==================================================================== a) NHTG fixtures */

static void test_nhtg_fixture(const char *name, uint32_t w, uint32_t h, const char *type, int ramp) {
    set_ctx("nhtg fixture %s", name);
    size_t size = 0;
    unsigned char *data = fixture(name, &size);
    if (!data) return;
    psdl_nhtg *t = NULL;
    psdl_error err;
    psdl_status st = psdl_nhtg_decode(NULL, data, size, &t, &err);
    CHECK_STATUS(st, PSDL_OK, err);
    if (st != PSDL_OK) {
        free(data);
        return;
    }
    CHECK_EQ(t->version, 4);
    CHECK_EQ(t->width, w);
    CHECK_EQ(t->height, h);
    CHECK_EQ(t->rows, w + 1);
    CHECK_EQ(t->cols, h + 1);
    CHECK(t->water_level == 312.5f);
    CHECK_EQ(t->type_len, strlen(type));
    CHECK(strcmp(t->terrain_type, type) == 0);
    CHECK_EQ(size, psdl_nhtg_size(w, h, strlen(type)));
    CHECK_EQ(psdl_nhtg_encoded_size(t), size);
    /* orientation: the slow index i (first dimension, W + 1) is the row */
    int bad = 0;
    for (uint32_t i = 0; i < t->rows; i++)
        for (uint32_t j = 0; j < t->cols; j++) {
            float want = ramp ? 300.0f + 10.0f * (float)i + (float)j : 400.0f + (float)i;
            if (t->heights[i * t->cols + j] != want) bad++;
            unsigned want_extra = ramp ? (i * 7 + j) % 5 : 0;
            if (t->extra[i * t->cols + j] != want_extra) bad++;
        }
    CHECKF(bad == 0, "%d heights or extra bytes differ from the fixture's formula", bad);
    unsigned char *out = malloc(size);
    size_t written = 0;
    st = psdl_nhtg_encode(t, out, size, &written, &err);
    CHECK_STATUS(st, PSDL_OK, err);
    CHECK_EQ(written, size);
    CHECK(memcmp(out, data, size) == 0);
    free(out);
    psdl_nhtg_free(t);
    free(data);
}

static void test_nhtg_format_values(void) {
    set_ctx("nhtg format values");
    /* sizes of a 128 hood per terrain type (nhtg-format.md §2) */
    CHECK_EQ(psdl_nhtg_size(128, 128, 9), 83294);
    CHECK_EQ(psdl_nhtg_size(128, 128, 8), 83293);
    CHECK_EQ(psdl_nhtg_size(128, 128, 6), 83291);
    CHECK_EQ(psdl_nhtg_size(128, 128, 4), 83289);
    CHECK_EQ(psdl_nhtg_size(256, 256, 9), 52 + 9 + 4 * 257 * 257 + 28 + 257 * 257);
    /* header: 52 + L bytes before the heights; water 312.5 is 00 40 9C 43 */
    static const char *types[] = {"Temperate", "Desert", "Dirt", "Concrete"};
    for (int k = 0; k < 4; k++) {
        size_t L = strlen(types[k]);
        psdl_nhtg *t = psdl_nhtg_new(NULL, 128, 128, types[k], L, 330.0f);
        CHECK(t != NULL);
        if (!t) continue;
        size_t n = psdl_nhtg_encoded_size(t);
        unsigned char *b = malloc(n);
        psdl_error err;
        CHECK_EQ(psdl_nhtg_encode(t, b, n, NULL, &err), PSDL_OK);
        static const unsigned char water[4] = {0x00, 0x40, 0x9C, 0x43};
        CHECK(memcmp(b + 16, water, 4) == 0);
        CHECK_EQ(get32(b + 20), L);
        CHECK(memcmp(b + 24, types[k], L) == 0);
        CHECK_EQ(get32(b + 24 + L), PSDL_C2DARRAY_ID);
        CHECK(memcmp(b + 36 + L, "c2DArray", 8) == 0);
        CHECK_EQ(get32(b + 44 + L), 129);
        CHECK_EQ(get32(b + 48 + L), 129);
        float f;
        uint32_t u = get32(b + 52 + L);
        memcpy(&f, &u, 4);
        CHECK(f == 330.0f);
        /* second array all zero */
        int nz = 0;
        for (size_t i = n - 129 * 129; i < n; i++) nz += b[i] != 0;
        CHECK_EQ(nz, 0);
        psdl_nhtg_free(t);
        free(b);
    }
    /* the wiki's typo bytes 00 4C 9C 43 read as 312.59375 exactly */
    psdl_nhtg *t = psdl_nhtg_new(NULL, 2, 2, "Dirt", 4, 320.0f);
    size_t n = psdl_nhtg_encoded_size(t);
    unsigned char *b = malloc(n);
    psdl_nhtg_encode(t, b, n, NULL, NULL);
    b[17] = 0x4C;
    psdl_nhtg *u = NULL;
    psdl_error err;
    CHECK_EQ(psdl_nhtg_decode(NULL, b, n, &u, &err), PSDL_OK);
    if (u) CHECK(u->water_level == 312.59375f);
    psdl_nhtg_free(u);
    psdl_nhtg_free(t);
    free(b);
}

/* ==================================================================== b) NHTG errors */

/* A fresh copy of a small valid NHTG (3 x 2 tiles, "Dirt"). */
static unsigned char *small_nhtg(size_t *n) {
    psdl_nhtg *t = psdl_nhtg_new(NULL, 3, 2, "Dirt", 4, 333.5f);
    for (uint32_t k = 0; k < t->rows * t->cols; k++) t->heights[k] = 300.0f + (float)k;
    *n = psdl_nhtg_encoded_size(t);
    unsigned char *b = malloc(*n);
    psdl_nhtg_encode(t, b, *n, NULL, NULL);
    psdl_nhtg_free(t);
    return b;
}

static void expect_nhtg_error(const unsigned char *b, size_t n, psdl_status want, size_t offset, const char *sub) {
    psdl_nhtg *t = NULL;
    psdl_error err;
    unsigned char *copy = dup_bytes(b, n);
    psdl_status st = psdl_nhtg_decode(NULL, copy, n, &t, &err);
    CHECK_STATUS(st, want, err);
    CHECK(t == NULL);
    CHECKF(err.offset == offset, "offset 0x%zx, want 0x%zx: %s", err.offset, offset, err.message);
    CHECK(strncmp(err.message, "psdl: ", 6) == 0);
    char at[40];
    snprintf(at, sizeof at, "at offset 0x%zx", offset);
    CHECK_MSG(err, at);
    if (sub) CHECK_MSG(err, sub);
    psdl_nhtg_free(t);
    free(copy);
}

static void test_nhtg_errors(void) {
    set_ctx("nhtg errors");
    size_t n;
    unsigned char *b = small_nhtg(&n);
    const size_t L = 4, rows = 4, cols = 3, P = rows * cols;
    CHECK_EQ(n, 52 + L + 4 * P + 28 + P);
    unsigned char *m = malloc(n + 1);

#define MUTATE(stmt)          \
    do {                      \
        memcpy(m, b, n);      \
        stmt;                 \
    } while (0)

    MUTATE(put32(m, 0x6B943B43));
    expect_nhtg_error(m, n, PSDL_E_BAD_MAGIC, 0, "is not NHTG");
    MUTATE(put32(m + 4, 5));
    expect_nhtg_error(m, n, PSDL_E_BAD_MAGIC, 4, "unknown NHTG version 5");
    MUTATE(put32(m + 8, 0));
    expect_nhtg_error(m, n, PSDL_E_BAD_COUNT, 8, "each side");
    MUTATE(put32(m + 12, PSDL_NHTG_MAX_TILES + 1));
    expect_nhtg_error(m, n, PSDL_E_BAD_COUNT, 12, "each side");
    MUTATE(putf(m + 16, NAN));
    expect_nhtg_error(m, n, PSDL_E_INVALID, 16, "water level");
    MUTATE(putf(m + 16, INFINITY));
    expect_nhtg_error(m, n, PSDL_E_INVALID, 16, "water level");
    MUTATE(put32(m + 20, 0xFFFFFFF0u));
    expect_nhtg_error(m, n, PSDL_E_BAD_COUNT, 20, "terrain-type length");
    MUTATE(put32(m + 24 + L, 0xABCB5DA4u));
    expect_nhtg_error(m, n, PSDL_E_BAD_MAGIC, 24 + L, "height array: block id");
    MUTATE(put32(m + 28 + L, 2));
    expect_nhtg_error(m, n, PSDL_E_BAD_MAGIC, 28 + L, "unknown c2DArray version 2");
    MUTATE(m[36 + L] = 'C');
    expect_nhtg_error(m, n, PSDL_E_BAD_STRING, 32 + L, "c2DArray");
    MUTATE(put32(m + 32 + L, 9));
    expect_nhtg_error(m, n, PSDL_E_BAD_STRING, 32 + L, "length field 9");
    /* dimensions that do not match W + 1 / H + 1 (a transposed 3 x 4 array) */
    MUTATE(put32(m + 44 + L, 3));
    expect_nhtg_error(m, n, PSDL_E_BAD_COUNT, 44 + L, "first dimension 3 does not match grid width W + 1 = 4");
    MUTATE(put32(m + 48 + L, 4));
    expect_nhtg_error(m, n, PSDL_E_BAD_COUNT, 48 + L, "second dimension 4 does not match grid height H + 1 = 3");
    size_t second = 52 + L + 4 * P;
    MUTATE(put32(m + second + 20, 5));
    expect_nhtg_error(m, n, PSDL_E_BAD_COUNT, second + 20, "second array: first dimension 5");
    MUTATE(put32(m + second, 0));
    expect_nhtg_error(m, n, PSDL_E_BAD_MAGIC, second, "second array: block id");
    /* non-finite heights, at their exact byte offsets */
    MUTATE(putf(m + 52 + L + 4 * 7, NAN));
    expect_nhtg_error(m, n, PSDL_E_INVALID, 52 + L + 28, "row 2, column 1");
    MUTATE(putf(m + 52 + L, -INFINITY));
    expect_nhtg_error(m, n, PSDL_E_INVALID, 52 + L, "row 0, column 0");
    /* trailing bytes */
    MUTATE(m[n] = 0);
    expect_nhtg_error(m, n + 1, PSDL_E_TRAILING, n, "1 bytes after");
    /* truncation at every length: an error within the prefix, never a crash */
    int bad = 0;
    for (size_t k = 0; k < n; k++) {
        unsigned char *c = dup_bytes(b, k);
        psdl_nhtg *t = NULL;
        psdl_error err;
        psdl_status st = psdl_nhtg_decode(NULL, c, k, &t, &err);
        if (st == PSDL_OK || t != NULL || err.offset > k || strncmp(err.message, "psdl: ", 6) != 0) bad++;
        if (st != PSDL_E_TRUNCATED) bad++;
        free(c);
    }
    CHECKF(bad == 0, "%d prefixes misbehaved", bad);
    /* a huge grid in a tiny file allocates nothing */
    count_alloc ca;
    count_alloc_reset(&ca);
    psdl_options opt = count_options(&ca);
    MUTATE((put32(m + 8, PSDL_NHTG_MAX_TILES), put32(m + 12, PSDL_NHTG_MAX_TILES),
            put32(m + 44 + L, PSDL_NHTG_MAX_TILES + 1), put32(m + 48 + L, PSDL_NHTG_MAX_TILES + 1)));
    psdl_nhtg *t = NULL;
    psdl_error err;
    CHECK_EQ(psdl_nhtg_decode(&opt, m, n, &t, &err), PSDL_E_TRUNCATED);
    CHECK_EQ(ca.calls, 0);
    CHECK_EQ(ca.live, 0);
    /* a good decode: no single allocation larger than the input justifies */
    count_alloc_reset(&ca);
    t = NULL;
    CHECK_EQ(psdl_nhtg_decode(&opt, b, n, &t, &err), PSDL_OK);
    CHECK(ca.max_single <= alloc_bound(n));
    psdl_nhtg_free(t);
    CHECK_EQ(ca.live, 0);
    /* allocation failure at each allocation of a good decode */
    for (long f = 0; f < 6; f++) {
        count_alloc_reset(&ca);
        ca.fail_at = f;
        t = NULL;
        psdl_status st = psdl_nhtg_decode(&opt, b, n, &t, &err);
        CHECK(st == PSDL_OK || st == PSDL_E_NOMEM);
        psdl_nhtg_free(t);
        CHECK_EQ(ca.live, 0);
    }
#undef MUTATE
    free(m);
    free(b);
}

/* ==================================================================== c) NHTG in memory */

static void test_nhtg_memory(void) {
    set_ctx("nhtg in memory");
    /* a 256 grid, written and read back */
    psdl_nhtg *t = psdl_nhtg_new(NULL, 256, 256, "Concrete", 8, 312.5f);
    CHECK(t != NULL);
    if (!t) return;
    for (uint32_t i = 0; i < t->rows; i++)
        for (uint32_t j = 0; j < t->cols; j++) t->heights[i * t->cols + j] = 320.0f + 0.5f * (float)i;
    t->extra[5] = 7;
    size_t n = psdl_nhtg_encoded_size(t);
    CHECK_EQ(n, 52 + 8 + 4 * 257 * 257 + 28 + 257 * 257);
    unsigned char *b = malloc(n);
    psdl_error err;
    CHECK_EQ(psdl_nhtg_encode(t, b, n, NULL, &err), PSDL_OK);
    psdl_nhtg *u = NULL;
    CHECK_EQ(psdl_nhtg_decode(NULL, b, n, &u, &err), PSDL_OK);
    if (u) {
        CHECK_EQ(u->width, 256);
        CHECK(u->heights[256 * 257 + 3] == 320.0f + 128.0f);
        CHECK(u->heights[3] == 320.0f);
        CHECK_EQ(u->extra[5], 7);
        unsigned char *b2 = malloc(n);
        CHECK_EQ(psdl_nhtg_encode(u, b2, n, NULL, &err), PSDL_OK);
        CHECK(memcmp(b, b2, n) == 0);
        free(b2);
    }
    /* NULL extra writes zeros */
    t->extra = NULL;
    CHECK_EQ(psdl_nhtg_encode(t, b, n, NULL, &err), PSDL_OK);
    CHECK_EQ(b[n - 257 * 257 + 5], 0);
    /* refusals */
    t->heights[300] = NAN;
    CHECK_STATUS(psdl_nhtg_encode(t, b, n, NULL, &err), PSDL_E_INVALID, err);
    CHECK_MSG(err, "row 1, column 43");
    char off[48];
    snprintf(off, sizeof off, "byte offset 0x%zx", (size_t)(52 + 8 + 4 * 300));
    CHECK_MSG(err, off);
    t->heights[300] = 1.0f;
    t->version = 5;
    CHECK_STATUS(psdl_nhtg_encode(t, b, n, NULL, &err), PSDL_E_INVALID, err);
    CHECK_MSG(err, "version 5 cannot be written");
    t->version = 4;
    t->rows = 256;
    CHECK_STATUS(psdl_nhtg_encode(t, b, n, NULL, &err), PSDL_E_INVALID, err);
    t->rows = 257;
    t->water_level = INFINITY;
    CHECK_STATUS(psdl_nhtg_encode(t, b, n, NULL, &err), PSDL_E_INVALID, err);
    t->water_level = 312.5f;
    CHECK_STATUS(psdl_nhtg_encode(t, b, n - 1, NULL, &err), PSDL_E_INVALID, err);
    CHECK(psdl_nhtg_new(NULL, 0, 128, "Dirt", 4, 1.0f) == NULL);
    CHECK(psdl_nhtg_new(NULL, 128, 128, "Dirt", 4, NAN) == NULL);
    psdl_nhtg_free(u);
    psdl_nhtg_free(t);
    free(b);
}

/* ==================================================================== d) QFS */

/* Decompress a record made of the QFS header and body; compare with want. */
static void expect_qfs(const unsigned char *body, size_t nbody, const char *want, size_t nwant) {
    unsigned char rec[512];
    put32(rec, (uint32_t)(9 + nbody));
    rec[4] = 0x10;
    rec[5] = 0xFB;
    rec[6] = (unsigned char)(nwant >> 16);
    rec[7] = (unsigned char)(nwant >> 8);
    rec[8] = (unsigned char)nwant;
    memcpy(rec + 9, body, nbody);
    unsigned char *copy = dup_bytes(rec, 9 + nbody);
    char out[512];
    size_t written = 0, usize = 0;
    psdl_error err;
    CHECK_EQ(psdl_qfs_size(copy, 9 + nbody, &usize, NULL), PSDL_OK);
    CHECK_EQ(usize, nwant);
    psdl_status st = psdl_qfs_decompress(copy, 9 + nbody, out, sizeof out, &written, &err);
    CHECK_STATUS(st, PSDL_OK, err);
    CHECK_EQ(written, nwant);
    CHECK(st == PSDL_OK && memcmp(out, want, nwant) == 0);
    free(copy);
}

static psdl_status qfs_try(const unsigned char *body, size_t nbody, size_t usize, psdl_error *err) {
    unsigned char rec[512];
    put32(rec, (uint32_t)(9 + nbody));
    rec[4] = 0x10;
    rec[5] = 0xFB;
    rec[6] = (unsigned char)(usize >> 16);
    rec[7] = (unsigned char)(usize >> 8);
    rec[8] = (unsigned char)usize;
    memcpy(rec + 9, body, nbody);
    unsigned char *copy = dup_bytes(rec, 9 + nbody);
    char out[512];
    psdl_status st = psdl_qfs_decompress(copy, 9 + nbody, out, sizeof out, NULL, err);
    free(copy);
    return st;
}

static void test_qfs_streams(void) {
    set_ctx("qfs hand-made streams");
    /* 0xE0.. literal run of 4, then stop with 2 literals */
    static const unsigned char s1[] = {0xE0, 'a', 'b', 'c', 'd', 0xFE, 'e', 'f'};
    expect_qfs(s1, sizeof s1, "abcdef", 6);
    /* 2-byte op: 1 literal, copy 3 from 1 back (overlapping): "x" + "xxx" */
    static const unsigned char s2[] = {0x01, 0x00, 'x', 0xFC};
    expect_qfs(s2, sizeof s2, "xxxx", 4);
    /* 2-byte op, longest form: 3 literals, copy 10 from 3 back */
    static const unsigned char s3[] = {(7 << 2) | 3, 0x02, 'a', 'b', 'c', 0xFC};
    expect_qfs(s3, sizeof s3, "abcabcabcabca", 13);
    /* 3-byte op: 0 literals after a run; copy 4 + 6 = 10 from 8 back */
    static const unsigned char s4[] = {0xE1, '0', '1', '2', '3', '4', '5', '6', '7', 0x86, 0x00, 0x07, 0xFC};
    expect_qfs(s4, sizeof s4, "012345670123456701", 18);
    /* 3-byte op with literals in b1's top bits: 2 literals, copy 4 from 2 back */
    static const unsigned char s5[] = {0x80, 0x80, 0x01, 'p', 'q', 0xFC};
    expect_qfs(s5, sizeof s5, "pqpqpq", 6);
    /* 4-byte op: 1 literal, copy 5 + 0x100 + 0x10 = 277 from 1 back (length high bits) */
    static const unsigned char s6[] = {0xC0 | (1 << 2) | 1, 0x00, 0x00, 0x10, 'z', 0xFC};
    char want6[278];
    memset(want6, 'z', sizeof want6);
    expect_qfs(s6, sizeof s6, want6, 278);
    /* stop opcode with 3 literals only */
    static const unsigned char s7[] = {0xFF, 'a', 'b', 'c'};
    expect_qfs(s7, sizeof s7, "abc", 3);
    /* no stop opcode: the record ends at an opcode boundary */
    static const unsigned char s8[] = {0xE0, 'w', 'x', 'y', 'z'};
    expect_qfs(s8, sizeof s8, "wxyz", 4);
    /* bytes after the stop opcode are ignored */
    static const unsigned char s9[] = {0xFD, 'k', 0x00, 0x00};
    expect_qfs(s9, sizeof s9, "k", 1);

    set_ctx("qfs errors");
    psdl_error err;
    /* back-reference before the start of the output, at the opcode's offset (9) */
    static const unsigned char e1[] = {0x04, 0x00, 0xFC};
    CHECK_STATUS(qfs_try(e1, sizeof e1, 4, &err), PSDL_E_BAD_INDEX, err);
    CHECK_EQ(err.offset, 9);
    /* a copy past the announced size */
    CHECK_STATUS(qfs_try(s2, sizeof s2, 3, &err), PSDL_E_BAD_COUNT, err);
    /* literals past the announced size */
    CHECK_STATUS(qfs_try(s1, sizeof s1, 5, &err), PSDL_E_BAD_COUNT, err);
    /* output shorter than announced */
    CHECK_STATUS(qfs_try(s1, sizeof s1, 7, &err), PSDL_E_BAD_COUNT, err);
    CHECK_MSG(err, "6 of the 7");
    /* an opcode cut short, and literals cut short */
    static const unsigned char e2[] = {0xE0, 'a', 'b', 0xC0, 0x00};
    CHECK_STATUS(qfs_try(e2, 3, 4, &err), PSDL_E_TRUNCATED, err);
    CHECK_EQ(err.offset, 9);
    static const unsigned char e3[] = {0xE0, 'a', 'b', 'c', 'd', 0xC0, 0x00};
    CHECK_STATUS(qfs_try(e3, sizeof e3, 20, &err), PSDL_E_TRUNCATED, err);
    CHECK_EQ(err.offset, 14);
    /* no signature */
    unsigned char bad[12] = {12, 0, 0, 0, 0x10, 0xFA, 0, 0, 1, 0xFD, 'a', 0};
    char out[4];
    CHECK_STATUS(psdl_qfs_decompress(bad, sizeof bad, out, sizeof out, NULL, &err), PSDL_E_BAD_MAGIC, err);
    CHECK_EQ(err.offset, 4);
    CHECK_STATUS(psdl_qfs_decompress(bad, 8, out, sizeof out, NULL, &err), PSDL_E_TRUNCATED, err);
    /* destination too small */
    bad[5] = 0xFB;
    CHECK_STATUS(psdl_qfs_decompress(bad, 11, out, 0, NULL, &err), PSDL_E_BAD_COUNT, err);
    /* error offsets counted from a base */
    CHECK_STATUS(psdl_qfs_decompress_at(bad, 11, 1000, out, 0, NULL, &err), PSDL_E_BAD_COUNT, err);
    CHECK_EQ(err.offset, 1006);
    bad[5] = 0xFA;
    CHECK_STATUS(psdl_qfs_decompress_at(bad, 11, 1000, out, 4, NULL, &err), PSDL_E_BAD_MAGIC, err);
    CHECK_EQ(err.offset, 1004);
    CHECK_MSG(err, "at offset 0x3ec");
}

/* Compress and decompress; count opcode kinds seen in the record. */
static void qfs_roundtrip(const unsigned char *src, size_t n, unsigned kinds[5], const char *what) {
    set_ctx("qfs round trip: %s (%zu bytes)", what, n);
    size_t bound = psdl_qfs_compress_bound(n);
    unsigned char *rec = malloc(bound);
    size_t written = 0;
    psdl_error err;
    count_alloc ca;
    count_alloc_reset(&ca);
    psdl_options opt = count_options(&ca);
    psdl_status st = psdl_qfs_compress(&opt, src, n, rec, bound, &written, &err);
    CHECK_STATUS(st, PSDL_OK, err);
    CHECK_EQ(ca.live, 0);
    CHECK(written <= bound);
    CHECK_EQ(get32(rec), written);
    unsigned char *exact = dup_bytes(rec, written), *out = malloc(n ? n : 1);
    size_t got = 0;
    st = psdl_qfs_decompress(exact, written, out, n, &got, &err);
    CHECK_STATUS(st, PSDL_OK, err);
    CHECK_EQ(got, n);
    CHECK(n == 0 || memcmp(out, src, n) == 0);
    /* walk the opcodes */
    size_t p = 9;
    while (p < written) {
        unsigned b0 = exact[p];
        if (b0 < 0x80) {
            kinds[0]++;
            p += 2 + (b0 & 3);
        } else if (b0 < 0xC0) {
            kinds[1]++;
            p += 3 + (exact[p + 1] >> 6);
        } else if (b0 < 0xE0) {
            kinds[2]++;
            p += 4 + (b0 & 3);
        } else if (b0 < 0xFC) {
            kinds[3]++;
            p += 1 + ((b0 & 0x1F) + 1) * 4;
        } else {
            kinds[4]++;
            break;
        }
    }
    free(rec);
    free(exact);
    free(out);
}

static void test_qfs_roundtrip(void) {
    unsigned kinds[5] = {0, 0, 0, 0, 0};
    static const size_t sizes[] = {0, 1, 2, 3, 4, 5, 7, 111, 112, 113, 116, 1000};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        unsigned char *b = malloc(sizes[k] + 1);
        for (size_t i = 0; i < sizes[k]; i++) b[i] = (unsigned char)rnd();
        qfs_roundtrip(b, sizes[k], kinds, "random");
        memset(b, 'A', sizes[k]);
        qfs_roundtrip(b, sizes[k], kinds, "constant");
        free(b);
    }
    /* text-like data with short and long repeats at every distance class */
    size_t n = 300000;
    unsigned char *b = malloc(n);
    for (size_t i = 0; i < n; i++) {
        size_t block = i / 5000;
        if (block % 3 == 0)
            b[i] = (unsigned char)("the quick brown fox jumps "[i % 26]);
        else if (block % 3 == 1)
            b[i] = (unsigned char)rnd();
        else if (i >= 40000)
            b[i] = b[i - 40000]; /* far repeats, past 16384 */
        else
            b[i] = (unsigned char)(i % 251);
    }
    qfs_roundtrip(b, n, kinds, "mixed");
    /* a real-size terrain: a 128 hood with a smooth bump */
    psdl_nhtg *t = psdl_nhtg_new(NULL, 128, 128, "Temperate", 9, 312.5f);
    for (uint32_t i = 0; i < t->rows; i++)
        for (uint32_t j = 0; j < t->cols; j++)
            t->heights[i * t->cols + j] = 330.0f + (float)((i / 16) * 3 + (j / 32));
    size_t tn = psdl_nhtg_encoded_size(t);
    unsigned char *tb = malloc(tn);
    psdl_nhtg_encode(t, tb, tn, NULL, NULL);
    qfs_roundtrip(tb, tn, kinds, "hood 128");
    set_ctx("qfs opcode coverage");
    CHECKF(kinds[0] && kinds[1] && kinds[2] && kinds[3] && kinds[4], "2-byte %u, 3-byte %u, 4-byte %u, run %u, stop %u",
           kinds[0], kinds[1], kinds[2], kinds[3], kinds[4]);
    /* too large for the u24 size */
    psdl_error err;
    CHECK_STATUS(psdl_qfs_compress(NULL, b, PSDL_QFS_MAX_SIZE + 1u, NULL, 0, NULL, &err), PSDL_E_BAD_COUNT, err);
    CHECK_STATUS(psdl_qfs_compress(NULL, b, 100, b, 10, NULL, &err), PSDL_E_BAD_COUNT, err);
    psdl_nhtg_free(t);
    free(tb);
    free(b);
}

/* ==================================================================== e) DBPF */

static psdl_dbpf *open_pkg(const unsigned char *b, size_t n) {
    psdl_dbpf *p = NULL;
    psdl_error err;
    psdl_status st = psdl_dbpf_decode(NULL, b, n, &p, &err);
    CHECK_STATUS(st, PSDL_OK, err);
    return p;
}

/* Entry k's contents, malloc'd. */
static unsigned char *extract(const psdl_dbpf *p, size_t k, size_t *n) {
    psdl_error err;
    size_t us = 0;
    if (psdl_dbpf_resource_size(p, k, &us, &err) != PSDL_OK) {
        CHECKF(0, "resource_size: %s", err.message);
        return NULL;
    }
    unsigned char *o = malloc(us ? us : 1);
    psdl_status st = psdl_dbpf_extract(p, k, o, us, n, &err);
    CHECK_STATUS(st, PSDL_OK, err);
    if (st != PSDL_OK) {
        free(o);
        return NULL;
    }
    return o;
}

static void test_dbpf_fixture(const char *name, uint32_t minor, uint32_t esize, size_t nentries, int nhtg_compressed,
                              const char *nhtg_fixture) {
    set_ctx("dbpf fixture %s", name);
    size_t n = 0, fn = 0;
    unsigned char *b = fixture(name, &n), *want = fixture(nhtg_fixture, &fn);
    if (!b || !want) {
        free(b);
        free(want);
        return;
    }
    psdl_dbpf *p = open_pkg(b, n);
    if (!p) {
        free(b);
        free(want);
        return;
    }
    CHECK_EQ(p->major, 1);
    CHECK_EQ(p->minor, minor);
    CHECK_EQ(p->entry_size, esize);
    CHECK_EQ(p->nentries, nentries);
    CHECK_EQ(p->dir_record_size, esize == 24 ? 20 : 16);
    long k = psdl_dbpf_find(p, PSDL_NHTG_TYPE, 0);
    CHECK(k >= 0);
    CHECK_EQ(psdl_dbpf_find(p, PSDL_NHTG_TYPE, (size_t)k + 1), -1);
    if (k < 0) goto done;
    CHECK_EQ(p->entries[k].compressed, nhtg_compressed);
    CHECK_EQ(p->entries[k].usize, fn);
    /* the NHTG (decompressed by an encoder independent of ours) equals the fixture */
    size_t got = 0;
    unsigned char *nh = extract(p, (size_t)k, &got);
    CHECK_EQ(got, fn);
    CHECK(nh && memcmp(nh, want, fn) == 0);
    free(nh);

    /* replace it (three ways) and check everything else stays byte-identical */
    psdl_nhtg *t = NULL;
    psdl_error err;
    CHECK_EQ(psdl_nhtg_decode(NULL, want, fn, &t, &err), PSDL_OK);
    if (!t) goto done;
    for (uint32_t q = 0; q < t->rows * t->cols; q++) t->heights[q] += 1.5f;
    size_t tn = psdl_nhtg_encoded_size(t);
    unsigned char *tb = malloc(tn);
    psdl_nhtg_encode(t, tb, tn, NULL, NULL);
    for (int mode = 0; mode < 2; mode++) {
        set_ctx("dbpf fixture %s: rebuild %s", name, mode ? "compressed" : "uncompressed");
        const unsigned char *rec = tb;
        size_t rn = tn;
        unsigned char *cb = NULL;
        if (mode) {
            size_t bound = psdl_qfs_compress_bound(tn);
            cb = malloc(bound);
            CHECK_EQ(psdl_qfs_compress(NULL, tb, tn, cb, bound, &rn, &err), PSDL_OK);
            rec = cb;
        }
        size_t need = psdl_dbpf_rebuild_size(p, (size_t)k, rn, mode);
        CHECK(need > 0);
        unsigned char *out = malloc(need);
        size_t w = 0;
        psdl_status st = psdl_dbpf_rebuild(p, (size_t)k, rec, rn, mode, (uint32_t)tn, out, need, &w, &err);
        CHECK_STATUS(st, PSDL_OK, err);
        CHECK_EQ(w, need);
        unsigned char *exact = dup_bytes(out, w);
        psdl_dbpf *q = open_pkg(exact, w);
        if (q) {
            CHECK(memcmp(q->header, p->header, 36) == 0);      /* magic, versions, dates, index major */
            CHECK(memcmp(q->header + 60, p->header + 60, 36) == 0);
            CHECK_EQ(q->hole_count, 0);
            CHECK_EQ(q->index_offset + (size_t)q->nentries * q->entry_size, w); /* index last */
            long qk = psdl_dbpf_find(q, PSDL_NHTG_TYPE, 0);
            CHECK(qk >= 0);
            if (qk >= 0) {
                CHECK_EQ(q->entries[qk].compressed, mode);
                size_t g2 = 0;
                unsigned char *back = extract(q, (size_t)qk, &g2);
                CHECK_EQ(g2, tn);
                CHECK(back && memcmp(back, tb, tn) == 0);
                free(back);
            }
            /* every other resource of the original: same TGI, same stored bytes, same state */
            int missing = 0, differ = 0;
            for (uint32_t e = 0; e < p->nentries; e++) {
                const psdl_dbpf_entry *a = &p->entries[e];
                if ((long)e == k || (long)e == p->dir) continue;
                int found = 0;
                for (uint32_t f = 0; f < q->nentries; f++) {
                    const psdl_dbpf_entry *c = &q->entries[f];
                    if (c->type == a->type && c->group == a->group && c->instance == a->instance &&
                        c->instance_hi == a->instance_hi) {
                        found = 1;
                        if (c->size != a->size || memcmp(exact + c->offset, b + a->offset, a->size) != 0 ||
                            c->compressed != a->compressed || c->usize != a->usize)
                            differ++;
                    }
                }
                if (!found) missing++;
            }
            CHECK_EQ(missing, 0);
            CHECK_EQ(differ, 0);
            /* a DIR exists exactly when something is compressed */
            int any = 0;
            for (uint32_t f = 0; f < q->nentries; f++) any |= q->entries[f].compressed;
            CHECK_EQ(q->dir >= 0, any);
            psdl_dbpf_free(q);
        }
        free(exact);
        free(out);
        free(cb);
    }
    /* refusals */
    set_ctx("dbpf fixture %s: refusals", name);
    CHECK_STATUS(psdl_dbpf_rebuild(p, p->nentries, tb, tn, 0, (uint32_t)tn, NULL, 0, NULL, &err), PSDL_E_BAD_INDEX, err);
    if (p->dir >= 0)
        CHECK_STATUS(psdl_dbpf_rebuild(p, (size_t)p->dir, tb, tn, 0, (uint32_t)tn, NULL, 0, NULL, &err),
                     PSDL_E_BAD_INDEX, err);
    CHECK_STATUS(psdl_dbpf_rebuild(p, (size_t)k, tb, tn, 0, (uint32_t)tn, tb, 10, NULL, &err), PSDL_E_INVALID, err);
    psdl_nhtg_free(t);
    free(tb);
done:
    psdl_dbpf_free(p);
    free(b);
    free(want);
}

static void expect_dbpf_error(const unsigned char *b, size_t n, psdl_status want, size_t offset) {
    unsigned char *c = dup_bytes(b, n);
    psdl_dbpf *p = NULL;
    psdl_error err;
    psdl_status st = psdl_dbpf_decode(NULL, c, n, &p, &err);
    CHECK_STATUS(st, want, err);
    CHECKF(err.offset == offset, "offset 0x%zx, want 0x%zx: %s", err.offset, offset, err.message);
    CHECK(p == NULL);
    psdl_dbpf_free(p);
    free(c);
}

static void test_dbpf_errors(void) {
    set_ctx("dbpf errors");
    size_t n = 0;
    unsigned char *b = fixture("hood_compressed.package", &n);
    if (!b) return;
    unsigned char *m = malloc(n);
#define MUTATE(stmt)     \
    do {                 \
        memcpy(m, b, n); \
        stmt;            \
    } while (0)
    MUTATE(m[0] = 'X');
    expect_dbpf_error(m, n, PSDL_E_BAD_MAGIC, 0);
    MUTATE(put32(m + 4, 2));
    expect_dbpf_error(m, n, PSDL_E_BAD_MAGIC, 4);
    MUTATE(put32(m + 32, 3));
    expect_dbpf_error(m, n, PSDL_E_BAD_MAGIC, 32);
    MUTATE(put32(m + 40, (uint32_t)n + 1));
    expect_dbpf_error(m, n, PSDL_E_BAD_INDEX, 40);
    MUTATE(put32(m + 36, 0x10000000u));
    expect_dbpf_error(m, n, PSDL_E_BAD_COUNT, 36);
    MUTATE(put32(m + 44, 10));
    expect_dbpf_error(m, n, PSDL_E_BAD_COUNT, 44);
    uint32_t io = get32(b + 40);
    /* entry 1's size runs past the end */
    MUTATE(put32(m + io + 20, (uint32_t)n));
    expect_dbpf_error(m, n, PSDL_E_BAD_INDEX, io);
    /* DIR (entry 5) size not a multiple of 20 */
    MUTATE(put32(m + io + 4 * 24 + 20, 39));
    expect_dbpf_error(m, n, PSDL_E_BAD_COUNT, get32(b + io + 4 * 24 + 16));
    /* listed as compressed but no QFS signature: the error names the package offset */
    psdl_dbpf *p = NULL;
    psdl_error err;
    MUTATE(m[get32(b + io + 2 * 24 + 16) + 5] = 0x00);
    unsigned char *c = dup_bytes(m, n);
    CHECK_EQ(psdl_dbpf_decode(NULL, c, n, &p, &err), PSDL_OK);
    if (p) {
        size_t us;
        CHECK_STATUS(psdl_dbpf_resource_size(p, 2, &us, &err), PSDL_E_BAD_MAGIC, err);
        CHECK_EQ(err.offset, p->entries[2].offset + 4);
        CHECK_MSG(err, "listed as compressed");
        char out[600];
        CHECK_STATUS(psdl_dbpf_extract(p, 2, out, sizeof out, NULL, &err), PSDL_E_BAD_MAGIC, err);
        CHECK_STATUS(psdl_dbpf_extract(p, 99, out, sizeof out, NULL, &err), PSDL_E_BAD_INDEX, err);
        psdl_dbpf_free(p);
    }
    free(c);
    /* a corrupt stream inside a package: the offset is a package offset */
    MUTATE(memset(m + get32(b + io + 2 * 24 + 16) + 9, 0x7F, 4));
    c = dup_bytes(m, n);
    p = NULL;
    CHECK_EQ(psdl_dbpf_decode(NULL, c, n, &p, &err), PSDL_OK);
    if (p) {
        char out[600];
        psdl_status st = psdl_dbpf_extract(p, 2, out, sizeof out, NULL, &err);
        CHECK(st != PSDL_OK);
        CHECK(err.offset >= p->entries[2].offset && err.offset < (size_t)p->entries[2].offset + p->entries[2].size);
        psdl_dbpf_free(p);
    }
    free(c);
    /* two DIR entries (found by fuzz_nhtg: dropping the first, empty, one made the second
     * the DIR of the rebuilt package) */
    MUTATE(put32(m + io, PSDL_DBPF_DIR_TYPE));
    expect_dbpf_error(m, n, PSDL_E_BAD_INDEX, io + 4 * 24);
    /* duplicate TGI: replacing is refused */
    MUTATE(memcpy(m + io + 3 * 24, m + io + 2 * 24, 16));
    c = dup_bytes(m, n);
    p = NULL;
    CHECK_EQ(psdl_dbpf_decode(NULL, c, n, &p, &err), PSDL_OK);
    if (p) {
        CHECK_STATUS(psdl_dbpf_rebuild(p, 2, "x", 1, 0, 1, NULL, 0, NULL, &err), PSDL_E_BAD_INDEX, err);
        CHECK_MSG(err, "share type, group and instance");
        psdl_dbpf_free(p);
    }
    free(c);
    /* truncation at every length never crashes or reads past the end */
    int bad = 0;
    for (size_t k = 0; k < n; k++) {
        c = dup_bytes(b, k);
        p = NULL;
        psdl_status st = psdl_dbpf_decode(NULL, c, k, &p, &err);
        if (st == PSDL_OK) {
            /* a prefix can still hold the header and the index (index first): extract all */
            for (uint32_t e = 0; e < p->nentries; e++) {
                size_t us;
                if (psdl_dbpf_resource_size(p, e, &us, &err) == PSDL_OK) {
                    unsigned char *o = malloc(us ? us : 1);
                    psdl_dbpf_extract(p, e, o, us, NULL, &err);
                    free(o);
                }
            }
            psdl_dbpf_free(p);
        } else if (p != NULL || err.offset > k || strncmp(err.message, "psdl: ", 6) != 0) {
            bad++;
        }
        free(c);
    }
    CHECKF(bad == 0, "%d prefixes misbehaved", bad);
    /* byte mutations: decode and extract whatever decodes */
    for (int round = 0; round < 2000; round++) {
        memcpy(m, b, n);
        int flips = 1 + (int)(rnd() % 4);
        for (int f = 0; f < flips; f++) m[rnd() % n] = (unsigned char)rnd();
        c = dup_bytes(m, n);
        p = NULL;
        if (psdl_dbpf_decode(NULL, c, n, &p, &err) == PSDL_OK) {
            for (uint32_t e = 0; e < p->nentries; e++) {
                size_t us;
                if (psdl_dbpf_resource_size(p, e, &us, &err) == PSDL_OK && us < (1u << 20)) {
                    unsigned char *o = malloc(us ? us : 1);
                    if (psdl_dbpf_extract(p, e, o, us, NULL, &err) == PSDL_OK && p->entries[e].type == PSDL_NHTG_TYPE) {
                        psdl_nhtg *t = NULL;
                        psdl_nhtg_decode(NULL, o, us, &t, &err);
                        psdl_nhtg_free(t);
                    }
                    free(o);
                }
            }
            psdl_dbpf_free(p);
        }
        free(c);
    }
    CHECK(1);
#undef MUTATE
    free(m);
    free(b);
}

/* ==================================================================== f) rasters */

static void test_raster_fixtures(void) {
    set_ctx("raster fixtures");
    size_t n = 0;
    psdl_raster *r = NULL;
    psdl_error err;
    /* hand-written 16-bit PNG (stored deflate): sample = 4 * (10 * row + column), 7 x 5 */
    unsigned char *b = fixture("ramp_4x6.png", &n);
    if (b) {
        CHECK_STATUS(psdl_png_decode(NULL, b, n, &r, &err), PSDL_OK, err);
        if (r) {
            CHECK_EQ(r->width, 7);
            CHECK_EQ(r->height, 5);
            CHECK_EQ(r->maxval, 65535);
            int bad = 0;
            for (uint32_t i = 0; i < 5; i++)
                for (uint32_t j = 0; j < 7; j++) bad += r->samples[i * 7 + j] != 4 * (10 * i + j);
            CHECK_EQ(bad, 0);
            CHECK(r->text && strcmp(r->text, "offset=300 scale=0.25 cell_size=2") == 0);
            /* re-encode with libpng and read back */
            void *png = NULL;
            size_t pn = 0;
            CHECK_STATUS(psdl_png_encode(NULL, r, &png, &pn, &err), PSDL_OK, err);
            psdl_raster *r2 = NULL;
            CHECK_STATUS(psdl_png_decode(NULL, png, pn, &r2, &err), PSDL_OK, err);
            if (r2) {
                CHECK(memcmp(r2->samples, r->samples, 35 * sizeof(uint16_t)) == 0);
                CHECK(r2->text && strcmp(r2->text, r->text) == 0);
            }
            /* truncation at every length of our own PNG */
            int tbad = 0;
            for (size_t k = 0; k < pn; k++) {
                unsigned char *c = dup_bytes(png, k);
                psdl_raster *rt = NULL;
                psdl_status st = psdl_png_decode(NULL, c, k, &rt, &err);
                if (st == PSDL_OK || rt || strncmp(err.message, "psdl: ", 6) != 0) tbad++;
                free(c);
            }
            CHECKF(tbad == 0, "%d PNG prefixes misbehaved", tbad);
            psdl_raster_free(r2);
            psdl_buffer_free(NULL, png, pn);
        }
        psdl_raster_free(r);
        free(b);
    }
    /* PGM, 16-bit with the psdlkit comment */
    r = NULL;
    b = fixture("gradient_8.pgm", &n);
    if (b) {
        CHECK_STATUS(psdl_pgm_decode(NULL, b, n, &r, &err), PSDL_OK, err);
        if (r) {
            CHECK_EQ(r->width, 9);
            CHECK_EQ(r->maxval, 65535);
            CHECK_EQ(r->samples[9 * 3 + 5], 300);
            CHECK_EQ(r->samples[5], 0);
            CHECK(r->text && strcmp(r->text, "offset=400 scale=0.01 cell_size=10") == 0);
            size_t need = psdl_pgm_encoded_size(r);
            unsigned char *o = malloc(need);
            CHECK_STATUS(psdl_pgm_encode(r, o, need, NULL, &err), PSDL_OK, err);
            CHECK_EQ(need, n);
            CHECK(memcmp(o, b, n) == 0); /* same header layout as the fixture writer */
            free(o);
        }
        psdl_raster_free(r);
        free(b);
    }
    /* 8-bit PGM, header on one line, no comment */
    r = NULL;
    b = fixture("ramp_4x6_8bit.pgm", &n);
    if (b) {
        CHECK_STATUS(psdl_pgm_decode(NULL, b, n, &r, &err), PSDL_OK, err);
        if (r) {
            CHECK_EQ(r->width, 7);
            CHECK_EQ(r->height, 5);
            CHECK_EQ(r->maxval, 255);
            CHECK_EQ(r->samples[2 * 7 + 3], 23);
            CHECK(r->text == NULL);
        }
        psdl_raster_free(r);
        free(b);
    }
}

/* An RGB PNG written with libpng directly. */
static unsigned char *g_rgb;
static size_t g_rgb_n;
static void rgb_write(png_structp png, png_bytep data, size_t len) {
    (void)png;
    g_rgb = realloc(g_rgb, g_rgb_n + len);
    memcpy(g_rgb + g_rgb_n, data, len);
    g_rgb_n += len;
}
static void rgb_flush(png_structp png) { (void)png; }

static void test_raster_errors(void) {
    set_ctx("raster errors");
    psdl_raster *r = NULL;
    psdl_error err;
    /* RGB is refused by name */
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    if (setjmp(png_jmpbuf(png)) == 0) {
        png_set_write_fn(png, NULL, rgb_write, rgb_flush);
        png_set_IHDR(png, info, 2, 1, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                     PNG_FILTER_TYPE_DEFAULT);
        png_write_info(png, info);
        unsigned char row[6] = {1, 2, 3, 4, 5, 6};
        png_write_row(png, row);
        png_write_end(png, info);
    }
    png_destroy_write_struct(&png, &info);
    CHECK_STATUS(psdl_png_decode(NULL, g_rgb, g_rgb_n, &r, &err), PSDL_E_BAD_MAGIC, err);
    CHECK_MSG(err, "(RGB) is not grayscale");
    free(g_rgb);
    g_rgb = NULL;
    g_rgb_n = 0;
    CHECK_STATUS(psdl_png_decode(NULL, "GIF89a....", 10, &r, &err), PSDL_E_BAD_MAGIC, err);
    CHECK_STATUS(psdl_png_decode(NULL, "\x89PN", 3, &r, &err), PSDL_E_TRUNCATED, err);
    /* a header of 100,000 x 100,000 (over libpng's default 65,535 a side): the documented
     * pixel limit, not libpng's "Invalid IHDR data" */
    {
        unsigned char h[67] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R',
                               0, 1, 0x86, 0xA0, 0, 1, 0x86, 0xA0, 16, 0, 0, 0, 0,
                               0, 0, 0, 0, /* IHDR's CRC */
                               0, 0, 0, 10, 'I', 'D', 'A', 'T', 0x78, 0x9C, 0x63, 0x60, 0x00, 0x00, 0x00, 0x02,
                               0x00, 0x01, 0, 0, 0, 0, /* IDAT's CRC */
                               0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82};
        static const int chunk[2][2] = {{12, 17}, {37, 14}}; /* CRC'd bytes: type + data */
        for (int c = 0; c < 2; c++) {
            uint32_t crc = 0xFFFFFFFFu;
            for (int i = chunk[c][0]; i < chunk[c][0] + chunk[c][1]; i++) {
                crc ^= h[i];
                for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
            }
            crc ^= 0xFFFFFFFFu;
            unsigned char *q = h + chunk[c][0] + chunk[c][1];
            q[0] = (unsigned char)(crc >> 24), q[1] = (unsigned char)(crc >> 16), q[2] = (unsigned char)(crc >> 8);
            q[3] = (unsigned char)crc;
        }
        CHECK_STATUS(psdl_png_decode(NULL, h, sizeof h, &r, &err), PSDL_E_BAD_COUNT, err);
        CHECK_MSG(err, "PNG of 100000 x 100000 pixels is over the limit of 4194304 pixels");
    }
    /* a chunk claiming more bytes than the file has is refused before libpng allocates it
     * (found by fuzz_nhtg: a tEXt chunk of 0x7C000034 bytes made libpng allocate 2 GB) */
    size_t n = 0;
    unsigned char *b = fixture("ramp_4x6.png", &n);
    if (b) {
        CHECK(memcmp(b + 37, "tEXt", 4) == 0);
        b[33] = 0x7C;
        count_alloc ca0;
        count_alloc_reset(&ca0);
        psdl_options opt0 = count_options(&ca0);
        CHECK_STATUS(psdl_png_decode(&opt0, b, n, &r, &err), PSDL_E_BAD_COUNT, err);
        CHECK_EQ(err.offset, 33);
        CHECK_EQ(ca0.calls, 0);
        b[33] = 0x00;
        b[36] = 0xFF; /* 255 bytes: past the end */
        CHECK_STATUS(psdl_png_decode(NULL, b, n, &r, &err), PSDL_E_TRUNCATED, err);
        CHECK_EQ(err.offset, 33);
        free(b);
    }
    /* PGM */
    CHECK_STATUS(psdl_pgm_decode(NULL, "P2 1 1 255 7", 12, &r, &err), PSDL_E_BAD_MAGIC, err);
    CHECK_MSG(err, "ASCII PGM");
    CHECK_STATUS(psdl_pgm_decode(NULL, "P5 2 2 255\nabc", 14, &r, &err), PSDL_E_TRUNCATED, err);
    CHECK_STATUS(psdl_pgm_decode(NULL, "P5 1 1 255\nab", 13, &r, &err), PSDL_E_TRAILING, err);
    CHECK_EQ(err.offset, 12);
    CHECK_STATUS(psdl_pgm_decode(NULL, "P5 1 1 0\na", 10, &r, &err), PSDL_E_BAD_COUNT, err);
    CHECK_STATUS(psdl_pgm_decode(NULL, "P5 1 1 70000\nab", 15, &r, &err), PSDL_E_BAD_COUNT, err);
    CHECK_STATUS(psdl_pgm_decode(NULL, "P5 0 1 255\n", 11, &r, &err), PSDL_E_BAD_COUNT, err);
    CHECK_STATUS(psdl_pgm_decode(NULL, "P5 1 1 9\n\x0a", 10, &r, &err), PSDL_E_INVALID, err);
    CHECK_STATUS(psdl_pgm_decode(NULL, "P5 1 x", 6, &r, &err), PSDL_E_BAD_MAGIC, err);
    CHECK_STATUS(psdl_pgm_decode(NULL, "P5 1 ", 5, &r, &err), PSDL_E_TRUNCATED, err);
    CHECK_STATUS(psdl_pgm_decode(NULL, "P5 1 1 255", 10, &r, &err), PSDL_E_TRUNCATED, err);
    CHECK_STATUS(psdl_pgm_decode(NULL, "P5 99999999999 1 255\n", 21, &r, &err), PSDL_E_BAD_COUNT, err);
    /* comments anywhere in the header; a 16-bit sample big-endian */
    CHECK_STATUS(psdl_pgm_decode(NULL, "P5#c\n1 #x\n1\n#y\n300\n\x01\x02", 21, &r, &err), PSDL_OK, err);
    if (r) CHECK_EQ(r->samples[0], 0x0102);
    psdl_raster_free(r);
    r = NULL;
    /* encoders refuse bad rasters */
    uint16_t s[4] = {1, 2, 3, 300};
    psdl_raster bad = {2, 2, 255, s, NULL, NULL};
    void *out = NULL;
    size_t on = 0;
    unsigned char buf[64];
    CHECK_STATUS(psdl_png_encode(NULL, &bad, &out, &on, &err), PSDL_E_INVALID, err);
    CHECK_MSG(err, "over maxval");
    CHECK_STATUS(psdl_pgm_encode(&bad, buf, sizeof buf, NULL, &err), PSDL_E_INVALID, err);
    bad.maxval = 1000;
    CHECK_STATUS(psdl_png_encode(NULL, &bad, &out, &on, &err), PSDL_E_INVALID, err);
    CHECK_STATUS(psdl_pgm_encode(&bad, buf, sizeof buf, NULL, &err), PSDL_OK, err); /* PGM: any maxval */
    bad.text = "two\nlines";
    CHECK_STATUS(psdl_pgm_encode(&bad, buf, sizeof buf, NULL, &err), PSDL_E_INVALID, err);
    bad.text = NULL;
    bad.width = 0;
    CHECK_STATUS(psdl_pgm_encode(&bad, buf, sizeof buf, NULL, &err), PSDL_E_INVALID, err);
    /* 8-bit PNG round trip with a counting allocator: nothing left behind */
    count_alloc ca;
    count_alloc_reset(&ca);
    psdl_options opt = count_options(&ca);
    uint16_t s8[6] = {0, 10, 20, 255, 128, 1};
    psdl_raster r8 = {3, 2, 255, s8, "offset=0 scale=1", NULL};
    CHECK_STATUS(psdl_png_encode(&opt, &r8, &out, &on, &err), PSDL_OK, err);
    psdl_raster *back = NULL;
    CHECK_STATUS(psdl_png_decode(&opt, out, on, &back, &err), PSDL_OK, err);
    if (back) {
        CHECK_EQ(back->maxval, 255);
        CHECK(memcmp(back->samples, s8, sizeof s8) == 0);
    }
    psdl_raster_free(back);
    psdl_buffer_free(&opt, out, on);
    CHECK_EQ(ca.live, 0);
}


/* ==================================================================== g) heightfields */

/* An interlaced grayscale PNG of w x h samples at the given depth (8 or 16), through g_rgb. */
static void write_interlaced(const uint16_t *samples, uint32_t w, uint32_t h, int depth) {
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    unsigned char *buf = malloc((size_t)w * h * 2);
    png_bytep *rows = malloc(sizeof(png_bytep) * h);
    for (uint32_t y = 0; y < h; y++) {
        rows[y] = buf + (size_t)y * w * (depth / 8);
        for (uint32_t x = 0; x < w; x++) {
            uint16_t v = samples[(size_t)y * w + x];
            if (depth == 16) {
                rows[y][2 * x] = (unsigned char)(v >> 8);
                rows[y][2 * x + 1] = (unsigned char)v;
            } else {
                rows[y][x] = (unsigned char)v;
            }
        }
    }
    if (setjmp(png_jmpbuf(png)) == 0) {
        png_set_write_fn(png, NULL, rgb_write, rgb_flush);
        png_set_IHDR(png, info, w, h, depth, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_ADAM7, PNG_COMPRESSION_TYPE_DEFAULT,
                     PNG_FILTER_TYPE_DEFAULT);
        png_write_info(png, info);
        png_write_image(png, rows);
        png_write_end(png, info);
    }
    png_destroy_write_struct(&png, &info);
    free(rows);
    free(buf);
}

static void test_png_in_place(void) {
    set_ctx("PNG decoded into its samples");
    for (int depth = 8; depth <= 16; depth += 8) {
        uint32_t w = 13, h = 9;
        uint16_t s[13 * 9];
        for (size_t k = 0; k < (size_t)w * h; k++)
            s[k] = (uint16_t)(((uint32_t)k * 2654435761u) >> (depth == 8 ? 24 : 16));
        write_interlaced(s, w, h, depth);
        psdl_raster *r = NULL;
        psdl_error err;
        CHECK_STATUS(psdl_png_decode(NULL, g_rgb, g_rgb_n, &r, &err), PSDL_OK, err);
        if (r) {
            CHECK_EQ(r->width, w);
            CHECK_EQ(r->height, h);
            CHECK_EQ(r->maxval, depth == 8 ? 255u : 65535u);
            size_t diff = 0;
            while (diff < (size_t)w * h && r->samples[diff] == s[diff]) diff++;
            CHECKF(diff == (size_t)w * h, "depth %d: sample %zu is %u, want %u", depth, diff,
                   diff < (size_t)w * h ? r->samples[diff] : 0u, diff < (size_t)w * h ? s[diff] : 0u);
        }
        psdl_raster_free(r);
        free(g_rgb);
        g_rgb = NULL;
        g_rgb_n = 0;
    }
}

static void test_heightfield_sampling(void) {
    set_ctx("heightfield sampling");
    float f32[6] = {1, 2, 3, 4, 5, 6};
    double f64[6] = {1, 2, 3, 4, 5, 6};
    uint16_t u16[6] = {0, 100, 200, 300, 400, 500};
    uint8_t u8[6] = {0, 1, 2, 3, 4, 5};
    psdl_heightfield a = {2, 3, PSDL_HF_F32, f32, 0, 1};
    psdl_heightfield b = {2, 3, PSDL_HF_F64, f64, 0, 1};
    psdl_heightfield c = {2, 3, PSDL_HF_U16, u16, 300, 0.01};
    psdl_heightfield d = {2, 3, PSDL_HF_U8, u8, 10, 2};
    CHECK_EQ(psdl_hf_count(&a), 6);
    CHECK(psdl_hf_get(&a, 4) == 5.0 && psdl_hf_get(&b, 4) == 5.0);
    CHECK(psdl_hf_get(&c, 4) == 300 + 0.01 * 400.0);
    CHECK(psdl_hf_get(&d, 5) == 20.0);
    /* clamped points: (i, j) -> k = i * 3 + j */
    CHECK(psdl_hf_point(&b, -5, -5) == 1.0);
    CHECK(psdl_hf_point(&b, 7, 1) == 5.0);
    CHECK(psdl_hf_point(&b, 0, 99) == 3.0);
    /* bilinear: corners, the middle of a cell, outside (edge extended), NaN */
    CHECK(psdl_hf_bilinear(&b, 0, 0) == 1.0);
    CHECK(psdl_hf_bilinear(&b, 2, 1) == 6.0);
    CHECK(psdl_hf_bilinear(&b, 0.5, 0.5) == 3.0);   /* (1 + 2 + 4 + 5) / 4 */
    CHECK(psdl_hf_bilinear(&b, 1.5, 0.25) == 3.25); /* top 2.5, bottom 5.5 */
    CHECK(psdl_hf_bilinear(&b, -3, 9) == 4.0);
    CHECK(psdl_hf_bilinear(&b, 9, -3) == 3.0);
    CHECK(isnan(psdl_hf_bilinear(&b, NAN, 0)));
    psdl_heightfield one = {1, 1, PSDL_HF_F64, f64 + 2, 0, 1};
    CHECK(psdl_hf_bilinear(&one, 0.7, 0.2) == 3.0);
    /* statistics: the first lowest and highest, NaN-free mean, below water */
    double s64[6] = {5, 1, 9, 1, 9, 2};
    psdl_heightfield e = {2, 3, PSDL_HF_F64, s64, 0, 1};
    psdl_hf_stats st;
    psdl_hf_stats_of(&e, 2, &st);
    CHECK(st.min == 1 && st.max == 9 && st.min_at == 1 && st.max_at == 2);
    CHECK(st.mean == 27.0 / 6 && st.below == 2 && st.count == 6 && st.found);
    /* quantising: exact, rounding half up, out of range with the element */
    uint16_t q[6];
    size_t bad = 99;
    double v = 0;
    CHECK_EQ(psdl_hf_quantize(&b, 1, 0.5, 65535, q, &bad, &v), PSDL_OK);
    CHECK(q[0] == 0 && q[1] == 2 && q[5] == 10);
    CHECK_EQ(psdl_hf_quantize(&b, 3, 1, 255, q, &bad, &v), PSDL_E_BAD_COUNT);
    CHECK(bad == 0 && v == -2);
    CHECK_EQ(psdl_hf_quantize(&b, 0, 1, 4, q, &bad, &v), PSDL_E_BAD_COUNT);
    CHECK(bad == 4 && v == 5);
    double nanv[2] = {1, NAN};
    psdl_heightfield g = {1, 2, PSDL_HF_F64, nanv, 0, 1};
    CHECK_EQ(psdl_hf_quantize(&g, 0, 1, 255, q, &bad, &v), PSDL_E_BAD_COUNT);
    CHECK_EQ(bad, 1);
    /* floats: a height beyond a float's range or NaN is named */
    float out[6];
    CHECK_EQ(psdl_hf_to_f32(&c, out, &bad), PSDL_OK);
    CHECK(out[1] == (float)(300 + 0.01 * 100.0));
    double big[3] = {1, 2, 1e300};
    psdl_heightfield hb = {1, 3, PSDL_HF_F64, big, 0, 1};
    CHECK_EQ(psdl_hf_to_f32(&hb, out, &bad), PSDL_E_INVALID);
    CHECK_EQ(bad, 2);
    CHECK_EQ(psdl_hf_check_f32(&g, &bad), PSDL_E_INVALID);
    CHECK_EQ(bad, 1);
    CHECK_EQ(psdl_hf_check_f32(&d, &bad), PSDL_OK);
    double d64[6];
    psdl_hf_to_f64(&c, d64);
    CHECK(d64[5] == 300 + 0.01 * 500.0);
}

static float hf_height(void *ud, size_t k) { return psdl_hf_get_f32((const psdl_heightfield *)ud, k); }

static void test_heightfield_nhtg(void) {
    set_ctx("NHTG encoded from a heightfield");
    psdl_nhtg *t = psdl_nhtg_new(NULL, 3, 2, "Desert", 6, 320.0f);
    if (!t) {
        CHECK(t != NULL);
        return;
    }
    double h[12];
    for (int k = 0; k < 12; k++) h[k] = 300 + 1.25 * k;
    for (int k = 0; k < 12; k++) t->heights[k] = (float)h[k];
    psdl_heightfield f = {4, 3, PSDL_HF_F64, h, 0, 1};
    size_t n = psdl_nhtg_encoded_size(t);
    unsigned char *x = malloc(n), *y = malloc(n);
    psdl_error err;
    CHECK_STATUS(psdl_nhtg_encode(t, x, n, NULL, &err), PSDL_OK, err);
    float *keep = t->heights;
    t->heights = NULL; /* read only through the callback */
    CHECK_STATUS(psdl_nhtg_encode_from(t, hf_height, &f, y, n, NULL, &err), PSDL_OK, err);
    CHECK(memcmp(x, y, n) == 0);
    h[7] = NAN;
    CHECK_STATUS(psdl_nhtg_encode_from(t, hf_height, &f, y, n, NULL, &err), PSDL_E_INVALID, err);
    CHECK_MSG(err, "row 2, column 1");
    t->heights = keep;
    free(x);
    free(y);
    psdl_nhtg_free(t);
}

static void test_heightfield_raster(void) {
    set_ctx("city ground rasterised");
    /* one triangle over a 4 x 4 grid of 10 m cells, plane y = 100 + x / 10 + z / 5 */
    double tri[9] = {0, 100, 0, 30, 103, 0, 0, 106, 30};
    double best[16];
    for (int k = 0; k < 16; k++) best[k] = -HUGE_VAL;
    psdl_hf_rasterize(tri, 1, 0, 0, 10, 4, 4, best);
    /* covered: j + i <= 3 */
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            double want = i + j <= 3 ? 100 + j + 2.0 * i : -HUGE_VAL;
            CHECKF(fabs(best[i * 4 + j] - want) < 1e-9 || best[i * 4 + j] == want, "point %d %d: %g, want %g", i, j,
                   best[i * 4 + j], want);
        }
    /* a higher triangle wins; NaN and far-away triangles change nothing */
    double tri2[27] = {0, 200, 0, 10, 200, 0, 0, 200, 10, NAN, 0, 0, 1, 1, 1, 2, 2, 2,
                       1e300, 5, 1e300, 2e300, 5, 1e300, 1e300, 5, 2e300};
    psdl_hf_rasterize(tri2, 3, 0, 0, 10, 4, 4, best);
    CHECK(best[0] == 200 && best[1] == 200 && best[4] == 200 && best[5] == 103);
    /* filling: one covered point spreads breadth first */
    double g[6] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL, -HUGE_VAL, 7, -HUGE_VAL};
    uint8_t cov[6];
    size_t queue[6];
    CHECK_EQ(psdl_hf_fill_nearest(g, cov, 2, 3, queue), 1);
    CHECK(cov[4] == 1 && cov[0] == 0);
    for (int k = 0; k < 6; k++) CHECK(g[k] == 7);
}

/* ==================================================================== main */

/* A DIR naming tens of thousands of entries: matched through a sorted index, not record x
 * entry (40001 entries took 3 s). Keys shared by two entries, the last record naming a key
 * wins, records naming no entry, 16- and 20-byte records. */
static void test_dbpf_dir_scale(void) {
    for (int wide = 0; wide < 2; wide++) {
        set_ctx("dbpf DIR of 40000 entries (%d-byte records)", wide ? 20 : 16);
        size_t n = 40000, esize = wide ? 24 : 20, rs = wide ? 20 : 16, maxrec = n / 2 + 4;
        size_t cap = 96 + maxrec * rs + (n + 1) * esize;
        unsigned char *b = calloc(cap, 1);
        if (!b) return;
        size_t nrec = 0;
        unsigned char *dir = b + 96;
#define REC(type, group, inst, hi, usize)                                                                      \
    do {                                                                                                       \
        unsigned char *r_ = dir + nrec++ * rs;                                                                 \
        put32(r_, type), put32(r_ + 4, group), put32(r_ + 8, inst);                                            \
        if (wide) put32(r_ + 12, hi);                                                                          \
        put32(r_ + rs - 4, usize);                                                                             \
    } while (0)
        /* entries 2j and 2j + 1 share key j; keys with j % 3 != 0 are compressed */
        for (uint32_t j = 0; j < n / 2; j++)
            if (j % 3) REC(0x1000 + j, 1, j, 7, 100 + j);
        REC(0x1001, 1, 1, 7, 5000);
        REC(0x1001, 1, 1, 7, 6000);            /* key 1 again: the last record wins */
        REC(0x1003, 2, 3, 7, 9999);            /* group differs: names nothing */
        if (wide) REC(0x1003, 1, 3, 8, 9999);  /* instance-high differs */
#undef REC
        size_t io = 96 + nrec * rs;
        for (size_t k = 0; k < n; k++) {
            unsigned char *e = b + io + k * esize;
            uint32_t j = (uint32_t)(k / 2);
            put32(e, 0x1000 + j), put32(e + 4, 1), put32(e + 8, j);
            if (wide) put32(e + 12, 7);
        }
        unsigned char *de = b + io + n * esize;
        put32(de, PSDL_DBPF_DIR_TYPE), put32(de + 4, PSDL_DBPF_DIR_GROUP), put32(de + 8, PSDL_DBPF_DIR_INSTANCE);
        put32(de + esize - 8, 96), put32(de + esize - 4, (uint32_t)(nrec * rs));
        memcpy(b, "DBPF", 4);
        put32(b + 4, 1), put32(b + 8, 1), put32(b + 32, 7), put32(b + 36, (uint32_t)n + 1);
        put32(b + 40, (uint32_t)io), put32(b + 44, (uint32_t)((n + 1) * esize)), put32(b + 60, wide ? 2 : 1);
        size_t size = io + (n + 1) * esize;
        psdl_dbpf *p = NULL;
        psdl_error err;
        clock_t t0 = clock();
        psdl_status st = psdl_dbpf_decode(NULL, b, size, &p, &err);
        double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
        CHECK_EQ(st, PSDL_OK);
        CHECKF(secs < 1.5, "decoding took %.2f s", secs);
        if (p) {
            CHECK_EQ(p->entry_size, esize);
            CHECK_EQ(p->dir, (long)n);
            int right = 1;
            for (size_t k = 0; k < n; k++) {
                const psdl_dbpf_entry *e = &p->entries[k];
                uint32_t j = (uint32_t)(k / 2);
                int comp = j % 3 != 0;
                uint32_t us = j == 1 ? 6000u : comp ? 100u + j : 0u;
                if (e->compressed != comp || e->usize != us) right = 0;
            }
            CHECK(right);
            psdl_dbpf_free(p);
        }
        free(b);
    }
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        fprintf(stderr, "usage: %s <fixtures-dir>\n", argv[0]);
        return 2;
    }
    snprintf(g_dir, sizeof g_dir, "%s", argv[1]);
    printf("a) NHTG fixtures\n");
    test_nhtg_fixture("gradient_8.nhtg", 8, 8, "Temperate", 0);
    test_nhtg_fixture("ramp_4x6.nhtg", 4, 6, "Desert", 1);
    test_nhtg_format_values();
    printf("b) NHTG errors\n");
    test_nhtg_errors();
    printf("c) NHTG in memory\n");
    test_nhtg_memory();
    printf("d) QFS\n");
    test_qfs_streams();
    test_qfs_roundtrip();
    printf("e) DBPF\n");
    test_dbpf_fixture("hood_plain.package", 1, 24, 3, 0, "ramp_4x6.nhtg");
    test_dbpf_fixture("hood_compressed.package", 1, 24, 5, 1, "gradient_8.nhtg");
    test_dbpf_fixture("hood_v10.package", 0, 20, 3, 1, "ramp_4x6.nhtg");
    test_dbpf_errors();
    test_dbpf_dir_scale();
    printf("f) heightmap rasters\n");
    test_raster_fixtures();
    test_raster_errors();
    printf("g) heightfields\n");
    test_png_in_place();
    test_heightfield_sampling();
    test_heightfield_nhtg();
    test_heightfield_raster();
    printf("c: %lu passed, %lu failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
