/* test_region.c -- chords across a region with holes (src/psdl_region.h): the segment test
 * psdl.plan.segs_meet mirrors (crossing, touching within 1 mm, apart), and the chord test of
 * psdl.city.blocks' hole joining (own edges skipped by identity, midpoint inside the outer
 * ring and outside the holes). Run under ASan/UBSan by scripts/test
 * (build-asan/psdl_ctest_region). */
#include "psdl_region.h"

#include "check.h"

static void test_segs_meet(void) {
    set_ctx("segs_meet");
    CHECK(psdl_segs_meet(0, 0, 10, 10, 0, 10, 10, 0, PSDL_REGION_TOUCH));        /* an X */
    CHECK(!psdl_segs_meet(0, 0, 10, 0, 0, 1, 10, 1, PSDL_REGION_TOUCH));         /* parallel, 1 m apart */
    CHECK(psdl_segs_meet(0, 0, 10, 0, 5, 0.0005, 5, 3, PSDL_REGION_TOUCH));      /* an end 0.5 mm off: touching */
    CHECK(!psdl_segs_meet(0, 0, 10, 0, 5, 0.002, 5, 3, PSDL_REGION_TOUCH));      /* 2 mm off: apart */
    CHECK(psdl_segs_meet(0, 0, 10, 0, 5, 0, 15, 0, PSDL_REGION_TOUCH));          /* collinear, overlapping */
    CHECK(!psdl_segs_meet(0, 0, 10, 0, 10.01, 0, 15, 0, PSDL_REGION_TOUCH));     /* collinear, 1 cm apart */
    CHECK(psdl_segs_meet(0, 0, 10, 0, 10.0005, 0, 15, 0, PSDL_REGION_TOUCH));    /* ends 0.5 mm apart */
    CHECK(!psdl_segs_meet(0, 0, 1, 1, 5, 5, 6, 7, PSDL_REGION_TOUCH));           /* boxes apart */
    CHECK(psdl_segs_meet(0, 0, 0, 0, 0, 0, 1, 1, PSDL_REGION_TOUCH));            /* a point on a segment's end */
}

static void test_chords(void) {
    set_ctx("chord_clear");
    /* outer 0..100 square, a hole 40..60 (any winding), ids 1..8 */
    const double xz[] = {0, 0, 0, 100, 100, 100, 100, 0, 40, 40, 60, 40, 60, 60, 40, 60};
    const uint64_t ids[] = {1, 2, 3, 4, 5, 6, 7, 8};
    const size_t start[] = {0, 4, 8};
    /* outer corner (0, 0) to the hole's near corner (40, 40): only edges at its ends touch */
    CHECK(psdl_region_chord_clear(xz, ids, start, 2, 1, 5, 0, 0, 40, 40));
    /* ... but not when the ends are not named: the edges at them touch the chord */
    CHECK(!psdl_region_chord_clear(xz, ids, start, 2, 99, 98, 0, 0, 40, 40));
    /* to the hole's far corner (60, 60): through the hole */
    CHECK(!psdl_region_chord_clear(xz, ids, start, 2, 1, 7, 0, 0, 60, 60));
    /* (0, 100) to (40, 60): clear */
    CHECK(psdl_region_chord_clear(xz, ids, start, 2, 2, 8, 0, 100, 40, 60));
    /* across the outer ring's corner outside: from (0, 100) to (100, 0) crosses the hole */
    CHECK(!psdl_region_chord_clear(xz, ids, start, 2, 2, 4, 0, 100, 100, 0));
    /* a chord whose midpoint is outside the outer ring: a concave outer ring (an L) */
    const double L[] = {0, 0, 0, 100, 50, 100, 50, 50, 100, 50, 100, 0};
    const uint64_t Lid[] = {1, 2, 3, 4, 5, 6};
    const size_t Ls[] = {0, 6};
    CHECK(!psdl_region_chord_clear(L, Lid, Ls, 1, 3, 5, 50, 100, 100, 50)); /* over the notch */
    CHECK(psdl_region_chord_clear(L, Lid, Ls, 1, 2, 6, 0, 100, 100, 0) == 0); /* meets corner 4 */
    CHECK(psdl_region_chord_clear(L, Lid, Ls, 1, 1, 4, 0, 0, 50, 50));      /* inside */
    /* a point shared by two rings (same id): the edges at it are skipped in both */
    const double sh[] = {0, 0, 0, 100, 100, 100, 100, 0, 40, 40, 60, 40, 60, 60, 0, 0};
    const uint64_t shid[] = {1, 2, 3, 4, 5, 6, 7, 1};
    CHECK(psdl_region_chord_clear(sh, shid, start, 2, 1, 6, 0, 0, 60, 40));
    CHECK(!psdl_region_chord_clear(sh, shid, start, 2, 1, 3, 0, 0, 100, 100)); /* through (60, 60) */
    /* the same coordinates under another identity: that edge at (0, 0) is tested, and meets */
    const uint64_t other[] = {1, 2, 3, 4, 5, 6, 7, 9};
    CHECK(!psdl_region_chord_clear(sh, other, start, 2, 1, 6, 0, 0, 60, 40));
    /* empty holes are skipped; no ring: not clear */
    const size_t st3[] = {0, 4, 8, 8};
    CHECK(psdl_region_chord_clear(xz, ids, st3, 3, 1, 5, 0, 0, 40, 40));
    CHECK(!psdl_region_chord_clear(xz, ids, start, 0, 1, 5, 0, 0, 40, 40));
}

