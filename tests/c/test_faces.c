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

/* psdl_faces_loops of n points (at most 16) given as x, z pairs */
static int loops_xz(psdl_faces *f, const double *xz, size_t n, const uint32_t *start, const uint32_t *verts,
                    size_t nrooms) {
    double pts[3 * 16];
    if (n > 16) abort();
    points(pts, xz, n);
    return psdl_faces_loops(f, pts, n, start, verts, nrooms);
}

static size_t loop_len(const psdl_faces *f, size_t l) { return f->start[l + 1] - f->start[l]; }

static void test_shared_edge(void) {
    set_ctx("shared edge");
    const double xz[] = {0, 0, 0, 10, 10, 10, 10, 0, 20, 10, 20, 0};
    const uint32_t start[] = {0, 4, 8};
    const uint32_t verts[] = {0, 1, 2, 3, 3, 2, 4, 5};
    psdl_faces f;
    CHECK(loops_xz(&f, xz, 6, start, verts, 2) == PSDL_FACES_OK);
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
    const uint32_t start[] = {0, 4, 8};
    const uint32_t verts[] = {0, 1, 2, 3, 2, 4, 5, 6};
    psdl_faces f;
    CHECK(loops_xz(&f, xz, 7, start, verts, 2) == PSDL_FACES_OK);
    CHECKF(f.nloops == 2, "%zu loops", f.nloops);
    if (f.nloops == 2) CHECK(loop_len(&f, 0) == 4 && loop_len(&f, 1) == 4);
    psdl_faces_free(&f);
}

static void test_ring(void) {
    set_ctx("ring");
    /* four rooms round a 10 x 10 hole: outer 0..30, inner 10..20 */
    const double xz[] = {0, 0, 0, 30, 30, 30, 30, 0, 10, 10, 10, 20, 20, 20, 20, 10};
    /* left, top, right, bottom strips, retail winding */
    const uint32_t start[] = {0, 4, 8, 12, 16};
    const uint32_t verts[] = {0, 1, 5, 4, 1, 2, 6, 5, 2, 3, 7, 6, 3, 0, 4, 7};
    psdl_faces f;
    CHECK(loops_xz(&f, xz, 8, start, verts, 4) == PSDL_FACES_OK);
    CHECKF(f.nloops == 2, "%zu loops", f.nloops);
    if (f.nloops == 2) CHECK(loop_len(&f, 0) == 4 && loop_len(&f, 1) == 4);
    psdl_faces_free(&f);
}

