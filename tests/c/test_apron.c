/* test_apron.c -- the apron's outer edge (src/psdl_apron.h): rings around hand-made outlines
 * checked against the contract (retail winding, no repeated points, every point at the margin
 * within a cell, parts joined into one ring, holes of concave networks left inside, errors).
 * Run under ASan/UBSan by scripts/test (build-asan/psdl_ctest_apron). */
#include "psdl_apron.h"

#include "check.h"

#include <math.h>

/* squared distance from (x, z) to segment a-b */
static double seg_d2(double x, double z, const double *a, const double *b) {
    double dx = b[0] - a[0], dz = b[1] - a[1];
    double l2 = dx * dx + dz * dz;
    double t = l2 > 0 ? ((x - a[0]) * dx + (z - a[1]) * dz) / l2 : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    double ex = a[0] + t * dx - x, ez = a[1] + t * dz - z;
    return ex * ex + ez * ez;
}

/* distance from (x, z) to the outlines' edges */
static double dist(const double *xz, const size_t *start, size_t nout, double x, double z) {
    double best = HUGE_VAL;
    for (size_t o = 0; o < nout; o++) {
        size_t n = start[o + 1] - start[o];
        for (size_t k = 0; k < n; k++) {
            double d = seg_d2(x, z, xz + 2 * (start[o] + k), xz + 2 * (start[o] + (k + 1) % n));
            if (d < best) best = d;
        }
    }
    return sqrt(best);
}

static double ring_s(const double *p, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += p[2 * i] * p[2 * ((i + 1) % n) + 1] - p[2 * ((i + 1) % n)] * p[2 * i + 1];
    return s;
}

static int ring_inside(const double *p, size_t n, double x, double z) {
    int c = 0;
    for (size_t i = 0, j = n - 1; i < n; j = i++) {
        const double *a = p + 2 * i, *b = p + 2 * j;
        if ((a[1] > z) != (b[1] > z) && x < a[0] + (z - a[1]) * (b[0] - a[0]) / (b[1] - a[1])) c = !c;
    }
    return c;
}

/* The common contract of a result: retail winding, no two consecutive points equal, every
 * point between margin - cell and margin + cell from the outlines (with `strips`, joining
 * strips run between the outlines: only the lower bound holds). */
static void check_rings(const psdl_apron *a, const double *xz, const size_t *start, size_t nout, double margin,
                        double cell, int strips) {
    for (size_t r = 0; r < a->count; r++) {
        const double *p = a->xz + 2 * a->start[r];
        size_t n = a->start[r + 1] - a->start[r];
        CHECKF(n >= 3, "ring %zu has %zu points", r, n);
        CHECKF(ring_s(p, n) < 0, "ring %zu not in retail winding", r);
        size_t repeats = 0, far = 0, near = 0;
        for (size_t i = 0; i < n; i++) {
            const double *q = p + 2 * ((i + 1) % n);
            if (p[2 * i] == q[0] && p[2 * i + 1] == q[1]) repeats++;
            double d = dist(xz, start, nout, p[2 * i], p[2 * i + 1]);
            if (d > margin + cell) far++;
            if (d < margin - cell) near++;
        }
        CHECKF(repeats == 0, "ring %zu: %zu repeated points", r, repeats);
        if (!strips) CHECKF(far == 0, "ring %zu: %zu points beyond margin + cell", r, far);
        CHECKF(near == 0, "ring %zu: %zu points within margin - cell", r, near);
    }
}

static void test_square(void) {
    set_ctx("square");
    const double xz[] = {0, 0, 100, 0, 100, 60, 0, 60};
    const size_t start[] = {0, 4};
    psdl_apron a;
    size_t cells = 0;
    CHECK_EQ(psdl_apron_rings(&a, xz, start, 1, 30, 6, &cells), PSDL_APRON_OK);
    CHECKF(cells > 0, "cells %zu", cells);
    CHECK_EQ(a.count, 1);
    check_rings(&a, xz, start, 1, 30, 6, 0);
    if (a.count == 1) {
        size_t n = a.start[1];
        CHECK(ring_inside(a.xz, n, 50, 30));
        CHECK(ring_inside(a.xz, n, -25, 30));   /* within the margin */
        CHECK(!ring_inside(a.xz, n, -40, 30));  /* beyond it */
        CHECK(!ring_inside(a.xz, n, 50, 100));
        /* the area of a rounded rectangle: 100 x 60 + 2 * 30 * (100 + 60) + pi 30^2 */
        double area = -ring_s(a.xz, n) / 2, want = 6000 + 9600 + M_PI * 900;
        CHECKF(fabs(area - want) < 0.03 * want, "area %.1f, want about %.1f", area, want);
    }
    /* the same outline clockwise gives the same ring */
    const double cw[] = {0, 0, 0, 60, 100, 60, 100, 0};
    psdl_apron b;
    CHECK_EQ(psdl_apron_rings(&b, cw, start, 1, 30, 6, NULL), PSDL_APRON_OK);
    CHECK_EQ(b.count, a.count);
    if (b.count == 1 && a.count == 1) {
        CHECK_EQ(b.start[1], a.start[1]);
        CHECK(memcmp(a.xz, b.xz, 2 * a.start[1] * sizeof *a.xz) == 0);
    }
    psdl_apron_free(&a);
    psdl_apron_free(&b);
    CHECK(a.xz == NULL && a.start == NULL && a.count == 0);
}

