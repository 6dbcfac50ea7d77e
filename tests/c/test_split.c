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

/* Random polygons (self-crossing, repeated and collinear points, tiny and huge), random
 * limits, random obstacles: never a crash, a chord's ends are two distinct points of the
 * polygon, not neighbours. */
static void test_random(void) {
    set_ctx("random");
    unsigned long long st = 777;
#define RND() (st = st * 6364136223846793005ull + 1442695040888963407ull, (unsigned)(st >> 33))
    double xz[2 * 64], fp[2 * 16], box[4 * 4];
    size_t ostart[5];
    int bad = 0, chords = 0;
    for (int it = 0; it < 4000; it++) {
        size_t n = 3 + RND() % 60;
        double scale = (RND() % 4 == 0) ? 1e-3 : (RND() % 4 == 0 ? 1e6 : 40);
        for (size_t i = 0; i < n; i++) {
            double a = -6.283185307179586 * (double)i / (double)n, r = (0.3 + (RND() % 100) / 60.0) * scale;
            if (RND() % 8 == 0 && i > 0) xz[2 * i] = xz[2 * i - 2], xz[2 * i + 1] = xz[2 * i - 1]; /* a repeat */
            else xz[2 * i] = r * cos(a) * 2, xz[2 * i + 1] = r * sin(a);
            if (RND() % 16 == 0) xz[2 * i] = -xz[2 * i]; /* folds */
        }
        size_t no = RND() % 3;
        ostart[0] = 0;
        for (size_t o = 0; o < no; o++) {
            double cx = ((double)(RND() % 80) - 40) * scale / 40, cz = ((double)(RND() % 80) - 40) * scale / 40;
            double h = (1 + RND() % 10) * scale / 40;
            double *q = fp + 8 * o;
            q[0] = cx - h, q[1] = cz - h, q[2] = cx - h, q[3] = cz + h, q[4] = cx + h, q[5] = cz + h, q[6] = cx + h,
            q[7] = cz - h;
            box[4 * o] = cx - h, box[4 * o + 1] = cx + h, box[4 * o + 2] = cz - h, box[4 * o + 3] = cz + h;
            ostart[o + 1] = 4 * (o + 1);
        }
        psdl_split_obstacles obs = {no, ostart, fp, box};
        size_t i = 0, j = 0;
        double area = (double)(RND() % 5000) * scale / 40, length = (double)(RND() % 200) * scale / 40;
        double points = (double)(3 + RND() % 80);
        int try_ = RND() % 8 != 0;
        int rc = psdl_split_chord(xz, n, area, points, length, try_, no ? &obs : NULL, &i, &j);
        if (rc == PSDL_SPLIT_CHORD) {
            chords++;
            if (i >= n || j >= n || i == j || (i + 1) % n == j || (j + 1) % n == i) bad++;
        } else if (rc != PSDL_SPLIT_FITS && rc != PSDL_SPLIT_NONE) {
            bad++;
        }
    }
#undef RND
    CHECKF(bad == 0, "%d bad results", bad);
    CHECKF(chords > 100, "%d chords", chords);
}

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    test_shape();
    test_chord();
    test_obstacles();
    test_random();
    printf("c: %lu passed, %lu failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
