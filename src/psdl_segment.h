/* psdl_segment.h -- the plan segment and ring tests the C kernels share, written as the Lua
 * they replaced writes them (psdl.city.network, psdl.plan).
 *
 * Points are plan (x, z) pairs in metres. Each function does the Lua's operations in the
 * Lua's order (math.min / math.max keep their first argument on ties), so that the C
 * network conflicts (psdl_conflicts.c), room overlaps (psdl_overlaps.c), block regions and
 * splits (psdl_region.c, psdl_split.c), building rows (psdl_geom_rows.c), fans
 * (psdl_geom_fan.c), the apron (psdl_apron.c), the drivable check (psdl_drivable.c) and the
 * raster strokes (psdl_raster.c) find the same points the former Lua found, bit for bit.
 * The plan tests are inline: the kernels call them per edge pair. */
#ifndef PSDL_SEGMENT_H
#define PSDL_SEGMENT_H

#include <math.h>
#include <stddef.h>

/* The unit vector of (x, z) in u[0], u[1]; 0 (u untouched) when it is shorter than 1e-9
 * metres (the Lua's nil), else 1. */
int psdl_seg_unit(double x, double z, double *u);

/* A proper crossing of segments p-q and u-v: 1 with the parameter on p-q in *t and on u-v in
 * *w (w may be NULL), both strictly inside 1e-9..1-1e-9; 0 for parallel segments (|cross| <
 * 1e-12) and for crossings at or beyond an end. */
int psdl_seg_cross(const double *p, const double *q, const double *u, const double *v, double *t, double *w);

/* The plan distance of (x, z) from segment p-q (metres), and in *t (may be NULL) the
 * parameter 0..1 of the nearest point (0 for a segment of zero length). */
double psdl_seg_closest(double x, double z, const double *p, const double *q, double *t);

/* Twice the signed area of the plan triangle a, b, c (m²): > 0 when c lies left of a->b
 * (counter-clockwise in x, z), psdl.plan.cross. */
static inline double psdl_seg_orient(double ax, double az, double bx, double bz, double cx, double cz) {
    return (bx - ax) * (cz - az) - (bz - az) * (cx - ax);
}

/* Squared plan distance (m²) from (px, pz) to the closed segment a-b: the nearest point at
 * t = ((p - a)·(b - a)) / |b - a|² clamped to 0..1 (0 for a zero-length segment; NaN stays
 * NaN), the same floating-point steps as psdl.plan.seg_dist before its square root. */
static inline double psdl_seg_dist2(double px, double pz, double ax, double az, double bx, double bz) {
    double dx = bx - ax, dz = bz - az;
    double l2 = dx * dx + dz * dz;
    double t = l2 > 0 ? ((px - ax) * dx + (pz - az) * dz) / l2 : 0;
    if (t < 0) t = 0;
    else if (t > 1) t = 1;
    double ex = ax + t * dx - px, ez = az + t * dz - pz;
    return ex * ex + ez * ez;
}

/* Plan distance (m) from (px, pz) to the closed segment a-b: psdl.plan.seg_dist. */
static inline double psdl_seg_dist(double px, double pz, double ax, double az, double bx, double bz) {
    return sqrt(psdl_seg_dist2(px, pz, ax, az, bx, bz));
}

/* Is (x, z) inside the ring of n points `pts`, each `dim` numbers (2: x, z; 3: x, y, z)?
 * Crossing number from the last point round, the same steps as psdl.plan.inside (points on
 * the boundary either way); 0 for n = 0. */
static inline int psdl_ring_inside(const double *pts, size_t n, size_t dim, double x, double z) {
    if (n == 0) return 0;
    size_t zo = dim - 1;
    int c = 0;
    const double *p = pts + dim * (n - 1);
    for (size_t i = 0; i < n; i++) {
        const double *q = pts + dim * i;
        if ((q[zo] > z) != (p[zo] > z)) {
            double xi = q[0] + (z - q[zo]) * (p[0] - q[0]) / (p[zo] - q[zo]);
            if (x < xi) c = !c;
        }
        p = q;
    }
    return c;
}

/* Do the closed segments ab and cd (plan, metres) meet: cross, or come within `touch` metres
 * of each other? The same test and the same floating-point steps as psdl.plan.segs_meet
 * (boxes apart by more than touch: no; proper crossing: yes; both ends of one segment on the
 * same side of the other's line and further than touch from it: no; else an end within touch
 * of the other segment). psdl_ring_simple's, the regions' and the building rows' test. */
static inline int psdl_segs_meet(double ax, double az, double bx, double bz, double cx, double cz, double dx,
                                 double dz, double touch) {
    if (fmax(ax, bx) < fmin(cx, dx) - touch || fmax(cx, dx) < fmin(ax, bx) - touch ||
        fmax(az, bz) < fmin(cz, dz) - touch || fmax(cz, dz) < fmin(az, bz) - touch)
        return 0;
    double d1 = psdl_seg_orient(cx, cz, dx, dz, ax, az), d2 = psdl_seg_orient(cx, cz, dx, dz, bx, bz);
    double d3 = psdl_seg_orient(ax, az, bx, bz, cx, cz), d4 = psdl_seg_orient(ax, az, bx, bz, dx, dz);
    if (((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0))) return 1;
    /* both ends of one segment on the same side of the other's line, farther than touch from
     * it: no end comes within touch of the other segment (d = cross / length) */
    double t2 = touch * touch;
    double l2 = ((dx - cx) * (dx - cx) + (dz - cz) * (dz - cz)) * t2;
    if (((d1 > 0 && d2 > 0) || (d1 < 0 && d2 < 0)) && d1 * d1 > l2 && d2 * d2 > l2) return 0;
    l2 = ((bx - ax) * (bx - ax) + (bz - az) * (bz - az)) * t2;
    if (((d3 > 0 && d4 > 0) || (d3 < 0 && d4 < 0)) && d3 * d3 > l2 && d4 * d4 > l2) return 0;
    return psdl_seg_dist(ax, az, cx, cz, dx, dz) < touch || psdl_seg_dist(bx, bz, cx, cz, dx, dz) < touch ||
           psdl_seg_dist(cx, cz, ax, az, bx, bz) < touch || psdl_seg_dist(dx, dz, ax, az, bx, bz) < touch;
}

#endif
