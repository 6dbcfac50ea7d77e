/* test_conflicts.c -- conflicts of a road network before anything is built
 * (src/psdl_conflicts.h): two roads at grade crossing give one "cross" with its point, plan
 * distances and mean height; a bridge over a road a "level" crossing on the bridge with the
 * half length of its ramps; a node on a road's body the nearest road; roads sharing a node,
 * a road's own nodes, nodes near a road's end, and inactive nodes give nothing; the small
 * grid of a re-check; bad input refused; random networks never crash and every conflict is
 * what its definition says. Run under ASan/UBSan by scripts/test
 * (build-asan/psdl_ctest_conflicts). */
#include "psdl_conflicts.h"

#include <math.h>

#include "check.h"

static psdl_net_road road(int64_t index, uint32_t a, uint32_t b, double hw, int level) {
    psdl_net_road r;
    r.index = index, r.a = a, r.b = b, r.hw = hw, r.level = level, r.in_small = 0, r.query_small = 0;
    return r;
}

static psdl_net_node node(double x, double z, double reach, int active) {
    psdl_net_node n;
    n.x = x, n.z = z, n.reach = reach, n.active = active, n.query_small = 0;
    return n;
}

/* a plus: road 0 from (0, 50) to (100, 50) at height 2, road 1 from (50, 0) to (50, 100) at 4 */
static const double plus_pts[] = {0, 50, 2, 100, 50, 2, 50, 0, 4, 50, 100, 4};
static const uint32_t plus_start[] = {0, 2, 4};

static void test_cross(void) {
    set_ctx("cross");
    psdl_net_road roads[2] = {road(1, 0, 1, 5, 0), road(2, 2, 3, 5, 0)};
    psdl_net_node nodes[4] = {node(0, 50, 0, 1), node(100, 50, 0, 1), node(50, 0, 0, 1), node(50, 100, 0, 1)};
    psdl_net_conflicts c;
    CHECK(psdl_network_conflicts(&c, plus_pts, plus_start, roads, 2, nodes, 4, 0, 50) == PSDL_CONFLICTS_OK);
    CHECKF(c.ncrosses == 1 && c.nlevels == 0 && c.ntouches == 0, "%zu %zu %zu", c.ncrosses, c.nlevels, c.ntouches);
    if (c.ncrosses == 1) {
        const psdl_net_cross *x = &c.crosses[0];
        CHECK(x->a == 0 && x->b == 1);
        CHECKF(x->x == 50 && x->z == 50, "(%g, %g)", x->x, x->z);
        CHECKF(x->sa == 50 && x->sb == 50, "%g %g", x->sa, x->sb);
        CHECKF(x->y == 3, "y %g", x->y);
    }
    psdl_conflicts_free(&c);
    /* the lower index first: swapped indices give the pair from road 1 */
    set_ctx("cross, indices swapped");
    roads[0].index = 5;
    CHECK(psdl_network_conflicts(&c, plus_pts, plus_start, roads, 2, nodes, 4, 0, 50) == PSDL_CONFLICTS_OK);
    CHECK(c.ncrosses == 1 && c.crosses[0].a == 1 && c.crosses[0].b == 0);
    psdl_conflicts_free(&c);
    /* a bridge: a level crossing listed on it, the ramps' half length (5 + 5) / 1 + 1 */
    set_ctx("level");
    roads[0].index = 1, roads[1].level = 1;
    CHECK(psdl_network_conflicts(&c, plus_pts, plus_start, roads, 2, nodes, 4, 0, 50) == PSDL_CONFLICTS_OK);
    CHECKF(c.ncrosses == 0 && c.nlevels == 1, "%zu %zu", c.ncrosses, c.nlevels);
    if (c.nlevels == 1) {
        CHECK(c.levels[0].lv == 1 && c.levels[0].other == 0);
        CHECKF(c.levels[0].x == 50 && c.levels[0].z == 50 && c.levels[0].half == 11, "%g %g %g", c.levels[0].x,
               c.levels[0].z, c.levels[0].half);
    }
    psdl_conflicts_free(&c);
    /* two bridges cross anything: nothing */
    set_ctx("two bridges");
    roads[0].level = 1;
    CHECK(psdl_network_conflicts(&c, plus_pts, plus_start, roads, 2, nodes, 4, 0, 50) == PSDL_CONFLICTS_OK);
    CHECK(c.ncrosses == 0 && c.nlevels == 0 && c.ntouches == 0);
    psdl_conflicts_free(&c);
}

