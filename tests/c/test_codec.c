/* test_codec.c -- plain-C tests of the psdl core (no Lua).
 *
 *   psdl_ctest <fixtures-dir> [crashers-dir]
 *
 * Every CHECK counts once. The last line printed is "c: N passed, N failed"; the exit status
 * is non-zero when any check failed. crashers-dir defaults to the "crashers" folder beside
 * this source file (tests/c/crashers).
 *
 * Sections: fixtures (round trip, validation, re-pack), truncation sweep, huge count fields
 * with a counting allocator, allocation failure injection, hand-built files per attribute
 * type and form, exact format cases, validation rules, in-memory documents and
 * psdl_room_pack, byte mutations, crash regressions. */
#define _POSIX_C_SOURCE 200809L
#include "psdl.h"
#include "test_util.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ==================================================================== check framework */

#include "check.h"

#define CHECK_EQ_N CHECK_EQ
#define CHECK_STR(a, b) check_str_impl((a), (b), __FILE__, __LINE__, #a " == " #b)
#define CHECK_STATUS(st, want, err)                                                              \
    check_impl((st) == (want), __FILE__, __LINE__, #st " == " #want, "got %s, want %s: %s",     \
               psdl_status_name(st), psdl_status_name(want), (err).message)

/* ==================================================================== small helpers */


static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names in dir that end with suffix (NULL = every regular-looking name). */
static char **list_dir(const char *dir, const char *suffix, size_t *count) {
    *count = 0;
    DIR *d = opendir(dir);
    if (!d) return NULL;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *nm = e->d_name;
        if (nm[0] == '.') continue;
        size_t len = strlen(nm);
        if (suffix) {
            size_t sl = strlen(suffix);
            if (len < sl || strcmp(nm + len - sl, suffix) != 0) continue;
        } else if (strcmp(nm, "README.md") == 0) {
            continue;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            char **nn = realloc(names, cap * sizeof *names);
            if (!nn) abort();
            names = nn;
        }
        names[n] = malloc(len + 1);
        if (!names[n]) abort();
        memcpy(names[n], nm, len + 1);
        n++;
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, cmp_str);
    *count = n;
    return names;
}

static void free_list(char **names, size_t n) {
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
}

/* "<dir>/<name>" in a malloc'd string. */
static char *join_path(const char *dir, const char *name) {
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (!p) abort();
    memcpy(p, dir, a);
    p[a] = '/';
    memcpy(p + a + 1, name, b + 1);
    return p;
}

/* The file `name` in dir read whole into a malloc'd buffer (*size bytes), or NULL: after a
 * failed check naming the path, or quietly when `optional`. */
static unsigned char *read_fixture(const char *dir, const char *name, size_t *size, int optional) {
    char *path = join_path(dir, name);
    *size = 0;
    unsigned char *data = read_file(path, size);
    if (!optional) CHECKF(data != NULL, "cannot read %s", path);
    free(path);
    return data;
}

/* Encode doc into a fresh exact-size buffer; NULL (and *size 0) on failure. */
static unsigned char *encode_doc(const psdl_doc *doc, size_t *size, psdl_error *err) {
    *size = 0;
    size_t need = psdl_encoded_size(doc);
    if (need == 0) return NULL;
    unsigned char *out = malloc(need);
    if (!out) abort();
    size_t written = 0;
    if (psdl_encode(doc, out, need, &written, err) != PSDL_OK || written != need) {
        free(out);
        return NULL;
    }
    *size = written;
    return out;
}

/* 1 when doc encodes to exactly data[0..size). */
static int reencodes_to(const psdl_doc *doc, const unsigned char *data, size_t size) {
    psdl_error err;
    size_t n = 0;
    if (psdl_encoded_size(doc) != size) return 0;
    unsigned char *out = encode_doc(doc, &n, &err);
    int ok = out && n == size && memcmp(out, data, size) == 0;
    free(out);
    return ok;
}

static int starts_with(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

/* ==================================================================== problem lists */

typedef struct plist {
    size_t n;
    psdl_problem p[256];
} plist;

static int collect_problem(void *ud, const psdl_problem *p) {
    plist *l = ud;
    if (l->n < sizeof l->p / sizeof l->p[0]) l->p[l->n++] = *p;
    return 0;
}

static const psdl_problem *find_problem(const plist *l, const char *rule, psdl_severity sev, const char *path) {
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->p[i].rule, rule) == 0 && l->p[i].severity == sev && (!path || strcmp(l->p[i].path, path) == 0))
            return &l->p[i];
    return NULL;
}

static void print_problems(const plist *l) {
    for (size_t i = 0; i < l->n; i++)
        printf("    reported: %s %s at %s: %s\n", l->p[i].severity == PSDL_SEV_ERROR ? "error" : "warning", l->p[i].rule,
               l->p[i].path, l->p[i].message);
}

/* Validate doc; check that rule was reported with severity sev at path. Returns the problem. */
static const psdl_problem *expect_rule_at(const psdl_doc *doc, const char *rule, psdl_severity sev, const char *path,
                                          const char *file, int line) {
    static plist l; /* large: keep it off the stack */
    l.n = 0;
    psdl_validate_result vr;
    psdl_validate(doc, collect_problem, &l, &vr);
    size_t e = 0, w = 0;
    for (size_t i = 0; i < l.n; i++) {
        if (l.p[i].severity == PSDL_SEV_ERROR)
            e++;
        else
            w++;
    }
    check_impl(l.n >= sizeof l.p / sizeof l.p[0] || (e == vr.errors && w == vr.warnings), file, line,
               "validate counts == callbacks", "%zu/%zu vs %zu/%zu", vr.errors, vr.warnings, e, w);
    const psdl_problem *p = find_problem(&l, rule, sev, path);
    if (!check_impl(p != NULL, file, line, rule, "no %s \"%s\" at %s", sev == PSDL_SEV_ERROR ? "error" : "warning",
                    rule, path))
        print_problems(&l);
    return p;
}
#define plist_check_rule(doc, rule, sev, path) expect_rule_at((doc), (rule), (sev), (path), __FILE__, __LINE__)

/* ==================================================================== file layout */

/* Byte offsets of the fields of a decoded document's file (§1.2), from its counts. */
typedef struct layout {
    size_t vcount, hcount, tcount, rcount, first_road, room_bytes, bounds, pcount, end;
    size_t *tex;  /* [ntextures]: offset of slot i's length byte (i >= 1) */
    size_t *room; /* [nrooms]: offset of room i's record (i >= 1) */
    size_t *road; /* [nroads] */
} layout;

static void layout_of(const psdl_doc *d, layout *L) {
    int psd1 = memcmp(d->magic, "PSD1", 4) == 0;
    size_t o = 8;
    L->vcount = o;
    o += 4 + 12u * (size_t)d->nvertices;
    L->hcount = o;
    o += 4 + 4u * (size_t)d->nheights;
    L->tcount = o;
    o += 4;
    L->tex = calloc(d->ntextures + 1, sizeof *L->tex);
    L->room = calloc(d->nrooms + 1, sizeof *L->room);
    L->road = calloc(d->nroads + 1, sizeof *L->road);
    if (!L->tex || !L->room || !L->road) abort();
    for (uint32_t i = 1; i < d->ntextures; i++) {
        L->tex[i] = o;
        o += d->textures[i].name ? 2u + d->textures[i].name_len + (psd1 ? 1u : 0u) : 1u;
    }
    L->rcount = o;
    o += 4;
    L->first_road = o;
    o += 4;
    for (uint32_t i = 1; i < d->nrooms; i++) {
        L->room[i] = o;
        o += 8 + 4u * (size_t)d->rooms[i].nperimeter + 2u * (size_t)d->rooms[i].nwords;
    }
    L->room_bytes = o;
    o += 2u * (size_t)d->nrooms;
    L->bounds = o;
    L->pcount = o + 40;
    if (d->has_tail) {
        o += 44;
        for (uint32_t i = 0; i < d->nroads; i++) {
            L->road[i] = o;
            const psdl_road *r = &d->roads[i];
            o += 25 + 4u * ((size_t)r->nleft + r->nright) + 2u * (size_t)r->nrooms;
        }
    }
    L->end = o;
}

static void layout_free(layout *L) {
    free(L->tex);
    free(L->room);
    free(L->road);
}

/* ==================================================================== byte builder */

typedef struct buf {
    unsigned char *p;
    size_t n, cap;
} buf;

