/*
 * psdl_region.c -- chords across a plan region with holes (psdl_region.h). The tests are
 * psdl_segment.h's (psdl.plan's segs_meet and inside step for step): the same booleans.
 */
#include "psdl_region.h"

#include <math.h>
#include <stdlib.h>

#include "psdl_split.h"

int psdl_region_inside(const double *pts, size_t n, double x, double z) { return psdl_ring_inside(pts, n, 2, x, z); }

int psdl_region_chord_clear(const double *xz, const uint64_t *ids, const size_t *start, size_t nrings, uint64_t ida,
                            uint64_t idc, double ax, double az, double cx, double cz) {
    for (size_t r = 0; r < nrings; r++) {
        size_t s = start[r], n = start[r + 1] - s;
        if (n == 0) continue;
        size_t pi = s + n - 1;
        for (size_t k = s; k < s + n; k++) {
            uint64_t ip = ids[pi], iq = ids[k];
            if (ip != ida && ip != idc && iq != ida && iq != idc &&
                psdl_segs_meet(ax, az, cx, cz, xz[2 * pi], xz[2 * pi + 1], xz[2 * k], xz[2 * k + 1],
                               PSDL_REGION_TOUCH))
                return 0;
            pi = k;
        }
    }
    double mx = (ax + cx) / 2, mz = (az + cz) / 2;
    if (nrings == 0 || !psdl_region_inside(xz + 2 * start[0], start[1] - start[0], mx, mz)) return 0;
    for (size_t r = 1; r < nrings; r++)
        if (psdl_region_inside(xz + 2 * start[r], start[r + 1] - start[r], mx, mz)) return 0;
    return 1;
}

/* The smallest angle (radians) between the chord from point k of the n-point ring pts towards
 * (x, z) and the ring's two edges at k (blocks/split.lua's edge_angle). */
static double edge_angle(const double *pts, size_t n, size_t k, double x, double z) {
    const double *p = pts + 2 * k;
    double cx = x - p[0], cz = z - p[1];
    double cl = sqrt(cx * cx + cz * cz);
    if (cl < 1e-9) return 0;
    double best = 3.14159265358979323846;
    const double *nb[2] = {pts + 2 * ((k + n - 1) % n), pts + 2 * ((k + 1) % n)};
    for (int s = 0; s < 2; s++) {
        double ex = nb[s][0] - p[0], ez = nb[s][1] - p[1];
        double el = sqrt(ex * ex + ez * ez);
        if (el > 1e-9) {
            double c = (cx * ex + cz * ez) / (cl * el);
            double a = acos(fmax(-1, fmin(1, c)));
            if (a < best) best = a;
        }
    }
    return best;
}

/* A candidate outer point and its distance from the hole's point. */
typedef struct target_cand {
    size_t k;
    double d;
} target_cand;

static int by_dist(const void *pa, const void *pb) {
    const target_cand *p = (const target_cand *)pa, *q = (const target_cand *)pb;
    if (p->d != q->d) return p->d < q->d ? -1 : 1;
    return p->k < q->k ? -1 : p->k > q->k;
}

size_t psdl_region_target(const double *xz, const uint64_t *ids, const size_t *start, size_t nrings, size_t ring,
                          size_t hk, size_t avoid, size_t other_hk) {
    if (ring == 0 || ring >= nrings) return PSDL_REGION_NONE;
    const double *outer = xz + 2 * start[0], *hp = xz + 2 * start[ring];
    size_t no = start[1] - start[0], nh = start[ring + 1] - start[ring];
    if (hk >= nh || no == 0) return PSDL_REGION_NONE;
    if (other_hk != PSDL_REGION_NONE && (other_hk >= nh || avoid >= no)) return PSDL_REGION_NONE;
    double hx = hp[2 * hk], hz = hp[2 * hk + 1];
    target_cand *c = (target_cand *)malloc(no * sizeof *c);
    if (!c) return PSDL_REGION_NOMEM;
    size_t m = 0;
    for (size_t k = 0; k < no; k++) {
        if (k == avoid) continue;
        double dx = outer[2 * k] - hx, dz = outer[2 * k + 1] - hz;
        c[m].k = k, c[m].d = sqrt(dx * dx + dz * dz);
        m++;
    }
    qsort(c, m, sizeof *c, by_dist);
    const double sliver = 10 * 3.14159265358979323846 / 180;
    uint64_t idh = ids[start[ring] + hk];
    size_t found = PSDL_REGION_NONE;
    for (int pass = 1; pass <= 2 && found == PSDL_REGION_NONE; pass++) {
        for (size_t q = 0; q < m; q++) {
            size_t k = c[q].k;
            double px = outer[2 * k], pz = outer[2 * k + 1];
            if (psdl_split_in_cone(outer, no, k, hx, hz) &&
                psdl_region_chord_clear(xz, ids, start, nrings, idh, ids[start[0] + k], hx, hz, px, pz) &&
                (pass == 2 || (edge_angle(hp, nh, hk, px, pz) >= sliver && edge_angle(outer, no, k, hx, hz) >= sliver))) {
                if (other_hk == PSDL_REGION_NONE ||
                    !psdl_segs_meet(hx, hz, px, pz, hp[2 * other_hk], hp[2 * other_hk + 1], outer[2 * avoid],
                                    outer[2 * avoid + 1], PSDL_REGION_TOUCH)) {
                    found = k;
                    break;
                }
            }
        }
    }
    free(c);
    return found;
}
