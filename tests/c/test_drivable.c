/* test_drivable.c -- the drivability rules (src/psdl_drivable.c, docs/validate.md): for each
 * rule a tiny hand-made city that triggers it and one just under its threshold, plus the
 * fixtures. Run under ASan/UBSan by scripts/test (build-asan/psdl_ctest_drivable). */
#include "psdl.h"

#include "check.h"

#include <math.h>

/* ---------------------------------------------------------------- a tiny city builder */

#define TB_VERTS 4096
#define TB_ROOMS 64
#define TB_PER 255
#define TB_ATTRS 8

typedef struct troom {
    uint16_t v[TB_PER];
    uint16_t nb[TB_PER];
    uint32_t n;
    uint8_t flags;
    uint32_t na;
    uint8_t atype[TB_ATTRS];
    uint16_t arefs[TB_ATTRS][64];
    uint32_t anrefs[TB_ATTRS];
} troom;

typedef struct tb {
    psdl_vec3 V[TB_VERTS];
    uint32_t nv;
    troom R[TB_ROOMS];
    uint32_t nr; /* rooms used, ids 1..nr */
} tb;

static tb g_tb;

static tb *tb_new(void) {
    memset(&g_tb, 0, sizeof g_tb);
    g_tb.nv = 1; /* vertex 0: the dummy */
    return &g_tb;
}

/* Index of the vertex at (x, y, z), added when new. */
static uint16_t tb_v(tb *b, double x, double y, double z) {
    for (uint32_t i = 1; i < b->nv; i++)
        if (b->V[i].x == (float)x && b->V[i].y == (float)y && b->V[i].z == (float)z) return (uint16_t)i;
    b->V[b->nv].x = (float)x, b->V[b->nv].y = (float)y, b->V[b->nv].z = (float)z;
    return (uint16_t)b->nv++;
}

/* A room with perimeter points xz[0..n-1] (x, z pairs, y = 0); returns its id. */
static uint32_t tb_room(tb *b, const double *xz, uint32_t n, uint8_t flags) {
    troom *r = &b->R[++b->nr];
    for (uint32_t i = 0; i < n; i++) r->v[i] = tb_v(b, xz[2 * i], 0, xz[2 * i + 1]);
    r->n = n;
    r->flags = flags;
    return b->nr;
}

static uint32_t tb_rect(tb *b, double x0, double z0, double x1, double z1, uint8_t flags) {
    double p[8] = {x0, z0, x0, z1, x1, z1, x1, z0};
    return tb_room(b, p, 4, flags);
}

/* Links rooms a and b both ways on their first perimeter edge (enough for reachability). */
static void tb_link(tb *b, uint32_t a, uint32_t c) {
    troom *ra = &b->R[a], *rc = &b->R[c];
    for (uint32_t k = 0; k < ra->n; k++)
        if (!ra->nb[k]) {
            ra->nb[k] = (uint16_t)c;
            break;
        }
    for (uint32_t k = 0; k < rc->n; k++)
        if (!rc->nb[k]) {
            rc->nb[k] = (uint16_t)a;
            break;
        }
}

/* An attribute of room r over the points xz (y = 0). */
static void tb_attr(tb *b, uint32_t r, unsigned type, const double *xz, uint32_t n) {
    troom *rm = &b->R[r];
    uint32_t k = rm->na++;
    rm->atype[k] = (uint8_t)type;
    for (uint32_t i = 0; i < n; i++) rm->arefs[k][i] = tb_v(b, xz[2 * i], 0, xz[2 * i + 1]);
    rm->anrefs[k] = n;
}

static psdl_doc *tb_doc(const tb *b) {
    psdl_doc *d = psdl_doc_new(NULL);
    if (!d) abort();
    d->nvertices = b->nv;
    d->vertices = psdl_doc_alloc(d, b->nv * sizeof *d->vertices);
    memcpy(d->vertices, b->V, b->nv * sizeof *d->vertices);
    d->nheights = 1;
    d->heights = psdl_doc_alloc(d, sizeof(float));
    d->heights[0] = 10;
    psdl_room *rooms = psdl_doc_alloc(d, (b->nr + 1) * sizeof *rooms);
    rooms[0] = d->rooms[0];
    for (uint32_t r = 1; r <= b->nr; r++) {
        const troom *t = &b->R[r];
        psdl_room *rm = &rooms[r];
        rm->nperimeter = t->n;
        rm->perimeter = psdl_doc_alloc(d, t->n * sizeof *rm->perimeter);
        for (uint32_t k = 0; k < t->n; k++) rm->perimeter[k].vertex = t->v[k], rm->perimeter[k].neighbour = t->nb[k];
        rm->flags = t->flags;
        rm->nattrs = t->na;
        if (t->na) rm->attrs = psdl_doc_alloc(d, t->na * sizeof *rm->attrs);
        for (uint32_t k = 0; k < t->na; k++) {
            psdl_attr *a = &rm->attrs[k];
            a->type = t->atype[k];
            a->nrefs = t->anrefs[k];
            a->refs = psdl_doc_alloc(d, a->nrefs * sizeof(uint16_t));
            memcpy(a->refs, t->arefs[k], a->nrefs * sizeof(uint16_t));
            a->last = k + 1 == t->na;
        }
    }
    d->rooms = rooms;
    d->nrooms = b->nr + 1;
    return d;
}