static void test_gaps(void) {
    set_ctx("gaps");
    /* two rooms using the edge 0 -> 1 in the same direction (overlapping): it drops out, and
     * two loose ends at 0 are joined to the two loose starts at 1 (10 m apart) */
    const double xz[] = {0, 0, 0, 10, 10, 10, 10, 0, 5, 8, 5, 2};
    const uint32_t start[] = {0, 4, 8};
    const uint32_t verts[] = {0, 1, 2, 3, 0, 1, 4, 5};
    psdl_faces f;
    CHECK(loops_xz(&f, xz, 6, start, verts, 2) == PSDL_FACES_OK);
    CHECKF(f.ngaps == 2, "%zu gaps", f.ngaps);
    if (f.ngaps == 2) CHECK(f.gaps[0].d == 10 && f.gaps[0].a == 0 && f.gaps[0].c == 1);
    CHECK(f.nopen == 0 && f.nloops >= 1);
    psdl_faces_free(&f);
    /* the same 20 m apart: left open */
    const double far[] = {0, 0, 0, 20, 10, 20, 10, 0, 5, 18, 5, 2};
    CHECK(loops_xz(&f, far, 6, start, verts, 2) == PSDL_FACES_OK);
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

static size_t ring_len(const psdl_faces_net *f, size_t r) { return f->start[r + 1] - f->start[r]; }

/* twice the signed plan area of ring r */
static double ring_s2(const psdl_faces_net *f, const double *pts, size_t r) {
    double s = 0;
    size_t a = f->start[r], n = ring_len(f, r);
    for (size_t k = 0; k < n; k++) {
        uint32_t p = f->verts[a + k], q = f->verts[a + (k + 1) % n];
        s += pts[3 * p] * pts[3 * q + 2] - pts[3 * q] * pts[3 * p + 2];
    }
    return s;
}

/* psdl_faces_network: four rooms round a 10 x 10 face give one face (retail winding, 100 m²)
 * and one outline of the apron (900 m², wound S > 0); a room inside the face makes an island
 * (a hole of the face); a deck or tunnel room on the face's edges makes them "deck" or
 * "portal"; a T-junction vertex enters the ring; bad input is refused. */
static void test_network(void) {
    set_ctx("network");
    /* 0..3 outer square 0..30, 4..7 inner square 10..20, 8..11 an island 13..17, 12 a point on
     * the inner edge 4 -> 5 (x = 10, z = 15) */
    const double xz[] = {0, 0, 0, 30, 30, 30, 30, 0, 10, 10, 10, 20, 20, 20, 20, 10,
                         13, 13, 13, 17, 17, 17, 17, 13, 10, 15};
    double pts[39];
    points(pts, xz, 13);
    const uint32_t start[] = {0, 4, 8, 12, 16};
    const uint32_t verts[] = {0, 1, 5, 4, 1, 2, 6, 5, 2, 3, 7, 6, 3, 0, 4, 7};
    const unsigned char plain[] = {0, 0, 0, 0, 0, 0};
    psdl_faces_net f;
    CHECK(psdl_faces_network(&f, pts, 13, start, verts, 4, plain, 0.005) == PSDL_FACES_OK);
    CHECKF(f.nrings == 2 && f.nfaces == 1, "%zu rings, %zu faces", f.nrings, f.nfaces);
    if (f.nrings == 2) {
        CHECK(ring_len(&f, 0) == 4 && ring_len(&f, 1) == 4);
        CHECK(f.area[0] == 100 && f.area[1] == 900);
        CHECK(ring_s2(&f, pts, 0) < 0 && ring_s2(&f, pts, 1) > 0);
        CHECK(f.host[0] == PSDL_FACES_NONE);
        int street = 1;
        for (size_t k = 0; k < 8; k++) street &= f.kinds[k] == PSDL_FACES_STREET;
        CHECK(street);
    }
    psdl_faces_net_free(&f);
    psdl_faces_net_free(&f); /* twice: fine */

    /* an island room inside the face, and a deck room over the face (its outline the inner square) */
    const uint32_t start2[] = {0, 4, 8, 12, 16, 20, 24};
    const uint32_t verts2[] = {0, 1, 5, 4, 1, 2, 6, 5, 2, 3, 7, 6, 3, 0, 4, 7, 8, 9, 10, 11, 4, 5, 6, 7};
    const unsigned char warp2[] = {0, 0, 0, 0, 0, PSDL_FACES_DECK};
    CHECK(psdl_faces_network(&f, pts, 13, start2, verts2, 6, warp2, 0.005) == PSDL_FACES_OK);
    CHECKF(f.nrings == 3 && f.nfaces == 1, "%zu rings, %zu faces", f.nrings, f.nfaces);
    if (f.nrings == 3) {
        CHECK(f.area[1] == 900 && f.area[2] == 16);
        CHECK(f.host[0] == PSDL_FACES_NONE && f.host[1] == 0); /* the island is the face's hole */
        int deck = 1;
        for (size_t k = 0; k < 4; k++) deck &= f.kinds[k] == PSDL_FACES_DECK;
        CHECK(deck);
        CHECK(f.kinds[4] == PSDL_FACES_STREET && f.kinds[8] == PSDL_FACES_STREET);
    }
    psdl_faces_net_free(&f);
    unsigned char warp3[] = {0, 0, 0, 0, 0, PSDL_FACES_PORTAL};
    CHECK(psdl_faces_network(&f, pts, 13, start2, verts2, 6, warp3, 0.005) == PSDL_FACES_OK);
    CHECK(f.nfaces == 1 && f.kinds[0] == PSDL_FACES_PORTAL);
    psdl_faces_net_free(&f);

    /* a T-junction: a room with a corner at point 12 on the left strip's inner edge 4 -> 5
     * is split there, and the face ring (the region 10..20 less that room) takes point 12 */
    const uint32_t start4[] = {0, 4, 8, 12, 16, 19};
    const uint32_t verts4[] = {0, 1, 5, 4, 1, 2, 6, 5, 2, 3, 7, 6, 3, 0, 4, 7, 12, 5, 6};
    CHECK(psdl_faces_network(&f, pts, 13, start4, verts4, 5, plain, 0.005) == PSDL_FACES_OK);
    int has12 = 0;
    for (size_t k = 0; f.nfaces == 1 && k < ring_len(&f, 0); k++) has12 |= f.verts[f.start[0] + k] == 12;
    CHECKF(f.nfaces == 1 && has12, "%zu faces", f.nfaces);
    psdl_faces_net_free(&f);

    /* rooms of fewer than 3 points are left out; no room at all: nothing */
    const uint32_t start5[] = {0, 2};
    const uint32_t verts5[] = {0, 1};
    CHECK(psdl_faces_network(&f, pts, 13, start5, verts5, 1, plain, 0.005) == PSDL_FACES_OK && f.nrings == 0);
    psdl_faces_net_free(&f);
    CHECK(psdl_faces_network(&f, pts, 13, start5, verts5, 0, plain, 0.005) == PSDL_FACES_OK && f.nrings == 0);
    psdl_faces_net_free(&f);

    /* bad input */
    unsigned char bad_warp[] = {0, 0, 3, 0};
    CHECK(psdl_faces_network(&f, pts, 13, start, verts, 4, bad_warp, 0.005) == PSDL_FACES_INVALID);
    CHECK(f.nrings == 0 && f.start == NULL);
    CHECK(psdl_faces_network(&f, pts, 7, start, verts, 4, plain, 0.005) == PSDL_FACES_INVALID);
    const uint32_t bad_start[] = {0, 4, 3, 12, 16};
    CHECK(psdl_faces_network(&f, pts, 13, bad_start, verts, 4, plain, 0.005) == PSDL_FACES_INVALID);
    double inf_pts[39];
    memcpy(inf_pts, pts, sizeof inf_pts);
    inf_pts[0] = -1e308, inf_pts[6] = 1e308; /* the plan extent overflows */
    CHECK(psdl_faces_network(&f, inf_pts, 13, start, verts, 4, plain, 0.005) == PSDL_FACES_INVALID);
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
    test_network();
    printf("c: %lu passed, %lu failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
