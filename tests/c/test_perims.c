/* test_perims.c -- the perimeter set of Builder:finish (src/psdl_perims.h): rooms appended
 * from lists and from triangles keep their perimeters in order, a replaced perimeter moves
 * the rooms after it, the links equal psdl_link's on the same CSR and are dropped by any
 * change, and every misuse (no such room, NULL arguments, vertices above the point count)
 * gives an error code, never a crash. Run under ASan/UBSan by scripts/test
 * (build-asan/psdl_ctest_perims). */
#include "psdl_geom.h"
#include "psdl_perims.h"

#include "check.h"

/* A 3 x 3 grid of points 10 m apart (x, 0, z), 0-based index 3 * row + col. */
static void grid(float *pts) {
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            pts[3 * (3 * r + c)] = (float)(10 * c);
            pts[3 * (3 * r + c) + 1] = 0;
            pts[3 * (3 * r + c) + 2] = (float)(10 * r);
        }
}

static void test_add_get_set(void) {
    set_ctx("add, get and set");
    psdl_perims *p = psdl_perims_new();
    CHECK(p != NULL);
    CHECK(psdl_perims_rooms(p) == 0);
    uint32_t a[] = {0, 1, 4, 3}, b[] = {1, 2, 5, 4}, c[] = {3, 4, 7, 6};
    CHECK(psdl_perims_add(p, a, 4) == 0);
    CHECK(psdl_perims_add(p, b, 4) == 0);
    CHECK(psdl_perims_add(p, NULL, 0) == 0); /* an empty room is a room */
    CHECK(psdl_perims_add(p, c, 4) == 0);
    CHECK(psdl_perims_rooms(p) == 4);
    size_t n;
    const uint32_t *v = psdl_perims_get(p, 1, &n);
    CHECK(n == 4 && v && v[0] == 1 && v[3] == 4);
    v = psdl_perims_get(p, 2, &n);
    CHECK(n == 0);
    /* grow room 0 and shrink room 1: the later rooms move */
    uint32_t a5[] = {0, 1, 2, 4, 3};
    CHECK(psdl_perims_set(p, 0, a5, 5) == 0);
    CHECK(psdl_perims_set(p, 1, b, 3) == 0);
    v = psdl_perims_get(p, 0, &n);
    CHECK(n == 5 && v[2] == 2 && v[4] == 3);
    v = psdl_perims_get(p, 1, &n);
    CHECK(n == 3 && v[0] == 1 && v[2] == 5);
    v = psdl_perims_get(p, 3, &n);
    CHECK(n == 4 && v[0] == 3 && v[3] == 6);
    /* a room's own points given back (verts inside the set) */
    v = psdl_perims_get(p, 3, &n);
    CHECK(psdl_perims_set(p, 0, v, n) == 0);
    v = psdl_perims_get(p, 0, &n);
    CHECK(n == 4 && v[0] == 3 && v[3] == 6);
    const uint32_t *st, *vs;
    CHECK(psdl_perims_csr(p, &st, &vs) == 4);
    CHECK(st[0] == 0 && st[1] == 4 && st[2] == 7 && st[3] == 7 && st[4] == 11);
    psdl_perims_free(p);
}

static void test_many(void) {
    set_ctx("many rooms");
    psdl_perims *p = psdl_perims_new();
    uint32_t v[7];
    for (uint32_t r = 0; r < 1000; r++) {
        for (uint32_t k = 0; k < 7; k++) v[k] = r * 7 + k;
        if (psdl_perims_add(p, v, 3 + r % 5)) break;
    }
    CHECK(psdl_perims_rooms(p) == 1000);
    size_t n;
    const uint32_t *g = psdl_perims_get(p, 999, &n);
    CHECK(n == 3 + 999 % 5 && g[0] == 999 * 7);
    psdl_perims_free(p);
}

static void test_boundary(void) {
    set_ctx("boundary of triangles");
    float pts[27];
    grid(pts);
    psdl_perims *p = psdl_perims_new();
    /* two triangles over the square 0, 1, 4, 3 and two over 1, 2, 5, 4 */
    uint32_t t[] = {0, 1, 4, 0, 4, 3, 1, 2, 5, 1, 5, 4};
    long n = psdl_perims_add_boundary(p, t, 4, pts, 9);
    CHECK(n == 6);
    size_t m;
    const uint32_t *v = psdl_perims_get(p, 0, &m);
    CHECK(m == 6);
    /* the same outline as psdl_boundary over every point */
    double d[27];
    for (int i = 0; i < 27; i++) d[i] = pts[i];
    uint32_t want[13];
    size_t w = psdl_boundary(want, t, 4, d, 9);
    CHECK(w == 6);
    int same = w == m;
    for (size_t i = 0; same && i < w; i++) same = want[i] == v[i];
    CHECK(same);
    /* no triangles: an empty room */
    CHECK(psdl_perims_add_boundary(p, NULL, 0, pts, 9) == 0);
    CHECK(psdl_perims_rooms(p) == 2);
    /* an index above the points: refused, nothing added */
    uint32_t bad[] = {0, 1, 9};
    CHECK(psdl_perims_add_boundary(p, bad, 1, pts, 9) == PSDL_PERIMS_RANGE);
    CHECK(psdl_perims_add_boundary(p, t, 1, NULL, 9) == PSDL_PERIMS_RANGE);
    CHECK(psdl_perims_rooms(p) == 2);
    psdl_perims_free(p);
}

