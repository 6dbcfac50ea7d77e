/* test_rows.c -- plain-C tests of the building rows (psdl_geom_rows.c: psdl_row_fits,
 * psdl_building_rows); no Lua.
 *
 *   psdl_ctest_rows [ignored args]
 *
 * Every CHECK counts once; the last line printed is "c: N passed, N failed" and the exit
 * status is non-zero when a check failed. Sections: the fit test (inside, outside, wound the
 * wrong way, crossing itself, not finite, too few points, overlapping and touching placed
 * footprints, a concave room); rows along one street (setback, depth, widths in whole bays,
 * points inside the room, no two footprints overlapping); a block with streets all round
 * (corner buildings wrapping the bends); repeatability (the same generator gives the same
 * footprints and draws); no frontage (no draw, nothing placed); depths under 3 m. */
#include "psdl_geom.h"

#include <math.h>

#include "check.h"

/* ================================================================ helpers */

/* A retail (S < 0) axis-aligned rectangle x0..x1, z0..z1 at height y, into p (4 points). */
static void rect(double *p, double x0, double z0, double x1, double z1, double y) {
    double pts[12] = {x0, y, z0, x0, y, z1, x1, y, z1, x1, y, z0};
    memcpy(p, pts, sizeof pts);
}

static double area2(const double *p, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        const double *a = p + 3 * i, *b = p + 3 * ((i + 1) % n);
        s += a[0] * b[2] - b[0] * a[2];
    }
    return s;
}

/* Deterministic generator (splitmix64 to [0, 1)) that counts its draws. */
typedef struct gen {
    unsigned long long s;
    size_t draws;
} gen;

