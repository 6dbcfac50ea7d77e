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
 * footprints and draws); no frontage (no draw, nothing placed); depths under 3 m; a place
 * callback that stops the layout. The buildings of a row (psdl_row_buildings.c): the
 * generator against random.lua's sequence, the ground lookup (plane, triangles, a point
 * outside them, none), the plan (draws, picks, ground floor, bridge decks), the emission into
 * pools and a store (records, counts, turned round when wound the other way) and its errors
 * (budget, repeats, refused, range, no roof). */
#include "psdl_geom.h"
#include "psdl_row_buildings.h"

#include <float.h>
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
    /* rectangles x0, z0, x1, z1 tried in turn (each one that fits is placed), and whether it fits */
    static const struct {
        double x0, z0, x1, z1;
        int fits;
    } cases[] = {
        {10, 10, 20, 20, 1},
        {10, 10, 20, 20, 0},   /* the same again overlaps the first */
        {20.2, 10, 30, 20, 1}, /* 0.2 m away: the 0.05 m insets stay apart */
        {10, 20, 20, 30, 1},   /* sharing an edge with the first: the insets are 0.1 m apart, still clear */
        {15, 29, 25, 40, 0},   /* overlapping by 1 m */
        {12, 12, 18, 18, 0},   /* wholly inside a placed one (no edges meet: the containment test) */
        {40, 5, 60, 45, 1},    /* a placed one wholly inside it */
        {35, 2, 65, 48, 0},
        {90, 40, 110, 45, 0}, /* crossing the room's edge, outside, wound the other way */
        {200, 0, 210, 10, 0},
    };
    double fp[12];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rect(fp, cases[i].x0, cases[i].z0, cases[i].x1, cases[i].z1, 0);
        CHECKF(psdl_row_fits(&r, fp, 4) == (size_t)cases[i].fits, "case %zu", i + 1);
        if (i == 0) CHECK(r.nplaced == 1);
    }
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
    /* a second layout in the same room finds it full, also after its scratch was given back
     * (psdl_row_room_trim keeps the outline and the footprints placed) */
    pl2->n = 0;
    size_t again = psdl_building_rows(&r2, front, &OPTS, rows_rng, rows_place, pl2);
    CHECKF(again == 0, "%zu placed into a full row", again);
    psdl_row_room_trim(&r2);
    CHECK(r2.chain == NULL && r2.work == NULL && r2.chain_cap == 0 && r2.poly != NULL && r2.nplaced == (size_t)got);
    psdl_row_room_trim(&r2); /* twice is harmless */
    again = psdl_building_rows(&r2, front, &OPTS, rows_rng, rows_place, pl2);
    CHECKF(again == 0, "%zu placed into a full row after a trim", again);
    psdl_row_room_free(&r2);
    free(pl2);
    psdl_row_room_trim(NULL);
    /* trimmed between two layouts of fresh rooms: the same footprints as without */
    set_ctx("trimmed");
    psdl_row_room r3;
    CHECK(psdl_row_room_init(&r3, room, 4) == 0);
    psdl_row_room_trim(&r3); /* before any layout: nothing to give back */
    placed *pl3 = (placed *)calloc(1, sizeof *pl3);
    pl3->g.s = 7;
    CHECK(psdl_building_rows(&r3, front, &OPTS, rows_rng, rows_place, pl3) == got && pl3->g.draws == pl->g.draws);
    same = 1;
    for (size_t i = 0; i < n; i++)
        if (pl->np[i] != pl3->np[i] || memcmp(pl->p[i], pl3->p[i], 3 * pl->np[i] * sizeof(double))) same = 0;
    CHECK(same);
    psdl_row_room_trim(&r3);
    /* fit tests after the trim still see the footprints placed (the first one again) */
    CHECK(psdl_row_fits(&r3, pl->p[0], pl->np[0]) == 0);
    psdl_row_room_free(&r3);
    free(pl3);
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

/* The generator and a count of footprints, for a place callback that stops the layout at
 * the second footprint (psdl_building_rows passes one ud to both callbacks). */
typedef struct stopper {
    gen g; /* first: rows_rng takes the ud as a gen */
    int calls;
} stopper;

static int stop_second(void *ud, const double *fp, size_t n) {
    (void)fp, (void)n;
    return ++((stopper *)ud)->calls >= 2;
}

