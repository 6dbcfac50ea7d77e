/* test_companion.c -- the psdl_ctest_companion binary: the companion codecs of
 * src/psdl_companion.h (.bai, .cpvs, .inst, .pathset, PKG3, .tex) under ASan and UBSan.
 *
 *   psdl_ctest_companion [fixtures-dir] [crashers-dir]
 *
 * Sections: a) the minimal examples of docs/companion-formats.md decode with the documented
 * fields and re-encode byte for byte; b) every prefix of each example either decodes
 * losslessly or fails with a "<format>: " message, its status and an offset inside the
 * input; c) count fields set huge fail with bad_count before any allocation the input cannot
 * justify; d) allocation failure at every allocation gives nomem and leaks nothing; e)
 * format cases (CPVS RLE and offsets, trailing bytes, bad strings, PKG raw fallback and
 * encoder refusals, TEX layouts); f) random byte mutations keep the lossless property; g)
 * crash regressions: every tests/c/crashers/<format>-* file. Last line "c: N passed, N
 * failed". */
#define _POSIX_C_SOURCE 200809L
#include "psdl_companion.h"
#include "test_util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "companion_vectors.h"

/* ==================================================================== format table */

typedef struct fmt {
    const char *name;
    psdl_status (*decode)(const psdl_alloc *, const void *, size_t, void **, psdl_cerror *);
    psdl_status (*encode)(const void *, void *, size_t, size_t *, psdl_cerror *);
    void (*release)(void *);
    const unsigned char *vec;
    size_t nvec;
} fmt;

#define WRAP(f, T)                                                                                    \
    static psdl_status dec_##f(const psdl_alloc *a, const void *d, size_t n, void **out, psdl_cerror *e) { \
        T *doc = NULL;                                                                                \
        psdl_status st = psdl_##f##_decode(a, d, n, &doc, e);                                         \
        *out = doc;                                                                                   \
        return st;                                                                                    \
    }                                                                                                 \
    static psdl_status enc_##f(const void *doc, void *dst, size_t cap, size_t *w, psdl_cerror *e) {  \
        return psdl_##f##_encode((const T *)doc, dst, cap, w, e);                                    \
    }                                                                                                 \
    static void rel_##f(void *doc) { psdl_##f##_free((T *)doc); }
WRAP(bai, psdl_bai)
WRAP(cpvs, psdl_cpvs)
WRAP(inst, psdl_inst)
WRAP(pathset, psdl_pathset)
WRAP(pkg, psdl_pkg)
WRAP(tex, psdl_tex)

static const fmt formats[] = {
    {"bai", dec_bai, enc_bai, rel_bai, vec_bai, sizeof vec_bai},
    {"cpvs", dec_cpvs, enc_cpvs, rel_cpvs, vec_cpvs, sizeof vec_cpvs},
    {"inst", dec_inst, enc_inst, rel_inst, vec_inst, sizeof vec_inst},
    {"pathset", dec_pathset, enc_pathset, rel_pathset, vec_pathset, sizeof vec_pathset},
    {"pkg", dec_pkg, enc_pkg, rel_pkg, vec_pkg, sizeof vec_pkg},
    {"tex", dec_tex, enc_tex, rel_tex, vec_tex, sizeof vec_tex},
};
#define NFORMATS (sizeof formats / sizeof formats[0])

static const fmt *format_named(const char *name) {
    for (size_t i = 0; i < NFORMATS; i++)
        if (strcmp(formats[i].name, name) == 0) return &formats[i];
    return NULL;
}

static psdl_alloc count_alloc_of(count_alloc *c) {
    psdl_alloc a = {count_realloc, c};
    return a;
}

/* Does doc encode to exactly p[0 .. n-1]? */
static int reencodes_to(const fmt *f, const void *doc, const unsigned char *p, size_t n) {
    size_t need = 0;
    psdl_cerror err;
    if (f->encode(doc, NULL, 0, &need, &err) != PSDL_OK || need != n) return 0;
    unsigned char *out = malloc(n ? n : 1);
    if (!out) abort();
    size_t w = 0;
    int ok = f->encode(doc, out, n, &w, &err) == PSDL_OK && w == n && memcmp(out, p, n) == 0;
    free(out);
    return ok;
}

