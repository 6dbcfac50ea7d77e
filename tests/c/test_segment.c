/* test_segment.c -- the plan segment and ring tests the C kernels share (src/psdl_segment.h):
 * orientation, segment distance (squared and not, clamped ends, zero-length segments, NaN),
 * the crossing number on x, z and x, y, z rings, and the network's unit vector, proper
 * crossing and closest point. Run under ASan/UBSan by scripts/test
 * (build-asan/psdl_ctest_segment). */
#include "psdl_segment.h"

#include <math.h>

#include "check.h"

static void test_orient(void) {
    set_ctx("orient");
    CHECK(psdl_seg_orient(0, 0, 1, 0, 0, 1) == 1);  /* left of a->b: positive */
    CHECK(psdl_seg_orient(0, 0, 1, 0, 0, -1) == -1); /* right: negative */
    CHECK(psdl_seg_orient(0, 0, 2, 2, 5, 5) == 0);   /* on the line */
}

static void test_dist(void) {
    set_ctx("seg_dist");
    CHECK(psdl_seg_dist(5, 3, 0, 0, 10, 0) == 3);    /* over the middle */
    CHECK(psdl_seg_dist(-3, 4, 0, 0, 10, 0) == 5);   /* before a: to a */
    CHECK(psdl_seg_dist(13, -4, 0, 0, 10, 0) == 5);  /* beyond b: to b */
    CHECK(psdl_seg_dist(3, 4, 0, 0, 0, 0) == 5);     /* a zero-length segment: to its point */
    CHECK(psdl_seg_dist2(5, 3, 0, 0, 10, 0) == 9);   /* squared */
    CHECK(psdl_seg_dist2(1, 1, 1, 1, 2, 2) == 0);    /* on an end */
    CHECK(isnan(psdl_seg_dist(NAN, 0, 0, 0, 1, 0))); /* NaN stays NaN (never a number) */
    /* the same steps as the Lua: a point 1/3 along */
    double t = (1.0 * 3 + 1.0 * 0) / 9, ex = 0 + t * 3 - 1, ez = 0 + t * 0 - 1;
    CHECK(psdl_seg_dist(1, 1, 0, 0, 3, 0) == sqrt(ex * ex + ez * ez));
}

static void test_inside(void) {
    set_ctx("ring_inside");
    const double sq2[] = {0, 0, 10, 0, 10, 10, 0, 10};
    const double sq3[] = {0, 7, 0, 10, 7, 0, 10, 7, 10, 0, 7, 10};
    CHECK(psdl_ring_inside(sq2, 4, 2, 5, 5));
    CHECK(!psdl_ring_inside(sq2, 4, 2, 15, 5));
    CHECK(!psdl_ring_inside(sq2, 4, 2, 5, -1));
    CHECK(psdl_ring_inside(sq3, 4, 3, 5, 5)); /* x, y, z points: y is not read */
    CHECK(!psdl_ring_inside(sq3, 4, 3, 5, 11));
    CHECK(!psdl_ring_inside(sq2, 0, 2, 5, 5)); /* no points: outside */
    /* an L (concave): the notch is outside */
    const double L[] = {0, 0, 0, 100, 50, 100, 50, 50, 100, 50, 100, 0};
    CHECK(psdl_ring_inside(L, 6, 2, 25, 75));
    CHECK(!psdl_ring_inside(L, 6, 2, 75, 75));
    CHECK(psdl_ring_inside(L, 6, 2, 75, 25));
    CHECK(!psdl_ring_inside(sq2, 4, 2, NAN, 5));
}

static void test_network(void) {
    set_ctx("network tests");
    double u[2] = {9, 9};
    CHECK(psdl_seg_unit(3, 4, u) && u[0] == 0.6 && u[1] == 0.8);
    u[0] = 9;
    CHECK(!psdl_seg_unit(1e-10, 0, u) && u[0] == 9); /* too short: untouched */
    const double p[] = {0, 0}, q[] = {10, 0}, a[] = {5, -5}, b[] = {5, 5}, c[] = {10, -5};
    double t = -1, w = -1;
    CHECK(psdl_seg_cross(p, q, a, b, &t, &w) && t == 0.5 && w == 0.5);
    CHECK(!psdl_seg_cross(p, q, c, (const double[]){10, 5}, &t, NULL)); /* at q: not proper */
    CHECK(!psdl_seg_cross(p, q, (const double[]){0, 1}, (const double[]){10, 1}, &t, NULL)); /* parallel */
    CHECK(psdl_seg_closest(5, 3, p, q, &t) == 3 && t == 0.5);
    CHECK(psdl_seg_closest(-4, 3, p, q, &t) == 5 && t == 0);
    CHECK(psdl_seg_closest(1, 0, p, p, NULL) == 1);
}

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    test_orient();
    test_dist();
    test_inside();
    test_network();
    printf("c: %lu passed, %lu failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