static void test_stop(void) {
    set_ctx("place stops the layout");
    double room[12];
    rect(room, 0, 0, 120, 40, 0);
    unsigned char front[4] = {0, 0, 0, 1};
    psdl_row_room r;
    CHECK(psdl_row_room_init(&r, room, 4) == 0);
    stopper st = {{5, 0}, 0};
    CHECK(psdl_building_rows(&r, front, &OPTS, rows_rng, stop_second, &st) == PSDL_GEOM_INVALID);
    CHECK(st.calls == 2);
    psdl_row_room_free(&r);
}

/* ================================================================ the buildings of a row */

static void test_xoshiro(void) {
    set_ctx("xoshiro256** as random.lua");
    /* random.lua: new(42)'s state, its first three floats and the state after them */
    psdl_xoshiro x = {{0xbdd732262feb6e95ULL, 0x28efe333b266f103ULL, 0x47526757130f9f52ULL, 0x581ce1ff0e4ae394ULL}};
    CHECK(psdl_xoshiro_float(&x) == 0.083862971059882163);
    CHECK(psdl_xoshiro_float(&x) == 0.37898025066266861);
    CHECK(psdl_xoshiro_float(&x) == 0.68004341102813937);
    CHECK(x.s[0] == 0xcc58f5a5b5b0fb99ULL && x.s[1] == 0x23f3c3f0f216eb87ULL && x.s[2] == 0x6e76f3ab2bb36686ULL &&
          x.s[3] == 0x821b4a2893a27915ULL);
    for (int i = 0; i < 1000; i++) {
        double v = psdl_xoshiro_float(&x);
        if (!(v >= 0 && v < 1)) {
            CHECKF(0, "draw %d: %g", i, v);
            break;
        }
    }
}

static void test_ground(void) {
    set_ctx("ground");
    psdl_row_ground g;
    memset(&g, 0, sizeof g);
    g.flat = 1, g.y = 2.5;
    CHECK(psdl_row_ground_at(&g, 100, -40) == 2.5);
    /* no triangles: 0 */
    g.flat = 0;
    CHECK(psdl_row_ground_at(&g, 1, 1) == 0);
    /* two triangles of the square 0..20 rising along x (y = x / 10), split on its diagonal */
    double tris[18] = {0, 0, 0, 0, 0, 20, 20, 2, 20, /* */ 0, 0, 0, 20, 2, 20, 20, 2, 0};
    double cells[8];
    psdl_row_ground_cells(cells, tris, 2);
    CHECK(cells[0] == 0 && cells[1] == 1 && cells[2] == 0 && cells[3] == 1);
    g.tris = tris, g.cells = cells, g.ntris = 2;
    CHECK(fabs(psdl_row_ground_at(&g, 5, 15) - 0.5) < 1e-12);
    CHECK(fabs(psdl_row_ground_at(&g, 15, 5) - 1.5) < 1e-12);
    CHECK(fabs(psdl_row_ground_at(&g, 20, 20) - 2) < 1e-12);
    /* beyond the edge but in a cell of a triangle: the one closest to containing it */
    CHECK(fabs(psdl_row_ground_at(&g, 21, 10) - 2.1) < 1e-12);
    /* in no triangle's cell: the nearest corner */
    CHECK(psdl_row_ground_at(&g, 50, 50) == 2);
    CHECK(psdl_row_ground_at(&g, -30, -30) == 0);
    /* a degenerate triangle is skipped */
    double flat3[9] = {0, 5, 0, 10, 5, 0, 20, 5, 0};
    double c3[4];
    psdl_row_ground_cells(c3, flat3, 1);
    psdl_row_ground g3 = {0, 0, flat3, c3, 1};
    CHECK(psdl_row_ground_at(&g3, 5, 0) == 5); /* (nearest corner) */
}

/* A spec for the tests: floors 2..8 of 3 m, three facades, two roofs. */
static const uint32_t FACADES[3] = {5, 6, 7}, ROOFS[2] = {8, 9}, GROUNDS[1] = {10};

static psdl_row_spec test_spec(void) {
    psdl_row_spec s;
    memset(&s, 0, sizeof s);
    s.floors_min = 2, s.floors_max = 8;
    s.floor_height = 3, s.bay_width = 4, s.sliver_density = 0.25;
    s.facades = FACADES, s.nfacades = 3;
    s.roofs = ROOFS, s.nroofs = 2;
    s.sliver = 4;
    return s;
}

/* A generator gone wrong: always 5. */
static double wild_rng(void *ud) {
    (void)ud;
    return 5;
}