/* The lossless property on one input (an exact-size copy, so overreads are caught): a
 * successful decode re-encodes to the input; a failure carries its status, a "<fmt>: "
 * message and an offset within the input; no single allocation beyond alloc_bound; nothing
 * left allocated. *st_out (may be NULL) receives the status. */
static int decode_lossless(const fmt *f, const unsigned char *data, size_t n, psdl_status *st_out) {
    unsigned char *p = malloc(n ? n : 1);
    if (!p) abort();
    memcpy(p, data, n);
    count_alloc ca;
    count_alloc_reset(&ca);
    psdl_alloc al = count_alloc_of(&ca);
    void *doc = NULL;
    psdl_cerror err;
    psdl_status st = f->decode(&al, p, n, &doc, &err);
    if (st_out) *st_out = st;
    int ok = ca.max_single <= alloc_bound(n);
    if (st == PSDL_OK) {
        ok = ok && doc != NULL && reencodes_to(f, doc, p, n);
        f->release(doc);
    } else {
        size_t fl = strlen(f->name);
        ok = ok && doc == NULL && err.code == st && strncmp(err.message, f->name, fl) == 0 &&
             err.message[fl] == ':' && err.offset <= n;
    }
    ok = ok && ca.live == 0;
    free(p);
    return ok;
}

/* ==================================================================== a) examples */

static void *decode_ok(const fmt *f, const unsigned char *p, size_t n) {
    void *doc = NULL;
    psdl_cerror err;
    psdl_status st = f->decode(NULL, p, n, &doc, &err);
    CHECKF(st == PSDL_OK, "%s", err.message);
    return st == PSDL_OK ? doc : NULL;
}

static int feq(float a, float b) { return a == b; }