/* ---------------------------------------------------------------- collecting problems */

typedef struct plist {
    psdl_problem p[512];
    size_t n;
} plist;

static plist g_pl;

static int collect(void *ud, const psdl_problem *p) {
    plist *l = ud;
    if (l->n < sizeof l->p / sizeof l->p[0]) l->p[l->n++] = *p;
    return 0;
}

/* Validate (drivability rules only) and return how many problems of rule at severity sev
 * (-1: any) were found; *first receives the first. */
static size_t count_rule(psdl_doc *d, const char *rule, int sev, const psdl_problem **first) {
    g_pl.n = 0;
    psdl_validate_result res = {0, 0};
    psdl_check_drivable(d, collect, &g_pl, &res);
    size_t n = 0;
    if (first) *first = NULL;
    for (size_t i = 0; i < g_pl.n; i++)
        if (strcmp(g_pl.p[i].rule, rule) == 0 && (sev < 0 || (int)g_pl.p[i].severity == sev)) {
            if (first && !*first) *first = &g_pl.p[i];
            n++;
        }
    return n;
}

static size_t run_rule(const tb *b, const char *rule, int sev) {
    psdl_doc *d = tb_doc(b);
    size_t n = count_rule(d, rule, sev, NULL);
    psdl_doc_free(d);
    return n;
}

#define E PSDL_SEV_ERROR
#define W PSDL_SEV_WARNING

/* ---------------------------------------------------------------- holes and gaps */

/* Eight 10 m rooms round a missing square of side s (a 3 x 3 grid, the middle left out). */
static void ring_of_eight(tb *b, double s) {
    double c[4] = {0, 10, 10 + s, 20 + s};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            if (i != 1 || j != 1) tb_rect(b, c[i], c[j], c[i + 1], c[j + 1], 0x04);
}

/* Two rooms side by side with a gap w wide and L long between them, closed top and bottom by
 * rooms spanning both (T-junctions where the gap meets them). */
static void slit(tb *b, double w, double L) {
    tb_rect(b, 0, 0, 10, L, 0x04);
    tb_rect(b, 10 + w, 0, 20, L, 0x04);
    double bottom[12] = {0, -5, 0, 0, 10, 0, 10 + w, 0, 20, 0, 20, -5};
    tb_room(b, bottom, 6, 0x04);
    double top[12] = {0, L, 0, L + 5, 20, L + 5, 20, L, 10 + w, L, 10, L};
    tb_room(b, top, 6, 0x04);
}