static void test_plan(void) {
    set_ctx("plan");
    psdl_row_spec s = test_spec();
    psdl_row_ground g = {1, 1.2345678, NULL, NULL, 0};
    double fp[12], outline[12];
    rect(fp, 0, 0, 10, 12, 0);
    gen gg = {11, 0};
    psdl_row_plan p;
    CHECK(psdl_row_building_plan(&s, &g, rows_rng, &gg, fp, 4, outline, &p) == 1);
    CHECK(gg.draws == 3); /* floors, facade, roof */
    CHECK(p.floors >= 2 && p.floors <= 8 && p.floors == floor(p.floors) && p.upper_floors == p.floors);
    CHECK(p.base == 1.235 && outline[1] == 1.235 && outline[10] == 1.235 && outline[9] == 10 && outline[11] == 0);
    CHECK(p.facade >= 5 && p.facade <= 7 && p.roof >= 8 && p.roof <= 9 && p.ground == 0);
    /* one facade, one roof, one floor count: nothing drawn */
    psdl_row_spec one = s;
    one.nfacades = 1, one.nroofs = 1, one.floors_max = 2;
    gg.draws = 0;
    CHECK(psdl_row_building_plan(&one, &g, rows_rng, &gg, fp, 4, outline, &p) == 1);
    CHECK(gg.draws == 0 && p.floors == 2 && p.facade == 5 && p.roof == 8);
    /* a ground floor: one floor less above it */
    one.ground_facades = GROUNDS, one.nground = 1;
    CHECK(psdl_row_building_plan(&one, &g, rows_rng, &gg, fp, 4, outline, &p) == 1);
    CHECK(p.ground == 10 && p.ground_height == 3 && p.upper_floors == 1 && p.floors == 2);
    /* a generator outside [0, 1) picks within the lists */
    set_ctx("plan, generator out of range");
    CHECK(psdl_row_building_plan(&s, &g, wild_rng, NULL, fp, 4, outline, &p) == 1);
    CHECK(p.facade == 7 && p.roof == 9);
    /* a bridge deck 10 m up over the footprint: 2 floors of 3 m under it (1 m gap) */
    set_ctx("plan under a deck");
    double deck[12], box[4], low = 10;
    rect(deck, -5, 5, 30, 9, 10);
    psdl_ring_box(box, deck, 4);
    size_t at[2] = {0, 4};
    psdl_row_spec d = s;
    d.floors_min = d.floors_max = 6;
    d.deck_pts = deck, d.deck_box = box, d.deck_low = &low, d.deck_at = at, d.ndecks = 1, d.deck_gap = 1;
    g.y = 0;
    CHECK(psdl_row_building_plan(&d, &g, rows_rng, &gg, fp, 4, outline, &p) == 1);
    CHECK(p.floors == 3); /* floor((10 - 0 - 1) / 3) */
    /* not even one floor: left out */
    g.y = 7.5;
    CHECK(psdl_row_building_plan(&d, &g, rows_rng, &gg, fp, 4, outline, &p) == 0);
    /* a deck elsewhere changes nothing */
    rect(deck, 50, 50, 60, 60, 10);
    psdl_ring_box(box, deck, 4);
    CHECK(psdl_row_building_plan(&d, &g, rows_rng, &gg, fp, 4, outline, &p) == 1 && p.floors == 6);
}