static void test_examples(void) {
    for (size_t i = 0; i < NFORMATS; i++) {
        const fmt *f = &formats[i];
        set_ctx("example %s", f->name);
        void *doc = decode_ok(f, f->vec, f->nvec);
        if (!doc) continue;
        CHECK(reencodes_to(f, doc, f->vec, f->nvec));
        f->release(doc);
    }

    set_ctx("bai §2.12 fields");
    psdl_bai *b = decode_ok(&formats[0], vec_bai, sizeof vec_bai);
    if (b) {
        CHECK_EQ(sizeof vec_bai, 646);
        CHECK_EQ(b->nroads, 1);
        CHECK_EQ(b->nintersections, 2);
        const psdl_bai_road *r = &b->roads[0];
        CHECK_EQ(r->nsections, 2);
        CHECK_EQ(r->nrooms, 1);
        CHECK_EQ(r->rooms[0], 2);
        CHECK(feq(r->half_width, 5.0f) && feq(r->speed_limit, 15.0f));
        CHECK_EQ(r->side[0].nlanes, 1);
        CHECK_EQ(r->side[0].nsidewalks, 1);
        /* side A's lane runs from the last section to the first (§2.4 item 3) */
        CHECK(feq(r->side[0].lanes[0].z, 40.0f) && feq(r->side[0].lanes[1].z, 0.0f));
        CHECK(feq(r->side[1].lanes[0].z, 0.0f) && feq(r->side[1].lanes[1].x, -2.5f));
        CHECK(feq(r->side[0].lengths[3], 40.0f) && feq(r->side[0].lateral[1], 7.5f));
        CHECK(feq(r->side[0].params[3], 10.0f));
        CHECK(feq(r->side[0].edge[1].y, 0.15f));
        CHECK(feq(r->z_axis[0].z, -1.0f) && feq(r->w_axis[1].z, 1.0f));
        CHECK_EQ(r->end[0].intersection, 1);
        CHECK_EQ(r->end[0].light_index, 0xCDCD);
        CHECK_EQ(r->end[0].rule, 3);
        CHECK_EQ(r->end[1].intersection, 0);
        CHECK_EQ(b->intersections[1].room, 3);
        CHECK(feq(b->intersections[0].center.z, -10.0f));
        CHECK_EQ(b->ncull, 4);
        CHECK_EQ(b->near[0].n, 0);
        CHECK_EQ(b->in[3].n, 1);
        CHECK_EQ(b->in[3].roads[0], 0);
        CHECK(b->trailing == NULL);
        psdl_bai_free(b);
    }

    set_ctx("cpvs §3.6 fields");
    psdl_cpvs *c = decode_ok(&formats[1], vec_cpvs, sizeof vec_cpvs);
    if (c) {
        CHECK_EQ(c->n, 5);
        for (int k = 0; k < 3; k++) {
            CHECK_EQ(c->rows[k].len, 2);
            uint8_t row[4];
            size_t len;
            CHECK(psdl_cpvs_rle_decode(c->rows[k].rle, c->rows[k].len, row, sizeof row, &len) == 0);
            CHECK(len == 1 && row[0] == 0xFC);
        }
        psdl_cpvs_free(c);
    }

    set_ctx("inst §4.6 fields");
    psdl_inst *t = decode_ok(&formats[2], vec_inst, sizeof vec_inst);
    if (t) {
        CHECK_EQ(t->nrecords, 2);
        CHECK_EQ(t->records[0].room, 3);
        CHECK(t->records[0].compact);
        CHECK(strcmp(t->records[0].name, "sp_stop_f") == 0);
        CHECK(feq(t->records[0].m[0].x, 0.6f) && feq(t->records[0].m[0].z, 0.8f));
        CHECK(feq(t->records[0].m[3].x, -6.0f) && feq(t->records[0].m[3].z, 38.0f));
        CHECK(!t->records[1].compact);
        CHECK_EQ(t->records[1].flags, 0x100);
        CHECK(feq(t->records[1].m[2].z, 2.0f));
        psdl_inst_free(t);
    }

    set_ctx("pathset §5.2 fields");
    psdl_pathset *ps = decode_ok(&formats[3], vec_pathset, sizeof vec_pathset);
    if (ps) {
        CHECK_EQ(ps->npaths, 1);
        CHECK(strcmp(ps->paths[0].name, "PATH00") == 0);
        CHECK_EQ(ps->paths[0].npoints, 2);
        CHECK_EQ(ps->paths[0].type, 2);
        CHECK_EQ(ps->paths[0].spacing, 24);
        CHECK(feq(ps->paths[0].points[1].z, 35.0f));
        psdl_pathset_free(ps);
    }

    set_ctx("pkg §7.3 fields");
    psdl_pkg *p = decode_ok(&formats[4], vec_pkg, sizeof vec_pkg);
    if (p) {
        CHECK_EQ(sizeof vec_pkg, 251);
        CHECK_EQ(p->nchunks, 2);
        CHECK_EQ(p->chunks[0].kind, PSDL_PKG_GEOMETRY);
        CHECK_EQ(p->chunks[0].geometry.fvf, 0x112);
        const psdl_pkg_packet *pk = &p->chunks[0].geometry.sections[0].packets[0];
        CHECK_EQ(pk->nvertices, 4);
        CHECK_EQ(pk->nindices, 6);
        CHECK_EQ(pk->indices[1], 2);
        CHECK(feq(pk->vertices[2].position.z, 60.0f) && feq(pk->vertices[2].u, 1.0f));
        CHECK_EQ(p->chunks[1].kind, PSDL_PKG_SHADERS);
        CHECK(p->chunks[1].shaders.compact);
        CHECK(strcmp(p->chunks[1].shaders.shaders[0].name, "hudmap_mycity") == 0);
        CHECK_EQ(p->chunks[1].shaders.shaders[0].bytes[2][3], 255);
        psdl_pkg_free(p);
    }

    set_ctx("tex §9 fields");
    psdl_tex *x = decode_ok(&formats[5], vec_tex, sizeof vec_tex);
    if (x) {
        CHECK_EQ(sizeof vec_tex, 77);
        CHECK(x->width == 4 && x->height == 4 && x->format == 17 && x->mips == 3);
        CHECK_EQ(x->flags, 0x10001);
        CHECK_EQ(x->nlevels, 3);
        CHECK(x->level_size[0] == 48 && x->level_size[1] == 12 && x->level_size[2] == 3);
        psdl_tex_free(x);
    }
}

/* ==================================================================== b) prefixes, f) mutations */

