/* test_ground.c -- the ground of a block room (src/psdl_ground.h): planning fans over pooled
 * vertices (a square, a concave L, a ring crossing itself, no area, a reference outside the
 * pool), emitting them into a store (records, references, hubs pooled, a bad plan refused,
 * no such room) and the level test. Run under ASan/UBSan by scripts/test
 * (build-asan/psdl_ctest_ground). */
#include <math.h>

#include "psdl_ground.h"

#include "check.h"

/* Pools the points p[0 .. n-1] (x, y, z) and writes their 1-based references. */
static void pool_points(psdl_pool *pool, const double *p, size_t n, uint32_t *refs) {
    for (size_t i = 0; i < n; i++) refs[i] = psdl_pool_add(pool, p + 3 * i) + 1;
}

static void test_square(void) {
    set_ctx("square");
    psdl_pool *pool = psdl_pool_new(3, 1);
    psdl_store *st = psdl_store_new();
    CHECK(pool && st);
    if (!pool || !st) return;
    /* a 10 m square in retail winding at y = 2 */
    const double sq[] = {0, 2, 0, 0, 2, 10, 10, 2, 10, 10, 2, 0};
    uint32_t refs[4];
    pool_points(pool, sq, 4, refs);
    uint32_t fans[64], hubs[8], out[64];
    double extra[3 * 8], pts[3 * 4];
    size_t ne = 99;
    CHECK(psdl_ground_bound(4) <= 64);
    size_t w = psdl_ground_plan(fans, extra, &ne, pts, pool, refs, 4, 1);
    CHECKF(w == 5 && ne == 0, "w %zu ne %zu", w, ne); /* one fan of 4 points */
    CHECK(pts[0] == 0 && pts[1] == 2 && pts[9] == 10);
    long room = psdl_store_add_room(st);
    CHECK(room == 1);
    size_t before = psdl_pool_count(pool);
    CHECK(psdl_ground_emit(st, 1, 7, pool, refs, 4, fans, w, extra, ne, 0, hubs, out) == 0);
    CHECK(psdl_pool_count(pool) == before);
    CHECK(psdl_store_count(st, 1) == 1);
    const psdl_store_rec *rec = psdl_store_first(st, 1);
    CHECK(rec && rec->type == PSDL_STORE_FAN && rec->group == 7 && rec->nrefs == 4 && rec->cap == 0);
    if (rec) {
        const uint32_t *r = psdl_store_refs(st, rec);
        int all = 1;
        for (size_t k = 0; k < 4; k++) all &= r[k] == out[k + 1];
        CHECK(all && out[0] == 4);
    }
    float y = 0;
    CHECK(psdl_ground_level(pool, out, w, &y) == 1 && y == 2.0f);
    /* no such room: nothing pushed */
    CHECK(psdl_ground_emit(st, 2, 7, pool, refs, 4, fans, w, extra, ne, 0, hubs, out) == PSDL_STORE_RANGE);
    CHECK(psdl_ground_emit(st, 0, 7, pool, refs, 4, fans, w, extra, ne, 0, hubs, out) == PSDL_STORE_RANGE);
    /* a plan index past the points: refused before anything changes */
    uint32_t bad[5] = {4, 0, 1, 2, 9};
    CHECK(psdl_ground_emit(st, 1, 7, pool, refs, 4, bad, 5, extra, 0, 0, hubs, out) == PSDL_STORE_RANGE);
    uint32_t shortfan[3] = {4, 0, 1}; /* a count past the words */
    CHECK(psdl_ground_emit(st, 1, 7, pool, refs, 4, shortfan, 3, extra, 0, 0, hubs, out) == PSDL_STORE_RANGE);
    CHECK(psdl_store_count(st, 1) == 1);
    /* a point off the level */
    const double up[] = {5, 3, 5};
    uint32_t r5 = psdl_pool_add(pool, up) + 1;
    uint32_t tri[4] = {3, refs[0], refs[1], r5};
    CHECK(psdl_ground_level(pool, tri, 4, &y) == 0);
    uint32_t outside[4] = {3, refs[0], refs[1], 999};
    CHECK(psdl_ground_level(pool, outside, 4, &y) == 0);
    CHECK(psdl_ground_level(pool, out, 0, &y) == 0); /* no point */
    psdl_store_free(st);
    psdl_pool_free(pool);
}