static void test_target(void) {
    set_ctx("target");
    /* outer 0..100 square (retail: (0,0) (0,100) (100,100) (100,0)), a hole 40..60 */
    const double xz[] = {0, 0, 0, 100, 100, 100, 100, 0, 40, 40, 40, 60, 60, 60, 60, 40};
    const uint64_t ids[] = {1, 2, 3, 4, 5, 6, 7, 8};
    const size_t start[] = {0, 4, 8};
    /* the hole's (40, 40) joins the nearest outer corner (0, 0) */
    size_t k = psdl_region_target(xz, ids, start, 2, 1, 0, PSDL_REGION_NONE, PSDL_REGION_NONE);
    CHECKF(k == 0, "k %zu", k);
    /* (60, 60) with (0, 0) taken by the first chord from (40, 40): the corner (100, 100) */
    k = psdl_region_target(xz, ids, start, 2, 1, 2, 0, 0);
    CHECKF(k == 2, "k %zu", k);
    /* bad rings and indices: none */
    CHECK(psdl_region_target(xz, ids, start, 2, 0, 0, PSDL_REGION_NONE, PSDL_REGION_NONE) == PSDL_REGION_NONE);
    CHECK(psdl_region_target(xz, ids, start, 2, 2, 0, PSDL_REGION_NONE, PSDL_REGION_NONE) == PSDL_REGION_NONE);
    CHECK(psdl_region_target(xz, ids, start, 2, 1, 4, PSDL_REGION_NONE, PSDL_REGION_NONE) == PSDL_REGION_NONE);
    CHECK(psdl_region_target(xz, ids, start, 2, 1, 0, 9, 0) == PSDL_REGION_NONE);
    /* a hole that no outer point sees (a wall of another hole between): none */
    const double walled[] = {0, 0, 0, 100, 100, 100, 100, 0, 45, 45, 45, 55, 55, 55, 55, 45,
                             30, 30, 30, 70, 70, 70, 70, 30, 31, 31, 69, 31, 69, 69, 31, 69};
    const uint64_t wid[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    const size_t ws[] = {0, 4, 8, 16};
    /* ring 2 is an annulus-like closed ring around hole 1 (two rings of the same hole) */
    k = psdl_region_target(walled, wid, ws, 3, 1, 0, PSDL_REGION_NONE, PSDL_REGION_NONE);
    CHECKF(k == PSDL_REGION_NONE, "k %zu", k);
}

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    test_segs_meet();
    test_chords();
    test_target();
    printf("c: %lu passed, %lu failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
