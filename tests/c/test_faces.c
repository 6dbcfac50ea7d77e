/* test_faces.c -- the boundary loops of a road network (src/psdl_faces.h): two rooms sharing
 * an edge give one loop round both, two rooms touching at a corner two loops (the pinch
 * split), a ring of rooms an outer and an inner loop, rooms overlapping along an edge loose
 * ends joined within 12 m (and left open beyond), bad input refused. Run under ASan/UBSan
 * by scripts/test (build-asan/psdl_ctest_faces). */
#include "psdl_faces.h"

#include "check.h"

/* points as x, y, z from x, z pairs */
static void points(double *pts, const double *xz, size_t n) {
    for (size_t i = 0; i < n; i++) pts[3 * i] = xz[2 * i], pts[3 * i + 1] = 0, pts[3 * i + 2] = xz[2 * i + 1];
}

static size_t loop_len(const psdl_faces *f, size_t l) { return f->start[l + 1] - f->start[l]; }

static void test_shared_edge(void) {
    set_ctx("shared edge");
    const double xz[] = {0, 0, 0, 10, 10, 10, 10, 0, 20, 10, 20, 0};
    double pts[18];
    points(pts, xz, 6);
    const uint32_t start[] = {0, 4, 8};
    const uint32_t verts[] = {0, 1, 2, 3, 3, 2, 4, 5};
    psdl_faces f;
    CHECK(psdl_faces_loops(&f, pts, 6, start, verts, 2) == PSDL_FACES_OK);
    CHECKF(f.nloops == 1 && loop_len(&f, 0) == 6, "%zu loops", f.nloops);
    CHECK(f.ngaps == 0 && f.nopen == 0);
    /* the loop runs along the rooms' edges: 0 -> 1 -> 2 -> 4 -> 5 -> 3 */
    const uint32_t want[] = {0, 1, 2, 4, 5, 3};
    int same = f.nloops == 1 && loop_len(&f, 0) == 6;
    for (size_t k = 0; same && k < 6; k++) same = f.verts[k] == want[k];
    CHECK(same);
    psdl_faces_free(&f);
    psdl_faces_free(&f); /* twice: fine */
}

static void test_pinch(void) {
    set_ctx("pinch");
    /* squares (0..10)² and (10..20)² touching at (10, 10) */
    const double xz[] = {0, 0, 0, 10, 10, 10, 10, 0, 10, 20, 20, 20, 20, 10};
    double pts[21];
    points(pts, xz, 7);
    const uint32_t start[] = {0, 4, 8};
    const uint32_t verts[] = {0, 1, 2, 3, 2, 4, 5, 6};
    psdl_faces f;
    CHECK(psdl_faces_loops(&f, pts, 7, start, verts, 2) == PSDL_FACES_OK);
    CHECKF(f.nloops == 2, "%zu loops", f.nloops);
    if (f.nloops == 2) CHECK(loop_len(&f, 0) == 4 && loop_len(&f, 1) == 4);
    psdl_faces_free(&f);
}

static void test_ring(void) {
    set_ctx("ring");
    /* four rooms round a 10 x 10 hole: outer 0..30, inner 10..20 */
    const double xz[] = {0, 0, 0, 30, 30, 30, 30, 0, 10, 10, 10, 20, 20, 20, 20, 10};
    double pts[24];
    points(pts, xz, 8);
    /* left, top, right, bottom strips, retail winding */
    const uint32_t start[] = {0, 4, 8, 12, 16};
    const uint32_t verts[] = {0, 1, 5, 4, 1, 2, 6, 5, 2, 3, 7, 6, 3, 0, 4, 7};
    psdl_faces f;
    CHECK(psdl_faces_loops(&f, pts, 8, start, verts, 4) == PSDL_FACES_OK);
    CHECKF(f.nloops == 2, "%zu loops", f.nloops);
    if (f.nloops == 2) CHECK(loop_len(&f, 0) == 4 && loop_len(&f, 1) == 4);
    psdl_faces_free(&f);
}