static void test_join(void) {
    set_ctx("two parts joined");
    /* two 20 m squares 300 m apart (well over twice the 25 m margin), and a third 600 m up */
    const double xz[] = {0, 0, 20, 0, 20, 20, 0, 20, 300, 0, 320, 0, 320, 20, 300, 20,
                         0, 600, 20, 600, 20, 620, 0, 620};
    const size_t start[] = {0, 4, 8, 12};
    psdl_apron a;
    CHECK_EQ(psdl_apron_rings(&a, xz, start, 3, 25, 5, NULL), PSDL_APRON_OK);
    CHECK_EQ(a.count, 1);
    check_rings(&a, xz, start, 3, 25, 5, 1);
    if (a.count == 1) {
        size_t n = a.start[1];
        CHECK(ring_inside(a.xz, n, 10, 10));
        CHECK(ring_inside(a.xz, n, 310, 10));
        CHECK(ring_inside(a.xz, n, 10, 610));
        /* the strips: between the nearest corners, margin wide each side */
        CHECK(ring_inside(a.xz, n, 160, 10));
        CHECK(ring_inside(a.xz, n, 10, 300));
        CHECK(!ring_inside(a.xz, n, 160, 300));
    }
    psdl_apron_free(&a);
}

static void test_bay(void) {
    set_ctx("bay of a concave network");
    /* a 10 m wide frame around a 200 x 200 m bay, open by 30 m at the top: the band around
     * the frame closes the opening and encloses the bay's middle without touching it; only
     * the outer ring comes back */
    const double xz[] = {0, 0, 220, 0, 220, 220, 125, 220, 125, 210, 210, 210, 210, 10, 10, 10,
                         10, 210, 95, 210, 95, 220, 0, 220};
    const size_t start[] = {0, 12};
    psdl_apron a;
    CHECK_EQ(psdl_apron_rings(&a, xz, start, 1, 20, 5, NULL), PSDL_APRON_OK);
    CHECK_EQ(a.count, 1);
    check_rings(&a, xz, start, 1, 20, 5, 0);
    if (a.count == 1) CHECK(ring_inside(a.xz, a.start[1], 110, 110));
    psdl_apron_free(&a);
}

static void test_edges(void) {
    set_ctx("edge cases");
    psdl_apron a;
    const size_t none[] = {0};
    CHECK_EQ(psdl_apron_rings(&a, NULL, none, 0, 30, 6, NULL), PSDL_APRON_OK);
    CHECK_EQ(a.count, 0);
    psdl_apron_free(&a);
    /* one point: a circle of the margin's radius */
    const double pt[] = {5, 5};
    const size_t one[] = {0, 1};
    CHECK_EQ(psdl_apron_rings(&a, pt, one, 1, 10, 2, NULL), PSDL_APRON_OK);
    CHECK_EQ(a.count, 1);
    check_rings(&a, pt, one, 1, 10, 2, 0);
    psdl_apron_free(&a);
    /* bad arguments: nothing written */
    const double sq[] = {0, 0, 10, 0, 10, 10, 0, 10};
    const size_t s4[] = {0, 4};
    memset(&a, 0x5a, sizeof a);
    CHECK_EQ(psdl_apron_rings(&a, sq, s4, 1, 0, 6, NULL), PSDL_APRON_INVALID);
    CHECK_EQ(psdl_apron_rings(&a, sq, s4, 1, 30, -1, NULL), PSDL_APRON_INVALID);
    CHECK_EQ(psdl_apron_rings(&a, sq, s4, 1, NAN, 6, NULL), PSDL_APRON_INVALID);
    CHECK_EQ(psdl_apron_rings(&a, sq, s4, 1, 30, INFINITY, NULL), PSDL_APRON_INVALID);
    const double nan_pt[] = {0, 0, 10, 0, NAN, 10, 0, 10};
    CHECK_EQ(psdl_apron_rings(&a, nan_pt, s4, 1, 30, 6, NULL), PSDL_APRON_INVALID);
    const double huge_pt[] = {0, 0, 1e300, 0, 10, 10, 0, 10};
    size_t cells = 0;
    CHECK_EQ(psdl_apron_rings(&a, huge_pt, s4, 1, 30, 6, &cells), PSDL_APRON_TOO_BIG);
    CHECKF(cells > PSDL_APRON_MAX_CELLS, "cells %zu", cells);
    /* a 5 km square at a 1 m cell: refused before any allocation */
    const double big[] = {0, 0, 5000, 0, 5000, 5000, 0, 5000};
    CHECK_EQ(psdl_apron_rings(&a, big, s4, 1, 2, 1, &cells), PSDL_APRON_TOO_BIG);
    unsigned char *bytes = (unsigned char *)&a;
    CHECK(bytes[0] == 0x5a && bytes[sizeof a - 1] == 0x5a);
}