static void test_nodes(void) {
    /* road 0 along x from (0, 0) to (100, 0), half width 5; road 1 from node 2 at (40, 3) up */
    const double pts[] = {0, 0, 0, 100, 0, 0, 40, 3, 0, 40, 80, 0};
    const uint32_t start[] = {0, 2, 4};
    psdl_net_road roads[2] = {road(1, 0, 1, 5, 0), road(2, 2, 3, 4, 0)};
    psdl_net_node nodes[4] = {node(0, 0, 6, 1), node(100, 0, 6, 1), node(40, 3, 5, 1), node(40, 80, 5, 1)};
    psdl_net_conflicts c;
    set_ctx("node on a body");
    CHECK(psdl_network_conflicts(&c, pts, start, roads, 2, nodes, 4, 0, 50) == PSDL_CONFLICTS_OK);
    CHECKF(c.ntouches == 1, "%zu", c.ntouches);
    if (c.ntouches == 1) {
        const psdl_net_touch *t = &c.touches[0];
        CHECK(t->node == 2 && t->road == 0);
        CHECKF(t->d == 3 && t->s == 40 && t->x == 40 && t->z == 0, "%g %g (%g, %g)", t->d, t->s, t->x, t->z);
        CHECK(t->dx == 1 && t->dz == 0);
    }
    psdl_conflicts_free(&c);
    /* inactive (a tunnel node), or beyond the half width plus reach: nothing */
    set_ctx("inactive node");
    nodes[2].active = 0;
    CHECK(psdl_network_conflicts(&c, pts, start, roads, 2, nodes, 4, 0, 50) == PSDL_CONFLICTS_OK);
    CHECK(c.ntouches == 0);
    psdl_conflicts_free(&c);
    set_ctx("node clear");
    const double far_pts[] = {0, 0, 0, 100, 0, 0, 40, 10.5, 0, 40, 80, 0};
    nodes[2].active = 1, nodes[2].z = 10.5;
    CHECK(psdl_network_conflicts(&c, far_pts, start, roads, 2, nodes, 4, 0, 50) == PSDL_CONFLICTS_OK);
    CHECK(c.ntouches == 0);
    psdl_conflicts_free(&c);
    /* within 1 m of the road's end (s < 1): a matter of room overlaps, not of the body */
    set_ctx("node at a road's end");
    const double end_pts[] = {0, 0, 0, 100, 0, 0, 0.5, 3, 0, 40, 80, 0};
    nodes[2].x = 0.5, nodes[2].z = 3;
    CHECK(psdl_network_conflicts(&c, end_pts, start, roads, 2, nodes, 4, 0, 50) == PSDL_CONFLICTS_OK);
    CHECK(c.ntouches == 0);
    psdl_conflicts_free(&c);
    /* a road's own nodes are never on its body; roads sharing a node never cross */
    set_ctx("shared node");
    const double v_pts[] = {0, 0, 0, 50, 50, 0, 50, 50, 0, 100, 0, 0};
    const uint32_t v_start[] = {0, 2, 4};
    psdl_net_road v_roads[2] = {road(1, 0, 1, 5, 0), road(2, 1, 2, 5, 0)};
    psdl_net_node v_nodes[3] = {node(0, 0, 6, 1), node(50, 50, 0, 1), node(100, 0, 6, 1)};
    CHECK(psdl_network_conflicts(&c, v_pts, v_start, v_roads, 2, v_nodes, 3, 0, 50) == PSDL_CONFLICTS_OK);
    CHECK(c.ncrosses == 0 && c.ntouches == 0 && c.nlevels == 0);
    psdl_conflicts_free(&c);
}