static void test_gaps(void) {
    set_ctx("gaps");
    /* two rooms using the edge 0 -> 1 in the same direction (overlapping): it drops out, and
     * two loose ends at 0 are joined to the two loose starts at 1 (10 m apart) */
    const double xz[] = {0, 0, 0, 10, 10, 10, 10, 0, 5, 8, 5, 2};
    double pts[18];
    points(pts, xz, 6);
    const uint32_t start[] = {0, 4, 8};
    const uint32_t verts[] = {0, 1, 2, 3, 0, 1, 4, 5};
    psdl_faces f;
    CHECK(psdl_faces_loops(&f, pts, 6, start, verts, 2) == PSDL_FACES_OK);
    CHECKF(f.ngaps == 2, "%zu gaps", f.ngaps);
    if (f.ngaps == 2) CHECK(f.gaps[0].d == 10 && f.gaps[0].a == 0 && f.gaps[0].c == 1);
    CHECK(f.nopen == 0 && f.nloops >= 1);
    psdl_faces_free(&f);
    /* the same 20 m apart: left open */
    const double far[] = {0, 0, 0, 20, 10, 20, 10, 0, 5, 18, 5, 2};
    points(pts, far, 6);
    CHECK(psdl_faces_loops(&f, pts, 6, start, verts, 2) == PSDL_FACES_OK);
    CHECK(f.ngaps == 0);
    CHECKF(f.nopen == 2, "%zu open", f.nopen);
    psdl_faces_free(&f);
}

static void test_bad(void) {
    set_ctx("bad input");
    double pts[12] = {0};
    const uint32_t start[] = {0, 4};
    const uint32_t verts[] = {0, 1, 2, 9};
    psdl_faces f;
    CHECK(psdl_faces_loops(&f, pts, 4, start, verts, 1) == PSDL_FACES_INVALID);
    CHECK(f.nloops == 0 && f.start == NULL);
    const uint32_t back[] = {0, 4, 2};
    const uint32_t v2[] = {0, 1, 2, 3};
    CHECK(psdl_faces_loops(&f, pts, 4, back, v2, 2) == PSDL_FACES_INVALID);
    /* no rooms, degenerate rooms (one point repeated): no loops */
    CHECK(psdl_faces_loops(&f, pts, 4, start, v2, 0) == PSDL_FACES_OK && f.nloops == 0);
    psdl_faces_free(&f);
    const uint32_t same[] = {1, 1, 1, 1};
    CHECK(psdl_faces_loops(&f, pts, 4, start, same, 1) == PSDL_FACES_OK && f.nloops == 0);
    psdl_faces_free(&f);
}

/* Random outlines (random vertex indices, repeats, degenerate rooms, points in a small
 * grid so that gaps and pinches are frequent): never a crash, every loop vertex a given
 * vertex, every loop of at least one point, every gap within 12 m. */
static void test_random(void) {
    set_ctx("random");
    unsigned long long st = 12345;
#define RND() (st = st * 6364136223846793005ull + 1442695040888963407ull, (unsigned)(st >> 33))
    double pts[3 * 40];
    uint32_t start[16], verts[16 * 12];
    int bad = 0;
    for (int it = 0; it < 3000; it++) {
        size_t np = 3 + RND() % 38;
        for (size_t i = 0; i < np; i++) {
            pts[3 * i] = (double)(RND() % 7) * 5, pts[3 * i + 1] = 0, pts[3 * i + 2] = (double)(RND() % 7) * 5;
        }
        size_t nr = RND() % 15, m = 0;
        start[0] = 0;
        for (size_t r = 0; r < nr; r++) {
            size_t n = RND() % 12;
            for (size_t k = 0; k < n; k++) verts[m++] = RND() % np;
            start[r + 1] = (uint32_t)m;
        }
        psdl_faces f;
        int rc = psdl_faces_loops(&f, pts, np, start, verts, nr);
        if (rc != PSDL_FACES_OK) {
            bad++;
            continue;
        }
        for (size_t l = 0; l < f.nloops; l++) {
            if (f.start[l + 1] <= f.start[l]) bad++;
            for (size_t k = f.start[l]; k < f.start[l + 1]; k++)
                if (f.verts[k] >= np) bad++;
        }
        for (size_t g = 0; g < f.ngaps; g++)
            if (f.gaps[g].d > PSDL_FACES_GAP || f.gaps[g].a >= np || f.gaps[g].c >= np) bad++;
        for (size_t o = 0; o < f.nopen; o++)
            if (f.open[o].a >= np || f.open[o].len < 1) bad++;
        psdl_faces_free(&f);
    }
#undef RND
    CHECKF(bad == 0, "%d bad results", bad);
}

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    test_shared_edge();
    test_pinch();
    test_ring();
    test_gaps();
    test_bad();
    test_random();
    printf("c: %lu passed, %lu failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