static void test_prefixes(void) {
    for (size_t i = 0; i < NFORMATS; i++) {
        const fmt *f = &formats[i];
        size_t decoded = 0;
        for (size_t n = 0; n < f->nvec; n++) {
            set_ctx("%s prefix %zu", f->name, n);
            psdl_status st;
            CHECK(decode_lossless(f, f->vec, n, &st));
            if (st == PSDL_OK) decoded++;
        }
        /* only record boundaries of the record lists (inst, pkg chunks) decode */
        set_ctx("%s prefixes", f->name);
        if (!strcmp(f->name, "inst") || !strcmp(f->name, "pkg"))
            CHECK_EQ(decoded, 2); /* empty / magic-only and the first record */
        else
            CHECK_EQ(decoded, 0);
    }
}

static uint32_t lcg(uint32_t *s) {
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

static void test_mutations(void) {
    uint32_t seed = 12345;
    for (size_t i = 0; i < NFORMATS; i++) {
        const fmt *f = &formats[i];
        unsigned char *p = malloc(f->nvec);
        if (!p) abort();
        unsigned long decoded = 0, runs = 3000;
        for (unsigned long r = 0; r < runs; r++) {
            memcpy(p, f->vec, f->nvec);
            unsigned flips = 1 + lcg(&seed) % 4;
            for (unsigned k = 0; k < flips; k++) p[lcg(&seed) % f->nvec] = (unsigned char)lcg(&seed);
            size_t n = f->nvec - (lcg(&seed) % 8 == 0 ? lcg(&seed) % f->nvec : 0);
            set_ctx("%s mutation %lu", f->name, r);
            psdl_status st;
            if (!CHECK(decode_lossless(f, p, n, &st))) break;
            if (st == PSDL_OK) decoded++;
        }
        printf("  mutations %s: %lu runs, %lu decode\n", f->name, runs, decoded);
        free(p);
    }
}

/* ==================================================================== c) huge counts, d) nomem */

static void put32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

typedef struct count_case {
    const char *format, *what;
    size_t offset, width;
    uint32_t value;
    psdl_status want;
} count_case;

static void test_huge_counts(void) {
    static const count_case cases[] = {
        {"bai", "nIntersections", 4, 2, 0xFFFF, PSDL_E_BAD_COUNT},
        {"bai", "nRoads", 6, 2, 0xFFFF, PSDL_E_BAD_COUNT},
        {"bai", "road nSections", 10, 2, 0xFFFF, PSDL_E_BAD_COUNT},
        {"bai", "road nRooms", 14, 2, 0xFFFF, PSDL_E_BAD_COUNT},
        {"bai", "side A nLanes", 0x1a, 2, 0xFFFF, PSDL_E_BAD_COUNT},
        {"bai", "side A nTrams", 0x1c, 2, 0xFFFF, PSDL_E_BAD_COUNT},
        {"bai", "side B nTrains", 0xc4 + 4, 2, 0xFFFF, PSDL_E_BAD_COUNT},
        {"bai", "junction 1 nRoads", 0x250 + 16, 2, 0xFFFF, PSDL_E_BAD_COUNT},
        {"bai", "nCullRooms", 0x266, 4, 0xFFFFFFFFu, PSDL_E_BAD_COUNT},
        {"bai", "nCullRooms wrap", 0x266, 4, 0x80000000u, PSDL_E_BAD_COUNT},
        {"cpvs", "n", 4, 4, 0xFFFFFFFFu, PSDL_E_BAD_COUNT},
        {"cpvs", "n = 1", 4, 4, 1, PSDL_E_BAD_COUNT},
        {"cpvs", "end offset", 20, 4, 0xFFFFFFFFu, PSDL_E_BAD_INDEX},
        {"pathset", "nPaths", 4, 4, 0xFFFFFFFFu, PSDL_E_BAD_COUNT},
        {"pathset", "nPoints", 44, 4, 0xFFFFFFFFu, PSDL_E_BAD_COUNT},
        {"pathset", "nPoints wrap", 44, 4, 0x10000000u, PSDL_E_BAD_COUNT},
        {"pkg", "chunk size", 11, 4, 0xFFFFFFFFu, PSDL_E_TRUNCATED},
        {"tex", "mips", 6, 2, 0xFFFF, PSDL_E_BAD_COUNT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const count_case *k = &cases[i];
        const fmt *f = format_named(k->format);
        set_ctx("%s %s", k->format, k->what);
        unsigned char *p = malloc(f->nvec);
        if (!p) abort();
        memcpy(p, f->vec, f->nvec);
        if (k->width == 2) {
            p[k->offset] = (unsigned char)k->value;
            p[k->offset + 1] = (unsigned char)(k->value >> 8);
        } else {
            put32(p + k->offset, k->value);
        }
        count_alloc ca;
        count_alloc_reset(&ca);
        psdl_alloc al = count_alloc_of(&ca);
        void *doc = NULL;
        psdl_cerror err;
        psdl_status st = f->decode(&al, p, f->nvec, &doc, &err);
        CHECKF(st == k->want, "got %s: %s", psdl_status_name(st), st == PSDL_OK ? "" : err.message);
        CHECKF(ca.max_single <= alloc_bound(f->nvec), "largest allocation %zu", ca.max_single);
        if (doc) f->release(doc);
        CHECK_EQ(ca.live, 0);
        free(p);
    }
}

static void test_nomem(void) {
    for (size_t i = 0; i < NFORMATS; i++) {
        const fmt *f = &formats[i];
        for (long at = 0; at < 10000; at++) {
            set_ctx("%s allocation %ld fails", f->name, at);
            count_alloc ca;
            count_alloc_reset(&ca);
            ca.fail_at = at;
            psdl_alloc al = count_alloc_of(&ca);
            void *doc = NULL;
            psdl_cerror err;
            psdl_status st = f->decode(&al, f->vec, f->nvec, &doc, &err);
            if (st == PSDL_OK) {
                CHECK(reencodes_to(f, doc, f->vec, f->nvec));
                f->release(doc);
                CHECK_EQ(ca.live, 0);
                break;
            }
            CHECKF(st == PSDL_E_NOMEM, "%s", err.message);
            CHECK_EQ(ca.live, 0);
        }
    }
}

/* ==================================================================== e) format cases */

static psdl_status try_decode(const char *format, const unsigned char *p, size_t n, psdl_cerror *err) {
    const fmt *f = format_named(format);
    void *doc = NULL;
    psdl_status st = f->decode(NULL, p, n, &doc, err);
    if (doc) {
        CHECK(reencodes_to(f, doc, p, n));
        f->release(doc);
    }
    return st;
}

static void test_rle(void) {
    set_ctx("rle");
    uint32_t seed = 7;
    unsigned char src[700], comp[800], back[700];
    for (int run = 0; run < 300; run++) {
        size_t n = lcg(&seed) % sizeof src;
        unsigned mode = lcg(&seed) % 3;
        for (size_t i = 0; i < n; i++)
            src[i] = mode == 0 ? (unsigned char)lcg(&seed) : (unsigned char)(lcg(&seed) % 7 == 0 ? 0xFC : 0);
        size_t cl = psdl_cpvs_rle_encode(src, n, NULL);
        CHECK(cl <= n + (n + 127) / 128);
        CHECK_EQ(psdl_cpvs_rle_encode(src, n, comp), cl);
        size_t dl;
        CHECK(psdl_cpvs_rle_decode(comp, cl, back, sizeof back, &dl) == 0);
        CHECK(dl == n && memcmp(back, src, n) == 0);
    }
    /* the example row is a 1-byte literal */
    unsigned char one = 0xFC;
    CHECK_EQ(psdl_cpvs_rle_encode(&one, 1, comp), 2);
    CHECK(comp[0] == 0x80 && comp[1] == 0xFC);
    /* 200 zero bytes: repeats of 127 and 73 */
    memset(src, 0, 200);
    CHECK_EQ(psdl_cpvs_rle_encode(src, 200, comp), 4);
    CHECK(comp[0] == 127 && comp[2] == 73);
    /* a literal run longer than the row, a repeat without its byte */
    const unsigned char bad1[] = {0x83, 1, 2}, bad2[] = {0x05};
    size_t at;
    CHECK(psdl_cpvs_rle_decode(bad1, sizeof bad1, NULL, 0, &at) == -1 && at == 0);
    CHECK(psdl_cpvs_rle_decode(bad2, sizeof bad2, NULL, 0, &at) == -1 && at == 0);
    /* a short destination gets what fits and nothing more (ASan checks the bound) */
    {
        const unsigned char runs[] = {0x82, 1, 2, 3, 0x05, 9, 0x81, 4, 5};
        unsigned char *small = malloc(2);
        if (!small) abort();
        CHECK(psdl_cpvs_rle_decode(runs, sizeof runs, small, 2, &at) == 0 && at == 10);
        CHECK(small[0] == 1 && small[1] == 2);
        free(small);
    }
    /* repeat count 0 decompresses to nothing and stays lossless */
    const unsigned char zero[] = {0x00, 0xAA};
    CHECK(psdl_cpvs_rle_decode(zero, 2, NULL, 0, &at) == 0 && at == 0);
}

static void test_cases(void) {
    psdl_cerror err;
    unsigned char buf[1024];

    set_ctx("bad magic");
    CHECK_EQ(try_decode("bai", (const unsigned char *)"CAI2", 4, &err), PSDL_E_BAD_MAGIC);
    CHECK_EQ(try_decode("cpvs", (const unsigned char *)"PVS1\5\0\0\0", 8, &err), PSDL_E_BAD_MAGIC);
    CHECK_EQ(try_decode("pathset", (const unsigned char *)"PTH0", 4, &err), PSDL_E_BAD_MAGIC);
    CHECK_EQ(try_decode("pkg", (const unsigned char *)"PKG2FILE", 8, &err), PSDL_E_BAD_MAGIC);
    CHECK(strstr(err.message, "PKG2") != NULL);

    set_ctx("bai trailing bytes kept");
    memcpy(buf, vec_bai, sizeof vec_bai);
    memcpy(buf + sizeof vec_bai, "xyz", 3);
    psdl_bai *b = NULL;
    CHECK_EQ(psdl_bai_decode(NULL, buf, sizeof vec_bai + 3, &b, &err), PSDL_OK);
    if (b) {
        CHECK(b->ntrailing == 3 && memcmp(b->trailing, "xyz", 3) == 0);
        CHECK(reencodes_to(&formats[0], b, buf, sizeof vec_bai + 3));
        psdl_bai_free(b);
    }

    set_ctx("bai error messages");
    CHECK_EQ(try_decode("bai", vec_bai, 0x268, &err), PSDL_E_TRUNCATED);
    CHECK(strcmp(err.message, "bai: truncated: need 4 bytes for culling room count, 2 left at offset 0x266") == 0);
    CHECK_EQ(try_decode("bai", vec_bai, 0x100, &err), PSDL_E_BAD_COUNT); /* side B cannot fit */
    CHECK(strncmp(err.message, "bai: bad_count: side B", 22) == 0 && strstr(err.message, "(record 1)") != NULL);
    CHECK(err.record == 0 && err.offset == 0xc4 + 10);

    set_ctx("cpvs offsets");
    memcpy(buf, vec_cpvs, sizeof vec_cpvs);
    put32(buf + 8, 1); /* first offset not 0 */
    CHECK_EQ(try_decode("cpvs", buf, sizeof vec_cpvs, &err), PSDL_E_BAD_INDEX);
    CHECK_EQ(err.offset, 8);
    memcpy(buf, vec_cpvs, sizeof vec_cpvs);
    put32(buf + 16, 1); /* below the previous offset 2 */
    CHECK_EQ(try_decode("cpvs", buf, sizeof vec_cpvs, &err), PSDL_E_BAD_INDEX);
    CHECK_EQ(err.record, 2);
    memcpy(buf, vec_cpvs, sizeof vec_cpvs);
    put32(buf + 20, 4); /* end offset short: two bytes kept as trailing */
    psdl_cpvs *c = NULL;
    CHECK_EQ(psdl_cpvs_decode(NULL, buf, sizeof vec_cpvs, &c, &err), PSDL_OK);
    if (c) {
        CHECK_EQ(c->ntrailing, 2);
        CHECK_EQ(c->rows[2].len, 0);
        CHECK(reencodes_to(&formats[1], c, buf, sizeof vec_cpvs));
        psdl_cpvs_free(c);
    }
    memcpy(buf, vec_cpvs, sizeof vec_cpvs);
    buf[24] = 0x85; /* row 1: literal of 6 bytes in a 2-byte row */
    CHECK_EQ(try_decode("cpvs", buf, sizeof vec_cpvs, &err), PSDL_E_BAD_COUNT);
    CHECK_EQ(err.record, 0);

    set_ctx("inst names");
    memcpy(buf, vec_inst, 35);
    buf[14] = 'x'; /* the NUL of "sp_stop_f" */
    CHECK_EQ(try_decode("inst", buf, 35, &err), PSDL_E_BAD_STRING);
    memcpy(buf, vec_inst, 35);
    buf[4] = 0x80; /* name length 0 */
    CHECK_EQ(try_decode("inst", buf, 35, &err), PSDL_E_BAD_STRING);
    CHECK_EQ(try_decode("inst", vec_inst, 34, &err), PSDL_E_TRUNCATED);
    CHECK_EQ(try_decode("inst", (const unsigned char *)"", 0, &err), PSDL_OK);

    set_ctx("pathset name garbage kept");
    memcpy(buf, vec_pathset, sizeof vec_pathset);
    buf[12 + 20] = 'Z';
    psdl_pathset *ps = NULL;
    CHECK_EQ(psdl_pathset_decode(NULL, buf, sizeof vec_pathset, &ps, &err), PSDL_OK);
    if (ps) {
        CHECK(strcmp(ps->paths[0].name, "PATH00") == 0 && ps->paths[0].name[20] == 'Z');
        CHECK(reencodes_to(&formats[3], ps, buf, sizeof vec_pathset));
        psdl_pathset_free(ps);
    }

    set_ctx("pkg raw fallback");
    memcpy(buf, vec_pkg, sizeof vec_pkg);
    buf[15 + 12] = 2; /* nSections2 != nSections: no view, raw body */
    psdl_pkg *p = NULL;
    CHECK_EQ(psdl_pkg_decode(NULL, buf, sizeof vec_pkg, &p, &err), PSDL_OK);
    if (p) {
        CHECK_EQ(p->chunks[0].kind, PSDL_PKG_RAW);
        CHECK_EQ(p->chunks[1].kind, PSDL_PKG_SHADERS);
        CHECK(reencodes_to(&formats[4], p, buf, sizeof vec_pkg));
        psdl_pkg_free(p);
    }
    memcpy(buf, vec_pkg, sizeof vec_pkg);
    buf[0xb7] = 9; /* index 0 -> 9: past the 4 vertices, kept raw (MM2 does not check) */
    p = NULL;
    CHECK_EQ(psdl_pkg_decode(NULL, buf, sizeof vec_pkg, &p, &err), PSDL_OK);
    if (p) {
        CHECK_EQ(p->chunks[0].kind, PSDL_PKG_RAW);
        CHECK(reencodes_to(&formats[4], p, buf, sizeof vec_pkg));
        psdl_pkg_free(p);
    }
    memcpy(buf, vec_pkg, sizeof vec_pkg);
    buf[4] = 'X'; /* chunk tag */
    CHECK_EQ(try_decode("pkg", buf, sizeof vec_pkg, &err), PSDL_E_BAD_MAGIC);
    CHECK_EQ(err.record, 0);

    set_ctx("pkg encoder refusals");
    p = decode_ok(&formats[4], vec_pkg, sizeof vec_pkg);
    if (p) {
        size_t n;
        psdl_pkg_packet *pk = &p->chunks[0].geometry.sections[0].packets[0];
        pk->indices[5] = 4;
        CHECK_EQ(psdl_pkg_encode(p, NULL, 0, &n, &err), PSDL_E_INVALID);
        CHECK(strstr(err.message, "index 6") != NULL);
        pk->indices[5] = 2;
        pk->nindices = 5;
        CHECK_EQ(psdl_pkg_encode(p, NULL, 0, &n, &err), PSDL_E_INVALID);
        pk->nindices = 6;
        p->chunks[0].geometry.fvf = 0x142 | 0x200;
        CHECK_EQ(psdl_pkg_encode(p, NULL, 0, &n, &err), PSDL_E_INVALID);
        p->chunks[0].geometry.fvf = 0x112;
        CHECK_EQ(psdl_pkg_encode(p, buf, 10, &n, &err), PSDL_E_INVALID); /* buffer too small */
        CHECK_EQ(psdl_pkg_encode(p, buf, sizeof buf, &n, &err), PSDL_OK);
        CHECK(n == sizeof vec_pkg && memcmp(buf, vec_pkg, n) == 0);
        psdl_pkg_free(p);
    }

    set_ctx("tex layouts");
    CHECK_EQ(psdl_tex_level_count(4, 4, 0), 3);
    CHECK_EQ(psdl_tex_level_count(8, 2, 0), 2);
    CHECK_EQ(psdl_tex_level_size(4, 4, 17, 0), 48);
    CHECK_EQ(psdl_tex_level_size(4, 4, 15, 2), 1); /* P4 1x1: half a byte rounds up */
    CHECK_EQ(psdl_tex_level_size(256, 256, 1, 0), 65536);
    {
        /* P8 2x2 with 2 levels: 14 + 1024 + 4 + 1 bytes */
        size_t n = 14 + 1024 + 5;
        unsigned char *t = calloc(1, n);
        if (!t) abort();
        t[0] = 2, t[2] = 2, t[4] = 1, t[6] = 2, t[8] = 1;
        psdl_tex *x = NULL;
        CHECK_EQ(psdl_tex_decode(NULL, t, n, &x, &err), PSDL_OK);
        if (x) {
            CHECK_EQ(x->npalette, 1024);
            CHECK_EQ(x->nlevels, 2);
            CHECK(reencodes_to(&formats[5], x, t, n));
            psdl_tex_free(x);
        }
        t[4] = 22; /* DXT1: not an MM2 layout, kept whole */
        x = NULL;
        CHECK_EQ(psdl_tex_decode(NULL, t, n, &x, &err), PSDL_OK);
        if (x) {
            CHECK(!x->layout_known && x->ndata == n - 14);
            CHECK(reencodes_to(&formats[5], x, t, n));
            psdl_tex_free(x);
        }
        t[0] = 0; /* width 0 */
        CHECK_EQ(try_decode("tex", t, n, &err), PSDL_E_BAD_COUNT);
        free(t);
    }
    {
        /* box filter: 2x2 RGBA -> 1x1 average, 1x4 -> 1x2 */
        const unsigned char px[16] = {0, 0, 0, 0, 255, 255, 255, 255, 100, 0, 0, 0, 100, 0, 0, 0};
        unsigned char out[8];
        psdl_tex_halve(px, 2, 2, 4, out);
        CHECK(out[0] == 114 && out[3] == 64);
        psdl_tex_halve(px, 1, 4, 4, out);
        CHECK(out[0] == 128 && out[4] == 100);
    }

    set_ctx("detect");
    CHECK(strcmp(psdl_companion_detect(vec_bai, 4), "bai") == 0);
    CHECK(strcmp(psdl_companion_detect(vec_cpvs, 4), "cpvs") == 0);
    CHECK(strcmp(psdl_companion_detect(vec_pathset, 4), "pathset") == 0);
    CHECK(strcmp(psdl_companion_detect(vec_pkg, 4), "pkg") == 0);
    CHECK(psdl_companion_detect(vec_tex, sizeof vec_tex) == NULL);
    CHECK(psdl_companion_detect("PSD", 3) == NULL);
}

/* ==================================================================== g) crashers */

static void test_crashers(const char *dir) {
    DIR *d = opendir(dir);
    size_t n = 0;
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char name[256];
        snprintf(name, sizeof name, "%s", e->d_name);
        char *dash = strchr(name, '-');
        if (!dash) continue;
        *dash = 0;
        const fmt *f = format_named(name);
        if (!f) continue;
        char path[1400];
        snprintf(path, sizeof path, "%.1023s/%.255s", dir, e->d_name);
        size_t size = 0;
        unsigned char *data = read_file(path, &size);
        set_ctx("crasher %s", e->d_name);
        if (!CHECKF(data != NULL, "cannot read %s", path)) continue;
        CHECK(decode_lossless(f, data, size, NULL));
        free(data);
        n++;
    }
    closedir(d);
    printf("  crashers: %zu companion inputs in %s\n", n, dir);
}

int main(int argc, char **argv) {
    char crashers[1024];
    crashers_dir(argc, argv, crashers, sizeof crashers);
    (void)count_options; /* test_util.h helper for psdl_options; this program uses psdl_alloc */
    test_examples();
    test_prefixes();
    test_huge_counts();
    test_nomem();
    test_rle();
    test_cases();
    test_mutations();
    test_crashers(crashers);
    printf("c: %lu passed, %lu failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