static void test_small(void) {
    /* a re-check: road 1 meets only the small grid, which holds nothing: the crossing is
     * not seen from it; road 0 meets the full grid and sees it */
    set_ctx("small grid");
    psdl_net_road roads[2] = {road(2, 0, 1, 5, 0), road(1, 2, 3, 5, 0)};
    psdl_net_node nodes[4] = {node(0, 50, 0, 0), node(100, 50, 0, 0), node(50, 0, 0, 0), node(50, 100, 0, 0)};
    roads[1].query_small = 1;
    psdl_net_conflicts c;
    CHECK(psdl_network_conflicts(&c, plus_pts, plus_start, roads, 2, nodes, 4, 1, 50) == PSDL_CONFLICTS_OK);
    CHECK(c.ncrosses == 0);
    psdl_conflicts_free(&c);
    roads[0].in_small = 1; /* road 0 changed: in the small grid, road 1 meets it there */
    CHECK(psdl_network_conflicts(&c, plus_pts, plus_start, roads, 2, nodes, 4, 1, 50) == PSDL_CONFLICTS_OK);
    CHECK(c.ncrosses == 1 && c.crosses[0].a == 1 && c.crosses[0].b == 0);
    psdl_conflicts_free(&c);
}

static void test_bad(void) {
    set_ctx("bad input");
    psdl_net_road roads[2] = {road(1, 0, 1, 5, 0), road(2, 2, 3, 5, 0)};
    psdl_net_node nodes[4] = {node(0, 50, 0, 1), node(100, 50, 0, 1), node(50, 0, 0, 1), node(50, 100, 0, 1)};
    psdl_net_conflicts c;
    const uint32_t short_start[] = {0, 1, 4};
    CHECK(psdl_network_conflicts(&c, plus_pts, short_start, roads, 2, nodes, 4, 0, 50) == PSDL_CONFLICTS_INVALID);
    CHECK(c.crosses == NULL && c.ncrosses == 0);
    roads[1].b = 4; /* no node 4 */
    CHECK(psdl_network_conflicts(&c, plus_pts, plus_start, roads, 2, nodes, 4, 0, 50) == PSDL_CONFLICTS_INVALID);
    roads[1].b = 3;
    CHECK(psdl_network_conflicts(&c, plus_pts, plus_start, roads, 2, nodes, 4, 0, 0) == PSDL_CONFLICTS_INVALID);
    CHECK(psdl_network_conflicts(&c, plus_pts, plus_start, roads, 2, nodes, 4, 0, NAN) == PSDL_CONFLICTS_INVALID);
    const double huge_pts[] = {0, 50, 2, 1e300, 50, 2, 50, 0, 4, 50, 100, 4};
    CHECK(psdl_network_conflicts(&c, huge_pts, plus_start, roads, 2, nodes, 4, 0, 50) == PSDL_CONFLICTS_INVALID);
    CHECK(c.levels == NULL && c.crosses == NULL && c.touches == NULL);
    /* no roads, no nodes: nothing */
    const uint32_t none[] = {0};
    CHECK(psdl_network_conflicts(&c, NULL, none, NULL, 0, NULL, 0, 1, 50) == PSDL_CONFLICTS_OK);
    CHECK(c.ncrosses == 0 && c.nlevels == 0 && c.ntouches == 0);
    psdl_conflicts_free(&c);
    psdl_conflicts_free(NULL);
}

static unsigned long rnd_state = 12345;
static double rnd(void) {
    rnd_state = (rnd_state * 1103515245u + 12345u) % 2147483648u;
    return (double)rnd_state / 2147483648.0;
}

