/* test_overlaps.c -- rooms of unrelated network parts overlapping in plan (src/psdl_overlaps.h):
 * squares of two unrelated roads overlapping give one overlap with a point inside both, a
 * point of one inside the other or only crossing edges both count, touching or related owners
 * (shared node, road and its node, nodes joined by a road) none, a pair of owners once, polygons
 * of fewer than 3 points left out, bad input refused, random polygons never crash and every
 * overlap's owners unrelated. Run under ASan/UBSan by scripts/test (build-asan/psdl_ctest_overlaps). */
#include "psdl_overlaps.h"

#include "check.h"

#define NODE PSDL_OVERLAP_NODE

/* polygon i of nps: a square of side s at (x, z) (its box the points' box) */
static void square(double *xz, double *box, size_t i, double x, double z, double s) {
    double *p = xz + 8 * i;
    p[0] = x, p[1] = z, p[2] = x, p[3] = z + s, p[4] = x + s, p[5] = z + s, p[6] = x + s, p[7] = z;
    box[4 * i] = x, box[4 * i + 1] = z, box[4 * i + 2] = x + s, box[4 * i + 3] = z + s;
}

static const uint32_t start4[] = {0, 4, 8, 12, 16};

/* owners: 0, 1, 2, 3 nodes; 4 road 0-1; 5 road 2-3; 6 road 1-2 */
static const uint32_t ends7[] = {NODE, NODE, NODE, NODE, NODE, NODE, NODE, NODE, 0, 1, 2, 3, 1, 2};

static void test_unrelated(void) {
    set_ctx("unrelated roads");
    double xz[16], box[8];
    square(xz, box, 0, 0, 0, 10);
    square(xz, box, 1, 5, 5, 10);
    const uint32_t owner[] = {4, 5};
    psdl_overlap *o;
    size_t n;
    CHECK(psdl_room_overlaps(&o, &n, xz, start4, box, owner, 2, ends7, 7, 0.05, 40) == PSDL_OVERLAPS_OK);
    CHECKF(n == 1, "%zu overlaps", n);
    if (n == 1) {
        CHECK(o[0].a == 4 && o[0].b == 5);
        /* the corner (10, 10) of the first square lies inside the second */
        CHECKF(o[0].x == 10 && o[0].z == 10, "(%g, %g)", o[0].x, o[0].z);
    }
    free(o);
    /* related owners: roads sharing node 1 or 2 (road 6 with 4 and 5), a road and its node */
    const uint32_t rel[][2] = {{4, 6}, {6, 5}, {4, 0}, {1, 4}, {4, 4}, {1, 2}};
    for (size_t k = 0; k < sizeof rel / sizeof rel[0]; k++) {
        set_ctx("related %u %u", rel[k][0], rel[k][1]);
        CHECK(psdl_room_overlaps(&o, &n, xz, start4, box, rel[k], 2, ends7, 7, 0.05, 40) == PSDL_OVERLAPS_OK);
        CHECKF(n == 0 && o == NULL, "%zu overlaps", n);
        free(o);
    }
    /* nodes 0 and 2: no road joins them */
    set_ctx("unrelated nodes");
    const uint32_t nodes02[] = {0, 2};
    CHECK(psdl_room_overlaps(&o, &n, xz, start4, box, nodes02, 2, ends7, 7, 0.05, 40) == PSDL_OVERLAPS_OK);
    CHECK(n == 1);
    free(o);
}