static void test_holes(void) {
    tb *b;
    const psdl_problem *p;
    set_ctx("hole: 1.01 m square (1.02 m2) is an error");
    b = tb_new();
    ring_of_eight(b, 1.01);
    psdl_doc *d = tb_doc(b);
    CHECK_EQ(count_rule(d, "hole", E, &p), 1);
    if (p) {
        CHECK(p->has_position && p->x > 10 && p->x < 11.01 && p->z > 10 && p->z < 11.01);
        CHECK(p->room >= 1 && p->other_room >= 1);
        CHECK(strstr(p->message, "1.02 m") != NULL);
    }
    psdl_doc_free(d);
    set_ctx("hole: 0.999 m square (0.998 m2) is a warning");
    b = tb_new();
    ring_of_eight(b, 0.999);
    CHECK_EQ(run_rule(b, "hole", E), 0);
    CHECK_EQ(run_rule(b, "hole", W), 1);
    set_ctx("hole: 0.1005 m square (0.0101 m2) is a warning");
    b = tb_new();
    ring_of_eight(b, 0.1005);
    CHECK_EQ(run_rule(b, "hole", W), 1);
    CHECK_EQ(run_rule(b, "edge_gap", -1), 0);
    set_ctx("hole: 0.0995 m square (0.0099 m2): no hole, but a gap 5 cm wide");
    b = tb_new();
    ring_of_eight(b, 0.0995);
    CHECK_EQ(run_rule(b, "hole", -1), 0);
    CHECK_EQ(run_rule(b, "edge_gap", W), 1);
    set_ctx("hole: no gap at all");
    b = tb_new();
    ring_of_eight(b, 0);
    CHECK_EQ(run_rule(b, "hole", -1), 0);
    CHECK_EQ(run_rule(b, "edge_gap", -1), 0);

    set_ctx("edge_gap: a slit 2.5 cm x 0.3 m (mean width 2.3 cm, 0.0075 m2)");
    b = tb_new();
    slit(b, 0.025, 0.3);
    d = tb_doc(b);
    CHECK_EQ(count_rule(d, "edge_gap", W, &p), 1);
    if (p) CHECK(p->has_position && p->x > 10 && p->x < 10.025 && p->z > 0 && p->z < 0.3);
    CHECK_EQ(count_rule(d, "hole", -1, NULL), 0);
    psdl_doc_free(d);
    set_ctx("edge_gap: a slit 1.9 cm x 0.5 m (mean width 1.8 cm, 0.0095 m2): nothing");
    b = tb_new();
    slit(b, 0.019, 0.5);
    CHECK_EQ(run_rule(b, "edge_gap", -1), 0);
    CHECK_EQ(run_rule(b, "hole", -1), 0);
    set_ctx("hole: a slit 4.6 cm x 10 m (0.46 m2) is a warning");
    b = tb_new();
    slit(b, 0.046, 10);
    CHECK_EQ(run_rule(b, "hole", W), 1);
    set_ctx("hole: covered by a warp room (a bridge deck): not a hole");
    b = tb_new();
    ring_of_eight(b, 4);
    tb_rect(b, 9, 9, 15, 15, 0x48);
    CHECK_EQ(run_rule(b, "hole", -1), 0);
    set_ctx("edge_gap: rooms linked across an edge 2.5 cm apart");
    b = tb_new();
    {
        double l[8] = {0, 0, 0, 10, 10, 10, 10, 0}, rr[8] = {10.025, 10, 20, 10, 20, 0, 10.025, 0};
        uint32_t a1 = tb_room(b, l, 4, 0x08), a2 = tb_room(b, rr, 4, 0x08);
        b->R[a1].nb[2] = (uint16_t)a2; /* edge (10, 10) -> (10, 0) */
        b->R[a2].nb[3] = (uint16_t)a1; /* edge (10.025, 0) -> (10.025, 10) */
        d = tb_doc(b);
        CHECK_EQ(count_rule(d, "edge_gap", W, &p), 2);
        if (p) CHECK(p->has_position && fabs(p->x - 10) < 0.03);
        CHECK_EQ(count_rule(d, "hole", -1, NULL), 0); /* open to the outside: no hole */
        psdl_doc_free(d);
        set_ctx("edge_gap: the same 1.5 cm apart: nothing");
        b->V[b->R[a2].v[0]].x = 10.015f;
        b->V[b->R[a2].v[3]].x = 10.015f;
        CHECK_EQ(run_rule(b, "edge_gap", -1), 0);
    }
    set_ctx("hole: a notch open to the outside is no hole");
    b = tb_new();
    tb_rect(b, 0, 0, 10, 10, 0x04);
    tb_rect(b, 12, 0, 22, 10, 0x04);
    CHECK_EQ(run_rule(b, "hole", -1), 0);
}

/* ---------------------------------------------------------------- overlaps */

/* Two 10 m standard rooms side by side from x = x0, the second one starting at x = x2 (below
 * x0 + 10: overlapping by x0 + 10 - x2 m along their 10 m edges). */
static tb *side_by_side(double x0, double x2) {
    tb *b = tb_new();
    tb_rect(b, x0, 0, x0 + 10, 10, 0x04);
    tb_rect(b, x2, 0, x0 + 20, 10, 0x04);
    return b;
}

