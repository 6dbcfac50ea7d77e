/* test_split.c -- splitting a block into rooms (src/psdl_split.h): the plan shape of a polygon,
 * the limit test, the chord across a long block near its half-area line, footprints the chord
 * goes round (and through when it must), degenerate input. Run under ASan/UBSan by
 * scripts/test (build-asan/psdl_ctest_split). */
#include <math.h>

#include "psdl_split.h"

#include "check.h"

/* A 200 x 50 m block in retail winding with points every 10 m along its long sides:
 * (0, 0), (0, 50), (10, 50) .. (200, 50), (200, 0), (190, 0) .. (10, 0): 42 points. */
static size_t long_block(double *xz) {
    size_t n = 0;
    xz[2 * n] = 0, xz[2 * n + 1] = 0, n++;
    for (int x = 0; x <= 200; x += 10) xz[2 * n] = x, xz[2 * n + 1] = 50, n++;
    for (int x = 200; x >= 10; x -= 10) xz[2 * n] = x, xz[2 * n + 1] = 0, n++;
    return n;
}

static void test_shape(void) {
    set_ctx("shape");
    const double rect[] = {0, 0, 0, 40, 100, 40, 100, 0};
    psdl_shape sh;
    psdl_split_shape(rect, 4, &sh);
    CHECKF(fabs(sh.area - 4000) < 1e-9, "area %g", sh.area);
    CHECKF(fabs(sh.cx - 50) < 1e-9 && fabs(sh.cz - 20) < 1e-9, "centroid %g %g", sh.cx, sh.cz);
    CHECKF(fabs(fabs(sh.dx) - 1) < 1e-9 && fabs(sh.dz) < 1e-9, "direction %g %g", sh.dx, sh.dz);
    CHECKF(fabs(sh.extent - 100) < 1e-9 && fabs(sh.tmax - sh.tmin - 100) < 1e-9, "extent %g", sh.extent);
    /* the same rectangle turned: its direction follows */
    const double tall[] = {0, 0, 0, 100, 40, 100, 40, 0};
    psdl_split_shape(tall, 4, &sh);
    CHECKF(fabs(fabs(sh.dz) - 1) < 1e-9, "direction %g %g", sh.dx, sh.dz);
    /* degenerate (all points on a line): area 0 */
    const double line[] = {0, 0, 10, 0, 20, 0};
    psdl_split_shape(line, 3, &sh);
    CHECK(sh.area == 0 && sh.extent == 0);
}

static void test_chord(void) {
    set_ctx("chord");
    double xz[2 * 64];
    size_t n = long_block(xz), i = 99, j = 99;
    CHECKF(n == 42, "%zu points", n);
    /* within the limits: kept */
    CHECK(psdl_split_chord(xz, n, 20000, 120, 300, 1, NULL, &i, &j) == PSDL_SPLIT_FITS);
    /* over the area limit: cut square across the long axis, in the middle */
    int rc = psdl_split_chord(xz, n, 8000, 120, 300, 1, NULL, &i, &j);
    CHECKF(rc == PSDL_SPLIT_CHORD, "rc %d", rc);
    if (rc == PSDL_SPLIT_CHORD) {
        CHECK(i < n && j < n);
        CHECKF(fabs(xz[2 * i] - 100) < 1e-9 && fabs(xz[2 * j] - 100) < 1e-9, "chord x %g .. %g", xz[2 * i], xz[2 * j]);
        CHECK(fabs(xz[2 * i + 1] - xz[2 * j + 1]) == 50);
    }
    /* over the length limit only */
    CHECK(psdl_split_chord(xz, n, 20000, 120, 150, 1, NULL, &i, &j) == PSDL_SPLIT_CHORD);
    /* too deep: kept as it is */
    CHECK(psdl_split_chord(xz, n, 8000, 120, 300, 0, NULL, &i, &j) == PSDL_SPLIT_FITS);
    /* a rectangle of 4 points: its diagonals make too sharp an angle with its sides: none */
    const double rect[] = {0, 0, 0, 50, 200, 50, 200, 0};
    CHECK(psdl_split_chord(rect, 4, 8000, 120, 300, 1, NULL, &i, &j) == PSDL_SPLIT_NONE);
    /* tiny (4 m² or less): kept whatever the limits */
    const double tiny[] = {0, 0, 0, 1, 3, 1, 3, 0};
    CHECK(psdl_split_chord(tiny, 4, 1, 3, 1, 1, NULL, &i, &j) == PSDL_SPLIT_FITS);
    /* fewer than 3 points: kept */
    CHECK(psdl_split_chord(tiny, 2, 0, 0, 0, 1, NULL, &i, &j) == PSDL_SPLIT_FITS);
}

static void test_obstacles(void) {
    set_ctx("obstacles");
    double xz[2 * 64];
    size_t n = long_block(xz), i = 0, j = 0;
    /* a footprint across the middle line (x 95 .. 105, z 20 .. 30) */
    const double fp[] = {95, 20, 95, 30, 105, 30, 105, 20};
    const size_t start[] = {0, 4};
    const double box[] = {95, 105, 20, 30};
    psdl_split_obstacles obs = {1, start, fp, box};
    CHECK(psdl_split_obstacle_hit(&obs, 100, 0, 100, 50));   /* crosses it */
    CHECK(psdl_split_obstacle_hit(&obs, 98, 22, 102, 28));   /* inside it */
    CHECK(!psdl_split_obstacle_hit(&obs, 80, 0, 80, 50));    /* beside it */
    CHECK(!psdl_split_obstacle_hit(&obs, 0, 0, 50, 10));     /* boxes apart */
    int rc = psdl_split_chord(xz, n, 8000, 120, 300, 1, &obs, &i, &j);
    CHECKF(rc == PSDL_SPLIT_CHORD, "rc %d", rc);
    if (rc == PSDL_SPLIT_CHORD) {
        CHECKF(!psdl_split_obstacle_hit(&obs, xz[2 * i], xz[2 * i + 1], xz[2 * j], xz[2 * j + 1]),
              "chord through the footprint: x %g .. %g", xz[2 * i], xz[2 * j]);
    }
    /* a footprint over the whole block: the chord goes through it, as without obstacles */
    const double all[] = {-1, -1, -1, 51, 201, 51, 201, -1};
    const double abox[] = {-1, 201, -1, 51};
    psdl_split_obstacles every = {1, start, all, abox};
    size_t i2 = 0, j2 = 0;
    rc = psdl_split_chord(xz, n, 8000, 120, 300, 1, &every, &i2, &j2);
    CHECKF(rc == PSDL_SPLIT_CHORD, "rc %d", rc);
    psdl_split_chord(xz, n, 8000, 120, 300, 1, NULL, &i, &j);
    CHECK(i == i2 && j == j2);
    /* an empty obstacle list and an empty polygon in it change nothing */
    const size_t st0[] = {0, 0};
    psdl_split_obstacles none = {1, st0, fp, box};
    CHECK(!psdl_split_obstacle_hit(&none, 100, 0, 100, 50));
}

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    test_shape();
    test_chord();
    test_obstacles();
    printf("c: %lu passed, %lu failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