static void b_reserve(buf *b, size_t extra) {
    if (b->n + extra <= b->cap) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + extra) cap *= 2;
    unsigned char *np = realloc(b->p, cap);
    if (!np) abort();
    b->p = np;
    b->cap = cap;
}
static void b_u8(buf *b, unsigned v) {
    b_reserve(b, 1);
    b->p[b->n++] = (unsigned char)v;
}
static void b_u16(buf *b, unsigned v) {
    b_u8(b, v & 0xFFu);
    b_u8(b, (v >> 8) & 0xFFu);
}
static void b_u32(buf *b, uint32_t v) {
    b_u16(b, v & 0xFFFFu);
    b_u16(b, v >> 16);
}
static void b_f32(buf *b, float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    b_u32(b, u);
}
static void b_mem(buf *b, const void *p, size_t n) {
    b_reserve(b, n);
    memcpy(b->p + b->n, p, n);
    b->n += n;
}
static void b_free(buf *b) {
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}
static void put_u32_at(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

#define MAXR 6

typedef struct mroom {
    uint32_t nper;
    const uint16_t *per; /* nper (vertex, neighbour) pairs */
    uint32_t nwords;
    const uint16_t *words;
    uint8_t flags, prop;
} mroom;

typedef struct mroad {
    uint32_t flags;
    uint8_t nl, nr;
    float lanes[8];
    uint8_t stop[2];
    uint16_t sc[4], ec[4];
    uint8_t nrooms;
    int16_t rooms[8];
} mroad;

/* A whole file to build: front to back as §1.2 lays it out. */
typedef struct mfile {
    char magic[5];
    uint32_t target;
    uint32_t nvert;
    const float *verts; /* 3 * nvert floats, or NULL for a 4-wide grid at y = 0 */
    uint32_t nheights;
    uint32_t ntex;            /* slots including slot 0 */
    const char *const *names; /* [ntex], [0] unused, NULL entry = empty slot; NULL = "t<i>" */
    const uint8_t *materials; /* [ntex] PSD1 material bytes, or NULL for i & 0xFF */
    uint32_t first_road_room;
    uint32_t nrooms; /* records, rooms[0] is room id 1 */
    mroom rooms[MAXR];
    uint8_t room0_flags, room0_prop;
    int no_tail; /* PSD1: end after the per-room bytes */
    uint32_t nroads;
    mroad roads[4];
} mfile;

typedef struct mlayout {
    size_t room_off[MAXR + 1];  /* by room id */
    size_t words_off[MAXR + 1]; /* by room id */
    size_t bytes_off, tail_off, pcount_off;
    size_t road_off[4];
    size_t road_rooms_off[4];
} mlayout;

static const uint16_t default_per[] = {5, 0, 6, 0, 10, 0, 9, 0};

static void mfile_init(mfile *m, const uint16_t *words, uint32_t nwords) {
    memset(m, 0, sizeof *m);
    memcpy(m->magic, "PSD0", 5);
    m->target = 2;
    m->nvert = 16;
    m->nheights = 4;
    m->ntex = 8;
    m->nrooms = 1;
    m->rooms[0].nper = 4;
    m->rooms[0].per = default_per;
    m->rooms[0].words = words;
    m->rooms[0].nwords = nwords;
    m->rooms[0].flags = 0x04;
    m->room0_prop = 0xCD;
}

static void mroad_init(mroad *r, int16_t room) {
    memset(r, 0, sizeof *r);
    r->flags = 0x10441;
    r->nl = r->nr = 1;
    r->lanes[0] = r->lanes[1] = 0.5f;
    r->stop[1] = 1;
    for (int k = 0; k < 4; k++) {
        r->sc[k] = (uint16_t)(1 + k);
        r->ec[k] = (uint16_t)(5 + k);
    }
    r->nrooms = 1;
    r->rooms[0] = room;
}

static void build(const mfile *m, buf *b, mlayout *L) {
    int psd1 = memcmp(m->magic, "PSD1", 4) == 0;
    mlayout local;
    if (!L) L = &local;
    memset(L, 0, sizeof *L);
    b->n = 0;
    b_mem(b, m->magic, 4);
    b_u32(b, m->target);
    b_u32(b, m->nvert);
    for (uint32_t i = 0; i < m->nvert; i++) {
        if (m->verts) {
            b_f32(b, m->verts[3 * i]);
            b_f32(b, m->verts[3 * i + 1]);
            b_f32(b, m->verts[3 * i + 2]);
        } else {
            b_f32(b, (float)(i % 4) * 10.0f);
            b_f32(b, 0.0f);
            b_f32(b, -(float)(i / 4) * 10.0f);
        }
    }
    b_u32(b, m->nheights);
    for (uint32_t i = 0; i < m->nheights; i++) b_f32(b, (float)i * 2.5f);
    b_u32(b, m->ntex);
    for (uint32_t i = 1; i < m->ntex; i++) {
        char tmp[32];
        const char *nm = tmp;
        if (m->names)
            nm = m->names[i];
        else
            snprintf(tmp, sizeof tmp, "t%u", (unsigned)i);
        if (!nm) {
            b_u8(b, 0);
            continue;
        }
        size_t len = strlen(nm);
        b_u8(b, (unsigned)len + 1);
        b_mem(b, nm, len + 1);
        if (psd1) b_u8(b, m->materials ? m->materials[i] : (i & 0xFFu));
    }
    b_u32(b, m->nrooms + 1);
    b_u32(b, m->first_road_room);
    for (uint32_t r = 0; r < m->nrooms; r++) {
        const mroom *rm = &m->rooms[r];
        L->room_off[r + 1] = b->n;
        b_u32(b, rm->nper);
        b_u32(b, rm->nwords);
        for (uint32_t k = 0; k < rm->nper; k++) {
            b_u16(b, rm->per[2 * k]);
            b_u16(b, rm->per[2 * k + 1]);
        }
        L->words_off[r + 1] = b->n;
        for (uint32_t k = 0; k < rm->nwords; k++) b_u16(b, rm->words[k]);
    }
    L->bytes_off = b->n;
    b_u8(b, m->room0_flags);
    for (uint32_t r = 0; r < m->nrooms; r++) b_u8(b, m->rooms[r].flags);
    b_u8(b, m->room0_prop);
    for (uint32_t r = 0; r < m->nrooms; r++) b_u8(b, m->rooms[r].prop);
    L->tail_off = b->n;
    if (psd1 && m->no_tail) return;
    b_f32(b, -1000.0f);
    b_f32(b, -100.0f);
    b_f32(b, -1000.0f);
    b_f32(b, 1000.0f);
    b_f32(b, 100.0f);
    b_f32(b, 1000.0f);
    b_f32(b, 0.0f);
    b_f32(b, 0.0f);
    b_f32(b, 0.0f);
    b_f32(b, 1500.0f);
    L->pcount_off = b->n;
    b_u32(b, m->nroads);
    for (uint32_t i = 0; i < m->nroads; i++) {
        const mroad *rd = &m->roads[i];
        L->road_off[i] = b->n;
        b_u32(b, rd->flags);
        b_u8(b, rd->nl);
        b_u8(b, rd->nr);
        for (unsigned k = 0; k < (unsigned)rd->nl + rd->nr; k++) b_f32(b, rd->lanes[k]);
        b_u8(b, rd->stop[0]);
        b_u8(b, rd->stop[1]);
        for (int k = 0; k < 4; k++) b_u16(b, rd->sc[k]);
        for (int k = 0; k < 4; k++) b_u16(b, rd->ec[k]);
        b_u8(b, rd->nrooms);
        L->road_rooms_off[i] = b->n;
        for (unsigned k = 0; k < rd->nrooms; k++) b_u16(b, (uint16_t)rd->rooms[k]);
    }
}

/* Build m, decode it; on success also check the re-encode is byte-exact (one check). */
static psdl_status build_decode(const mfile *m, buf *b, mlayout *L, psdl_doc **doc, psdl_error *err) {
    build(m, b, L);
    psdl_status st = psdl_decode(NULL, b->p, b->n, doc, err);
    if (st == PSDL_OK) CHECKF(reencodes_to(*doc, b->p, b->n), "re-encode of a %zu-byte built file", b->n);
    return st;
}

/* ==================================================================== a) fixtures */

static void repack_rooms(psdl_doc *doc, const char *name) {
    /* psdl_room_pack on every decoded room must give back the stored words */
    unsigned long bad = 0, first_bad = 0;
    for (uint32_t r = 1; r < doc->nrooms; r++) {
        psdl_room *rm = &doc->rooms[r];
        uint16_t *old = rm->words;
        uint32_t nold = rm->nwords;
        size_t sum = 0;
        for (uint32_t k = 0; k < rm->nattrs; k++) sum += psdl_attr_size(&rm->attrs[k]);
        psdl_error err;
        psdl_status st = psdl_room_pack(doc, rm, &err);
        if (st != PSDL_OK || sum != nold || rm->nwords != nold ||
            (nold && memcmp(rm->words, old, nold * sizeof *old) != 0)) {
            if (!bad) first_bad = r;
            bad++;
        }
        rm->words = old; /* keep the document as decoded */
        rm->nwords = nold;
    }
    CHECKF(bad == 0, "%s: %lu rooms re-pack differently from their stored words (first: room %lu)", name, bad,
           first_bad);
}

typedef struct rule_count {
    const char *rule;
    unsigned long n;
} rule_count;

typedef struct fixture_problems {
    rule_count rules[32];
    int nrules;
    unsigned long errors;
    char first_error[400];
} fixture_problems;

static int count_problem(void *ud, const psdl_problem *p) {
    fixture_problems *fp = ud;
    if (p->severity == PSDL_SEV_ERROR && fp->errors++ == 0)
        snprintf(fp->first_error, sizeof fp->first_error, "%s at %s: %s", p->rule, p->path, p->message);
    for (int i = 0; i < fp->nrules; i++)
        if (strcmp(fp->rules[i].rule, p->rule) == 0) {
            fp->rules[i].n++;
            return 0;
        }
    if (fp->nrules < 32) {
        fp->rules[fp->nrules].rule = p->rule;
        fp->rules[fp->nrules].n = 1;
        fp->nrules++;
    }
    return 0;
}

static void test_fixture(const char *dir, const char *name) {
    set_ctx("fixture %s", name);
    size_t size;
    unsigned char *data = read_fixture(dir, name, &size, 0);
    if (!data) return;

    count_alloc ca;
    psdl_doc *doc;
    psdl_error err;
    psdl_status st = decode_counted(&ca, data, size, &doc, &err);
    if (!CHECK_STATUS(st, PSDL_OK, err)) {
        free(data);
        return;
    }
    CHECKF(ca.max_single <= alloc_bound(size), "largest allocation %zu for %zu input bytes", ca.max_single, size);
    CHECK(memcmp(doc->magic, "PSD0", 4) == 0);
    CHECK_EQ(psdl_encoded_size(doc), size);
    size_t n = 0;
    unsigned char *out = encode_doc(doc, &n, &err);
    CHECK(out != NULL);
    CHECK_EQ(n, size);
    CHECKF(out && n == size && memcmp(out, data, size) == 0, "re-encoded bytes differ from %s", name);
    free(out);

    /* psdl_encode refuses a destination one byte short and writes nothing it reports */
    unsigned char *small = malloc(size);
    if (!small) abort();
    size_t written = 12345;
    st = psdl_encode(doc, small, size - 1, &written, &err);
    CHECK_STATUS(st, PSDL_E_INVALID, err);
    CHECK_EQ(written, 0);
    free(small);

    fixture_problems fp;
    memset(&fp, 0, sizeof fp);
    psdl_validate_result vr;
    /* the format's rules: the synthetic fixtures have holes by construction, which the
     * drivability rules report (test_drivable.c) */
    psdl_validate_ex(doc, PSDL_VALIDATE_NO_DRIVABLE, count_problem, &fp, &vr);
    CHECKF(vr.errors == 0, "%zu validation errors, first: %s", vr.errors, fp.first_error);
    CHECK_EQ(fp.errors, vr.errors);
    printf("  %s: %zu bytes, %lu rooms, %lu vertices, %lu roads; %zu errors, %zu warnings:", name, size,
           (unsigned long)doc->nrooms - 1, (unsigned long)doc->nvertices, (unsigned long)doc->nroads, vr.errors,
           vr.warnings);
    for (int i = 0; i < fp.nrules; i++) printf(" %s=%lu", fp.rules[i].rule, fp.rules[i].n);
    printf("\n");

    /* layout walk agrees with the file size (the offsets used below are right) */
    layout L;
    layout_of(doc, &L);
    CHECK_EQ(L.end, size);
    layout_free(&L);

    repack_rooms(doc, name);
    psdl_doc_free(doc);
    CHECK_EQ(ca.live, 0);

    /* decode limits: one below the file's count fails with bad_count at that count */
    psdl_doc *d2 = NULL;
    st = psdl_decode(NULL, data, size, &d2, &err);
    if (st == PSDL_OK) {
        uint32_t nv = d2->nvertices, nr = d2->nrooms;
        uint32_t maxw = 0;
        for (uint32_t r = 1; r < nr; r++)
            if (d2->rooms[r].nwords > maxw) maxw = d2->rooms[r].nwords;
        psdl_doc_free(d2);
        psdl_options lo;
        memset(&lo, 0, sizeof lo);
        lo.limits.max_vertices = nv - 1;
        st = psdl_decode(&lo, data, size, &d2, &err);
        CHECK_STATUS(st, PSDL_E_BAD_COUNT, err);
        CHECK_EQ(err.offset, 8);
        CHECK(d2 == NULL);
        lo.limits.max_vertices = nv;
        lo.limits.max_rooms = nr - 1;
        st = psdl_decode(&lo, data, size, &d2, &err);
        CHECK_STATUS(st, PSDL_OK, err);
        psdl_doc_free(d2);
        lo.limits.max_rooms = nr - 2;
        st = psdl_decode(&lo, data, size, &d2, &err);
        CHECK_STATUS(st, PSDL_E_BAD_COUNT, err);
        lo.limits.max_rooms = 0;
        lo.limits.max_attr_words = maxw - 1;
        st = psdl_decode(&lo, data, size, &d2, &err);
        CHECK_STATUS(st, PSDL_E_BAD_COUNT, err);
        CHECK(err.room >= 1);
        lo.limits.max_attr_words = maxw;
        st = psdl_decode(&lo, data, size, &d2, &err);
        CHECK_STATUS(st, PSDL_OK, err);
        psdl_doc_free(d2);
    }
    free(data);
}

/* ==================================================================== b) truncation */

/* Under AddressSanitizer the bytes past the truncation point are poisoned in place, so a read
 * beyond the given length is reported without copying the prefix for every length; without
 * it each prefix gets an exact-size heap copy. */
#if defined(__SANITIZE_ADDRESS__)
#define PSDL_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PSDL_TEST_ASAN 1
#endif
#endif
#ifdef PSDL_TEST_ASAN
void __asan_poison_memory_region(void const volatile *addr, size_t size);
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
#endif

static void test_truncation(const char *dir, const char *name) {
    set_ctx("truncate %s", name);
    size_t size;
    unsigned char *data = read_fixture(dir, name, &size, 1);
    if (!data) return;
    /* every length for files up to 40 KB; for larger ones every length in the first 4 KB and
     * the last 256 bytes, and a prime stride in between (each decode of a long prefix costs
     * the prefix's length, so the last bytes of a big file are the expensive ones) */
    size_t stride = size <= 40000 ? 1 : 211;
    size_t head = 4096, tail = 256;
    unsigned long tried = 0;
    count_alloc ca;
    psdl_options opt = count_options(&ca);
    for (size_t len = 0; len < size;) {
#ifdef PSDL_TEST_ASAN
        const unsigned char *p = data;
        __asan_poison_memory_region(data + len, size - len);
#else
        unsigned char *p = malloc(len ? len : 1);
        if (!p) abort();
        memcpy(p, data, len);
#endif
        count_alloc_reset(&ca);
        psdl_doc *doc = (psdl_doc *)&ca; /* must be overwritten with NULL */
        psdl_error err;
        memset(&err, 0x5A, sizeof err);
        psdl_status st = psdl_decode(&opt, p, len, &doc, &err);
#ifdef PSDL_TEST_ASAN
        __asan_unpoison_memory_region(data, size);
#else
        free(p);
#endif
        size_t msglen = strnlen(err.message, sizeof err.message);
        int ok = (st == PSDL_E_TRUNCATED || st == PSDL_E_BAD_COUNT) && err.code == st && doc == NULL &&
                 err.offset <= len && msglen < sizeof err.message && starts_with(err.message, "psdl: ") &&
                 ca.max_single <= alloc_bound(len) && ca.live == 0;
        CHECKF(ok, "length %zu: status %s, offset %zu, message \"%.*s\", max alloc %zu, live %zu", len,
               psdl_status_name(st), err.offset, (int)(msglen < 200 ? msglen : 200), err.message, ca.max_single,
               ca.live);
        if (st == PSDL_OK) psdl_doc_free(doc);
        tried++;
        if (stride == 1 || len < head || len + tail >= size)
            len++;
        else
            len += stride;
    }
    printf("  %s: %lu truncated lengths\n", name, tried);
    free(data);
}

/* ==================================================================== c) huge counts */

typedef struct count_field {
    const char *what;
    size_t off;
    int width;        /* 4 = u32, 1 = u8 */
    size_t want_off;  /* expected err.offset */
    int exact;        /* 1: expect bad_count at want_off exactly */
} count_field;

static void huge_count_case(const unsigned char *data, size_t size, const count_field *f, uint32_t value) {
    unsigned char *p = malloc(size);
    if (!p) abort();
    memcpy(p, data, size);
    if (f->width == 4)
        put_u32_at(p + f->off, value);
    else
        p[f->off] = (unsigned char)value;
    count_alloc ca;
    psdl_doc *doc;
    psdl_error err;
    psdl_status st = decode_counted(&ca, p, size, &doc, &err);
    set_ctx("huge count: %s = 0x%lx", f->what, (unsigned long)value);
    if (f->exact) {
        CHECK_STATUS(st, PSDL_E_BAD_COUNT, err);
        CHECK_EQ(err.offset, f->want_off);
    } else {
        CHECKF(st == PSDL_E_BAD_COUNT || st == PSDL_E_TRUNCATED, "status %s: %s", psdl_status_name(st), err.message);
        CHECKF(err.offset >= f->want_off && err.offset <= size, "offset %zu, field at %zu", err.offset, f->want_off);
    }
    CHECK(starts_with(err.message, "psdl: "));
    CHECKF(ca.max_single <= alloc_bound(size), "largest single allocation %zu bytes for a %zu-byte input",
           ca.max_single, size);
    if (st == PSDL_OK) psdl_doc_free(doc);
    CHECK_EQ(ca.live, 0);
    free(p);
}

static void test_huge_counts(const char *dir) {
    set_ctx("huge counts");
    size_t size;
    unsigned char *data = read_fixture(dir, "grid_n2.psdl", &size, 0);
    if (!data) return;
    psdl_doc *doc = NULL;
    psdl_error err;
    if (psdl_decode(NULL, data, size, &doc, &err) != PSDL_OK) {
        CHECKF(0, "grid_n2 does not decode: %s", err.message);
        free(data);
        return;
    }
    layout L;
    layout_of(doc, &L);
    uint32_t last_room = doc->nrooms - 1, last_road = doc->nroads - 1;
    size_t r1 = L.room[1], rl = L.room[last_room];
    size_t p0 = L.road[0], pl = L.road[last_road];
    unsigned L0 = (unsigned)doc->roads[0].nleft + doc->roads[0].nright;
    unsigned Ll = (unsigned)doc->roads[last_road].nleft + doc->roads[last_road].nright;
    count_field fields[] = {
        {"vertex count", L.vcount, 4, L.vcount, 1},
        {"height count", L.hcount, 4, L.hcount, 1},
        {"texture slot count", L.tcount, 4, L.tcount, 1},
        {"room count", L.rcount, 4, L.rcount, 1},
        {"room 1 perimeter count", r1, 4, r1, 1},
        {"room 1 word count", r1 + 4, 4, r1 + 4, 1},
        {"last room perimeter count", rl, 4, rl, 1},
        {"last room word count", rl + 4, 4, rl + 4, 1},
        {"road count", L.pcount, 4, L.pcount, 1},
        {"road 1 left lane count", p0 + 4, 1, p0 + 4, 1},
        {"road 1 right lane count", p0 + 5, 1, p0 + 4, 1},
        {"road 1 room count", p0 + 24 + 4 * L0, 1, p0 + 24 + 4 * L0, 1},
        {"last road left lane count", pl + 4, 1, pl + 4, 1},
        {"last road right lane count", pl + 5, 1, pl + 4, 1},
        {"last road room count", pl + 24 + 4 * Ll, 1, pl + 24 + 4 * Ll, 1},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        const count_field *f = &fields[i];
        if (f->width == 1) {
            huge_count_case(data, size, f, 0xFF);
            continue;
        }
        /* all ones, the sign bit, and values whose product with the element size wraps 32 bits */
        const uint32_t values[] = {0xFFFFFFFFu, 0x80000000u, 0x40000001u, 0x15555556u, 0x20000001u};
        for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) huge_count_case(data, size, f, values[v]);
        /* a count equal to the number of bytes left: too many for any element size */
        huge_count_case(data, size, f, (uint32_t)(size - f->off));
    }
    /* a texture name length of 255: runs into the following data (any error, no crash) */
    {
        unsigned char *p = malloc(size);
        if (!p) abort();
        memcpy(p, data, size);
        p[L.tex[1]] = 0xFF;
        count_alloc ca;
        count_alloc_reset(&ca);
        psdl_options opt = count_options(&ca);
        psdl_doc *d2 = NULL;
        set_ctx("texture name length 255");
        psdl_status st = psdl_decode(&opt, p, size, &d2, &err);
        CHECKF(st != PSDL_OK, "decoded: %s", psdl_status_name(st));
        CHECKF(err.offset >= L.tex[1] && err.offset <= size, "offset %zu, length byte at %zu", err.offset, L.tex[1]);
        CHECK(ca.max_single <= alloc_bound(size));
        psdl_doc_free(d2);
        free(p);
    }
    /* texture and room counts of 0 (they count slot 0 and room 0) */
    {
        unsigned char *p = malloc(size);
        if (!p) abort();
        memcpy(p, data, size);
        put_u32_at(p + L.tcount, 0);
        psdl_doc *d2 = NULL;
        set_ctx("zero counts");
        psdl_status st = psdl_decode(NULL, p, size, &d2, &err);
        CHECK_STATUS(st, PSDL_E_BAD_COUNT, err);
        CHECK_EQ(err.offset, L.tcount);
        memcpy(p, data, size);
        put_u32_at(p + L.rcount, 0);
        st = psdl_decode(NULL, p, size, &d2, &err);
        CHECK_STATUS(st, PSDL_E_BAD_COUNT, err);
        CHECK_EQ(err.offset, L.rcount);
        free(p);
    }
    layout_free(&L);
    psdl_doc_free(doc);
    free(data);
}