static void test_emit(void) {
    set_ctx("emit");
    psdl_row_spec s = test_spec();
    psdl_pool *vp = psdl_pool_new(3, 1), *hp = psdl_pool_new(1, 0);
    psdl_store *st = psdl_store_new();
    CHECK(vp && hp && st && psdl_store_add_room(st) == 1);
    psdl_row_target t = {vp, hp, st, 1, 0, 0};
    double outline[12];
    rect(outline, 0, 0, 10, 12, 0);
    psdl_row_plan p;
    memset(&p, 0, sizeof p);
    p.base = 0, p.floors = p.upper_floors = 4, p.floor_height = 3, p.facade = 6, p.roof = 9;
    psdl_row_built b;
    CHECK(psdl_row_building_emit(&s, &p, outline, 4, &t, &b) == PSDL_ROW_OK);
    CHECK(b.top == 12 && b.runs == 4 && b.facades == 4 && b.slivers == 0);
    size_t nrec = psdl_store_count(st, 1);
    CHECKF(nrec >= 9, "%zu records", nrec); /* 4 bounds, 4 facades, a roof fan or more */
    size_t bounds = 0, facades = 0, roofs = 0;
    for (const psdl_store_rec *r = psdl_store_first(st, 1); r; r = psdl_store_next(st, r)) {
        if (r->type == PSDL_STORE_FACADE_BOUND) bounds++;
        if (r->type == PSDL_STORE_FACADE) facades += r->group == 6 && r->param[3] == 4 && r->param[2] == 3;
        if (r->type == PSDL_STORE_ROOF) roofs += r->group == 9;
        const uint32_t *refs = psdl_store_refs(st, r);
        for (uint32_t k = 0; refs && k < r->nrefs; k++) CHECK(refs[k] >= 2 && refs[k] <= psdl_pool_count(vp));
    }
    CHECK(bounds == 4 && facades == 4 && roofs >= 1);
    /* wound the other way: turned round, the same records again (the points are pooled) */
    set_ctx("emit, wound the other way");
    double rev[12];
    for (int i = 0; i < 4; i++) memcpy(rev + 3 * i, outline + 3 * (3 - i), 3 * sizeof *rev);
    size_t nv = psdl_pool_count(vp);
    CHECK(psdl_row_building_emit(&s, &p, rev, 4, &t, &b) == PSDL_ROW_OK && b.facades == 4);
    CHECK(psdl_pool_count(vp) == nv && psdl_store_count(st, 1) == 2 * nrec);
    /* sloped ground under a wall: slivers */
    set_ctx("emit, slivers");
    double slope[12];
    rect(slope, 20, 0, 30, 12, 0);
    slope[1] = -1;
    p.base = 0;
    CHECK(psdl_row_building_emit(&s, &p, slope, 4, &t, &b) == PSDL_ROW_OK && b.slivers == 2);
    /* a ground floor */
    set_ctx("emit, ground floor");
    p.ground = 10, p.ground_height = 3, p.upper_floors = 3;
    CHECK(psdl_row_building_emit(&s, &p, outline, 4, &t, &b) == PSDL_ROW_OK && b.facades == 8 && b.top == 12);
    p.ground = 0, p.ground_height = 0, p.upper_floors = 4;
    /* errors */
    set_ctx("emit errors");
    psdl_store_mark_t m0;
    psdl_store_mark(st, &m0);
    psdl_row_target tb = t;
    tb.budget = psdl_pool_count(vp) + 2;
    double far[12];
    rect(far, 100, 100, 110, 112, 0);
    CHECK(psdl_row_building_emit(&s, &p, far, 4, &tb, &b) == PSDL_ROW_BUDGET && b.reached > tb.budget);
    psdl_row_plan huge = p;
    huge.upper_floors = 40000;
    CHECK(psdl_row_building_emit(&s, &huge, outline, 4, &t, &b) == PSDL_ROW_REPEATS && b.repeats == 40000);
    psdl_row_spec refuse = s;
    refuse.refuse = 1;
    CHECK(psdl_row_building_emit(&refuse, &p, outline, 4, &t, &b) == PSDL_ROW_REFUSED);
    double big[12];
    memcpy(big, outline, sizeof big);
    big[0] = 1e39;
    CHECK(psdl_row_building_emit(&s, &p, big, 4, &t, &b) == PSDL_ROW_RANGE);
    big[0] = NAN;
    CHECK(psdl_row_building_emit(&s, &p, big, 4, &t, &b) == PSDL_ROW_RANGE);
    CHECK(psdl_row_building_emit(&s, &p, outline, 2, &t, &b) == PSDL_ROW_NOROOF);
    double line[12] = {0, 0, 0, 5, 0, 0, 10, 0, 0, 20, 0, 0};
    CHECK(psdl_row_building_emit(&s, &p, line, 4, &t, &b) == PSDL_ROW_NOROOF);
    psdl_row_plan flat = p;
    flat.upper_floors = 0;
    CHECK(psdl_row_building_emit(&s, &flat, outline, 4, &t, &b) == PSDL_ROW_NOHEIGHT);
    psdl_row_plan high = p;
    high.base = 1e18; /* + 12 m rounds back to the base */
    CHECK(psdl_row_building_emit(&s, &high, outline, 4, &t, &b) == PSDL_ROW_NOHEIGHT);
    psdl_row_target tr = t;
    tr.room = 2;
    CHECK(psdl_row_building_emit(&s, &p, outline, 4, &tr, &b) == PSDL_ROW_FULL);
    /* the caller undoes a failed building with the counts it took */
    CHECK(psdl_store_truncate(st, &m0) == PSDL_STORE_OK && psdl_store_count(st, 1) == m0.recs);
    psdl_store_free(st);
    psdl_pool_free(vp);
    psdl_pool_free(hp);
}

/* ================================================================ the ring index */