static void test_refusals(void) {
    set_ctx("refusals");
    psdl_pool *pool = psdl_pool_new(3, 1);
    CHECK(pool != NULL);
    if (!pool) return;
    uint32_t fans[128], refs[8];
    double extra[3 * 8], pts[3 * 8];
    size_t ne;
    /* a bow tie: its edges cross */
    const double bow[] = {0, 0, 0, 10, 0, 10, 10, 0, 0, 0, 0, 10};
    pool_points(pool, bow, 4, refs);
    CHECK(psdl_ground_plan(fans, extra, &ne, pts, pool, refs, 4, 1) == PSDL_GROUND_CROSSING);
    /* all on a line: no area */
    const double line[] = {0, 0, 0, 5, 0, 0, 10, 0, 0};
    pool_points(pool, line, 3, refs);
    CHECK(psdl_ground_plan(fans, extra, &ne, pts, pool, refs, 3, 1) == PSDL_GROUND_NOAREA);
    CHECK(psdl_ground_plan(fans, extra, &ne, pts, pool, refs, 2, 0) == PSDL_GROUND_NOAREA);
    /* references outside the pool (0, past the count) */
    uint32_t badr[3] = {0, 2, 3};
    CHECK(psdl_ground_plan(fans, extra, &ne, pts, pool, badr, 3, 1) == PSDL_GROUND_BADREF);
    badr[0] = 2, badr[2] = (uint32_t)psdl_pool_count(pool) + 1;
    CHECK(psdl_ground_plan(fans, extra, &ne, pts, pool, badr, 3, 1) == PSDL_GROUND_BADREF);
    badr[2] = UINT32_MAX;
    CHECK(psdl_ground_plan(fans, extra, &ne, pts, pool, badr, 3, 0) == PSDL_GROUND_BADREF);
    psdl_pool_free(pool);
}

/* A concave L: more than one fan, every triangle's points pooled; a hub point (a piece whose
 * collinear runs defeat every boundary hub) pooled before the records that use it. */
static void test_concave(void) {
    set_ctx("concave");
    psdl_pool *pool = psdl_pool_new(3, 1);
    psdl_store *st = psdl_store_new();
    CHECK(pool && st);
    if (!pool || !st) return;
    const double L[] = {0, 0, 0, 0, 0, 20, 10, 0, 20, 10, 0, 10, 20, 0, 10, 20, 0, 0};
    uint32_t refs[6], fans[128], hubs[16], out[128];
    double extra[3 * 16], pts[3 * 16];
    size_t ne;
    pool_points(pool, L, 6, refs);
    size_t w = psdl_ground_plan(fans, extra, &ne, pts, pool, refs, 6, 1);
    CHECKF(w > 0 && w <= psdl_ground_bound(6), "w %zu", w);
    size_t nf = 0;
    for (size_t i = 0; i < w; i += 1 + fans[i]) nf++;
    CHECKF(nf >= 2, "%zu fans", nf);
    psdl_store_add_room(st);
    CHECK(psdl_ground_emit(st, 1, 1, pool, refs, 6, fans, w, extra, ne, 0, hubs, out) == 0);
    CHECK(psdl_store_count(st, 1) == nf);
    float y;
    CHECK(psdl_ground_level(pool, out, w, &y) == 1 && y == 0.0f);
    /* a square with two points inside each side: every boundary hub sees a side's run
     * edge-on, so psdl_fans adds a hub in the middle, pooled before the record using it */
    const double sq[] = {0, 1, 0, 0, 1, 3, 0, 1, 6, 0, 1, 10, 3, 1, 10, 6, 1, 10,
                         10, 1, 10, 10, 1, 7, 10, 1, 4, 10, 1, 0, 7, 1, 0, 4, 1, 0};
    uint32_t r12[12];
    pool_points(pool, sq, 12, r12);
    size_t w2 = psdl_ground_plan(fans, extra, &ne, pts, pool, r12, 12, 1);
    CHECK(w2 > 0 && w2 <= psdl_ground_bound(12));
    CHECKF(ne == 1, "%zu hubs", ne);
    size_t before = psdl_pool_count(pool);
    CHECK(psdl_ground_emit(st, 1, 1, pool, r12, 12, fans, w2, extra, ne, 0.5, hubs, out) == 0);
    CHECK(psdl_pool_count(pool) == before + ne);
    CHECK(ne == 0 || hubs[0] == before + 1);
    int ok = 1;
    for (size_t i = 0; i < w2; i += 1 + out[i])
        for (size_t k = 1; k <= out[i]; k++) ok &= out[i + k] >= 1 && out[i + k] <= psdl_pool_count(pool);
    CHECK(ok);
    psdl_store_free(st);
    psdl_pool_free(pool);
}

int main(void) {
    test_square();
    test_refusals();
    test_concave();
    printf("c: %lu passed, %lu failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