/* distance of (x, z) from segment p-q */
static double seg_dist(double x, double z, const double *p, const double *q) {
    double dx = q[0] - p[0], dz = q[1] - p[1], l2 = dx * dx + dz * dz, t = 0;
    if (l2 > 0) t = fmax(0, fmin(1, ((x - p[0]) * dx + (z - p[1]) * dz) / l2));
    return hypot(p[0] + t * dx - x, p[1] + t * dz - z);
}

static void test_random(void) {
    unsigned long seen = 0;
    for (int round = 0; round < 400; round++) {
        set_ctx("random %d", round);
        size_t nn = 2 + (size_t)(rnd() * 10), nr = 1 + (size_t)(rnd() * 10);
        psdl_net_node nodes[12];
        psdl_net_road roads[11];
        double pts[11 * 5 * 3];
        uint32_t start[12];
        size_t w = 0;
        for (size_t i = 0; i < nn; i++) {
            nodes[i] = node(rnd() * 200, rnd() * 200, rnd() < 0.5 ? 0 : rnd() * 8, rnd() < 0.9);
            nodes[i].query_small = rnd() < 0.3;
        }
        for (size_t r = 0; r < nr; r++) {
            uint32_t a = (uint32_t)(rnd() * (double)nn), b = (uint32_t)(rnd() * (double)nn);
            roads[r] = road((int64_t)(rnd() * 20), a, b, rnd() * 10, rnd() < 0.2);
            roads[r].in_small = rnd() < 0.5, roads[r].query_small = rnd() < 0.3;
            start[r] = (uint32_t)w;
            size_t nv = (size_t)(rnd() * 4);
            pts[3 * w] = nodes[a].x, pts[3 * w + 1] = nodes[a].z, pts[3 * w + 2] = rnd(), w++;
            for (size_t k = 0; k < nv; k++)
                pts[3 * w] = rnd() * 200, pts[3 * w + 1] = rnd() * 200, pts[3 * w + 2] = rnd(), w++;
            pts[3 * w] = nodes[b].x, pts[3 * w + 1] = nodes[b].z, pts[3 * w + 2] = rnd(), w++;
        }
        start[nr] = (uint32_t)w;
        psdl_net_conflicts c;
        CHECK(psdl_network_conflicts(&c, pts, start, roads, nr, nodes, nn, rnd() < 0.5, 50) == PSDL_CONFLICTS_OK);
        for (size_t k = 0; k < c.ncrosses; k++) {
            const psdl_net_cross *x = &c.crosses[k];
            CHECK(x->a < nr && x->b < nr && roads[x->a].index < roads[x->b].index);
            CHECK(!roads[x->a].level && !roads[x->b].level);
        }
        for (size_t k = 0; k < c.nlevels; k++) {
            const psdl_net_level *l = &c.levels[k];
            CHECK(l->lv < nr && l->other < nr && roads[l->lv].level && !roads[l->other].level);
            CHECK(l->half >= 1);
        }
        for (size_t k = 0; k < c.ntouches; k++) {
            const psdl_net_touch *t = &c.touches[k];
            CHECK(t->node < nn && t->road < nr && nodes[t->node].active && !roads[t->road].level);
            CHECK(roads[t->road].a != t->node && roads[t->road].b != t->node);
            CHECK(t->d < roads[t->road].hw + nodes[t->node].reach);
            /* the nearest point lies on the road's polyline */
            double best = INFINITY;
            for (uint32_t i = start[t->road]; i + 1 < start[t->road + 1]; i++)
                best = fmin(best, seg_dist(t->x, t->z, pts + 3 * i, pts + 3 * i + 3));
            CHECKF(best < 1e-9, "%g", best);
        }
        seen += c.ncrosses + c.nlevels + c.ntouches;
        psdl_conflicts_free(&c);
    }
    CHECKF(seen > 100, "%lu conflicts only", seen);
}

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    test_cross();
    test_nodes();
    test_small();
    test_bad();
    test_random();
    printf("c: %lu passed, %lu failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