static void test_link(void) {
    set_ctx("links");
    psdl_perims *p = psdl_perims_new();
    /* four rooms of the grid's squares: each shares edges with two, a corner with one */
    uint32_t r[4][4] = {{0, 3, 4, 1}, {1, 4, 5, 2}, {3, 6, 7, 4}, {4, 7, 8, 5}};
    for (int i = 0; i < 4; i++) CHECK(psdl_perims_add(p, r[i], 4) == 0);
    CHECK(!psdl_perims_linked(p));
    const uint32_t *st, *vs, *nb;
    CHECK(psdl_perims_linked_csr(p, &st, &vs, &nb) == 0 && st == NULL && vs == NULL && nb == NULL);
    CHECK(psdl_perims_link(p, 9) == 0);
    CHECK(psdl_perims_linked(p));
    CHECK(psdl_perims_linked_csr(p, &st, &vs, &nb) == 4);
    /* what psdl_link gives for the same CSR */
    const uint32_t *s0, *v0;
    psdl_perims_csr(p, &s0, &v0);
    size_t bound = psdl_link_bound(s0, v0, 4, 9);
    uint32_t dv[64], dn[64], ds[5];
    CHECK(bound <= 64);
    size_t n = psdl_link(dv, dn, ds, s0, v0, 4, 9);
    CHECK(n == st[4]);
    int same = 1;
    for (size_t i = 0; i < n && same; i++) same = dv[i] == vs[i] && dn[i] == nb[i];
    for (int i = 0; i < 5 && same; i++) same = ds[i] == st[i];
    CHECK(same);
    /* room 1 (0-based 0) links to rooms 2 and 3 over edges, and repeats vertex 4 for room 4 */
    CHECK(st[1] - st[0] == 5);
    /* a change drops the links */
    CHECK(psdl_perims_set(p, 0, r[0], 4) == 0);
    CHECK(!psdl_perims_linked(p));
    CHECK(psdl_perims_link(p, 9) == 0);
    CHECK(psdl_perims_add(p, r[0], 4) == 0);
    CHECK(!psdl_perims_linked(p));
    /* a vertex not below the point count */
    CHECK(psdl_perims_link(p, 8) == PSDL_PERIMS_RANGE);
    CHECK(!psdl_perims_linked(p));
    psdl_perims_free(p);
}

static void test_misuse(void) {
    set_ctx("misuse");
    uint32_t a[] = {0, 1, 2};
    size_t n = 7;
    CHECK(psdl_perims_rooms(NULL) == 0);
    CHECK(psdl_perims_add(NULL, a, 3) == PSDL_PERIMS_RANGE);
    CHECK(psdl_perims_add_boundary(NULL, a, 1, NULL, 0) == PSDL_PERIMS_RANGE);
    CHECK(psdl_perims_get(NULL, 0, &n) == NULL && n == 0);
    CHECK(psdl_perims_set(NULL, 0, a, 3) == PSDL_PERIMS_RANGE);
    CHECK(psdl_perims_link(NULL, 3) == PSDL_PERIMS_RANGE);
    CHECK(!psdl_perims_linked(NULL));
    const uint32_t *st = a, *vs = a;
    CHECK(psdl_perims_csr(NULL, &st, &vs) == 0 && st == NULL && vs == NULL);
    psdl_perims *p = psdl_perims_new();
    CHECK(psdl_perims_add(p, NULL, 3) == PSDL_PERIMS_RANGE);
    CHECK(psdl_perims_add(p, a, 3) == 0);
    n = 7;
    CHECK(psdl_perims_get(p, 1, &n) == NULL && n == 0);
    CHECK(psdl_perims_set(p, 1, a, 3) == PSDL_PERIMS_RANGE);
    CHECK(psdl_perims_set(p, 0, NULL, 3) == PSDL_PERIMS_RANGE);
    CHECK(psdl_perims_set(p, 0, NULL, 0) == 0); /* emptied */
    CHECK(psdl_perims_get(p, 0, &n) != NULL && n == 0);
    CHECK(psdl_perims_link(p, 0) == 0); /* nothing to link */
    psdl_perims_free(p);
    psdl_perims_free(NULL);
}

int main(void) {
    test_add_get_set();
    test_many();
    test_boundary();
    test_link();
    test_misuse();
    printf("c: %lu passed, %lu failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
