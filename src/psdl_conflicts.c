/* psdl_conflicts.c -- conflicts of a road network before anything is built (psdl_conflicts.h).
 *
 * Every test is written as psdl.city.network's Lua wrote it (the same operations in the same
 * order; math.min / math.max keep their first argument on ties), so that the conflicts, their
 * points and their order are the ones the Lua found. */
#include "psdl_conflicts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "psdl_geom.h"
#include "psdl_segment.h"

/* Lua's math.min(a, b) and math.max(a, b) on two numbers */
static double lmin(double a, double b) { return b < a ? b : a; }
static double lmax(double a, double b) { return a < b ? b : a; }

/* a growing array of n items of `size` bytes; 0 or -1 (out of memory) */
static int push(void **arr, size_t *n, size_t *cap, size_t size, const void *item) {
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 16;
        void *p = realloc(*arr, c * size);
        if (!p) return -1;
        *arr = p, *cap = c;
    }
    memcpy((char *)*arr + *n * size, item, size);
    (*n)++;
    return 0;
}

/* the candidates of a box, into *buf (grown as needed); their count, or SIZE_MAX on error
 * (*err: PSDL_CONFLICTS_NOMEM or _INVALID) */
static size_t collect(psdl_grid *g, uint32_t **buf, size_t *cap, double x0, double z0, double x1, double z1,
                      int *err) {
    size_t n = psdl_grid_collect(g, *buf, *cap, x0, z0, x1, z1);
    if (n == PSDL_GEOM_INVALID) {
        *err = PSDL_CONFLICTS_INVALID;
        return SIZE_MAX;
    }
    if (n > *cap) {
        uint32_t *p = (uint32_t *)realloc(*buf, n * sizeof *p);
        if (!p) {
            *err = PSDL_CONFLICTS_NOMEM;
            return SIZE_MAX;
        }
        *buf = p, *cap = n;
        n = psdl_grid_collect(g, *buf, *cap, x0, z0, x1, z1);
    }
    return n;
}

void psdl_conflicts_free(psdl_net_conflicts *c) {
    if (!c) return;
    free(c->levels);
    free(c->crosses);
    free(c->touches);
    memset(c, 0, sizeof *c);
}