static void test_touch_and_cross(void) {
    set_ctx("touching");
    double xz[16], box[8];
    square(xz, box, 0, 0, 0, 10);
    square(xz, box, 1, 10, 0, 10); /* sharing an edge */
    const uint32_t owner[] = {4, 5};
    psdl_overlap *o;
    size_t n;
    CHECK(psdl_room_overlaps(&o, &n, xz, start4, box, owner, 2, ends7, 7, 0.05, 40) == PSDL_OVERLAPS_OK);
    CHECKF(n == 0, "%zu overlaps", n);
    free(o);
    set_ctx("overlapping by less than eps");
    square(xz, box, 1, 9.97, 0, 10);
    CHECK(psdl_room_overlaps(&o, &n, xz, start4, box, owner, 2, ends7, 7, 0.05, 40) == PSDL_OVERLAPS_OK);
    CHECKF(n == 0, "%zu overlaps", n);
    free(o);
    set_ctx("a cross: edges crossing, no point inside");
    /* a long thin bar across a long thin bar */
    const double bars[] = {0, 4, 0, 6, 20, 6, 20, 4, 9, -10, 9, 20, 11, 20, 11, -10};
    const double bbox[] = {0, 4, 20, 6, 9, -10, 11, 20};
    CHECK(psdl_room_overlaps(&o, &n, bars, start4, bbox, owner, 2, ends7, 7, 0.05, 40) == PSDL_OVERLAPS_OK);
    CHECKF(n == 1, "%zu overlaps", n);
    if (n == 1) CHECKF(o[0].x == 9 && o[0].z == 6, "(%g, %g)", o[0].x, o[0].z);
    free(o);
}

static void test_once_and_small(void) {
    set_ctx("a pair of owners once");
    double xz[24], box[12];
    square(xz, box, 0, 0, 0, 10);
    square(xz, box, 1, 5, 5, 10);
    square(xz, box, 2, 2, 2, 10);
    const uint32_t owner[] = {4, 5, 5};
    psdl_overlap *o;
    size_t n;
    const uint32_t start[] = {0, 4, 8, 12};
    CHECK(psdl_room_overlaps(&o, &n, xz, start, box, owner, 3, ends7, 7, 0.05, 40) == PSDL_OVERLAPS_OK);
    CHECKF(n == 1, "%zu overlaps", n);
    free(o);
    set_ctx("fewer than 3 points: left out");
    const uint32_t start2[] = {0, 2, 6};
    double xz2[12] = {0, 0, 10, 10, 0, 0, 0, 10, 10, 10, 10, 0};
    double box2[] = {0, 0, 10, 10, 0, 0, 10, 10};
    const uint32_t owner2[] = {4, 5};
    CHECK(psdl_room_overlaps(&o, &n, xz2, start2, box2, owner2, 2, ends7, 7, 0.05, 40) == PSDL_OVERLAPS_OK);
    CHECK(n == 0);
    free(o);
    set_ctx("no polygons");
    CHECK(psdl_room_overlaps(&o, &n, NULL, start2, NULL, NULL, 0, ends7, 7, 0.05, 40) == PSDL_OVERLAPS_OK);
    CHECK(n == 0 && o == NULL);
}

static void test_bad(void) {
    set_ctx("bad input");
    double xz[16], box[8];
    square(xz, box, 0, 0, 0, 10);
    square(xz, box, 1, 5, 5, 10);
    psdl_overlap *o = (psdl_overlap *)1;
    size_t n = 7;
    const uint32_t owner_bad[] = {4, 7};
    CHECK(psdl_room_overlaps(&o, &n, xz, start4, box, owner_bad, 2, ends7, 7, 0.05, 40) == PSDL_OVERLAPS_INVALID);
    CHECK(o == NULL && n == 0);
    const uint32_t owner[] = {4, 5};
    const uint32_t ends_half[] = {NODE, 3, 0, 1};
    CHECK(psdl_room_overlaps(&o, &n, xz, start4, box, owner, 2, ends_half, 2, 0.05, 40) == PSDL_OVERLAPS_INVALID);
    const uint32_t ends_far[] = {NODE, NODE, 0, 9};
    const uint32_t owner01[] = {0, 1};
    CHECK(psdl_room_overlaps(&o, &n, xz, start4, box, owner01, 2, ends_far, 2, 0.05, 40) == PSDL_OVERLAPS_INVALID);
    const uint32_t ends_road_road[] = {0, 0, NODE, NODE};
    CHECK(psdl_room_overlaps(&o, &n, xz, start4, box, owner01, 2, ends_road_road, 2, 0.05, 40) == PSDL_OVERLAPS_INVALID);
    const uint32_t start_down[] = {0, 4, 2};
    CHECK(psdl_room_overlaps(&o, &n, xz, start_down, box, owner, 2, ends7, 7, 0.05, 40) == PSDL_OVERLAPS_INVALID);
    double box_nan[8] = {0, 0, 10, 10, 5, 5, 15, 0.0 / 0.0};
    CHECK(psdl_room_overlaps(&o, &n, xz, start4, box_nan, owner, 2, ends7, 7, 0.05, 40) == PSDL_OVERLAPS_INVALID);
    double box_huge[8] = {0, 0, 10, 10, -1e12, -1e12, 1e12, 1e12};
    CHECK(psdl_room_overlaps(&o, &n, xz, start4, box_huge, owner, 2, ends7, 7, 0.05, 40) == PSDL_OVERLAPS_INVALID);
    CHECK(psdl_room_overlaps(&o, &n, xz, start4, box, owner, 2, ends7, 7, 0, 40) == PSDL_OVERLAPS_INVALID);
    CHECK(psdl_room_overlaps(&o, &n, xz, start4, box, owner, 2, ends7, 7, 0.05, 0.0 / 0.0) == PSDL_OVERLAPS_INVALID);
    CHECK(psdl_room_overlaps(NULL, &n, xz, start4, box, owner, 2, ends7, 7, 0.05, 40) == PSDL_OVERLAPS_INVALID);
    CHECK(psdl_room_overlaps(&o, &n, NULL, start4, box, owner, 2, ends7, 7, 0.05, 40) == PSDL_OVERLAPS_INVALID);
}