/* ==================================================================== allocation failures */

static void test_alloc_failures(const char *dir) {
    set_ctx("allocation failure");
    size_t size;
    unsigned char *data = read_fixture(dir, "grid_n3.psdl", &size, 0);
    if (!data) return;
    count_alloc ca;
    count_alloc_reset(&ca);
    psdl_options opt = count_options(&ca);
    psdl_doc *doc = NULL;
    psdl_error err;
    psdl_status st = psdl_decode(&opt, data, size, &doc, &err);
    CHECK_STATUS(st, PSDL_OK, err);
    size_t total = ca.calls;
    psdl_doc_free(doc);
    unsigned long bad = 0;
    for (size_t k = 0; k <= total; k++) {
        count_alloc_reset(&ca);
        ca.fail_at = (long)k;
        doc = NULL;
        st = psdl_decode(&opt, data, size, &doc, &err);
        int ok = k < total ? (st == PSDL_E_NOMEM && doc == NULL && starts_with(err.message, "psdl: nomem"))
                           : (st == PSDL_OK && reencodes_to(doc, data, size));
        if (st == PSDL_OK) psdl_doc_free(doc);
        ok = ok && ca.live == 0;
        if (!ok && bad++ < 5)
            CHECKF(0, "failing allocation %zu of %zu: %s (%s), live %zu", k, total, psdl_status_name(st), err.message,
                   ca.live);
    }
    CHECKF(bad == 0, "%lu of %zu injected failures mishandled", bad, total + 1);
    /* psdl_doc_new with a failing allocator */
    count_alloc_reset(&ca);
    ca.fail_at = 0;
    CHECK(psdl_doc_new(&opt) == NULL);
    count_alloc_reset(&ca);
    ca.fail_at = 1;
    CHECK(psdl_doc_new(&opt) == NULL);
    CHECK_EQ(ca.live, 0);
    free(data);
}

/* ==================================================================== d) attribute cases */

typedef struct exp_attr {
    int type, subtype, form, count, last, cap;
    uint32_t param[4];
    uint32_t nrefs;
    uint16_t refs[12];
} exp_attr;

typedef struct attr_case {
    const char *name;
    uint16_t words[24];
    uint32_t nwords;
    exp_attr e;
} attr_case;