/* psdl_ring_first_outside gives psdl_first_outside's answer: random rings (stars with many
 * points, some collinear runs, a keyhole-like doubled edge) against random footprints, points
 * on and near the boundary included; a ring with a NaN point and a flat ring (one z) too. */
static uint64_t ix_state = 0x9E3779B97F4A7C15ull;
static double ix_rand(void) {
    ix_state ^= ix_state << 13, ix_state ^= ix_state >> 7, ix_state ^= ix_state << 17;
    return (double)(ix_state >> 11) / 9007199254740992.0;
}

static void test_ring_index(void) {
    set_ctx("ring index");
    double poly[3 * 200], pts[3 * 12];
    unsigned long same = 0, differ = 0, inside = 0;
    for (int round = 0; round < 300; round++) {
        size_t n = 3 + (size_t)(ix_rand() * 190);
        for (size_t k = 0; k < n; k++) { /* a star around the origin, retail winding (clockwise) */
            double a = -2 * 3.141592653589793 * (double)k / (double)n;
            double r = (round % 3 == 0) ? 50 : 20 + 40 * ix_rand();
            poly[3 * k] = r * cos(a), poly[3 * k + 1] = 0, poly[3 * k + 2] = r * sin(a);
            if (round % 5 == 0) poly[3 * k + 2] = floor(poly[3 * k + 2] / 10) * 10; /* equal z runs */
        }
        psdl_ring_index ix;
        memset(&ix, 0, sizeof ix);
        CHECK(psdl_ring_index_init(&ix, poly, n) == 0);
        for (int q = 0; q < 40; q++) {
            size_t m = 1 + (size_t)(ix_rand() * 11);
            double cx = (ix_rand() - 0.5) * 100, cz = (ix_rand() - 0.5) * 100, s = 1 + ix_rand() * 30;
            for (size_t i = 0; i < m; i++) {
                pts[3 * i] = cx + (ix_rand() - 0.5) * s, pts[3 * i + 1] = 0, pts[3 * i + 2] = cz + (ix_rand() - 0.5) * s;
                if (q % 7 == 0) memcpy(pts + 3 * i, poly + 3 * ((size_t)(ix_rand() * n) % n), 3 * sizeof(double));
            }
            int closed = q % 2;
            double eps = q % 3 ? 0.01 : 0.5;
            size_t a = psdl_first_outside(poly, n, pts, m, closed, eps);
            size_t b = psdl_ring_first_outside(&ix, pts, m, closed, eps);
            if (a == b) same++;
            else differ++;
            if (a == 0) inside++;
        }
        psdl_ring_index_free(&ix);
    }
    CHECKF(differ == 0, "%lu of %lu differ", differ, same + differ);
    CHECKF(inside > 100, "only %lu inside", inside);
    /* a ring with a NaN point: the plain test */
    const double nanring[] = {0, 0, 0, 0, 0, 10, NAN, 0, 10, 10, 0, 0};
    psdl_ring_index ix;
    memset(&ix, 0, sizeof ix);
    CHECK(psdl_ring_index_init(&ix, nanring, 4) == 0 && ix.plain);
    const double p1[] = {1, 0, 1};
    CHECK(psdl_ring_first_outside(&ix, p1, 1, 0, 0.01) == psdl_first_outside(nanring, 4, p1, 1, 0, 0.01));
    /* too few points, then a flat ring (every z the same: one slab) */
    CHECK(psdl_ring_index_init(&ix, nanring, 2) == 0 && ix.plain);
    const double flat[] = {0, 0, 0, 5, 0, 0, 10, 0, 0};
    CHECK(psdl_ring_index_init(&ix, flat, 3) == 0);
    CHECK(psdl_ring_first_outside(&ix, p1, 1, 1, 0.01) == psdl_first_outside(flat, 3, p1, 1, 1, 0.01));
    /* a non-finite point asked about: the plain test's answer */
    const double pn[] = {INFINITY, 0, 1};
    CHECK(psdl_ring_index_init(&ix, poly, 50) == 0);
    CHECK(psdl_ring_first_outside(&ix, pn, 1, 0, 0.01) == psdl_first_outside(poly, 50, pn, 1, 0, 0.01));
    psdl_ring_index_free(&ix);
    psdl_ring_index_free(&ix); /* twice is fine */
}

int main(void) {
    test_ring_index();
    test_fits();
    test_one_street();
    test_block();
    test_stop();
    test_xoshiro();
    test_ground();
    test_plan();
    test_emit();
    printf("c: %lu passed, %lu failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