static void test_overlaps(void) {
    tb *b;
    const psdl_problem *p;
    set_ctx("room_overlap: 0.051 m x 10 m (0.51 m2)");
    psdl_doc *d = tb_doc(side_by_side(0, 9.949));
    CHECK_EQ(count_rule(d, "room_overlap", E, &p), 1);
    if (p) {
        CHECK_EQ(p->room, 1);
        CHECK_EQ(p->other_room, 2);
        CHECK(p->has_position && fabs(p->x - 9.9745) < 0.01 && fabs(p->z - 5) < 0.01);
    }
    psdl_doc_free(d);
    set_ctx("room_overlap: 0.049 m x 10 m (0.49 m2): nothing");
    CHECK_EQ(run_rule(side_by_side(0, 9.951), "room_overlap", -1), 0);
    /* the first pass (skipping triangles the other room lies beside) clears pairs up to
     * 0.25 m²; above that the pair is measured whole */
    set_ctx("room_overlap: 0.02 m and 0.03 m x 10 m (0.2 and 0.3 m2): nothing");
    CHECK_EQ(run_rule(side_by_side(0, 9.98), "room_overlap", -1), 0);
    CHECK_EQ(run_rule(side_by_side(0, 9.97), "room_overlap", -1), 0);
    set_ctx("room_overlap: 0.051 m x 10 m 20 km out (no first pass there)");
    d = tb_doc(side_by_side(20000, 20009.949));
    CHECK_EQ(count_rule(d, "room_overlap", E, &p), 1);
    if (p) CHECK(p->has_position && fabs(p->x - 20009.9745) < 0.01 && fabs(p->z - 5) < 0.01);
    psdl_doc_free(d);
    set_ctx("room_overlap: a warp room (bridge deck) over a road: exempt");
    b = tb_new();
    tb_rect(b, 0, 0, 10, 10, 0x08);
    tb_rect(b, -5, 3, 15, 7, 0x48);
    CHECK_EQ(run_rule(b, "room_overlap", -1), 0);
    set_ctx("room_overlap: concave rooms (an L round a square) that only touch");
    b = tb_new();
    double L[12] = {0, 0, 0, 20, 20, 20, 20, 10, 10, 10, 10, 0};
    tb_room(b, L, 6, 0x04);
    tb_rect(b, 10, 0, 20, 10, 0x04);
    CHECK_EQ(run_rule(b, "room_overlap", -1), 0);
    CHECK_EQ(run_rule(b, "hole", -1), 0);
    set_ctx("room_overlap: the square inside the L's arm");
    b = tb_new();
    tb_room(b, L, 6, 0x04);
    tb_rect(b, 2, 12, 8, 18, 0x04);
    CHECK_EQ(run_rule(b, "room_overlap", E), 1);
}

/* psdl_check_overlaps: the same rule on rooms given as perimeters over a point array. */
static int count_overlap(void *ud, const psdl_problem *p) {
    psdl_problem *last = (psdl_problem *)ud;
    *last = *p;
    return 0;
}

static void test_check_overlaps(void) {
    /* three 10 x 10 squares: 1 and 2 overlap by 0.051 x 10 m, 3 touches 2, a fourth refers
     * to a vertex past the points (takes no part) */
    double pts[12 * 3];
    double sq[3][4] = {{0, 0, 10, 10}, {9.949, 0, 20, 10}, {20, 0, 30, 10}};
    for (int r = 0; r < 3; r++) {
        double c[4][2] = {{sq[r][0], sq[r][1]}, {sq[r][2], sq[r][1]}, {sq[r][2], sq[r][3]}, {sq[r][0], sq[r][3]}};
        for (int k = 0; k < 4; k++) {
            pts[3 * (4 * r + k)] = c[k][0];
            pts[3 * (4 * r + k) + 1] = 0;
            pts[3 * (4 * r + k) + 2] = c[k][1];
        }
    }
    uint32_t start[5] = {0, 4, 8, 12, 15};
    uint32_t verts[15] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0, 1, 99};
    psdl_problem last;
    memset(&last, 0, sizeof last);
    psdl_validate_result res = {0, 0};
    set_ctx("psdl_check_overlaps: one pair of four rooms");
    CHECK_EQ(psdl_check_overlaps(pts, 12, start, verts, 4, NULL, count_overlap, &last, &res), 0);
    CHECK_EQ(res.errors, 1);
    CHECK(strcmp(last.rule, "room_overlap") == 0);
    CHECK_EQ(last.room, 1);
    CHECK_EQ(last.other_room, 2);
    CHECK(last.has_position && fabs(last.x - 9.9745) < 0.01 && fabs(last.z - 5) < 0.01);
    set_ctx("psdl_check_overlaps: a warp room is exempt");
    unsigned char warp[4] = {0, 1, 0, 0};
    res.errors = 0;
    CHECK_EQ(psdl_check_overlaps(pts, 12, start, verts, 4, warp, count_overlap, &last, &res), 0);
    CHECK_EQ(res.errors, 0);
    set_ctx("psdl_check_overlaps: no rooms");
    CHECK_EQ(psdl_check_overlaps(pts, 12, start, verts, 0, NULL, NULL, NULL, NULL), 0);
}

/* ---------------------------------------------------------------- floor outside its room */

/* A 10 x 10 m road room with a fan over [0, 10 + e] x [0, 10]. */
static size_t fan_out(double e, int sev) {
    tb *b = tb_new();
    uint32_t r = tb_rect(b, 0, 0, 10, 10, 0x08);
    double fan[8] = {0, 0, 0, 10, 10 + e, 10, 10 + e, 0};
    tb_attr(b, r, PSDL_ATTR_ROAD_FAN, fan, 4);
    return run_rule(b, "floor_outside", sev);
}