/* The edge's points (psdl_apron_edge): a square's ring cut every step m, each point at the
 * height of the nearest given point; no height points: 0; bad arguments refused. */
static void test_edge_points(void) {
    set_ctx("edge points");
    const double xz[] = {0, 0, 100, 0, 100, 60, 0, 60};
    const size_t start[] = {0, 4};
    psdl_apron a;
    CHECK_EQ(psdl_apron_rings(&a, xz, start, 1, 30, 6, NULL), PSDL_APRON_OK);
    /* heights: 5 m at the west end, 9 m at the east end */
    const double hp[] = {0, 5, 0, 0, 5, 60, 100, 9, 0, 100, 9, 60};
    double *out = NULL;
    size_t *st = NULL;
    CHECK_EQ(psdl_apron_edge(&out, &st, &a, 12, hp, 4, 30, 20), PSDL_APRON_OK);
    if (out && st) {
        size_t n = st[a.count];
        size_t want = 0; /* every edge: max(1, ceil(len / 12 - 1e-9)) points */
        for (size_t k = 0, m = a.start[1]; k < m; k++) {
            const double *p = a.xz + 2 * k, *q = a.xz + 2 * ((k + 1) % m);
            double len = sqrt((q[0] - p[0]) * (q[0] - p[0]) + (q[1] - p[1]) * (q[1] - p[1]));
            want += (size_t)fmax(1, ceil(len / 12 - 1e-9));
        }
        CHECKF(n == want, "%zu points, want %zu", n, want);
        CHECK(out[0] == a.xz[0] && out[2] == a.xz[1]); /* the ring's first point first */
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) {
            double x = out[3 * i], y = out[3 * i + 1];
            if ((x < 30 && y != 5) || (x > 70 && y != 9) || (y != 5 && y != 9)) bad++;
        }
        CHECKF(bad == 0, "%zu points at the wrong height", bad);
    }
    free(out), free(st);
    /* no height points: 0 m */
    CHECK_EQ(psdl_apron_edge(&out, &st, &a, 12, NULL, 0, 30, 20), PSDL_APRON_OK);
    if (out && st) CHECK(st[a.count] > 0 && out[1] == 0);
    free(out), free(st);
    /* refused: a step or cell not > 0, a height point not finite */
    CHECK_EQ(psdl_apron_edge(&out, &st, &a, 0, hp, 4, 30, 20), PSDL_APRON_INVALID);
    CHECK_EQ(psdl_apron_edge(&out, &st, &a, NAN, hp, 4, 30, 20), PSDL_APRON_INVALID);
    CHECK_EQ(psdl_apron_edge(&out, &st, &a, 12, hp, 4, -1, 20), PSDL_APRON_INVALID);
    const double hnan[] = {0, NAN, 0};
    CHECK_EQ(psdl_apron_edge(&out, &st, &a, 12, hnan, 1, 30, 20), PSDL_APRON_INVALID);
    CHECK(out == NULL && st == NULL);
    /* no rings: one offset, no point */
    psdl_apron none = {NULL, NULL, 0};
    size_t zero = 0;
    none.start = &zero;
    CHECK_EQ(psdl_apron_edge(&out, &st, &none, 12, hp, 4, 30, 20), PSDL_APRON_OK);
    CHECK(st && st[0] == 0);
    free(out), free(st);
    psdl_apron_free(&a);
}

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    test_square();
    test_join();
    test_bay();
    test_edges();
    test_edge_points();
    printf("c: %lu passed, %lu failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