static void test_random(void) {
    set_ctx("random polygons");
    unsigned long seed = 12345;
#define RND() (seed = seed * 6364136223846793005ul + 1442695040888963407ul, (double)(seed >> 33) / 2147483648.0)
    int bad = 0;
    for (int it = 0; it < 200; it++) {
        size_t np = 1 + (size_t)(RND() * 12);
        double xz[2 * 12 * 8], box[4 * 12];
        uint32_t start[13], owner[12];
        size_t w = 0;
        for (size_t i = 0; i < np; i++) {
            size_t m = (size_t)(RND() * 8); /* 0..7 points, some degenerate */
            double cx = RND() * 100, cz = RND() * 100;
            start[i] = (uint32_t)w;
            double x0 = 1e9, z0 = 1e9, x1 = -1e9, z1 = -1e9;
            for (size_t k = 0; k < m; k++, w++) {
                xz[2 * w] = cx + (RND() - 0.5) * 60, xz[2 * w + 1] = cz + (RND() - 0.5) * 60;
                if (xz[2 * w] < x0) x0 = xz[2 * w];
                if (xz[2 * w] > x1) x1 = xz[2 * w];
                if (xz[2 * w + 1] < z0) z0 = xz[2 * w + 1];
                if (xz[2 * w + 1] > z1) z1 = xz[2 * w + 1];
            }
            if (m == 0) x0 = z0 = x1 = z1 = 0;
            box[4 * i] = x0, box[4 * i + 1] = z0, box[4 * i + 2] = x1, box[4 * i + 3] = z1;
            owner[i] = (uint32_t)(RND() * 7);
        }
        start[np] = (uint32_t)w;
        psdl_overlap *o;
        size_t n;
        if (psdl_room_overlaps(&o, &n, xz, start, box, owner, np, ends7, 7, 0.05, 40) != PSDL_OVERLAPS_OK) {
            bad++;
            continue;
        }
        for (size_t r = 0; r < n; r++) {
            if (o[r].a == o[r].b || o[r].a >= 7 || o[r].b >= 7) bad++;
            for (size_t q = 0; q < r; q++) /* a pair once */
                if ((o[q].a == o[r].a && o[q].b == o[r].b) || (o[q].a == o[r].b && o[q].b == o[r].a)) bad++;
        }
        free(o);
    }
#undef RND
    CHECKF(bad == 0, "%d bad results", bad);
}

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    test_unrelated();
    test_touch_and_cross();
    test_once_and_small();
    test_bad();
    test_random();
    printf("c: %lu passed, %lu failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