static void test_floors(void) {
    set_ctx("floor_outside: 4 cm over (inside the 5 cm tolerance)");
    CHECK_EQ(fan_out(0.04, -1), 0);
    set_ctx("floor_outside: 15 cm over = 0.99 %% beyond 5 cm");
    CHECK_EQ(fan_out(0.15, -1), 0);
    set_ctx("floor_outside: 20 cm over = 1.47 %% beyond 5 cm: warning");
    CHECK_EQ(fan_out(0.20, W), 1);
    CHECK_EQ(fan_out(0.20, E), 0);
    set_ctx("floor_outside: 3.3 m over = 24.4 %%: warning");
    CHECK_EQ(fan_out(3.3, W), 1);
    set_ctx("floor_outside: 3.5 m over = 25.6 %%: error");
    CHECK_EQ(fan_out(3.5, E), 1);

    set_ctx("floor_outside: a sidewalk strip half outside, with its position");
    tb *b = tb_new();
    uint32_t r = tb_rect(b, 0, 0, 10, 10, 0x10);
    double sw[8] = {8, 0, 12, 0, 8, 10, 12, 10}; /* curb, outer pairs */
    tb_attr(b, r, PSDL_ATTR_SIDEWALK_STRIP, sw, 4);
    psdl_doc *d = tb_doc(b);
    const psdl_problem *p;
    CHECK_EQ(count_rule(d, "floor_outside", E, &p), 1);
    if (p) {
        CHECK_EQ(p->room, 1);
        CHECK_EQ(p->attribute, 0);
        CHECK(p->has_position && p->x > 10 && p->x < 12 && fabs(p->z - 5) < 0.1);
    }
    psdl_doc_free(d);

    set_ctx("floor_outside: road, walkway, crosswalk, fan and divided road inside: nothing");
    b = tb_new();
    r = tb_rect(b, 0, 0, 20, 20, 0x08);
    double road[16] = {1, 1, 3, 1, 7, 1, 9, 1, 1, 19, 3, 19, 7, 19, 9, 19};
    tb_attr(b, r, PSDL_ATTR_ROAD, road, 8);
    double walk[8] = {10, 1, 12, 1, 10, 19, 12, 19};
    tb_attr(b, r, PSDL_ATTR_WALKWAY, walk, 4);
    double cw[8] = {13, 1, 13, 3, 19, 1, 19, 3};
    tb_attr(b, r, PSDL_ATTR_CROSSWALK, cw, 4);
    double fan[8] = {13, 5, 13, 19, 19, 19, 19, 5};
    tb_attr(b, r, PSDL_ATTR_FAN, fan, 4);
    CHECK_EQ(run_rule(b, "floor_outside", -1), 0);
    set_ctx("floor_outside: the road strip moved 1 m out of the room");
    for (int i = 0; i < 8; i++) road[2 * i] -= 1.5;
    b->R[r].na = 0;
    tb_attr(b, r, PSDL_ATTR_ROAD, road, 8);
    CHECK_EQ(run_rule(b, "floor_outside", -1), 1);
}

/* ---------------------------------------------------------------- the shortcuts */

/* The shortcuts of psdl_drivable.c (a floor certainly inside its room, an edge shared point
 * for point, the sub-edge table growing) must not change a verdict: cases at their edges. */