#define IN PSDL_FORM_INLINE
#define CO PSDL_FORM_COUNTED
/* clang-format off */
static const attr_case attr_cases[] = {
    {"road inline 1", {0x81, 1, 2, 3, 4}, 5, {0x0, 1, IN, 0, 1, 0, {0}, 4, {1, 2, 3, 4}}},
    {"road inline 2", {0x82, 1, 2, 3, 4, 5, 6, 7, 8}, 9, {0x0, 2, IN, 0, 1, 0, {0}, 8, {1, 2, 3, 4, 5, 6, 7, 8}}},
    {"road counted 1", {0x80, 1, 1, 2, 3, 4}, 6, {0x0, 0, CO, 1, 1, 0, {0}, 4, {1, 2, 3, 4}}},
    {"road counted 0", {0x80, 0}, 2, {0x0, 0, CO, 0, 1, 0, {0}, 0, {0}}},
    {"sidewalk inline", {0x8A, 2, 3, 4, 5}, 5, {0x1, 2, IN, 0, 1, PSDL_CAP_NONE, {0}, 4, {2, 3, 4, 5}}},
    {"sidewalk counted", {0x88, 3, 2, 3, 4, 5, 6, 7}, 8, {0x1, 0, CO, 3, 1, PSDL_CAP_NONE, {0}, 6, {2, 3, 4, 5, 6, 7}}},
    {"sidewalk cap start", {0x8A, 0, 0, 4, 5}, 5, {0x1, 2, IN, 0, 1, PSDL_CAP_START, {0}, 2, {4, 5}}},
    {"sidewalk cap end counted", {0x88, 2, 1, 1, 4, 5}, 6, {0x1, 0, CO, 2, 1, PSDL_CAP_END, {0}, 2, {4, 5}}},
    {"sidewalk (0,1) is no cap", {0x8A, 0, 1, 4, 5}, 5, {0x1, 2, IN, 0, 1, PSDL_CAP_NONE, {0}, 4, {0, 1, 4, 5}}},
    {"walkway inline", {0x91, 2, 3}, 3, {0x2, 1, IN, 0, 1, 0, {0}, 2, {2, 3}}},
    {"walkway counted", {0x90, 2, 2, 3, 4, 5}, 6, {0x2, 0, CO, 2, 1, 0, {0}, 4, {2, 3, 4, 5}}},
    {"sliver inline", {0x9C, 1, 2, 5, 6}, 5, {0x3, 4, IN, 0, 1, 0, {1, 2}, 2, {5, 6}}},
    {"sliver counted", {0x98, 4, 1, 2, 5, 6}, 6, {0x3, 0, CO, 4, 1, 0, {1, 2}, 2, {5, 6}}},
    {"sliver subtype 2", {0x9A, 1, 2, 5, 6}, 5, {0x3, 2, IN, 0, 1, 0, {1, 2}, 2, {5, 6}}},
    {"crosswalk inline", {0xA4, 1, 2, 3, 4}, 5, {0x4, 4, IN, 0, 1, 0, {0}, 4, {1, 2, 3, 4}}},
    {"crosswalk counted", {0xA0, 9, 1, 2, 3, 4}, 6, {0x4, 0, CO, 9, 1, 0, {0}, 4, {1, 2, 3, 4}}},
    {"road fan inline", {0xA9, 1, 2, 3}, 4, {0x5, 1, IN, 0, 1, 0, {0}, 3, {1, 2, 3}}},
    {"road fan counted", {0xA8, 2, 1, 2, 3, 4}, 6, {0x5, 0, CO, 2, 1, 0, {0}, 4, {1, 2, 3, 4}}},
    {"fan inline", {0xB2, 1, 2, 3, 4}, 5, {0x6, 2, IN, 0, 1, 0, {0}, 4, {1, 2, 3, 4}}},
    {"fan counted 8", {0xB0, 8, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 12, {0x6, 0, CO, 8, 1, 0, {0}, 10, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}},
    {"facade bound inline", {0xBC, 64, 3, 5, 6}, 5, {0x7, 4, IN, 0, 1, 0, {64, 3}, 2, {5, 6}}},
    {"facade bound counted", {0xB8, 4, 64, 3, 5, 6}, 6, {0x7, 0, CO, 4, 1, 0, {64, 3}, 2, {5, 6}}},
    {"divided inline", {0xC1, 0x03C1, 38, 1, 2, 3, 4, 5, 6}, 9, {0x8, 1, IN, 0, 1, 0, {1, 3, 3, 38}, 6, {1, 2, 3, 4, 5, 6}}},
    {"divided counted", {0xC0, 1, 0x0242, 256, 1, 2, 3, 4, 5, 6}, 10, {0x8, 0, CO, 1, 1, 0, {2, 1, 2, 256}, 6, {1, 2, 3, 4, 5, 6}}},
    {"tunnel inline 3", {0xCB, 0x0107, 0x0580, 0x0700}, 4, {0x9, 3, IN, 0, 1, 0, {0}, 3, {0x0107, 0x0580, 0x0700}}},
    {"tunnel counted 10", {0xC8, 10, 0x0107, 0x0600, 0, 0, 0x000F, 0, 0, 0, 0, 0}, 12,
     {0x9, 0, CO, 10, 1, 0, {0}, 10, {0x0107, 0x0600, 0, 0, 0x000F, 0, 0, 0, 0, 0}}},
    {"texture inline", {0xD1, 0x05}, 2, {0xA, 1, IN, 0, 1, 0, {261, 5}, 0, {0}}},
    {"texture inline 7", {0xD7, 0xFF}, 2, {0xA, 7, IN, 0, 1, 0, {2047, 0xFF}, 0, {0}}},
    {"texture counted", {0xD0, 7}, 2, {0xA, 0, CO, 7, 1, 0, {7, 7}, 0, {0}}},
    {"texture counted 0", {0xD0, 0}, 2, {0xA, 0, CO, 0, 1, 0, {0, 0}, 0, {0}}},
    {"facade inline", {0xDE, 1, 2, 3, 4, 5, 6}, 7, {0xB, 6, IN, 0, 1, 0, {1, 2, 3, 4}, 2, {5, 6}}},
    {"facade counted", {0xD8, 6, 1, 2, 3, 40000, 5, 6}, 8, {0xB, 0, CO, 6, 1, 0, {1, 2, 3, 40000}, 2, {5, 6}}},
    {"roof inline", {0xE2, 3, 1, 2, 3}, 5, {0xC, 2, IN, 0, 1, 0, {3}, 3, {1, 2, 3}}},
    {"roof counted 9", {0xE0, 9, 3, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 13, {0xC, 0, CO, 9, 1, 0, {3}, 10, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}},
    {"roof counted 0", {0xE0, 0, 3, 7}, 4, {0xC, 0, CO, 0, 1, 0, {3}, 1, {7}}},
    {"no LAST", {0x01, 1, 2, 3, 4}, 5, {0x0, 1, IN, 0, 0, 0, {0}, 4, {1, 2, 3, 4}}},
};
/* clang-format on */
#undef IN
#undef CO

static void check_attr(const psdl_attr *a, const exp_attr *e) {
    CHECK_EQ(a->type, e->type);
    CHECK_EQ(a->subtype, e->subtype);
    CHECK_EQ(a->form, e->form);
    CHECK_EQ(a->count, e->count);
    CHECK_EQ(a->last, e->last);
    CHECK_EQ(a->cap, e->cap);
    CHECK_EQ(a->header_high, 0);
    for (int j = 0; j < 4; j++) CHECK_EQ(a->param[j], e->param[j]);
    CHECK_EQ(a->nrefs, e->nrefs);
    if (a->nrefs == e->nrefs) {
        int same = 1;
        for (uint32_t j = 0; j < e->nrefs; j++) same &= a->refs[j] == e->refs[j];
        CHECKF(same, "refs differ");
    }
}

/* psdl_read_stream: a regular file in one block of its size, a stream without a size
 * (fmemopen: no descriptor) in doubling blocks, a folder, a stream already half read, and
 * every allocation failing in turn (nomem, nothing left allocated). */
/* psdl_write_file into a folder that takes no new files (/proc, even for root): the message
 * names the target and the temporary file, says whether the target was there ("left
 * untouched") or not ("not written"), and fits psdl_error's message whole for short paths. */
static void test_write_refused(void) {
    set_ctx("write_refused");
    FILE *f = fopen("/proc/version", "rb");
    if (!f) return; /* no /proc: nothing to check */
    fclose(f);
    psdl_error err;
    psdl_status st = psdl_write_file("/proc/version", "x", 1, &err);
    CHECK_STATUS(st, PSDL_E_IO, err);
    CHECKF(starts_with(err.message, "psdl: io: /proc/version: left untouched: the temporary file beside it "
                                    "cannot be created (") &&
               strstr(err.message, "its folder takes no new files): /proc/version.tmp-") &&
               strstr(err.message, "-XXXXXX") != NULL,
           "message: %s", err.message);
    st = psdl_write_file("/proc/psdl-no-such.psdl", "x", 1, &err);
    CHECK_STATUS(st, PSDL_E_IO, err);
    CHECKF(starts_with(err.message, "psdl: io: /proc/psdl-no-such.psdl: not written: "), "message: %s", err.message);
    f = fopen("/proc/psdl-no-such.psdl", "rb");
    CHECK(f == NULL);
    if (f) fclose(f);
    /* a folder that does not exist keeps the plain system message */
    st = psdl_write_file("/proc/psdl-no-such-folder/x.psdl", "x", 1, &err);
    CHECK_STATUS(st, PSDL_E_IO, err);
    CHECKF(strstr(err.message, "temporary") == NULL, "message: %s", err.message);
}

static void test_read_stream(const char *dir) {
    set_ctx("read_stream");
    char *path = join_path(dir, "grid_n3.psdl");
    size_t size = 0;
    unsigned char *data = read_file(path, &size);
    if (!CHECKF(data != NULL && size > 0, "cannot read %s", path)) {
        free(path);
        free(data);
        return;
    }
    count_alloc ca;
    count_alloc_reset(&ca);
    psdl_options opt = count_options(&ca);
    psdl_bytes b;
    psdl_error err;

    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    if (f) {
        psdl_status st = psdl_read_stream(f, path, &opt, &b, &err);
        CHECK_STATUS(st, PSDL_OK, err);
        CHECK(b.size == size && b.data && memcmp(b.data, data, size) == 0);
        CHECKF(ca.calls == 1 && b.capacity == size + 1, "a regular file: %zu allocations, capacity %zu for %zu bytes",
               ca.calls, b.capacity, size);
        psdl_bytes_free(&opt, &b);
        CHECK(ca.live == 0 && b.data == NULL && b.size == 0);
        fclose(f);
    }

    /* a stream without a descriptor, larger than the first block (64 KiB): grows */
    size_t big = 200000;
    unsigned char *pattern = malloc(big);
    for (size_t i = 0; i < big; i++) pattern[i] = (unsigned char)(i * 7u + (i >> 8));
    f = fmemopen(pattern, big, "rb");
    CHECK(f != NULL);
    if (f) {
        count_alloc_reset(&ca);
        psdl_status st = psdl_read_stream(f, "memory", &opt, &b, &err);
        CHECK_STATUS(st, PSDL_OK, err);
        CHECK(b.size == big && memcmp(b.data, pattern, big) == 0);
        CHECKF(ca.calls >= 2, "grew %zu times", ca.calls);
        psdl_bytes_free(&opt, &b);
        CHECK(ca.live == 0);
        fclose(f);
    }

    /* what is left of a stream read part of the way (the Lua handle's buffer included) */
    f = fopen(path, "rb");
    if (f) {
        CHECK(fgetc(f) == data[0]);
        count_alloc_reset(&ca);
        psdl_status st = psdl_read_stream(f, path, &opt, &b, &err);
        CHECK_STATUS(st, PSDL_OK, err);
        CHECK(b.size == size - 1 && memcmp(b.data, data + 1, size - 1) == 0);
        psdl_bytes_free(&opt, &b);
        fclose(f);
    }

    /* a folder opens for reading, but is no file */
    f = fopen(dir, "rb");
    if (f) {
        psdl_status st = psdl_read_stream(f, dir, NULL, &b, &err);
        CHECK_STATUS(st, PSDL_E_IO, err);
        CHECK(starts_with(err.message, "psdl: io: ") && strstr(err.message, dir) && b.data == NULL);
        fclose(f);
    }

    /* allocation failures, first block and growth: nomem, the stream's name, nothing kept */
    for (long k = 0; k < 4; k++) {
        f = fmemopen(pattern, big, "rb");
        if (!f) break;
        count_alloc_reset(&ca);
        ca.fail_at = k;
        psdl_status st = psdl_read_stream(f, "memory", &opt, &b, &err);
        if (st != PSDL_OK || k < (long)ca.calls) { /* the k-th request was made and failed */
            CHECKF(st == PSDL_E_NOMEM && b.data == NULL && b.size == 0 && ca.live == 0 &&
                       strstr(err.message, "memory") != NULL,
                   "failing allocation %ld: %s (%s), live %zu", k, psdl_status_name(st), err.message, ca.live);
        } else {
            psdl_bytes_free(&opt, &b);
        }
        fclose(f);
    }
    psdl_bytes_free(&opt, NULL); /* NULL-safe */
    free(pattern);
    free(data);
    free(path);
}

static void test_attr_cases(void) {
    buf b = {0};
    for (size_t i = 0; i < sizeof attr_cases / sizeof attr_cases[0]; i++) {
        const attr_case *c = &attr_cases[i];
        set_ctx("attribute %s", c->name);
        mfile m;
        mfile_init(&m, c->words, c->nwords);
        psdl_doc *doc = NULL;
        psdl_error err;
        psdl_status st = build_decode(&m, &b, NULL, &doc, &err);
        if (!CHECK_STATUS(st, PSDL_OK, err)) continue;
        const psdl_room *rm = &doc->rooms[1];
        CHECK_EQ(rm->nwords, c->nwords);
        if (CHECK_EQ_N(rm->nattrs, 1)) {
            const psdl_attr *a = &rm->attrs[0];
            check_attr(a, &c->e);
            CHECK_EQ(psdl_attr_size(a), c->nwords);
            uint16_t out[32];
            memset(out, 0xEE, sizeof out);
            size_t n = psdl_attr_pack(a, out, &err);
            CHECK_EQ(n, c->nwords);
            CHECKF(n == c->nwords && memcmp(out, c->words, n * 2) == 0, "psdl_attr_pack gives other words");
            CHECK_STR(psdl_attr_type_name(a->type), psdl_attr_type_name(c->e.type));
        }
        psdl_doc_free(doc);
    }
    b_free(&b);
}

/* ==================================================================== d) exact cases */

static psdl_attr mk_attr(int type, uint16_t *refs, uint32_t nrefs) {
    psdl_attr a;
    memset(&a, 0, sizeof a);
    a.type = (uint8_t)type;
    a.refs = refs;
    a.nrefs = nrefs;
    return a;
}

static void test_pack_exact(void) {
    set_ctx("pack texture");
    uint16_t w[8];
    psdl_error err;
    psdl_attr a = mk_attr(PSDL_ATTR_TEXTURE, NULL, 0);
    a.form = PSDL_FORM_AUTO;
    a.param[0] = 256; /* 0-based name index 255 */
    CHECK_EQ(psdl_attr_size(&a), 2);
    size_t n = psdl_attr_pack(&a, w, &err);
    CHECK_EQ(n, 2);
    CHECK_EQ(w[0], 0x51);
    CHECK_EQ(w[1], 0x00);
    a.param[0] = 2047;
    n = psdl_attr_pack(&a, w, &err);
    CHECK_EQ(n, 2);
    CHECK_EQ(w[0], 0x57);
    CHECK_EQ(w[1], 0xFF);
    a.last = 1;
    a.param[0] = 255;
    n = psdl_attr_pack(&a, w, &err);
    CHECK_EQ(n, 2);
    CHECK_EQ(w[0], 0xD0);
    CHECK_EQ(w[1], 0xFF);
    a.last = 0;
    a.param[0] = 2048;
    memset(&err, 0, sizeof err);
    n = psdl_attr_pack(&a, w, &err);
    CHECK_EQ(n, 0);
    CHECK_EQ(err.code, PSDL_E_INVALID);
    CHECKF(strstr(err.message, "2047") != NULL, "message: %s", err.message);
    CHECK(starts_with(err.message, "psdl: invalid: "));

    set_ctx("pack divided road");
    uint16_t refs6[6] = {1, 2, 3, 4, 5, 6};
    a = mk_attr(PSDL_ATTR_DIVIDED_ROAD, refs6, 6);
    a.param[0] = 1;
    a.param[2] = 256;
    memset(&err, 0, sizeof err);
    n = psdl_attr_pack(&a, w, &err);
    CHECK_EQ(n, 0);
    CHECK_EQ(err.code, PSDL_E_INVALID);
    CHECKF(strstr(err.message, "255") != NULL, "message: %s", err.message);
    a.param[2] = 255;
    a.param[1] = 2;
    a.param[3] = 38;
    uint16_t w9[9];
    n = psdl_attr_pack(&a, w9, &err);
    CHECK_EQ(n, 9);
    CHECK_EQ(w9[0], 0x41);
    CHECK_EQ(w9[1], 0xFF81);
    CHECK_EQ(w9[2], 38);
    a.param[0] = 64; /* divider type is 6 bits */
    CHECK_EQ(psdl_attr_pack(&a, w9, &err), 0);
    a.param[0] = 1;
    a.param[1] = 4; /* cap bits are 2 */
    CHECK_EQ(psdl_attr_pack(&a, w9, &err), 0);

    set_ctx("pack refusals");
    uint16_t refs5[5] = {1, 2, 3, 4, 5};
    a = mk_attr(PSDL_ATTR_ROAD, refs5, 5);
    CHECK_EQ(psdl_attr_size(&a), 0);
    CHECK_EQ(psdl_attr_pack(&a, w9, &err), 0);
    a = mk_attr(PSDL_ATTR_CROSSWALK, refs5, 3);
    CHECK_EQ(psdl_attr_pack(&a, w9, &err), 0);
    a = mk_attr(PSDL_ATTR_FAN, refs5, 1);
    CHECK_EQ(psdl_attr_size(&a), 0);
    CHECK_EQ(psdl_attr_pack(&a, w9, &err), 0);
    a = mk_attr(PSDL_ATTR_SLIVER, refs5, 2);
    a.param[0] = 0x10000;
    CHECK_EQ(psdl_attr_pack(&a, w9, &err), 0);
    a = mk_attr(PSDL_ATTR_UNKNOWN, NULL, 0);
    CHECK_EQ(psdl_attr_pack(&a, w9, &err), 0);
    a = mk_attr(13, refs5, 2);
    CHECK_EQ(psdl_attr_pack(&a, w9, &err), 0);
    /* a texture stored non-canonically keeps its stored form */
    a = mk_attr(PSDL_ATTR_TEXTURE, NULL, 0);
    a.form = PSDL_FORM_INLINE;
    a.subtype = 1;
    a.param[0] = 0x100 | 0x1234;
    a.param[1] = 0x1234;
    CHECK_EQ(psdl_attr_pack(&a, w9, &err), 2);
    CHECK_EQ(w9[0], 0x51);
    CHECK_EQ(w9[1], 0x1234);
    a.param[0] = 5; /* disagrees with subtype and data */
    CHECK_EQ(psdl_attr_pack(&a, w9, &err), 0);

    set_ctx("type names");
    CHECK_STR(psdl_attr_type_name(0), "road");
    CHECK_STR(psdl_attr_type_name(8), "divided_road");
    CHECK_STR(psdl_attr_type_name(12), "roof");
    CHECK_STR(psdl_attr_type_name(13), "unknown");
    CHECK_STR(psdl_attr_type_name(-1), "unknown");
    CHECK_STR(psdl_attr_type_name(16), "unknown");
    CHECK_STR(psdl_status_name(PSDL_OK), "ok");
    CHECK_STR(psdl_status_name(PSDL_E_TRAILING), "trailing_bytes");
    CHECK_STR(psdl_status_name(PSDL_E_BAD_STRING), "bad_string");
    CHECK_STR(psdl_status_name(PSDL_E_COUNT_), "unknown");
    CHECK_STR(psdl_status_name((psdl_status)-1), "unknown");
}

static void test_exact_cases(void) {
    buf b = {0};
    mfile m;
    mlayout L;
    psdl_doc *doc = NULL;
    psdl_error err;
    psdl_status st;

    set_ctx("sidewalk cap vs strip");
    {
        static const uint16_t cap2[] = {0x8A, 1, 1, 7, 8};
        mfile_init(&m, cap2, 5);
        st = build_decode(&m, &b, NULL, &doc, &err);
        if (CHECK_STATUS(st, PSDL_OK, err)) {
            const psdl_attr *a = &doc->rooms[1].attrs[0];
            CHECK_EQ(a->cap, PSDL_CAP_END);
            CHECK_EQ(a->nrefs, 2);
            CHECK(a->nrefs == 2 && a->refs[0] == 7 && a->refs[1] == 8);
            psdl_doc_free(doc);
        }
        static const uint16_t strip3[] = {0x8B, 1, 1, 7, 8, 9, 10};
        mfile_init(&m, strip3, 7);
        st = build_decode(&m, &b, NULL, &doc, &err);
        if (CHECK_STATUS(st, PSDL_OK, err)) {
            const psdl_attr *a = &doc->rooms[1].attrs[0];
            CHECK_EQ(a->cap, PSDL_CAP_NONE);
            CHECK_EQ(a->nrefs, 6);
            CHECK(a->nrefs == 6 && a->refs[0] == 1 && a->refs[1] == 1 && a->refs[5] == 10);
            psdl_doc_free(doc);
        }
    }

    static const uint16_t simple[] = {0x50, 1, 0x81, 1, 2, 3, 4};
    set_ctx("road record room -5");
    {
        mfile_init(&m, simple, 7);
        m.nroads = 2;
        mroad_init(&m.roads[0], -5);
        mroad_init(&m.roads[1], 1);
        m.roads[1].nl = 3;
        m.roads[1].nr = 0;
        m.roads[1].nrooms = 3;
        m.roads[1].rooms[1] = -32768;
        m.roads[1].rooms[2] = 32767;
        st = build_decode(&m, &b, &L, &doc, &err);
        if (CHECK_STATUS(st, PSDL_OK, err)) {
            CHECK_EQ(doc->nroads, 2);
            CHECK_EQ(doc->roads[0].nrooms, 1);
            CHECK_EQ(doc->roads[0].rooms[0], -5);
            CHECK_EQ(b.p[L.road_rooms_off[0]], 0xFB);
            CHECK_EQ(b.p[L.road_rooms_off[0] + 1], 0xFF);
            CHECK_EQ(doc->roads[0].flags, 0x10441);
            CHECK_EQ(doc->roads[0].stop_light[1], 1);
            CHECK_EQ(doc->roads[0].end_crossroads[3], 8);
            CHECK_EQ(doc->roads[1].nleft, 3);
            CHECK_EQ(doc->roads[1].nright, 0);
            CHECK_EQ(doc->roads[1].rooms[1], -32768);
            CHECK_EQ(doc->roads[1].rooms[2], 32767);
            psdl_doc_free(doc);
        }
    }

    set_ctx("room 0 bytes");
    {
        const uint8_t props[] = {0xCD, 0x00};
        for (int i = 0; i < 2; i++) {
            mfile_init(&m, simple, 7);
            m.room0_prop = props[i];
            m.room0_flags = (uint8_t)(i ? 0x00 : 0x04);
            m.rooms[0].prop = 7;
            m.rooms[0].flags = 0x84;
            st = build_decode(&m, &b, NULL, &doc, &err);
            if (CHECK_STATUS(st, PSDL_OK, err)) {
                CHECK_EQ(doc->rooms[0].prop_rule, props[i]);
                CHECK_EQ(doc->rooms[0].flags, i ? 0x00 : 0x04);
                CHECK_EQ(doc->rooms[1].prop_rule, 7);
                CHECK_EQ(doc->rooms[1].flags, 0x84);
                psdl_doc_free(doc);
            }
        }
        doc = psdl_doc_new(NULL);
        CHECK(doc != NULL && doc->rooms[0].prop_rule == 0xCD && doc->rooms[0].flags == 0);
        psdl_doc_free(doc);
    }

    set_ctx("unknown type 0xD");
    {
        static const uint16_t w[] = {0x50, 1, 0x68, 0x1234, 0xFFFF, 0x81};
        mfile_init(&m, w, 6);
        st = build_decode(&m, &b, NULL, &doc, &err);
        if (CHECK_STATUS(st, PSDL_OK, err)) {
            const psdl_room *rm = &doc->rooms[1];
            if (CHECK_EQ_N(rm->nattrs, 2)) {
                const psdl_attr *a = &rm->attrs[1];
                CHECK_EQ(a->type, PSDL_ATTR_UNKNOWN);
                CHECK_EQ(a->last, 0);
                CHECK_EQ(a->nrefs, 4);
                CHECK(a->nrefs == 4 && a->refs[0] == 0x68 && a->refs[1] == 0x1234 && a->refs[3] == 0x81);
                CHECK_EQ(psdl_attr_size(a), 4);
                uint16_t out[8];
                CHECK_EQ(psdl_attr_pack(a, out, &err), 4);
                CHECK(memcmp(out, w + 2, 8) == 0);
                CHECK_STR(psdl_attr_type_name(a->type), "unknown");
            }
            psdl_doc_free(doc);
        }
        /* types 14 and 15 likewise, LAST bit kept */
        static const uint16_t w2[] = {0xF8, 1, 2};
        mfile_init(&m, w2, 3);
        st = build_decode(&m, &b, NULL, &doc, &err);
        if (CHECK_STATUS(st, PSDL_OK, err)) {
            CHECK(doc->rooms[1].nattrs == 1 && doc->rooms[1].attrs[0].type == PSDL_ATTR_UNKNOWN &&
                  doc->rooms[1].attrs[0].last == 1 && doc->rooms[1].attrs[0].nrefs == 3);
            psdl_doc_free(doc);
        }
    }

    set_ctx("words after LAST");
    {
        static const uint16_t w[] = {0xD0, 1, 0x50, 2};
        mfile_init(&m, w, 4);
        st = build_decode(&m, &b, NULL, &doc, &err);
        if (CHECK_STATUS(st, PSDL_OK, err)) {
            const psdl_room *rm = &doc->rooms[1];
            CHECK_EQ(rm->nattrs, 2);
            CHECK(rm->nattrs == 2 && rm->attrs[1].type == PSDL_ATTR_TEXTURE && rm->attrs[1].param[0] == 2 &&
                  rm->attrs[1].last == 0);
            psdl_doc_free(doc);
        }
        static const uint16_t w2[] = {0xD0, 1, 0x01, 5, 6};
        mfile_init(&m, w2, 5);
        st = build_decode(&m, &b, NULL, &doc, &err);
        if (CHECK_STATUS(st, PSDL_OK, err)) {
            const psdl_room *rm = &doc->rooms[1];
            if (CHECK_EQ_N(rm->nattrs, 2)) {
                CHECK_EQ(rm->attrs[1].type, PSDL_ATTR_UNKNOWN);
                CHECK_EQ(rm->attrs[1].nrefs, 3);
                CHECK(rm->attrs[1].nrefs == 3 && rm->attrs[1].refs[0] == 0x01 && rm->attrs[1].refs[2] == 6);
            }
            psdl_validate_result vr;
            psdl_validate(doc, NULL, NULL, &vr);
            CHECK_EQ(vr.errors, 0);
            psdl_doc_free(doc);
        }
        static const uint16_t w3[] = {0xD0, 1, 0x00};
        mfile_init(&m, w3, 3);
        st = build_decode(&m, &b, NULL, &doc, &err);
        if (CHECK_STATUS(st, PSDL_OK, err)) {
            CHECK(doc->rooms[1].nattrs == 2 && doc->rooms[1].attrs[1].type == PSDL_ATTR_UNKNOWN &&
                  doc->rooms[1].attrs[1].nrefs == 1);
            psdl_doc_free(doc);
        }
    }

    set_ctx("overrun before LAST");
    {
        static const uint16_t w[] = {0x50, 1, 0x02, 1, 2, 3};
        mfile_init(&m, w, 6);
        m.nrooms = 2;
        m.rooms[1] = m.rooms[0];
        m.rooms[0].words = simple;
        m.rooms[0].nwords = 7;
        st = build_decode(&m, &b, &L, &doc, &err);
        CHECK_STATUS(st, PSDL_E_BAD_ATTRIBUTE, err);
        CHECK(doc == NULL);
        CHECK_EQ(err.room, 2);
        CHECK_EQ(err.attribute, 1);
        CHECK_EQ(err.offset, L.words_off[2] + 4);
        CHECKF(starts_with(err.message, "psdl: bad_attribute: ") && strstr(err.message, "(room 2, attribute 2)"),
               "message: %s", err.message);
        /* a counted header as the very last word */
        static const uint16_t w2[] = {0x50, 1, 0x80};
        mfile_init(&m, w2, 3);
        st = build_decode(&m, &b, &L, &doc, &err);
        CHECK_STATUS(st, PSDL_E_BAD_ATTRIBUTE, err);
        CHECK_EQ(err.room, 1);
        CHECK_EQ(err.attribute, 1);
        CHECK_EQ(err.offset, L.words_off[1] + 4);
        /* a counted fan whose count word would need 65537 words */
        static const uint16_t w3[] = {0xA8, 0xFFFF, 1, 2};
        mfile_init(&m, w3, 4);
        st = build_decode(&m, &b, &L, &doc, &err);
        CHECK_STATUS(st, PSDL_E_BAD_ATTRIBUTE, err);
        CHECK_EQ(err.attribute, 0);
    }

    set_ctx("trailing bytes");
    {
        mfile_init(&m, simple, 7);
        build(&m, &b, NULL);
        size_t orig = b.n;
        b_u8(&b, 0);
        b_u8(&b, 1);
        b_u8(&b, 2);
        st = psdl_decode(NULL, b.p, b.n, &doc, &err);
        CHECK_STATUS(st, PSDL_E_TRAILING, err);
        CHECK_EQ(err.offset, orig);
        CHECK(doc == NULL);
        CHECK(starts_with(err.message, "psdl: trailing_bytes: "));
    }

    set_ctx("bad magic");
    {
        mfile_init(&m, simple, 7);
        memcpy(m.magic, "PSDX", 5);
        st = build_decode(&m, &b, NULL, &doc, &err);
        CHECK_STATUS(st, PSDL_E_BAD_MAGIC, err);
        CHECK_EQ(err.offset, 0);
        CHECK(starts_with(err.message, "psdl: bad_magic: "));
        static const unsigned char psd[] = {'P', 'S', 'D'};
        st = psdl_decode(NULL, psd, 3, &doc, &err);
        CHECK_STATUS(st, PSDL_E_TRUNCATED, err);
        st = psdl_decode(NULL, psd, 0, &doc, &err);
        CHECK_STATUS(st, PSDL_E_TRUNCATED, err);
        st = psdl_decode(NULL, psd, 3, &doc, NULL); /* err is optional */
        CHECK_EQ(st, PSDL_E_TRUNCATED);
    }

    set_ctx("target size 3");
    {
        mfile_init(&m, simple, 7);
        m.target = 3;
        st = build_decode(&m, &b, NULL, &doc, &err);
        if (CHECK_STATUS(st, PSDL_OK, err)) {
            CHECK_EQ(doc->target_size, 3);
            plist_check_rule(doc, "target_size", PSDL_SEV_ERROR, "target_size");
            psdl_doc_free(doc);
        }
    }

    set_ctx("bad texture string");
    {
        mfile_init(&m, simple, 7);
        build(&m, &b, NULL);
        /* slot 1 "t1": length byte 3 at offset 8 + 4 + 16*12 + 4 + 16 + 4 */
        size_t off = 8 + 4 + 16 * 12 + 4 + 4 * 4 + 4;
        CHECK_EQ(b.p[off], 3);
        b.p[off + 3] = 'x';
        st = psdl_decode(NULL, b.p, b.n, &doc, &err);
        CHECK_STATUS(st, PSDL_E_BAD_STRING, err);
        CHECK_EQ(err.offset, off);
    }

    set_ctx("texture slots");
    {
        static const char *const names[] = {NULL, "r4_f", NULL, "", "a_rather_long_name_of_31_chars_"};
        mfile_init(&m, simple, 7);
        m.ntex = 5;
        m.names = names;
        st = build_decode(&m, &b, NULL, &doc, &err);
        if (CHECK_STATUS(st, PSDL_OK, err)) {
            CHECK_EQ(doc->ntextures, 5);
            CHECK(doc->textures[0].name == NULL);
            CHECK(doc->textures[1].name && strcmp(doc->textures[1].name, "r4_f") == 0);
            CHECK_EQ(doc->textures[1].name_len, 4);
            CHECK(doc->textures[2].name == NULL);
            CHECK(doc->textures[3].name && doc->textures[3].name[0] == 0 && doc->textures[3].name_len == 0);
            CHECK_EQ(doc->textures[4].name_len, 31);
            psdl_doc_free(doc);
        }
    }

    set_ctx("PSD1");
    {
        static const char *const names[] = {NULL, "water", NULL, "road"};
        static const uint8_t mats[] = {0, 2, 0, 9};
        mfile_init(&m, simple, 7);
        memcpy(m.magic, "PSD1", 5);
        m.ntex = 4;
        m.names = names;
        m.materials = mats;
        m.nroads = 1;
        mroad_init(&m.roads[0], 1);
        st = build_decode(&m, &b, NULL, &doc, &err);
        if (CHECK_STATUS(st, PSDL_OK, err)) {
            CHECK(memcmp(doc->magic, "PSD1", 4) == 0);
            CHECK_EQ(doc->textures[1].material, 2);
            CHECK_EQ(doc->textures[3].material, 9);
            CHECK_EQ(doc->has_tail, 1);
            CHECK_EQ(doc->nroads, 1);
            plist_check_rule(doc, "magic", PSDL_SEV_ERROR, "magic");
            psdl_doc_free(doc);
        }
        m.no_tail = 1;
        st = build_decode(&m, &b, NULL, &doc, &err);
        if (CHECK_STATUS(st, PSDL_OK, err)) {
            CHECK_EQ(doc->has_tail, 0);
            CHECK_EQ(doc->nroads, 0);
            CHECK_EQ(doc->textures[3].material, 9);
            psdl_doc_free(doc);
        }
        /* truncated inside a material byte */
        build(&m, &b, &L);
        size_t mat_off = 8 + 4 + 16 * 12 + 4 + 4 * 4 + 4 + 7; /* after "water\0" */
        CHECK_EQ(b.p[mat_off], 2);
        st = psdl_decode(NULL, b.p, mat_off, &doc, &err);
        CHECK_STATUS(st, PSDL_E_TRUNCATED, err);
        CHECK_EQ(err.offset, mat_off);
    }

    set_ctx("first_road_room and empty rooms");
    {
        mfile_init(&m, NULL, 0);
        m.first_road_room = 0xDEADBEEF;
        m.rooms[0].nper = 0;
        m.nrooms = 2;
        m.rooms[1].nper = 4;
        m.rooms[1].per = default_per;
        m.rooms[1].words = simple;
        m.rooms[1].nwords = 7;
        st = build_decode(&m, &b, NULL, &doc, &err);
        if (CHECK_STATUS(st, PSDL_OK, err)) {
            CHECK_EQ(doc->first_road_room, 0xDEADBEEF);
            CHECK_EQ(doc->rooms[1].nwords, 0);
            CHECK_EQ(doc->rooms[1].nattrs, 0);
            CHECK_EQ(doc->rooms[1].nperimeter, 0);
            CHECK_EQ(doc->rooms[2].nattrs, 2);
            psdl_doc_free(doc);
        }
    }

    set_ctx("header high byte");
    {
        static const uint16_t w[] = {0x50, 1, 0x1281, 1, 2, 3, 4};
        mfile_init(&m, w, 7);
        st = build_decode(&m, &b, NULL, &doc, &err);
        if (CHECK_STATUS(st, PSDL_OK, err)) {
            const psdl_attr *a = &doc->rooms[1].attrs[1];
            CHECK_EQ(a->header_high, 0x12);
            CHECK_EQ(a->type, PSDL_ATTR_ROAD);
            uint16_t out[8];
            CHECK_EQ(psdl_attr_pack(a, out, &err), 5);
            CHECK_EQ(out[0], 0x1281);
            plist_check_rule(doc, "header_high", PSDL_SEV_ERROR, "rooms[1].attributes[2]");
            psdl_doc_free(doc);
        }
    }
    b_free(&b);
}

/* ==================================================================== e) validation rules */

static psdl_doc *vdoc(const mfile *m) {
    static buf b;
    psdl_doc *doc = NULL;
    psdl_error err;
    psdl_status st = build_decode(m, &b, NULL, &doc, &err);
    if (!CHECK_STATUS(st, PSDL_OK, err)) return NULL;
    return doc;
}

#define EXPECT(m, rule, sev, path)                                                         \
    do {                                                                                   \
        psdl_doc *d_ = vdoc(m);                                                            \
        if (d_) {                                                                          \
            set_ctx("validate %s", rule);                                                  \
            plist_check_rule(d_, rule, sev, path);                                         \
            psdl_doc_free(d_);                                                             \
        }                                                                                  \
    } while (0)

static void test_validation(void) {
    mfile m;
    const psdl_severity E = PSDL_SEV_ERROR, W = PSDL_SEV_WARNING;

    set_ctx("validate baseline");
    {
        static const uint16_t ok[] = {0x50, 1, 0x81, 1, 2, 3, 4};
        mfile_init(&m, ok, 7);
        psdl_doc *d = vdoc(&m);
        if (d) {
            static plist l;
            l.n = 0;
            psdl_validate_result vr;
            psdl_validate(d, collect_problem, &l, &vr);
            if (!CHECK_EQ(vr.errors, 0)) print_problems(&l);
            /* NULL callback only counts; NULL result is allowed */
            psdl_validate_result vr2;
            psdl_validate(d, NULL, NULL, &vr2);
            CHECK_EQ(vr2.errors, vr.errors);
            CHECK_EQ(vr2.warnings, vr.warnings);
            psdl_validate(d, NULL, NULL, NULL);
            psdl_doc_free(d);
        }
    }
    {
        static const uint16_t w[] = {0x50, 1, 0x01, 1, 2, 3, 4};
        mfile_init(&m, w, 7);
        EXPECT(&m, "missing_last", E, "rooms[1].attributes");
    }
    {
        static const uint16_t w[] = {0x50, 1, 0xE8, 7};
        mfile_init(&m, w, 4);
        EXPECT(&m, "attribute_type", E, "rooms[1].attributes[2]");
    }
    {
        static const uint16_t w[] = {0x50, 1, 0x98, 4, 1, 2, 5, 6};
        mfile_init(&m, w, 8);
        EXPECT(&m, "counted_fixed", E, "rooms[1].attributes[2]");
    }
    {
        static const uint16_t w[] = {0xD0, 0x100};
        mfile_init(&m, w, 2);
        m.ntex = 300;
        EXPECT(&m, "texture_data", E, "rooms[1].attributes[1]");
    }
    {
        static const uint16_t w[] = {0xD0, 8};
        mfile_init(&m, w, 2);
        EXPECT(&m, "texture_index", E, "rooms[1].attributes[1]");
        static const uint16_t w2[] = {0xD7, 0xFF}; /* 2047 */
        mfile_init(&m, w2, 2);
        EXPECT(&m, "texture_index", E, "rooms[1].attributes[1]");
    }
    {
        static const uint16_t w[] = {0x50, 0, 0xC1, 0x0101, 38, 1, 2, 3, 4, 5, 6};
        mfile_init(&m, w, 11);
        EXPECT(&m, "divided_no_texture", E, "rooms[1].attributes[2]");
    }
    {
        static const uint16_t w[] = {0x50, 1, 0x81, 1, 2, 16, 3};
        mfile_init(&m, w, 7);
        EXPECT(&m, "vertex_index", E, "rooms[1].attributes[2].vertices[3]");
        static const uint16_t per[] = {5, 0, 6, 0, 99, 0, 9, 0};
        static const uint16_t ok[] = {0x50, 1, 0x81, 1, 2, 3, 4};
        mfile_init(&m, ok, 7);
        m.rooms[0].per = per;
        EXPECT(&m, "vertex_index", E, "rooms[1].perimeter[3].vertex");
        mfile_init(&m, ok, 7);
        m.nroads = 1;
        mroad_init(&m.roads[0], 1);
        m.roads[0].sc[1] = 16;
        EXPECT(&m, "vertex_index", E, "roads[1].start_crossroads[2]");
    }
    {
        static const uint16_t w[] = {0x50, 1, 0x9C, 1, 4, 5, 6};
        mfile_init(&m, w, 7);
        EXPECT(&m, "height_index", E, "rooms[1].attributes[2].density");
        static const uint16_t w2[] = {0x50, 1, 0xDE, 1, 9, 1, 1, 5, 6};
        mfile_init(&m, w2, 9);
        EXPECT(&m, "height_index", E, "rooms[1].attributes[2].top");
        static const uint16_t w3[] = {0x50, 1, 0xE1, 4, 5, 6};
        mfile_init(&m, w3, 6);
        EXPECT(&m, "height_index", E, "rooms[1].attributes[2].height");
    }
    static const uint16_t ok[] = {0x50, 1, 0x81, 1, 2, 3, 4};
    {
        static const uint16_t per[] = {5, 0, 6, 5, 10, 0, 9, 0};
        mfile_init(&m, ok, 7);
        m.rooms[0].per = per;
        EXPECT(&m, "room_index", E, "rooms[1].perimeter[2].neighbour");
        mfile_init(&m, ok, 7);
        m.nroads = 1;
        mroad_init(&m.roads[0], 7);
        EXPECT(&m, "room_index", E, "roads[1].rooms[1]");
        mroad_init(&m.roads[0], -7);
        EXPECT(&m, "room_index", E, "roads[1].rooms[1]");
    }
    {
        mfile_init(&m, ok, 7);
        m.nroads = 1;
        mroad_init(&m.roads[0], 1);
        m.roads[0].nrooms = 2;
        m.roads[0].rooms[1] = 0;
        EXPECT(&m, "room_zero", E, "roads[1].rooms[2]");
    }
    {
        static uint16_t per[2 * 256];
        for (int k = 0; k < 256; k++) {
            per[2 * k] = (uint16_t)(1 + k % 15);
            per[2 * k + 1] = 0;
        }
        mfile_init(&m, ok, 7);
        m.rooms[0].per = per;
        m.rooms[0].nper = 256;
        EXPECT(&m, "perimeter_size", E, "rooms[1].perimeter");
        m.rooms[0].nper = 255;
        psdl_doc *d = vdoc(&m);
        if (d) {
            psdl_validate_result vr;
            psdl_validate_ex(d, PSDL_VALIDATE_NO_DRIVABLE, NULL, NULL, &vr); /* a 255-point spiral */
            set_ctx("perimeter of 255");
            CHECK_EQ(vr.errors, 0);
            psdl_doc_free(d);
        }
    }
    {
        static const uint16_t w[] = {0x50, 1, 0x4A, 1, 2, 0x81, 1, 2, 3, 4};
        mfile_init(&m, w, 10);
        EXPECT(&m, "tunnel_form", E, "rooms[1].attributes[2]");
        static const uint16_t w2[] = {0x50, 1, 0x48, 0, 0x81, 1, 2, 3, 4};
        mfile_init(&m, w2, 9);
        EXPECT(&m, "tunnel_form", E, "rooms[1].attributes[2]");
    }
    {
        static const uint16_t w[] = {0x50, 1, 0x4B, 1, 2, 3, 0x50, 2, 0xB1, 1, 2, 3};
        mfile_init(&m, w, 12);
        EXPECT(&m, "tunnel_target", E, "rooms[1].attributes[2]");
        static const uint16_t w2[] = {0x50, 1, 0xCB, 1, 2, 3};
        mfile_init(&m, w2, 6);
        EXPECT(&m, "tunnel_target", E, "rooms[1].attributes[2]");
        /* [texture] then a road: fine */
        static const uint16_t w3[] = {0x50, 1, 0x4B, 1, 2, 3, 0x50, 2, 0x81, 1, 2, 3, 4};
        mfile_init(&m, w3, 13);
        psdl_doc *d = vdoc(&m);
        if (d) {
            psdl_validate_result vr;
            psdl_validate(d, NULL, NULL, &vr);
            set_ctx("tunnel before texture and road");
            CHECK_EQ(vr.errors, 0);
            psdl_doc_free(d);
        }
    }
    {
        static const uint16_t w[] = {0x50, 1, 0xC1, 0x0001, 38, 1, 2, 3, 4, 5, 6};
        mfile_init(&m, w, 11);
        EXPECT(&m, "divider_texture", E, "rooms[1].attributes[2]");
    }
    /* warnings */
    {
        static const uint16_t w[] = {0xD2, 8}; /* value 520 */
        mfile_init(&m, w, 2);
        m.ntex = 600;
        EXPECT(&m, "texture_limit", W, "rooms[1].attributes[1]");
        static const uint16_t w2[] = {0xD3, 32}; /* value 800 */
        mfile_init(&m, w2, 2);
        m.ntex = 900;
        EXPECT(&m, "texture_limit", W, "rooms[1].attributes[1]");
        static const uint16_t w3[] = {0xD1, 255}; /* value 511: no warning */
        mfile_init(&m, w3, 2);
        m.ntex = 600;
        psdl_doc *d = vdoc(&m);
        if (d) {
            static plist l;
            l.n = 0;
            psdl_validate(d, collect_problem, &l, NULL);
            set_ctx("texture value 511");
            CHECK(find_problem(&l, "texture_limit", W, NULL) == NULL);
            psdl_doc_free(d);
        }
    }
    {
        static const uint16_t per1[] = {5, 2, 6, 0, 10, 0, 9, 0};
        static const uint16_t per2[] = {6, 0, 7, 0, 11, 0, 10, 0};
        mfile_init(&m, ok, 7);
        m.nrooms = 2;
        m.rooms[0].per = per1;
        m.rooms[1] = m.rooms[0];
        m.rooms[1].per = per2;
        EXPECT(&m, "neighbour_symmetry", W, "rooms[1].perimeter[1].neighbour");
    }
    {
        static float verts[16 * 3];
        for (int i = 0; i < 16; i++) {
            verts[3 * i] = (float)(i % 4) * 10.0f;
            verts[3 * i + 1] = i == 3 ? 1.0f : 0.0f;
            verts[3 * i + 2] = -(float)(i / 4) * 10.0f;
        }
        static const uint16_t w[] = {0x50, 1, 0xA9, 1, 2, 3};
        mfile_init(&m, w, 6);
        m.verts = verts;
        EXPECT(&m, "road_fan_flat", W, "rooms[1].attributes[2]");
    }
    {
        static const uint16_t w[] = {0x50, 1, 0x81, 0, 1, 2, 3};
        mfile_init(&m, w, 7);
        EXPECT(&m, "vertex_zero", W, "rooms[1].attributes[2]");
        static const uint16_t per[] = {0, 0, 6, 0, 10, 0, 9, 0};
        mfile_init(&m, ok, 7);
        m.rooms[0].per = per;
        EXPECT(&m, "vertex_zero", W, "rooms[1].perimeter");
    }
    {
        static const uint16_t w[] = {0x50, 7, 0x81, 1, 2, 3, 4};
        mfile_init(&m, w, 7);
        EXPECT(&m, "texture_group", W, "rooms[1].attributes[2]");
        static const uint16_t w2[] = {0x50, 1, 0xC1, 0x0601, 38, 1, 2, 3, 4, 5, 6};
        mfile_init(&m, w2, 11);
        EXPECT(&m, "texture_group", W, "rooms[1].attributes[2]");
    }
    /* vertex_budget on an in-memory document */
    {
        set_ctx("validate vertex_budget");
        psdl_doc *d = psdl_doc_new(NULL);
        if (CHECK(d != NULL)) {
            d->nvertices = PSDL_SAFE_VERTEX_BUDGET + 1;
            d->vertices = psdl_doc_alloc(d, (size_t)d->nvertices * sizeof *d->vertices);
            CHECK(d->vertices != NULL);
            plist_check_rule(d, "vertex_budget", W, "vertices");
            d->nvertices = PSDL_SAFE_VERTEX_BUDGET;
            static plist l;
            l.n = 0;
            psdl_validate(d, collect_problem, &l, NULL);
            CHECK(find_problem(&l, "vertex_budget", W, NULL) == NULL);
            psdl_doc_free(d);
        }
    }
    /* far_vertex: one warning naming the first vertex beyond +-PSDL_MAX_COORDINATE */
    {
        set_ctx("validate far_vertex");
        psdl_doc *d = psdl_doc_new(NULL);
        if (CHECK(d != NULL)) {
            d->nvertices = 4;
            d->vertices = psdl_doc_alloc(d, (size_t)d->nvertices * sizeof *d->vertices);
            if (CHECK(d->vertices != NULL)) {
                memset(d->vertices, 0, (size_t)d->nvertices * sizeof *d->vertices);
                d->vertices[1].x = (float)PSDL_MAX_COORDINATE;
                d->vertices[2].y = -1e6f;
                d->vertices[3].z = 1e30f;
                const psdl_problem *p = plist_check_rule(d, "far_vertex", W, "vertices[3]");
                if (p) CHECK(strstr(p->message, "2 vertices beyond +-65536 m, the first at (0, -1e+06, 0)") != NULL);
                d->vertices[2].y = d->vertices[3].z = (float)-PSDL_MAX_COORDINATE;
                static plist l;
                l.n = 0;
                psdl_validate(d, collect_problem, &l, NULL);
                CHECK(find_problem(&l, "far_vertex", W, NULL) == NULL);
            }
            psdl_doc_free(d);
        }
    }
    /* the problem carries room, attribute and road; the callback can stop validation */
    {
        static const uint16_t w[] = {0x50, 1, 0x81, 1, 2, 16, 17};
        mfile_init(&m, w, 7);
        m.nroads = 1;
        mroad_init(&m.roads[0], 0);
        psdl_doc *d = vdoc(&m);
        if (d) {
            set_ctx("validate problem fields");
            const psdl_problem *p = plist_check_rule(d, "vertex_index", E, "rooms[1].attributes[2].vertices[4]");
            if (p) {
                CHECK_EQ(p->room, 1);
                CHECK_EQ(p->attribute, 1);
                CHECK_EQ(p->road, -1);
                CHECK(strlen(p->message) > 0);
            }
            p = plist_check_rule(d, "room_zero", E, "roads[1].rooms[1]");
            if (p) {
                CHECK_EQ(p->road, 0);
                CHECK_EQ(p->room, -1);
            }
            psdl_doc_free(d);
        }
    }
}

static int stop_after_one(void *ud, const psdl_problem *p) {
    (void)p;
    ++*(int *)ud;
    return 1;
}

static void test_validate_stop(void) {
    static const uint16_t w[] = {0x50, 1, 0x81, 16, 17, 18, 19};
    mfile m;
    mfile_init(&m, w, 7);
    psdl_doc *d = vdoc(&m);
    if (!d) return;
    set_ctx("validate stop");
    int calls = 0;
    psdl_validate_result vr;
    psdl_validate(d, stop_after_one, &calls, &vr);
    CHECK_EQ(calls, 1);
    CHECK(vr.errors >= 4); /* counting goes on */
    psdl_doc_free(d);
}

/* ==================================================================== f) psdl_room_pack */

typedef struct pack_case {
    psdl_attr a;
    uint16_t want[40];
    size_t nwant;
} pack_case;

static void test_room_pack(void) {
    set_ctx("room_pack");
    count_alloc ca;
    count_alloc_reset(&ca);
    psdl_options opt = count_options(&ca);
    psdl_doc *doc = psdl_doc_new(&opt);
    if (!CHECK(doc != NULL)) return;
    CHECK(psdl_doc_alloc(doc, 0) == NULL);
    uint64_t *aligned = psdl_doc_alloc(doc, 3);
    CHECK(aligned != NULL && ((uintptr_t)aligned & 7u) == 0);

    /* pools: 40 vertices, 4 heights, 8 texture slots */
    doc->nvertices = 40;
    doc->vertices = psdl_doc_alloc(doc, 40 * sizeof *doc->vertices);
    for (uint32_t i = 0; i < 40; i++) {
        doc->vertices[i].x = (float)(i % 8) * 5.0f;
        doc->vertices[i].z = -(float)(i / 8) * 5.0f;
    }
    doc->nheights = 4;
    doc->heights = psdl_doc_alloc(doc, 4 * sizeof(float));
    for (int i = 0; i < 4; i++) doc->heights[i] = (float)i * 3.0f;
    psdl_texture *tex = psdl_doc_alloc(doc, 8 * sizeof *tex);
    for (uint32_t i = 1; i < 8; i++) {
        char *nm = psdl_doc_alloc(doc, 8);
        snprintf(nm, 8, "tex%u", (unsigned)i);
        tex[i].name = nm;
        tex[i].name_len = (uint8_t)strlen(nm);
    }
    doc->textures = tex;
    doc->ntextures = 8;
    psdl_room *rooms = psdl_doc_alloc(doc, 2 * sizeof *rooms);
    rooms[0] = doc->rooms[0];
    doc->rooms = rooms;
    doc->nrooms = 2;
    psdl_room *rm = &rooms[1];
    psdl_perimeter_point *per = psdl_doc_alloc(doc, 4 * sizeof *per);
    per[0].vertex = 9;
    per[1].vertex = 10;
    per[2].vertex = 18;
    per[3].vertex = 17;
    rm->perimeter = per;
    rm->nperimeter = 4;
    rm->flags = 0x08;
    rm->prop_rule = 3;

    static uint16_t r[40];
    for (int i = 0; i < 40; i++) r[i] = (uint16_t)(1 + i % 39);
    pack_case cases[16];
    size_t nc = 0;
    memset(cases, 0, sizeof cases);
#define ADD_WANT(...)                                                       \
    do {                                                                    \
        const uint16_t w_[] = {__VA_ARGS__};                                \
        memcpy(cases[nc].want, w_, sizeof w_);                              \
        cases[nc].nwant = sizeof w_ / sizeof w_[0];                         \
        nc++;                                                               \
    } while (0)
    /* texture value 3, AUTO */
    cases[nc].a = mk_attr(PSDL_ATTR_TEXTURE, NULL, 0);
    cases[nc].a.param[0] = 3;
    ADD_WANT(0x50, 3);
    /* fan of 7 triangles: inline */
    cases[nc].a = mk_attr(PSDL_ATTR_FAN, r, 9);
    ADD_WANT(0x37, 1, 2, 3, 4, 5, 6, 7, 8, 9);
    /* fan of 8 triangles: counted */
    cases[nc].a = mk_attr(PSDL_ATTR_FAN, r, 10);
    ADD_WANT(0x30, 8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
    /* junction tunnel (10 words) counted, strip tunnel (3) inline,
     * followed by the road it describes */
    cases[nc].a = mk_attr(PSDL_ATTR_TUNNEL, r, 10);
    ADD_WANT(0x48, 10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
    cases[nc].a = mk_attr(PSDL_ATTR_TUNNEL, r, 3);
    ADD_WANT(0x4B, 1, 2, 3);
    /* road of 7 sections inline, 8 counted, 0 counted */
    cases[nc].a = mk_attr(PSDL_ATTR_ROAD, r, 28);
    ADD_WANT(0x07, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27,
             28);
    cases[nc].a = mk_attr(PSDL_ATTR_ROAD, r, 32);
    ADD_WANT(0x00, 8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26,
             27, 28, 29, 30, 31, 32);
    cases[nc].a = mk_attr(PSDL_ATTR_ROAD, NULL, 0); /* no refs: refs may be NULL */
    ADD_WANT(0x00, 0);
    /* road of 1 section, COUNTED form asked for */
    cases[nc].a = mk_attr(PSDL_ATTR_ROAD, r, 4);
    cases[nc].a.form = PSDL_FORM_COUNTED;
    ADD_WANT(0x00, 1, 1, 2, 3, 4);
    /* sidewalk end caps */
    cases[nc].a = mk_attr(PSDL_ATTR_SIDEWALK_STRIP, r + 3, 2);
    cases[nc].a.cap = PSDL_CAP_START;
    ADD_WANT(0x0A, 0, 0, 4, 5);
    cases[nc].a = mk_attr(PSDL_ATTR_SIDEWALK_STRIP, r + 3, 2);
    cases[nc].a.cap = PSDL_CAP_END;
    ADD_WANT(0x0A, 1, 1, 4, 5);
    /* sliver, fixed subtype 4 */
    cases[nc].a = mk_attr(PSDL_ATTR_SLIVER, r + 4, 2);
    cases[nc].a.param[0] = 2;
    cases[nc].a.param[1] = 1;
    ADD_WANT(0x1C, 2, 1, 5, 6);
    /* divided road: type 1, caps 3, D 3, value 38 */
    cases[nc].a = mk_attr(PSDL_ATTR_DIVIDED_ROAD, r, 6);
    cases[nc].a.param[0] = 1;
    cases[nc].a.param[1] = 3;
    cases[nc].a.param[2] = 3;
    cases[nc].a.param[3] = 38;
    ADD_WANT(0x41, 0x03C1, 38, 1, 2, 3, 4, 5, 6);
    /* roof with 3 rim vertices: subtype 3 */
    cases[nc].a = mk_attr(PSDL_ATTR_ROOF, r, 4);
    cases[nc].a.param[0] = 2;
    ADD_WANT(0x63, 2, 1, 2, 3, 4);
    /* facade, LAST */
    cases[nc].a = mk_attr(PSDL_ATTR_FACADE, r + 4, 2);
    cases[nc].a.param[0] = 0;
    cases[nc].a.param[1] = 3;
    cases[nc].a.param[2] = 4;
    cases[nc].a.param[3] = 2;
    cases[nc].a.last = 1;
    ADD_WANT(0xDE, 0, 3, 4, 2, 5, 6);
#undef ADD_WANT

    rm->nattrs = (uint32_t)nc;
    rm->attrs = psdl_doc_alloc(doc, nc * sizeof *rm->attrs);
    size_t total = 0;
    uint16_t want[400];
    for (size_t i = 0; i < nc; i++) {
        rm->attrs[i] = cases[i].a;
        CHECKF(psdl_attr_size(&cases[i].a) == cases[i].nwant, "case %zu: size %zu, want %zu", i,
               psdl_attr_size(&cases[i].a), cases[i].nwant);
        uint16_t one[64];
        psdl_error err;
        size_t n = psdl_attr_pack(&cases[i].a, one, &err);
        CHECKF(n == cases[i].nwant && memcmp(one, cases[i].want, n * 2) == 0, "case %zu (%s): packs to %zu words",
               i, psdl_attr_type_name(cases[i].a.type), n);
        memcpy(want + total, cases[i].want, cases[i].nwant * 2);
        total += cases[i].nwant;
    }
    psdl_error err;
    psdl_status st = psdl_room_pack(doc, rm, &err);
    CHECK_STATUS(st, PSDL_OK, err);
    CHECK_EQ(rm->nwords, total);
    CHECK(rm->nwords == total && memcmp(rm->words, want, total * 2) == 0);

    /* encode, decode, compare the decoded view with what was built */
    size_t size = 0;
    unsigned char *bytes = encode_doc(doc, &size, &err);
    if (CHECK(bytes != NULL)) {
        psdl_doc *d2 = NULL;
        st = psdl_decode(NULL, bytes, size, &d2, &err);
        if (CHECK_STATUS(st, PSDL_OK, err)) {
            CHECK(reencodes_to(d2, bytes, size));
            const psdl_room *r2 = &d2->rooms[1];
            CHECK_EQ(r2->nattrs, nc);
            CHECK_EQ(r2->prop_rule, 3);
            CHECK_EQ(r2->flags, 0x08);
            CHECK_EQ(d2->rooms[0].prop_rule, 0xCD);
            CHECK(d2->textures[7].name && strcmp(d2->textures[7].name, "tex7") == 0);
            for (size_t i = 0; i < nc && i < r2->nattrs; i++) {
                const psdl_attr *a = &r2->attrs[i], *b = &cases[i].a;
                int same = a->type == b->type && a->nrefs == b->nrefs && a->cap == b->cap && a->last == b->last &&
                           (a->type == PSDL_ATTR_TEXTURE ? a->param[0] == b->param[0]
                                                         : memcmp(a->param, b->param, sizeof a->param) == 0) &&
                           (a->nrefs == 0 || memcmp(a->refs, b->refs, a->nrefs * 2) == 0);
                CHECKF(same, "attribute %zu (%s) decodes differently", i, psdl_attr_type_name(b->type));
            }
            psdl_validate_result vr;
            static plist l;
            l.n = 0;
            psdl_validate_ex(d2, PSDL_VALIDATE_NO_DRIVABLE, collect_problem, &l, &vr); /* no city: format only */
            if (!CHECK_EQ(vr.errors, 0)) print_problems(&l);
            psdl_doc_free(d2);
        }
        free(bytes);
    }

    /* refusals name the attribute: attrs[5] is the 7-section road, attrs[7] the empty road */
    CHECK(rm->attrs[5].type == PSDL_ATTR_ROAD && rm->attrs[5].nrefs == 28);
    CHECK(rm->attrs[7].type == PSDL_ATTR_ROAD && rm->attrs[7].nrefs == 0);
    rm->attrs[5].nrefs = 27; /* road: not a multiple of 4 */
    uint16_t *before = rm->words;
    st = psdl_room_pack(doc, rm, &err);
    CHECK_STATUS(st, PSDL_E_INVALID, err);
    CHECK_EQ(err.attribute, 5);
    CHECK(rm->words == before); /* the room keeps its old words */
    rm->attrs[5].nrefs = 28;
    rm->attrs[7].type = PSDL_ATTR_CROSSWALK; /* 0 refs */
    st = psdl_room_pack(doc, rm, &err);
    CHECK_STATUS(st, PSDL_E_INVALID, err);
    CHECK_EQ(err.attribute, 7);
    rm->attrs[7].type = PSDL_ATTR_ROAD;
    rm->attrs[0].param[0] = 4000;
    st = psdl_room_pack(doc, rm, &err);
    CHECK_STATUS(st, PSDL_E_INVALID, err);
    CHECK_EQ(err.attribute, 0);
    rm->attrs[0].param[0] = 3;
    st = psdl_room_pack(doc, rm, &err);
    CHECK_STATUS(st, PSDL_OK, err);
    CHECK(rm->nwords == total && memcmp(rm->words, want, total * 2) == 0);
    /* an empty room packs to no words */
    psdl_room empty;
    memset(&empty, 0, sizeof empty);
    st = psdl_room_pack(doc, &empty, &err);
    CHECK_STATUS(st, PSDL_OK, err);
    CHECK_EQ(empty.nwords, 0);

    /* encode refuses a bad magic and missing slot 0 / room 0 */
    memcpy(doc->magic, "XXXX", 4);
    unsigned char tmp[16];
    st = psdl_encode(doc, tmp, sizeof tmp, NULL, &err);
    CHECK_STATUS(st, PSDL_E_INVALID, err);
    memcpy(doc->magic, "PSD0", 4);
    doc->nrooms = 0;
    st = psdl_encode(doc, tmp, sizeof tmp, NULL, &err);
    CHECK_STATUS(st, PSDL_E_INVALID, err);
    doc->nrooms = 2;

    psdl_doc_free(doc);
    CHECK_EQ(ca.live, 0);
    psdl_doc_free(NULL);
}

/* A minimal in-memory document: psdl_doc_new alone encodes to a valid 66-byte file. */
static void test_empty_doc(void) {
    set_ctx("empty document");
    psdl_doc *doc = psdl_doc_new(NULL);
    if (!CHECK(doc != NULL)) return;
    size_t size = 0;
    psdl_error err;
    unsigned char *bytes = encode_doc(doc, &size, &err);
    CHECK_EQ(size, 8 + 4 + 4 + 4 + 4 + 4 + 2 + 40 + 4);
    if (bytes) {
        psdl_doc *d2 = NULL;
        psdl_status st = psdl_decode(NULL, bytes, size, &d2, &err);
        if (CHECK_STATUS(st, PSDL_OK, err)) {
            CHECK_EQ(d2->nrooms, 1);
            CHECK_EQ(d2->ntextures, 1);
            CHECK_EQ(d2->rooms[0].prop_rule, 0xCD);
            CHECK(reencodes_to(d2, bytes, size));
            psdl_doc_free(d2);
        }
        free(bytes);
    }
    psdl_doc_free(doc);
}

/* ==================================================================== probe grid, extreme floats */

static void test_extreme_coordinates(void) {
    /* perimeters spanning nearly the whole float range: the probe-grid check must neither
     * overflow nor convert an out-of-range float to int */
    static float verts[16 * 3];
    for (int i = 0; i < 16; i++) {
        verts[3 * i] = (i % 2) ? 3.0e38f : -3.0e38f;
        verts[3 * i + 1] = 0;
        verts[3 * i + 2] = (i % 4 < 2) ? -3.0e38f : 3.0e38f;
    }
    static const uint16_t w[] = {0x50, 1, 0xA9, 1, 2, 3};
    mfile m;
    mfile_init(&m, w, 6);
    m.verts = verts;
    psdl_doc *d = vdoc(&m);
    if (!d) return;
    set_ctx("extreme coordinates");
    psdl_validate_result vr;
    psdl_validate(d, NULL, NULL, &vr);
    CHECK(1); /* reaching here without a sanitizer report is the test */
    psdl_doc_free(d);
    /* NaN and infinity */
    for (int i = 0; i < 16; i++) verts[3 * i] = (i % 2) ? (float)(1e308 * 1e308) : 0.0f * (float)(1e308 * 1e308);
    d = vdoc(&m);
    if (!d) return;
    psdl_validate(d, NULL, NULL, &vr);
    CHECK(1);
    psdl_doc_free(d);
}

/* ==================================================================== mutations, crashers */

static uint32_t lcg(uint32_t *s) {
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

/* Decode each input; when it decodes, validate and check the re-encode is lossless. Returns 1
 * when nothing went wrong (a decode error is fine). */
static int decode_lossless(const unsigned char *p, size_t n, psdl_status *st_out) {
    count_alloc ca;
    psdl_doc *doc;
    psdl_error err;
    psdl_status st = decode_counted(&ca, p, n, &doc, &err);
    if (st_out) *st_out = st;
    int ok = ca.max_single <= alloc_bound(n);
    if (st == PSDL_OK) {
        psdl_validate(doc, NULL, NULL, NULL);
        ok = ok && reencodes_to(doc, p, n);
        psdl_doc_free(doc);
    } else {
        ok = ok && starts_with(err.message, "psdl: ") && err.offset <= n;
    }
    return ok && ca.live == 0;
}

static void test_mutations(const char *dir) {
    size_t size;
    unsigned char *data = read_fixture(dir, "grid_n2.psdl", &size, 1);
    if (!data) return;
    set_ctx("mutations of grid_n2");
    uint32_t seed = 12345;
    unsigned long bad = 0, decoded = 0, runs = 3000;
    unsigned char *p = malloc(size);
    if (!p) abort();
    for (unsigned long it = 0; it < runs; it++) {
        memcpy(p, data, size);
        int flips = 1 + (int)(lcg(&seed) % 4);
        for (int k = 0; k < flips; k++) {
            size_t at = lcg(&seed) % size;
            uint32_t kind = lcg(&seed) % 4;
            if (kind == 0)
                p[at] ^= (unsigned char)(1u << (lcg(&seed) % 8));
            else if (kind == 1)
                p[at] = (unsigned char)lcg(&seed);
            else if (kind == 2)
                p[at] = 0xFF;
            else
                p[at] = 0;
        }
        psdl_status st;
        if (!decode_lossless(p, size, &st)) {
            if (bad++ < 3) {
                char out[256];
                snprintf(out, sizeof out, "mutation-%lu.psdl", it);
                FILE *f = fopen(out, "wb");
                if (f) {
                    fwrite(p, 1, size, f);
                    fclose(f);
                }
                printf("  mutation %lu failed, written to %s\n", it, out);
            }
        }
        if (st == PSDL_OK) decoded++;
    }
    CHECKF(bad == 0, "%lu of %lu mutated inputs broke the lossless or allocation property", bad, runs);
    printf("  mutations: %lu runs, %lu still decode\n", runs, decoded);
    free(p);
    free(data);
}

static void test_crashers(const char *dir) {
    size_t n = 0;
    char **names = list_dir(dir, NULL, &n);
    for (size_t i = 0; i < n; i++) {
        set_ctx("crasher %s", names[i]);
        size_t size;
        unsigned char *data = read_fixture(dir, names[i], &size, 0);
        if (!data) continue;
        /* exact-size copy so overreads are caught */
        unsigned char *p = malloc(size ? size : 1);
        if (!p) abort();
        memcpy(p, data, size);
        psdl_status st;
        CHECK(decode_lossless(p, size, &st));
        free(p);
        free(data);
    }
    set_ctx("crashers");
    CHECKF(n > 0, "no crasher inputs found in %s (the folder must hold every input that once crashed)", dir);
    printf("  crashers: %zu inputs in %s\n", n, dir);
    free_list(names, n);
}

/* ==================================================================== main */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        fprintf(stderr, "usage: %s <fixtures-dir> [crashers-dir]\n", argv[0]);
        return 2;
    }
    const char *fixtures = argv[1];
    char crashers[1024];
    crashers_dir(argc, argv, crashers, sizeof crashers);

    size_t nfix = 0;
    char **fix = list_dir(fixtures, ".psdl", &nfix);
    set_ctx("fixtures");
    CHECKF(nfix >= 5, "found %zu fixtures in %s", nfix, fixtures);
    double t0 = now_s(), t1;
    unsigned long n0 = g_passed + g_failed;
#define SECTION_DONE(name)                                   \
    do {                                                     \
        t1 = now_s();                                        \
        printf("  (%s: %lu checks, %.2f s)\n", name, g_passed + g_failed - n0, t1 - t0); \
        t0 = t1;                                             \
        n0 = g_passed + g_failed;                            \
    } while (0)
    printf("a) fixtures\n");
    for (size_t i = 0; i < nfix; i++) test_fixture(fixtures, fix[i]);
    SECTION_DONE("a");
    printf("b) truncation\n");
    for (size_t i = 0; i < nfix; i++) test_truncation(fixtures, fix[i]);
    free_list(fix, nfix);
    SECTION_DONE("b");
    printf("c) huge counts, allocation failures\n");
    test_huge_counts(fixtures);
    test_alloc_failures(fixtures);
    test_read_stream(fixtures);
    test_write_refused();
    SECTION_DONE("c");
    printf("d) hand-built files\n");
    test_attr_cases();
    test_pack_exact();
    test_exact_cases();
    SECTION_DONE("d");
    printf("e) validation\n");
    test_validation();
    test_validate_stop();
    test_extreme_coordinates();
    SECTION_DONE("e");
    printf("f) in-memory documents\n");
    test_room_pack();
    test_empty_doc();
    SECTION_DONE("f");
    printf("g) mutations and crashers\n");
    test_mutations(fixtures);
    test_crashers(crashers);
    SECTION_DONE("g");
#undef SECTION_DONE

    printf("c: %lu passed, %lu failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