static double gen_next(void *ud) {
    gen *g = (gen *)ud;
    g->draws++;
    unsigned long long z = (g->s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

#define MAXFP 64
#define MAXPTS 32

/* What the place callback collected. */
typedef struct placed {
    gen g;
    size_t n;
    size_t np[MAXFP];
    double p[MAXFP][3 * MAXPTS];
} placed;

static double rows_rng(void *ud) { return gen_next(&((placed *)ud)->g); }

static int rows_place(void *ud, const double *fp, size_t n) {
    placed *pl = (placed *)ud;
    if (pl->n < MAXFP && n <= MAXPTS) {
        pl->np[pl->n] = n;
        memcpy(pl->p[pl->n], fp, 3 * n * sizeof *fp);
    }
    pl->n++;
    return 0;
}

/* Do the boxes of footprints a and b overlap by more than eps in both directions? */
static int boxes_overlap(const double *a, size_t na, const double *b, size_t nb, double eps) {
    double ab[4] = {HUGE_VAL, -HUGE_VAL, HUGE_VAL, -HUGE_VAL}, bb[4] = {HUGE_VAL, -HUGE_VAL, HUGE_VAL, -HUGE_VAL};
    for (size_t i = 0; i < na; i++) {
        ab[0] = fmin(ab[0], a[3 * i]), ab[1] = fmax(ab[1], a[3 * i]);
        ab[2] = fmin(ab[2], a[3 * i + 2]), ab[3] = fmax(ab[3], a[3 * i + 2]);
    }
    for (size_t i = 0; i < nb; i++) {
        bb[0] = fmin(bb[0], b[3 * i]), bb[1] = fmax(bb[1], b[3 * i]);
        bb[2] = fmin(bb[2], b[3 * i + 2]), bb[3] = fmax(bb[3], b[3 * i + 2]);
    }
    return ab[0] < bb[1] - eps && bb[0] < ab[1] - eps && ab[2] < bb[3] - eps && bb[2] < ab[3] - eps;
}

static const psdl_row_opts OPTS = {
    .setback = 1, .depth_min = 10, .depth_max = 14, .width_min = 8, .width_max = 16,
    .gap_min = 0, .gap_max = 2, .bay_width = 4,
};

/* ================================================================ fit test */

static void test_fits(void) {
    set_ctx("fits");
    psdl_row_room r;
    double room[12];
    rect(room, 0, 0, 100, 50, 2);
    CHECK(psdl_row_room_init(&r, room, 4) == 0);
    double fp[12];
    rect(fp, 10, 10, 20, 20, 0);
    CHECK(psdl_row_fits(&r, fp, 4) == 1);
    CHECK(r.nplaced == 1);
    /* the same again overlaps the first */
    CHECK(psdl_row_fits(&r, fp, 4) == 0);
    /* 0.2 m away: the 0.05 m insets stay apart */
    rect(fp, 20.2, 10, 30, 20, 0);
    CHECK(psdl_row_fits(&r, fp, 4) == 1);
    /* sharing an edge with the first: the insets are 0.1 m apart, still clear */
    rect(fp, 10, 20, 20, 30, 0);
    CHECK(psdl_row_fits(&r, fp, 4) == 1);
    /* overlapping by 1 m */
    rect(fp, 15, 29, 25, 40, 0);
    CHECK(psdl_row_fits(&r, fp, 4) == 0);
    /* wholly inside a placed one (no edges meet: the containment test) */
    rect(fp, 12, 12, 18, 18, 0);
    CHECK(psdl_row_fits(&r, fp, 4) == 0);
    /* a placed one wholly inside it */
    rect(fp, 40, 5, 60, 45, 0);
    CHECK(psdl_row_fits(&r, fp, 4) == 1);
    rect(fp, 35, 2, 65, 48, 0);
    CHECK(psdl_row_fits(&r, fp, 4) == 0);
    /* crossing the room's edge, outside, wound the other way */
    rect(fp, 90, 40, 110, 45, 0);
    CHECK(psdl_row_fits(&r, fp, 4) == 0);
    rect(fp, 200, 0, 210, 10, 0);
    CHECK(psdl_row_fits(&r, fp, 4) == 0);
    double ccw[12] = {70, 0, 10, 80, 0, 10, 80, 0, 20, 70, 0, 20};
    CHECK(area2(ccw, 4) > 0);
    CHECK(psdl_row_fits(&r, ccw, 4) == 0);
    /* a bow tie crosses itself */
    double bow[12] = {70, 0, 10, 80, 0, 20, 80, 0, 10, 70, 0, 20};
    CHECK(psdl_row_fits(&r, bow, 4) == 0);
    /* too few points, not finite */
    CHECK(psdl_row_fits(&r, fp, 2) == 0);
    rect(fp, 70, 10, 80, 20, 0);
    fp[3] = NAN;
    CHECK(psdl_row_fits(&r, fp, 4) == 0);
    fp[3] = INFINITY;
    CHECK(psdl_row_fits(&r, fp, 4) == 0);
    /* touching the room edge within 0.01 m counts as inside; 0.5 m out does not */
    rect(fp, 70, 10, 80, 50.005, 0);
    CHECK(psdl_row_fits(&r, fp, 4) == 1);
    rect(fp, 82, 10, 90, 50.5, 0);
    CHECK(psdl_row_fits(&r, fp, 4) == 0);
    CHECK(r.nplaced == 5);
    /* the footprint's y does not matter (the test is in plan) */
    rect(fp, 82, 30, 90, 40, 123);
    CHECK(psdl_row_fits(&r, fp, 4) == 1);
    psdl_row_room_free(&r);
    psdl_row_room_free(&r); /* twice is harmless */
    CHECK(r.poly == NULL && r.nplaced == 0);

    /* a concave (L-shaped) room: a footprint in the notch is out, one in an arm is in */
    set_ctx("fits L");
    double ell[3 * 6] = {0, 0, 0, 0, 0, 40, 20, 0, 40, 20, 0, 20, 40, 0, 20, 40, 0, 0};
    CHECK(area2(ell, 6) < 0);
    CHECK(psdl_row_room_init(&r, ell, 6) == 0);
    rect(fp, 25, 25, 35, 35, 0);
    CHECK(psdl_row_fits(&r, fp, 4) == 0);
    rect(fp, 15, 15, 30, 25, 0); /* over the inner corner */
    CHECK(psdl_row_fits(&r, fp, 4) == 0);
    rect(fp, 1, 1, 19, 39, 0);
    CHECK(psdl_row_fits(&r, fp, 4) == 1);
    psdl_row_room_free(&r);
}

/* ================================================================ rows */

/* Checks shared by the layouts: count, winding, inside the room box, no two overlapping. */
static void check_layout(const placed *pl, size_t got, double x0, double z0, double x1, double z1) {
    CHECKF(got == pl->n, "%zu returned, %zu placed", got, pl->n);
    size_t n = pl->n < MAXFP ? pl->n : MAXFP;
    for (size_t i = 0; i < n; i++) {
        const double *p = pl->p[i];
        size_t np = pl->np[i];
        CHECKF(np >= 4 && area2(p, np) < 0, "footprint %zu: %zu points, S %g", i, np, area2(p, np));
        int in = 1;
        for (size_t k = 0; k < np; k++)
            if (p[3 * k] < x0 - 0.01 || p[3 * k] > x1 + 0.01 || p[3 * k + 2] < z0 - 0.01 ||
                p[3 * k + 2] > z1 + 0.01 || p[3 * k + 1] != 0)
                in = 0;
        CHECKF(in, "footprint %zu leaves the room", i);
        for (size_t j = 0; j < i; j++)
            if (pl->np[i] == 4 && pl->np[j] == 4) /* rectangles along one street: boxes are exact */
                CHECKF(!boxes_overlap(p, np, pl->p[j], pl->np[j], 0.05), "footprints %zu and %zu overlap", j, i);
    }
}

static void test_one_street(void) {
    set_ctx("one street");
    /* a 120 x 40 block; only its edge along x = 0 .. 120 at z = 0 is frontage. The retail ring
     * (0,0) (0,40) (120,40) (120,0) runs edge 3 from (120, 0) to (0, 0). */
    double room[12];
    rect(room, 0, 0, 120, 40, 0);
    unsigned char front[4] = {0, 0, 0, 1};
    psdl_row_room r;
    CHECK(psdl_row_room_init(&r, room, 4) == 0);
    placed *pl = (placed *)calloc(1, sizeof *pl);
    pl->g.s = 7;
    size_t got = psdl_building_rows(&r, front, &OPTS, rows_rng, rows_place, pl);
    CHECKF(got >= 5, "%zu buildings along 120 m", got);
    check_layout(pl, got, 0, 0, 120, 40);
    size_t n = pl->n < MAXFP ? pl->n : MAXFP;
    for (size_t i = 0; i < n; i++) {
        const double *p = pl->p[i];
        double zmin = HUGE_VAL, zmax = -HUGE_VAL, xmin = HUGE_VAL, xmax = -HUGE_VAL;
        for (size_t k = 0; k < pl->np[i]; k++) {
            zmin = fmin(zmin, p[3 * k + 2]), zmax = fmax(zmax, p[3 * k + 2]);
            xmin = fmin(xmin, p[3 * k]), xmax = fmax(xmax, p[3 * k]);
        }
        /* front wall on the setback line, depth within the range (or cut to 0.65, 0.4) */
        CHECKF(fabs(zmin - OPTS.setback) < 1e-9, "footprint %zu: front at z %g", i, zmin);
        double d = zmax - zmin;
        CHECKF(d >= 0.4 * OPTS.depth_min - 1e-9 && d <= OPTS.depth_max + 1e-9, "footprint %zu: depth %g", i, d);
        /* widths: whole bays of 4 m (at least 4), or the rest of the row at its end */
        double w = xmax - xmin;
        CHECKF(w >= 4 - 1e-9 && w <= OPTS.width_max * 1.6 + 1e-9, "footprint %zu: width %g", i, w);
    }
    /* the same generator again gives the same footprints with the same number of draws */
    set_ctx("repeatable");
    psdl_row_room r2;
    CHECK(psdl_row_room_init(&r2, room, 4) == 0);
    placed *pl2 = (placed *)calloc(1, sizeof *pl2);
    pl2->g.s = 7;
    size_t got2 = psdl_building_rows(&r2, front, &OPTS, rows_rng, rows_place, pl2);
    CHECK(got2 == got && pl2->g.draws == pl->g.draws);
    int same = 1;
    for (size_t i = 0; i < n; i++)
        if (pl->np[i] != pl2->np[i] || memcmp(pl->p[i], pl2->p[i], 3 * pl->np[i] * sizeof(double))) same = 0;
    CHECK(same);
    /* a second layout in the same room finds it full */
    pl2->n = 0;
    size_t again = psdl_building_rows(&r2, front, &OPTS, rows_rng, rows_place, pl2);
    CHECKF(again == 0, "%zu placed into a full row", again);
    psdl_row_room_free(&r2);
    free(pl2);
    psdl_row_room_free(&r);

    /* another seed: another row, still valid */
    set_ctx("one street, seed 99");
    CHECK(psdl_row_room_init(&r, room, 4) == 0);
    memset(pl, 0, sizeof *pl);
    pl->g.s = 99;
    got = psdl_building_rows(&r, front, &OPTS, rows_rng, rows_place, pl);
    CHECK(got >= 5);
    check_layout(pl, got, 0, 0, 120, 40);
    psdl_row_room_free(&r);

    /* no frontage: nothing placed, no number drawn */
    set_ctx("no frontage");
    CHECK(psdl_row_room_init(&r, room, 4) == 0);
    memset(pl, 0, sizeof *pl);
    unsigned char none[4] = {0, 0, 0, 0};
    CHECK(psdl_building_rows(&r, none, &OPTS, rows_rng, rows_place, pl) == 0);
    CHECK(pl->n == 0 && pl->g.draws == 0);
    /* depths under 3 m are never tried: nothing fits, numbers are still drawn */
    set_ctx("too shallow");
    psdl_row_opts shallow = OPTS;
    shallow.depth_min = shallow.depth_max = 2;
    CHECK(psdl_building_rows(&r, front, &shallow, rows_rng, rows_place, pl) == 0);
    CHECK(pl->n == 0 && pl->g.draws > 0);
    psdl_row_room_free(&r);
    free(pl);
}

static void test_block(void) {
    set_ctx("block");
    /* a 60 x 60 block with streets all round: one closed chain, four bends of 90 degrees */
    double room[12];
    rect(room, 0, 0, 60, 60, 0);
    unsigned char front[4] = {1, 1, 1, 1};
    psdl_row_room r;
    CHECK(psdl_row_room_init(&r, room, 4) == 0);
    placed *pl = (placed *)calloc(1, sizeof *pl);
    pl->g.s = 3;
    size_t got = psdl_building_rows(&r, front, &OPTS, rows_rng, rows_place, pl);
    CHECKF(got >= 8, "%zu buildings round a 60 m block", got);
    CHECK(got == pl->n);
    size_t n = pl->n < MAXFP ? pl->n : MAXFP, corner = 0;
    for (size_t i = 0; i < n; i++) {
        CHECK(area2(pl->p[i], pl->np[i]) < 0);
        if (pl->np[i] >= 6) corner++; /* front and back lines turn at the bend */
    }
    CHECKF(corner >= 2, "%zu corner buildings", corner);
    /* every footprint stands in the room and clear of the others: fitting each again into a
     * fresh room in the same order accepts them all */
    psdl_row_room chk;
    CHECK(psdl_row_room_init(&chk, room, 4) == 0);
    size_t ok = 0;
    for (size_t i = 0; i < n; i++) ok += psdl_row_fits(&chk, pl->p[i], pl->np[i]) == 1;
    CHECKF(ok == n, "%zu of %zu fit again", ok, n);
    psdl_row_room_free(&chk);
    psdl_row_room_free(&r);
    free(pl);
}

int main(void) {
    test_fits();
    test_one_street();
    test_block();
    printf("c: %lu passed, %lu failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