static void test_shortcuts(void) {
    tb *b;
    const psdl_problem *p;
    psdl_doc *d;
    set_ctx("floor_outside: an L-shaped room, a fan inside its arm: nothing");
    b = tb_new();
    double ell[12] = {0, 0, 0, 20, 10, 20, 10, 10, 20, 10, 20, 0};
    uint32_t r = tb_room(b, ell, 6, 0x04);
    double arm[8] = {1, 1, 1, 19, 9, 19, 9, 1};
    tb_attr(b, r, PSDL_ATTR_FAN, arm, 4);
    CHECK_EQ(run_rule(b, "floor_outside", -1), 0);
    set_ctx("floor_outside: corners all inside the L, the fan across its notch: error");
    b->R[r].na = 0;
    double across[6] = {1, 19, 19, 1, 19, 9}; /* the edge (1, 19)-(19, 1) cuts the notch */
    tb_attr(b, r, PSDL_ATTR_FAN, across, 3);
    d = tb_doc(b);
    CHECK_EQ(count_rule(d, "floor_outside", -1, &p), 1);
    if (p) CHECK(p->has_position && p->x > 10 && p->z > 10);
    psdl_doc_free(d);
    set_ctx("floor_outside: a convex room, a strip with one point 4 cm out (tolerated)");
    b = tb_new();
    r = tb_rect(b, 0, 0, 10, 10, 0x08);
    double strip[8] = {0, 0, 10.04, 0, 0, 10, 10, 10};
    tb_attr(b, r, PSDL_ATTR_WALKWAY, strip, 4);
    CHECK_EQ(run_rule(b, "floor_outside", -1), 0);
    set_ctx("floor_outside: a convex room, a thin sliver 2 m out from a point inside");
    b->R[r].na = 0;
    double sliver[6] = {5, 5, 12, 5, 12, 5.2}; /* 0.7 m², 0.2 of it more than 5 cm out */
    tb_attr(b, r, PSDL_ATTR_FAN, sliver, 3);
    CHECK_EQ(run_rule(b, "floor_outside", -1), 1);
    set_ctx("floor_outside: a room wound twice (a star): its floor is measured, not assumed");
    b = tb_new();
    {
        double star[10];
        for (int i = 0; i < 5; i++) {
            double a = 2 * 3.14159265358979 * (2 * i) / 5;
            star[2 * i] = 10 * cos(a), star[2 * i + 1] = 10 * sin(a);
        }
        r = tb_room(b, star, 5, 0x04);
        double inner[6] = {-1, -1, 1, -1, 0, 1}; /* at the centre, wound twice */
        tb_attr(b, r, PSDL_ATTR_FAN, inner, 3);
        d = tb_doc(b);
        g_pl.n = 0;
        psdl_validate_result res = {0, 0};
        psdl_check_drivable(d, collect, &g_pl, &res); /* no crash; the verdict is clip_tri's */
        CHECK(res.errors >= 1);                       /* the crossing perimeter */
        psdl_doc_free(d);
    }

    set_ctx("edge_gap: linked edge ends on the neighbour's points, its middle 10 cm off");
    b = tb_new();
    {
        double l[8] = {0, 0, 0, 10, 10, 10, 10, 0};
        double rr[10] = {10, 0, 10.1, 5, 10, 10, 20, 10, 20, 0};
        uint32_t a1 = tb_room(b, l, 4, 0x08), a2 = tb_room(b, rr, 5, 0x08);
        b->R[a1].nb[2] = (uint16_t)a2; /* edge (10, 10) -> (10, 0) */
        b->R[a2].nb[0] = (uint16_t)a1;
        b->R[a2].nb[1] = (uint16_t)a1;
        d = tb_doc(b);
        CHECK_EQ(count_rule(d, "edge_gap", W, &p), 2); /* from each side */
        if (p) {
            CHECK_EQ(p->room, (long)a1);
            CHECK(p->has_position && fabs(p->x - 10) < 1e-6 && fabs(p->z - 5) < 1e-6);
            CHECK(strstr(p->message, "0.100 m") != NULL);
        }
        psdl_doc_free(d);
        set_ctx("edge_gap: the same edge shared point for point: nothing");
        b->V[b->R[a2].v[1]].x = 10;
        CHECK_EQ(run_rule(b, "edge_gap", -1), 0);
    }

    set_ctx("hole: 30 diamonds corner to corner on a long edge (the sub-edge table grows)");
    b = tb_new();
    {
        double base[8] = {-2, -10, -2, 0, 120, 0, 120, -10};
        tb_room(b, base, 4, 0x04);
        for (int i = 0; i < 30; i++) {
            double x = 4.0 * i;
            double dm[8] = {x, 0, x - 2, 2, x, 4, x + 2, 2};
            tb_room(b, dm, 4, 0x04);
        }
        d = tb_doc(b);
        CHECK_EQ(count_rule(d, "hole", E, &p), 29); /* a 4 m² triangle between each two */
        if (p) CHECK(strstr(p->message, "4.00 m") != NULL);
        psdl_doc_free(d);
    }
    set_ctx("hole: the same with 240 points along the base's far side (one room's sub-edges "
            "collected past their first buffer, the table growing while they are placed)");
    b = tb_new();
    {
        double base[2 * 244];
        uint32_t n = 0;
        base[2 * n] = -2, base[2 * n + 1] = -10, n++;
        base[2 * n] = -2, base[2 * n + 1] = 0, n++;
        base[2 * n] = 120, base[2 * n + 1] = 0, n++;
        for (int i = 0; i <= 240; i++) /* back along z = -10 with a 5 cm zigzag */
            base[2 * n] = 120 - i * (122.0 / 240), base[2 * n + 1] = -10 - (i % 2) * 0.05, n++;
        tb_room(b, base, n - 1, 0x04); /* 243 points (the last point is the first) */
        for (int i = 0; i < 30; i++) {
            double x = 4.0 * i;
            double dm[8] = {x, 0, x - 2, 2, x, 4, x + 2, 2};
            tb_room(b, dm, 4, 0x04);
        }
        /* a round room far off: 512 points in all, so the table (1,024 slots) grows at
         * the 512th of the 542 sub-edges */
        double ring[2 * 149];
        for (int i = 0; i < 149; i++)
            ring[2 * i] = 500 + 20 * cos(-2 * 3.14159265358979323846 * i / 149), ring[2 * i + 1] = 20 * sin(-2 * 3.14159265358979323846 * i / 149);
        tb_room(b, ring, 149, 0x04);
        d = tb_doc(b);
        CHECK_EQ(count_rule(d, "hole", E, &p), 29);
        if (p) CHECK(strstr(p->message, "4.00 m") != NULL);
        psdl_doc_free(d);
    }
}