int psdl_network_conflicts(psdl_net_conflicts *out, const double *pts, const uint32_t *start,
                           const psdl_net_road *roads, size_t nroads, const psdl_net_node *nodes,
                           size_t nnodes, int use_small, double cell) {
    memset(out, 0, sizeof *out);
    if (!(cell > 0 && cell < HUGE_VAL)) return PSDL_CONFLICTS_INVALID;
    size_t nseg = 0;
    for (size_t r = 0; r < nroads; r++) {
        if (start[r + 1] < start[r] + 2) return PSDL_CONFLICTS_INVALID;
        if (roads[r].a >= nnodes || roads[r].b >= nnodes) return PSDL_CONFLICTS_INVALID;
        nseg += start[r + 1] - start[r] - 1;
        if (nseg >= PSDL_GRID_MAX_ID) return PSDL_CONFLICTS_INVALID;
    }
    size_t npts = nroads ? start[nroads] : 0;
    int err = PSDL_CONFLICTS_OK;
    double *s = (double *)malloc((npts ? npts : 1) * sizeof *s);         /* plan distance of each point */
    uint32_t *seg_road = (uint32_t *)malloc((nseg + 1) * sizeof *seg_road); /* per item id (1-based) */
    uint32_t *seg_pt = (uint32_t *)malloc((nseg + 1) * sizeof *seg_pt);     /* its first point */
    psdl_grid *g = psdl_grid_new(cell);
    psdl_grid *small = use_small ? psdl_grid_new(cell) : NULL;
    size_t cap = 64, ncap[3] = {0, 0, 0};
    uint32_t *cand = (uint32_t *)malloc(cap * sizeof *cand);
    if (!s || !seg_road || !seg_pt || !g || (use_small && !small) || !cand) {
        err = PSDL_CONFLICTS_NOMEM;
        goto done;
    }
    /* the segments into the grid(s), boxes grown by the half width */
    size_t id = 0;
    for (size_t r = 0; r < nroads; r++) {
        const psdl_net_road *rd = &roads[r];
        double hw = rd->hw;
        s[start[r]] = 0;
        for (uint32_t i = start[r]; i + 1 < start[r + 1]; i++) {
            const double *p = pts + 3 * (size_t)i, *q = p + 3;
            double dx = q[0] - p[0], dz = q[1] - p[1];
            s[i + 1] = s[i] + sqrt(dx * dx + dz * dz);
            id++;
            seg_road[id] = (uint32_t)r, seg_pt[id] = i;
            double x0 = lmin(p[0], q[0]) - hw, z0 = lmin(p[1], q[1]) - hw;
            double x1 = lmax(p[0], q[0]) + hw, z1 = lmax(p[1], q[1]) + hw;
            int e = psdl_grid_insert(g, (uint32_t)id, x0, z0, x1, z1);
            if (e == 0 && small && rd->in_small) e = psdl_grid_insert(small, (uint32_t)id, x0, z0, x1, z1);
            if (e) {
                err = e == -2 ? PSDL_CONFLICTS_NOMEM : PSDL_CONFLICTS_INVALID;
                goto done;
            }
        }
    }
    /* crossings: each segment against the segments of the roads after it */
    for (size_t r = 0; r < nroads; r++) {
        const psdl_net_road *rd = &roads[r];
        int rl = rd->level != 0;
        psdl_grid *gr = (small && rd->query_small && !rl) ? small : g;
        for (uint32_t i = start[r]; i + 1 < start[r + 1]; i++) {
            const double *p = pts + 3 * (size_t)i, *q = p + 3;
            size_t nc = collect(gr, &cand, &cap, lmin(p[0], q[0]), lmin(p[1], q[1]), lmax(p[0], q[0]),
                                lmax(p[1], q[1]), &err);
            if (nc == SIZE_MAX) goto done;
            for (size_t k = 0; k < nc; k++) {
                uint32_t o = seg_road[cand[k]], ci = seg_pt[cand[k]];
                const psdl_net_road *od = &roads[o];
                if (!(od->index > rd->index)) continue;
                int ol = od->level != 0;
                const double *u = pts + 3 * (size_t)ci, *v = u + 3;
                double t, w;
                if (ol != rl) {
                    if (!psdl_seg_cross(p, q, u, v, &t, &w)) continue;
                    uint32_t lv = (uint32_t)r, gr2 = o;
                    if (ol) lv = o, gr2 = (uint32_t)r;
                    double ea[2] = {0, 0}, eb[2] = {0, 0};
                    psdl_seg_unit(q[0] - p[0], q[1] - p[1], ea);
                    psdl_seg_unit(v[0] - u[0], v[1] - u[1], eb);
                    double sn = fabs(ea[0] * eb[1] - ea[1] * eb[0]);
                    psdl_net_level it;
                    it.lv = lv, it.other = gr2;
                    it.x = p[0] + t * (q[0] - p[0]);
                    it.z = p[1] + t * (q[1] - p[1]);
                    it.half = (roads[lv].hw + roads[gr2].hw) / lmax(sn, 0.2) + 1;
                    if (push((void **)&out->levels, &out->nlevels, &ncap[0], sizeof it, &it)) {
                        err = PSDL_CONFLICTS_NOMEM;
                        goto done;
                    }
                } else if (!ol) {
                    if (!psdl_seg_cross(p, q, u, v, &t, &w)) continue;
                    psdl_net_cross it;
                    it.a = (uint32_t)r, it.b = o;
                    it.x = p[0] + t * (q[0] - p[0]);
                    it.z = p[1] + t * (q[1] - p[1]);
                    it.sa = s[i] + t * (s[i + 1] - s[i]);
                    it.sb = s[ci] + w * (s[ci + 1] - s[ci]);
                    it.y = (p[2] + t * (q[2] - p[2]) + u[2] + w * (v[2] - u[2])) / 2;
                    if (push((void **)&out->crosses, &out->ncrosses, &ncap[1], sizeof it, &it)) {
                        err = PSDL_CONFLICTS_NOMEM;
                        goto done;
                    }
                }
            }
        }
    }
    /* nodes on another road's body: the nearest road at grade not ending there */
    for (size_t n = 0; n < nnodes; n++) {
        const psdl_net_node *nd = &nodes[n];
        if (!nd->active) continue;
        double reach = nd->reach;
        psdl_grid *gr = (small && nd->query_small) ? small : g;
        size_t nc = collect(gr, &cand, &cap, nd->x - reach, nd->z - reach, nd->x + reach, nd->z + reach, &err);
        if (nc == SIZE_MAX) goto done;
        int found = 0;
        psdl_net_touch best;
        memset(&best, 0, sizeof best);
        for (size_t k = 0; k < nc; k++) {
            uint32_t o = seg_road[cand[k]], ci = seg_pt[cand[k]];
            const psdl_net_road *od = &roads[o];
            if (od->a == n || od->b == n || od->level) continue;
            const double *p = pts + 3 * (size_t)ci, *q = p + 3;
            double t;
            double d = psdl_seg_closest(nd->x, nd->z, p, q, &t);
            double sv = s[ci] + t * (s[ci + 1] - s[ci]);
            double L = s[start[o + 1] - 1];
            if (d < od->hw + reach && sv > 1 && sv < L - 1 && (!found || d < best.d)) {
                double dir[2] = {1, 0};
                psdl_seg_unit(q[0] - p[0], q[1] - p[1], dir);
                double dx = dir[0], dz = dir[1];
                found = 1;
                best.node = (uint32_t)n, best.road = o;
                best.d = d, best.s = sv;
                best.dx = dx, best.dz = dz;
                best.x = p[0] + t * (q[0] - p[0]);
                best.z = p[1] + t * (q[1] - p[1]);
            }
        }
        if (found && push((void **)&out->touches, &out->ntouches, &ncap[2], sizeof best, &best)) {
            err = PSDL_CONFLICTS_NOMEM;
            goto done;
        }
    }
done:
    free(s);
    free(seg_road);
    free(seg_pt);
    free(cand);
    psdl_grid_free(g);
    psdl_grid_free(small);
    if (err) psdl_conflicts_free(out);
    return err;
}