/* ---------------------------------------------------------------- reachability */

static void test_reach(void) {
    set_ctx("unreachable: a road room with no link");
    tb *b = tb_new();
    uint32_t a = tb_rect(b, 0, 0, 30, 10, 0x08); /* the largest road room */
    uint32_t c = tb_rect(b, 30, 0, 40, 10, 0x10);
    uint32_t e = tb_rect(b, 40, 0, 50, 10, 0x08);
    uint32_t blk = tb_rect(b, 0, 10, 50, 20, 0x04);
    tb_link(b, a, c);
    psdl_doc *d = tb_doc(b);
    const psdl_problem *p;
    CHECK_EQ(count_rule(d, "unreachable", E, &p), 1);
    if (p) {
        CHECK_EQ(p->room, (long)e);
        CHECK_EQ(p->other_room, (long)a);
        CHECK(p->has_position && fabs(p->x - 45) < 1e-6 && fabs(p->z - 5) < 1e-6);
    }
    CHECK_EQ(count_rule(d, "unreachable", W, &p), 1); /* the block: a warning */
    if (p) CHECK_EQ(p->room, (long)blk);
    psdl_doc_free(d);
    set_ctx("unreachable: all linked");
    tb_link(b, c, e);
    tb_link(b, a, blk);
    CHECK_EQ(run_rule(b, "unreachable", -1), 0);
}

/* ---------------------------------------------------------------- perimeter shape */

static void test_shapes(void) {
    set_ctx("perimeter_crossing: a bow tie");
    tb *b = tb_new();
    double bow[8] = {0, 0, 10, 10, 10, 0, 0, 10};
    tb_room(b, bow, 4, 0x04);
    psdl_doc *d = tb_doc(b);
    const psdl_problem *p;
    CHECK_EQ(count_rule(d, "perimeter_crossing", E, &p), 1);
    if (p) CHECK(p->has_position && fabs(p->x - 5) < 1e-6 && fabs(p->z - 5) < 1e-6);
    psdl_doc_free(d);
    set_ctx("perimeter_crossing: a square with a repeated corner (§1.5): none");
    b = tb_new();
    double sq[10] = {0, 0, 0, 10, 0, 10, 10, 10, 10, 0};
    tb_room(b, sq, 5, 0x04);
    CHECK_EQ(run_rule(b, "perimeter_crossing", -1), 0);
    CHECK_EQ(run_rule(b, "perimeter_spike", -1), 0);

    set_ctx("perimeter_spike: 4 m out along an edge and straight back");
    b = tb_new();
    /* out to (14, 10.05) and back to a point 1 cm beside where it left */
    double spike[12] = {0, 0, 0, 10, 10, 10, 14, 10.05, 10, 10.01, 10, 0};
    tb_room(b, spike, 6, 0x10);
    CHECK_EQ(run_rule(b, "perimeter_spike", W), 1);
    set_ctx("perimeter_spike: a 3 degree needle is no spike");
    b = tb_new();
    double needle[14] = {0, 0, 0, 10, 4.9, 10, 5, 14, 5.1, 10, 10, 10, 10, 0}; /* 2.86 degrees at the tip */
    tb_room(b, needle, 7, 0x10);
    CHECK_EQ(run_rule(b, "perimeter_spike", -1), 0);
    set_ctx("perimeter_spike: the same needle at 1.43 degrees is one");
    needle[4] = 4.95, needle[8] = 5.05;
    b = tb_new();
    tb_room(b, needle, 7, 0x10);
    CHECK_EQ(run_rule(b, "perimeter_spike", W), 1);

    set_ctx("perimeter_kink: forward, back 0.3 m, forward again");
    b = tb_new();
    double kink[12] = {0, 0, 0, 10, 5, 10, 4.7, 10.05, 10, 10.1, 10, 0};
    tb_room(b, kink, 6, 0x10);
    CHECK_EQ(run_rule(b, "perimeter_kink", W), 1);
    set_ctx("perimeter_kink: the same fold over 0.6 m: none");
    b = tb_new();
    double nokink[12] = {0, 0, 0, 10, 5, 10, 4.4, 10.1, 10, 10.2, 10, 0};
    tb_room(b, nokink, 6, 0x10);
    CHECK_EQ(run_rule(b, "perimeter_kink", -1), 0);
}

/* ---------------------------------------------------------------- numbers */

static void test_numbers(void) {
    set_ctx("nonfinite: a NaN vertex and an infinite height");
    tb *b = tb_new();
    double ccw[8] = {0, 0, 10, 0, 10, 10, 0, 10}; /* wound opposite to retail: a winding warning */
    tb_room(b, ccw, 4, 0x08);
    psdl_doc *d = tb_doc(b);
    d->vertices[2].x = NAN;
    d->heights[0] = INFINITY;
    const psdl_problem *p;
    CHECK_EQ(count_rule(d, "nonfinite", E, &p), 2);
    if (p) {
        check_str_impl(p->path, "vertices[3]", __FILE__, __LINE__, "nonfinite path");
        CHECK(strstr(p->message, "NaN") != NULL);
    }
    /* the NaN must not hide the perimeter's winding warning (issue 14) */
    psdl_validate_result res;
    g_pl.n = 0;
    psdl_validate(d, collect, &g_pl, &res);
    int winding = 0;
    for (size_t i = 0; i < g_pl.n; i++) winding += strcmp(g_pl.p[i].rule, "winding") == 0;
    CHECK_EQ(winding, 1);
    psdl_doc_free(d);
    set_ctx("nonfinite: all finite");
    CHECK_EQ(run_rule(b, "nonfinite", -1), 0);

    set_ctx("empty_city: no room");
    d = psdl_doc_new(NULL);
    if (CHECK(d != NULL)) {
        CHECK_EQ(count_rule(d, "empty_city", E, NULL), 1);
        g_pl.n = 0;
        psdl_validate(d, collect, &g_pl, &res);
        CHECK(res.errors >= 1);
        psdl_doc_free(d);
    }
    set_ctx("empty_city: one room");
    b = tb_new();
    tb_rect(b, 0, 0, 10, 10, 0x08);
    CHECK_EQ(run_rule(b, "empty_city", -1), 0);
    set_ctx("a clean room: nothing at all");
    d = tb_doc(b);
    g_pl.n = 0;
    psdl_validate_result r2 = {0, 0};
    psdl_check_drivable(d, collect, &g_pl, &r2);
    CHECK_EQ(r2.errors, 0);
    CHECK_EQ(r2.warnings, 0);
    psdl_doc_free(d);
}

/* ---------------------------------------------------------------- fixtures and the rule list */

static void test_fixture(const char *dir) {
    char path[512];
    snprintf(path, sizeof path, "%s/grid_n2.psdl", dir);
    size_t size;
    unsigned char *bytes = read_file(path, &size);
    set_ctx("fixture grid_n2");
    if (!CHECK(bytes != NULL)) return;
    psdl_doc *d;
    psdl_error err;
    if (CHECK(psdl_decode(NULL, bytes, size, &d, &err) == PSDL_OK)) {
        /* four corner gaps of 3 m (the synthetic generator leaves them), each 102 m2 */
        const psdl_problem *p;
        CHECK_EQ(count_rule(d, "hole", E, &p), 4);
        if (p) CHECK(strstr(p->message, "102.00 m") != NULL);
        for (size_t i = 0; i < g_pl.n; i++)
            CHECKF(!g_pl.p[i].has_position || (isfinite(g_pl.p[i].x) && isfinite(g_pl.p[i].z)), "%s",
                   g_pl.p[i].rule);
        /* stopping early: the callback's non-zero return ends the reports */
        psdl_doc_free(d);
    }
    free(bytes);
    snprintf(path, sizeof path, "%s/clean/street.psdl", dir);
    bytes = read_file(path, &size);
    set_ctx("fixture clean/street");
    if (!CHECK(bytes != NULL)) return;
    if (CHECK(psdl_decode(NULL, bytes, size, &d, &err) == PSDL_OK)) {
        psdl_validate_result res;
        psdl_validate(d, NULL, NULL, &res);
        CHECK_EQ(res.errors, 0);
        CHECK_EQ(res.warnings, 0);
        psdl_doc_free(d);
    }
    free(bytes);
}

static void test_rules(void) {
    set_ctx("psdl_rules");
    size_t n;
    const psdl_rule_info *r = psdl_rules(&n);
    CHECK(n >= 50);
    const char *want[] = {"hole", "edge_gap", "room_overlap", "floor_outside", "unreachable", "perimeter_crossing",
                          "perimeter_spike", "perimeter_kink", "nonfinite", "empty_city", "vertex_index"};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        int found = 0;
        for (size_t i = 0; i < n; i++) found |= strcmp(r[i].name, want[k]) == 0;
        CHECKF(found, "%s", want[k]);
    }
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "spec/fixtures";
    test_holes();
    test_overlaps();
    test_check_overlaps();
    test_floors();
    test_shortcuts();
    test_reach();
    test_shapes();
    test_numbers();
    test_fixture(dir);
    test_rules();
    printf("c: %lu passed, %lu failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
