/* psdl_geom.c -- measures, centre lines, cross-sections and facade layout (psdl_geom.h).
 * Pure functions on flat arrays; no allocation. */
#include "psdl_geom.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define CURB_RISE 0.15 /* PSDL_CURB_RISE of psdl.h (§2.4 0x0) */

/* ================================================================ small vector helpers */

static double dist3(const double *a, const double *b) {
    double dx = b[0] - a[0], dy = b[1] - a[1], dz = b[2] - a[2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

static double dist2(const double *a, const double *b) {
    double dx = b[0] - a[0], dz = b[2] - a[2];
    return sqrt(dx * dx + dz * dz);
}

static void cross3(double *o, const double *u, const double *v) {
    o[0] = u[1] * v[2] - u[2] * v[1];
    o[1] = u[2] * v[0] - u[0] * v[2];
    o[2] = u[0] * v[1] - u[1] * v[0];
}

/* ================================================================ measures */

double psdl_signed_area(const double *pts, size_t n) {
    if (n < 3) return 0;
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        const double *a = pts + 3 * i, *b = pts + 3 * ((i + 1) % n);
        s += a[0] * b[2] - b[0] * a[2];
    }
    return s / 2;
}

int psdl_winding(const double *pts, size_t n, double eps) {
    double a = psdl_signed_area(pts, n);
    if (fabs(a) <= eps) return 0;
    return a < 0 ? -1 : 1;
}

/* Distance of d from the plane through a, b, c; -1 when a, b, c are (nearly) collinear. */
static double plane_distance(const double *a, const double *b, const double *c, const double *d) {
    double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    double v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    double nrm[3];
    cross3(nrm, u, v);
    double len = sqrt(nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]);
    double scale = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]) * sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (len <= 1e-12 * (scale > 1 ? scale : 1)) return -1;
    return fabs((d[0] - a[0]) * nrm[0] + (d[1] - a[1]) * nrm[1] + (d[2] - a[2]) * nrm[2]) / len;
}

double psdl_quad_deviation(const double *a, const double *b, const double *c, const double *d) {
    const double *q[4] = {a, b, c, d};
    double worst = 0;
    for (int i = 0; i < 4; i++) {
        double dd = plane_distance(q[(i + 1) & 3], q[(i + 2) & 3], q[(i + 3) & 3], q[i]);
        if (dd > worst) worst = dd;
    }
    return worst;
}

double psdl_strip_deviation(const double *pts, size_t nsections, size_t stride) {
    double worst = 0;
    for (size_t k = 0; k + 1 < nsections; k++)
        for (size_t j = 0; j + 1 < stride; j++) {
            const double *r0 = pts + 3 * (k * stride), *r1 = pts + 3 * ((k + 1) * stride);
            double d = psdl_quad_deviation(r0 + 3 * j, r0 + 3 * (j + 1), r1 + 3 * (j + 1), r1 + 3 * j);
            if (d > worst) worst = d;
        }
    return worst;
}

double psdl_fan_flatness(const double *pts, size_t n) {
    double worst = 0;
    for (size_t i = 1; i < n; i++) {
        double d = fabs(pts[3 * i + 1] - pts[1]);
        if (d > worst) worst = d;
    }
    return worst;
}

double psdl_fan_min_area(const double *pts, size_t n) {
    double best = INFINITY;
    for (size_t i = 1; i + 1 < n; i++) {
        const double *h = pts, *a = pts + 3 * i, *b = pts + 3 * (i + 1);
        double s = (a[0] - h[0]) * (b[2] - h[2]) - (b[0] - h[0]) * (a[2] - h[2]);
        double area = fabs(s) / 2;
        if (area < best) best = area;
    }
    return n < 3 ? 0 : best;
}

/* Coordinate k of the points: doubles d, or floats f when d is NULL. */
static double coord_at(const double *d, const float *f, size_t k) { return d ? d[k] : (double)f[k]; }

static size_t bounds_of(double out[10], const double *d, const float *f, size_t n, size_t first) {
    if (first >= n) return 0;
    double lo[3], hi[3];
    for (int j = 0; j < 3; j++) lo[j] = hi[j] = coord_at(d, f, 3 * first + j);
    for (size_t i = first + 1; i < n; i++)
        for (int j = 0; j < 3; j++) {
            double v = coord_at(d, f, 3 * i + j);
            if (v < lo[j]) lo[j] = v;
            if (v > hi[j]) hi[j] = v;
        }
    double c[3] = {(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2};
    double r2 = 0;
    for (size_t i = first; i < n; i++) {
        double dx = coord_at(d, f, 3 * i) - c[0], dy = coord_at(d, f, 3 * i + 1) - c[1],
               dz = coord_at(d, f, 3 * i + 2) - c[2];
        double dd = dx * dx + dy * dy + dz * dz;
        if (dd > r2) r2 = dd;
    }
    for (int j = 0; j < 3; j++) {
        out[j] = lo[j];
        out[3 + j] = hi[j];
        out[6 + j] = c[j];
    }
    out[9] = sqrt(r2);
    return n - first;
}

size_t psdl_bounds(double out[10], const double *pts, size_t n, size_t first) {
    return bounds_of(out, pts, NULL, n, first);
}

size_t psdl_bounds_f(double out[10], const float *pts, size_t n, size_t first) {
    return bounds_of(out, NULL, pts, n, first);
}

/* ================================================================ centre lines */

double psdl_polyline_length(const double *pts, size_t n, int plan) {
    double s = 0;
    for (size_t i = 0; i + 1 < n; i++) s += plan ? dist2(pts + 3 * i, pts + 3 * i + 3) : dist3(pts + 3 * i, pts + 3 * i + 3);
    return s;
}

/* Centripetal Catmull-Rom segment between p1 and p2 (Barry-Goldman pyramid); knots from
 * plan distances. */
typedef struct crseg {
    double p[4][3];
    double t[4];
    int bezier; /* 1: p[] are the control points of a cubic Bezier instead */
} crseg;

static void cr_init(crseg *s, const double *p0, const double *p1, const double *p2, const double *p3) {
    s->bezier = 0;
    memcpy(s->p[0], p0, sizeof s->p[0]);
    memcpy(s->p[1], p1, sizeof s->p[1]);
    memcpy(s->p[2], p2, sizeof s->p[2]);
    memcpy(s->p[3], p3, sizeof s->p[3]);
    s->t[0] = 0;
    for (int i = 1; i < 4; i++) {
        double d = sqrt(dist2(s->p[i - 1], s->p[i])); /* alpha = 0.5 */
        if (d < 1e-6) d = 1e-6;
        s->t[i] = s->t[i - 1] + d;
    }
}

/* Point at parameter u in [0, 1] of the segment p1 -> p2. */
static void cr_eval(const crseg *s, double u, double *out) {
    if (s->bezier) {
        double v = 1 - u;
        double w0 = v * v * v, w1 = 3 * v * v * u, w2 = 3 * v * u * u, w3 = u * u * u;
        for (int j = 0; j < 3; j++) out[j] = w0 * s->p[0][j] + w1 * s->p[1][j] + w2 * s->p[2][j] + w3 * s->p[3][j];
        return;
    }
    const double *t = s->t;
    double tt = t[1] + u * (t[2] - t[1]);
    for (int j = 0; j < 3; j++) {
        double a1 = ((t[1] - tt) * s->p[0][j] + (tt - t[0]) * s->p[1][j]) / (t[1] - t[0]);
        double a2 = ((t[2] - tt) * s->p[1][j] + (tt - t[1]) * s->p[2][j]) / (t[2] - t[1]);
        double a3 = ((t[3] - tt) * s->p[2][j] + (tt - t[2]) * s->p[3][j]) / (t[3] - t[2]);
        double b1 = ((t[2] - tt) * a1 + (tt - t[0]) * a2) / (t[2] - t[0]);
        double b2 = ((t[3] - tt) * a2 + (tt - t[1]) * a3) / (t[3] - t[1]);
        out[j] = ((t[2] - tt) * b1 + (tt - t[1]) * b2) / (t[2] - t[1]);
    }
    if (u <= 0) memcpy(out, s->p[1], 3 * sizeof *out);
    if (u >= 1) memcpy(out, s->p[2], 3 * sizeof *out);
}

#define CR_DENSE 64

typedef struct spline_in {
    const double *ctrl;
    size_t n;
    double spacing, max_angle, half_width, tol;
    const double *start_dir, *end_dir;
} spline_in;

static void spline_defaults(spline_in *in, const double *ctrl, size_t n, const psdl_spline_opts *o) {
    in->ctrl = ctrl;
    in->n = n;
    in->spacing = o && o->spacing > 0 ? o->spacing : 5.0;
    in->max_angle = (o && o->max_angle > 0 ? o->max_angle : 7.5) * M_PI / 180.0;
    in->half_width = o && o->half_width > 0 ? o->half_width : 0;
    in->tol = o && o->planar_tol > 0 ? o->planar_tol : 0.02;
    in->start_dir = o && o->has_start_dir ? o->start_dir : NULL;
    in->end_dir = o && o->has_end_dir ? o->end_dir : NULL;
}

/* Next control point after i that differs from point i in plan; n if none. */
static size_t next_distinct(const double *c, size_t n, size_t i) {
    size_t j = i + 1;
    while (j < n && dist2(c + 3 * i, c + 3 * j) < 1e-9) j++;
    return j;
}

/* Plan unit vector of (x, z); returns 0 for a zero vector. */
static int unit2(double *o, double x, double z) {
    double l = sqrt(x * x + z * z);
    if (l < 1e-12) return 0;
    o[0] = x / l;
    o[1] = z / l;
    return 1;
}

/* One sample of the spline: segment, parameter in it, position. */
typedef struct sample {
    size_t seg;
    double u;
    double p[3];
} sample;

typedef struct samples {
    sample *v;
    size_t n, cap;
} samples;

static int samples_push(samples *s, size_t seg, double u, const double *p) {
    if (s->n == s->cap) {
        size_t nc = s->cap ? 2 * s->cap : 64;
        sample *nv = (sample *)realloc(s->v, nc * sizeof *nv);
        if (!nv) return 0;
        s->v = nv;
        s->cap = nc;
    }
    s->v[s->n].seg = seg;
    s->v[s->n].u = u;
    memcpy(s->v[s->n].p, p, sizeof s->v[s->n].p);
    s->n++;
    return 1;
}

/* atan2(cross, dot): the signed angle between two directions from their cross and dot
 * products. A straight continuation (cross exactly +-0, dot > 0: most samples of a straight
 * road) is atan2's own answer, cross itself, without the call. */
static double turn_angle(double cross, double dot) { return cross == 0 && dot > 0 ? cross : atan2(cross, dot); }

/* Unit section direction of sample k: the bisector of the adjacent chords' left normals. */
static void sample_dir(const samples *s, size_t k, double *u) {
    double tb[2], ta[2];
    int hb = k > 0 && unit2(tb, s->v[k].p[0] - s->v[k - 1].p[0], s->v[k].p[2] - s->v[k - 1].p[2]);
    int ha = k + 1 < s->n && unit2(ta, s->v[k + 1].p[0] - s->v[k].p[0], s->v[k + 1].p[2] - s->v[k].p[2]);
    if (hb && ha) {
        double lb = dist2(s->v[k - 1].p, s->v[k].p), la = dist2(s->v[k].p, s->v[k + 1].p);
        double turn = turn_angle(tb[0] * ta[1] - tb[1] * ta[0], tb[0] * ta[0] + tb[1] * ta[1]);
        double ang = atan2(tb[1], tb[0]) + turn * (lb / (lb + la));
        u[0] = sin(ang), u[1] = -cos(ang);
        return;
    }
    if (ha) u[0] = ta[1], u[1] = -ta[0];
    else if (hb) u[0] = tb[1], u[1] = -tb[0];
    else u[0] = 1, u[1] = 0;
}

/* Deviation of the level-section quad of half width h between samples k and k+1, whose
 * section directions (sample_dir) are u0 and u1. */
static double piece_deviation(const samples *s, size_t k, double h, const double *u0, const double *u1) {
    const double *a = s->v[k].p, *b = s->v[k + 1].p;
    double L0[3] = {a[0] + h * u0[0], a[1], a[2] + h * u0[1]}, R0[3] = {a[0] - h * u0[0], a[1], a[2] - h * u0[1]};
    double L1[3] = {b[0] + h * u1[0], b[1], b[2] + h * u1[1]}, R1[3] = {b[0] - h * u1[0], b[1], b[2] - h * u1[1]};
    return psdl_quad_deviation(L0, R0, R1, L1);
}

/* Builds the samples of the spline into *out (malloc'd); returns the count, or
 * PSDL_GEOM_NOMEM. */
static size_t spline_build(const spline_in *in, samples *out) {
    const double *c = in->ctrl;
    size_t n = in->n;
    out->v = NULL;
    out->n = out->cap = 0;
    /* a NaN or infinite input would make every piece count undefined (and the samples
     * unbounded): refuse it */
    for (size_t i = 0; i < 3 * n; i++)
        if (!isfinite(c[i])) return PSDL_GEOM_INVALID;
    if (!isfinite(in->spacing) || !isfinite(in->max_angle) || !isfinite(in->half_width) || !isfinite(in->tol) ||
        (in->start_dir && !(isfinite(in->start_dir[0]) && isfinite(in->start_dir[1]))) ||
        (in->end_dir && !(isfinite(in->end_dir[0]) && isfinite(in->end_dir[1]))))
        return PSDL_GEOM_INVALID;
    if (n < 2) return 0;
    size_t m = 0; /* control points distinct from their predecessor in plan */
    for (size_t i = 0; i < n; i = next_distinct(c, n, i)) m++;
    if (m < 2) return 0;
    crseg *segs = (crseg *)malloc((m - 1) * sizeof *segs);
    double *dev = NULL;
    if (!segs) return PSDL_GEOM_NOMEM;
    if (!samples_push(out, 0, 0, c)) goto nomem;
    size_t prev = 0; /* the distinct control point before i1 (valid from segment 1 on) */
    size_t i1 = 0;
    for (size_t seg = 0; seg + 1 < m; seg++) {
        size_t i2 = next_distinct(c, n, i1);
        size_t i3 = i2 < n ? next_distinct(c, n, i2) : n;
        const double *p1 = c + 3 * i1, *p2 = c + 3 * i2;
        double p0[3], p3[3];
        if (seg == 0) {
            p0[0] = 2 * p1[0] - p2[0], p0[1] = 2 * p1[1] - p2[1], p0[2] = 2 * p1[2] - p2[2];
        } else {
            memcpy(p0, c + 3 * prev, sizeof p0);
        }
        if (i3 >= n) {
            p3[0] = 2 * p2[0] - p1[0], p3[1] = 2 * p2[1] - p1[1], p3[2] = 2 * p2[2] - p1[2];
        } else {
            memcpy(p3, c + 3 * i3, sizeof p3);
        }
        cr_init(&segs[seg], p0, p1, p2, p3);
        prev = i1;
        i1 = i2;
    }
    /* given end tangents: the end segment becomes a cubic Bezier whose handles (a third of
     * the chord long) follow the tangent at each end: the given one, the neighbouring
     * segment's, or (for a lone segment) the given one mirrored about the chord */
    if (in->start_dir || in->end_dir) {
        size_t ns = m - 1;
        double ts[2] = {0, 0}, te[2] = {0, 0};
        int has_s = in->start_dir && unit2(ts, in->start_dir[0], in->start_dir[1]);
        int has_e = in->end_dir && unit2(te, in->end_dir[0], in->end_dir[1]);
        double tmid_a[2] = {0, 0}, tmid_b[2] = {0, 0}; /* tangent at the far end of seg 0 / near end of the last */
        if (ns >= 2) {
            double q0[3], q1[3];
            cr_eval(&segs[1], 0, q0), cr_eval(&segs[1], 1e-4, q1);
            if (!unit2(tmid_a, q1[0] - q0[0], q1[2] - q0[2])) unit2(tmid_a, segs[0].p[2][0] - segs[0].p[1][0], segs[0].p[2][2] - segs[0].p[1][2]);
            cr_eval(&segs[ns - 2], 1 - 1e-4, q0), cr_eval(&segs[ns - 2], 1, q1);
            if (!unit2(tmid_b, q1[0] - q0[0], q1[2] - q0[2])) unit2(tmid_b, segs[ns - 1].p[2][0] - segs[ns - 1].p[1][0], segs[ns - 1].p[2][2] - segs[ns - 1].p[1][2]);
            if (ns == 2 && has_s && has_e) {
                /* both segments become Beziers: the middle tangent as Catmull-Rom's */
                const double *a0 = segs[0].p[1], *a2 = segs[1].p[2];
                unit2(tmid_a, a2[0] - a0[0], a2[2] - a0[2]);
                tmid_b[0] = tmid_a[0], tmid_b[1] = tmid_a[1];
            }
        }
        for (int end = 0; end < 2; end++) {
            int has = end == 0 ? has_s : has_e;
            if (!has) continue;
            crseg *sg = &segs[end == 0 ? 0 : ns - 1];
            double P1[3], P2[3]; /* the segment's ends (a lone segment may be a Bezier already) */
            memcpy(P1, sg->bezier ? sg->p[0] : sg->p[1], sizeof P1);
            memcpy(P2, sg->bezier ? sg->p[3] : sg->p[2], sizeof P2);
            double ch[2] = {1, 0};
            double L = dist2(P1, P2);
            unit2(ch, P2[0] - P1[0], P2[2] - P1[2]);
            double t1[2], t2[2];
            if (end == 0) {
                t1[0] = ts[0], t1[1] = ts[1];
                if (ns >= 2) t2[0] = tmid_a[0], t2[1] = tmid_a[1];
                else if (has_e) t2[0] = te[0], t2[1] = te[1];
                else {
                    double d = t1[0] * ch[0] + t1[1] * ch[1];
                    t2[0] = 2 * d * ch[0] - t1[0], t2[1] = 2 * d * ch[1] - t1[1];
                }
            } else {
                t2[0] = te[0], t2[1] = te[1];
                if (ns >= 2) t1[0] = tmid_b[0], t1[1] = tmid_b[1];
                else if (has_s) t1[0] = ts[0], t1[1] = ts[1];
                else {
                    double d = t2[0] * ch[0] + t2[1] * ch[1];
                    t1[0] = 2 * d * ch[0] - t2[0], t1[1] = 2 * d * ch[1] - t2[1];
                }
            }
            sg->bezier = 1;
            memcpy(sg->p[0], P1, sizeof P1);
            memcpy(sg->p[3], P2, sizeof P2);
            sg->p[1][0] = P1[0] + t1[0] * L / 3, sg->p[1][2] = P1[2] + t1[1] * L / 3;
            sg->p[2][0] = P2[0] - t2[0] * L / 3, sg->p[2][2] = P2[2] - t2[1] * L / 3;
            sg->p[1][1] = P1[1] + (P2[1] - P1[1]) / 3;
            sg->p[2][1] = P1[1] + 2 * (P2[1] - P1[1]) / 3;
        }
    }
    for (size_t seg = 0; seg + 1 < m; seg++) {
        crseg *s = &segs[seg];
        const double *p2 = s->bezier ? s->p[3] : s->p[2];
        /* dense table; each dense interval gets a cost (length / spacing + turn /
         * max_angle), and pieces of equal cost <= 1 keep every piece within both */
        double pt[CR_DENSE + 1][3], cost[CR_DENSE + 1], bend[CR_DENSE + 1];
        for (int k = 0; k <= CR_DENSE; k++) cr_eval(s, (double)k / CR_DENSE, pt[k]);
        bend[0] = bend[CR_DENSE] = 0;
        for (int k = 1; k < CR_DENSE; k++) {
            double u[2], v[2];
            bend[k] = 0;
            if (unit2(u, pt[k][0] - pt[k - 1][0], pt[k][2] - pt[k - 1][2]) &&
                unit2(v, pt[k + 1][0] - pt[k][0], pt[k + 1][2] - pt[k][2]))
                bend[k] = fabs(turn_angle(u[0] * v[1] - u[1] * v[0], u[0] * v[0] + u[1] * v[1]));
        }
        cost[0] = 0;
        for (int k = 0; k < CR_DENSE; k++) {
            double th = (bend[k] + bend[k + 1]) / 2;
            cost[k + 1] = cost[k] + dist3(pt[k], pt[k + 1]) / in->spacing + th / in->max_angle;
        }
        double pieces = ceil(cost[CR_DENSE] - 1e-9);
        if (!(pieces >= 1)) pieces = 1; /* also NaN */
        if (pieces > 100000) pieces = 100000;
        size_t np = (size_t)pieces;
        int k = 0;
        for (size_t j = 1; j < np; j++) {
            double target = cost[CR_DENSE] * (double)j / (double)np;
            while (k < CR_DENSE - 1 && cost[k + 1] < target) k++;
            double span = cost[k + 1] - cost[k];
            double f = span > 0 ? (target - cost[k]) / span : 0;
            double u = ((double)k + f) / CR_DENSE, q[3];
            cr_eval(s, u, q);
            if (!samples_push(out, seg, u, q)) goto nomem;
        }
        if (!samples_push(out, seg, 1.0, p2)) goto nomem;
    }
    /* on a climbing curve, halve every piece whose level-section quad twists more than the
     * tolerance (the twist is about 2 h * rise * turn / length, so halving works) */
    if (in->half_width > 0) {
        for (int round = 0; round < 20; round++) {
            size_t bad = 0;
            /* dev (a deviation per piece), then the section direction of each sample (each
             * taken once, not once for each piece it ends) */
            double *nd = (double *)realloc(dev, 3 * (out->n + 1) * sizeof *nd);
            if (!nd) goto nomem;
            dev = nd;
            double *dirs = dev + out->n + 1;
            for (size_t k = 0; k < out->n; k++) sample_dir(out, k, dirs + 2 * k);
            for (size_t k = 0; k + 1 < out->n; k++) {
                dev[k] = piece_deviation(out, k, in->half_width, dirs + 2 * k, dirs + 2 * k + 2);
                if (dev[k] > in->tol) bad++;
            }
            if (bad == 0 || out->n + bad > 200000) break;
            samples ns = {NULL, 0, 0};
            for (size_t k = 0; k < out->n; k++) {
                int ok = samples_push(&ns, out->v[k].seg, out->v[k].u, out->v[k].p);
                if (ok && k + 1 < out->n && dev[k] > in->tol) {
                    size_t sg = out->v[k + 1].seg;
                    double ua = out->v[k].seg == sg ? out->v[k].u : 0, ub = out->v[k + 1].u, q[3];
                    cr_eval(&segs[sg], (ua + ub) / 2, q);
                    ok = samples_push(&ns, sg, (ua + ub) / 2, q);
                }
                if (!ok) {
                    free(ns.v);
                    goto nomem;
                }
            }
            free(out->v);
            *out = ns;
        }
    }
    free(dev);
    free(segs);
    return out->n;
nomem:
    free(dev);
    free(segs);
    free(out->v);
    out->v = NULL;
    out->n = 0;
    return PSDL_GEOM_NOMEM;
}

size_t psdl_spline_bound(const double *ctrl, size_t n, const psdl_spline_opts *opts) {
    spline_in in;
    spline_defaults(&in, ctrl, n, opts);
    samples s;
    size_t r = spline_build(&in, &s);
    free(s.v);
    return r;
}

size_t psdl_spline(double *dst, const double *ctrl, size_t n, const psdl_spline_opts *opts) {
    assert(dst && (ctrl || n == 0));
    spline_in in;
    spline_defaults(&in, ctrl, n, opts);
    samples s;
    size_t r = spline_build(&in, &s);
    if (r != PSDL_GEOM_NOMEM && r != PSDL_GEOM_INVALID)
        for (size_t k = 0; k < r; k++) memcpy(dst + 3 * k, s.v[k].p, 3 * sizeof *dst);
    free(s.v);
    return r;
}

size_t psdl_spline_alloc(double **dst, const double *ctrl, size_t n, const psdl_spline_opts *opts) {
    assert(dst && (ctrl || n == 0));
    *dst = NULL;
    spline_in in;
    spline_defaults(&in, ctrl, n, opts);
    samples s;
    size_t r = spline_build(&in, &s);
    if (r != PSDL_GEOM_NOMEM && r != PSDL_GEOM_INVALID && r > 0) {
        double *d = (double *)malloc(3 * r * sizeof *d);
        if (!d) {
            free(s.v);
            return PSDL_GEOM_NOMEM;
        }
        for (size_t k = 0; k < r; k++) memcpy(d + 3 * k, s.v[k].p, 3 * sizeof *d);
        *dst = d;
    }
    free(s.v);
    return r;
}

/* Plan tangent of the polyline before point k (from the nearest distinct earlier point);
 * 0 when none. */
static int tangent_before(double *o, const double *pts, size_t k) {
    for (size_t j = k; j-- > 0;)
        if (unit2(o, pts[3 * k] - pts[3 * j], pts[3 * k + 2] - pts[3 * j + 2])) return 1;
    return 0;
}

static int tangent_after(double *o, const double *pts, size_t n, size_t k) {
    for (size_t j = k + 1; j < n; j++)
        if (unit2(o, pts[3 * j] - pts[3 * k], pts[3 * j + 2] - pts[3 * k + 2])) return 1;
    return 0;
}

/* Plan length of the chord before / after point k (to the nearest distinct point). */
static double chord_before(const double *pts, size_t k) {
    for (size_t j = k; j-- > 0;) {
        double d = dist2(pts + 3 * j, pts + 3 * k);
        if (d >= 1e-12) return d;
    }
    return 0;
}

static double chord_after(const double *pts, size_t n, size_t k) {
    for (size_t j = k + 1; j < n; j++) {
        double d = dist2(pts + 3 * j, pts + 3 * k);
        if (d >= 1e-12) return d;
    }
    return 0;
}

void psdl_section_dir(double out[2], const double *pts, size_t n, size_t k, double miter_limit,
                      const double *start_dir, const double *end_dir) {
    assert(out && pts && k < n);
    if (miter_limit <= 0) miter_limit = 4;
    double tb[2], ta[2];
    int hb = 0, ha = 0;
    if (k == 0 && start_dir) {
        ha = unit2(ta, start_dir[0], start_dir[1]);
    } else if (k == n - 1 && end_dir) {
        hb = unit2(tb, end_dir[0], end_dir[1]);
    } else {
        hb = k > 0 && tangent_before(tb, pts, k);
        ha = k + 1 < n && tangent_after(ta, pts, n, k);
    }
    if (!hb && !ha) {
        ha = tangent_after(ta, pts, n, k);
        if (!ha) hb = tangent_before(tb, pts, k);
        if (!ha && !hb) {
            out[0] = 1;
            out[1] = 0;
            return;
        }
    }
    if (hb && !ha) {
        out[0] = tb[1];
        out[1] = -tb[0];
        return;
    }
    if (ha && !hb) {
        out[0] = ta[1];
        out[1] = -ta[0];
        return;
    }
    /* the tangent turns from the incoming chord towards the outgoing one in proportion to
     * the chords' lengths (exact for points on a circle, whatever their spacing); the mitre
     * factor 1 / cos(turn / 2) keeps offsets parallel to the chords at polyline corners */
    double lb = chord_before(pts, k), la = chord_after(pts, n, k);
    double turn = atan2(tb[0] * ta[1] - tb[1] * ta[0], tb[0] * ta[0] + tb[1] * ta[1]);
    if (fabs(turn) > 3.1) {
        out[0] = ta[1];
        out[1] = -ta[0];
        return;
    }
    double w = lb + la > 0 ? lb / (lb + la) : 0.5;
    double ang = atan2(tb[1], tb[0]) + turn * w;
    double c = cos(turn / 2);
    double scale = c > 1e-12 ? 1.0 / c : miter_limit;
    if (scale > miter_limit) scale = miter_limit;
    out[0] = sin(ang) * scale;  /* left of (cos, sin): (sin, -cos) */
    out[1] = -cos(ang) * scale;
}

/* Parameters (s on line a, s2 on line b) where the plan lines pa + s * ua and pb + s2 * ub
 * meet; 0 when parallel. */
static int line_meet(const double *pa, const double *ua, const double *pb, const double *ub, double *s, double *s2) {
    double den = ua[0] * ub[1] - ua[1] * ub[0];
    double len = sqrt((ua[0] * ua[0] + ua[1] * ua[1]) * (ub[0] * ub[0] + ub[1] * ub[1]));
    if (fabs(den) <= 1e-9 * len) return 0;
    double dx = pb[0] - pa[0], dz = pb[2] - pa[2];
    *s = (dx * ub[1] - dz * ub[0]) / den;
    *s2 = (dx * ua[1] - dz * ua[0]) / den;
    return 1;
}

size_t psdl_offset(double *dst, const double *pts, size_t n, double offset, double miter_limit) {
    assert(dst && (pts || n == 0));
    if (n == 0) return 0;
    if (miter_limit <= 0) miter_limit = 4;
    /* two passes: directions first (dst as scratch would alias; compute on the fly twice) */
    size_t clamped = 0;
    for (size_t k = 0; k < n; k++) {
        double u[2];
        psdl_section_dir(u, pts, n, k, miter_limit, NULL, NULL);
        double o = offset;
        double lim = INFINITY;
        double sign = offset >= 0 ? 1 : -1;
        for (int side = -1; side <= 1; side += 2) {
            if ((side < 0 && k == 0) || (side > 0 && k + 1 >= n)) continue;
            size_t j = side < 0 ? k - 1 : k + 1;
            if (dist2(pts + 3 * k, pts + 3 * j) < 1e-9) continue;
            double v[2], s, s2;
            psdl_section_dir(v, pts, n, j, miter_limit, NULL, NULL);
            if (!line_meet(pts + 3 * k, u, pts + 3 * j, v, &s, &s2)) continue;
            if (s * sign > 0 && s2 * sign > 0 && fabs(s) < lim) lim = fabs(s);
        }
        if (fabs(o) > lim) {
            o = sign * lim;
            clamped++;
        }
        dst[3 * k] = pts[3 * k] + o * u[0];
        dst[3 * k + 1] = pts[3 * k + 1];
        dst[3 * k + 2] = pts[3 * k + 2] + o * u[1];
    }
    return clamped;
}

/* ================================================================ cross-sections */

size_t psdl_section_stride(int kind) {
    switch (kind) {
    case PSDL_SECTION_ROAD: return 4;
    case PSDL_SECTION_WALKWAY: return 2;
    case PSDL_SECTION_DIVIDED: return 6;
    case PSDL_SECTION_SIDEWALK: return 2;
    default: return 0;
    }
}

size_t psdl_sections_bound(size_t n, const psdl_profile *profile) {
    assert(profile);
    return n * psdl_section_stride(profile->kind);
}

/* Column offsets (left positive) and rises of a profile; returns the stride. */
static size_t profile_columns(const psdl_profile *p, double *off, double *rise) {
    double curb = p->curb < 0 ? CURB_RISE : p->curb;
    double sl = p->sidewalk_left > 0 ? p->sidewalk_left : 0, sr = p->sidewalk_right > 0 ? p->sidewalk_right : 0;
    switch (p->kind) {
    case PSDL_SECTION_ROAD:
        off[0] = p->left + sl, rise[0] = sl > 0 ? curb : 0;
        off[1] = p->left, rise[1] = 0;
        off[2] = -p->right, rise[2] = 0;
        off[3] = -(p->right + sr), rise[3] = sr > 0 ? curb : 0;
        return 4;
    case PSDL_SECTION_WALKWAY:
        off[0] = p->left, rise[0] = 0;
        off[1] = -p->right, rise[1] = 0;
        return 2;
    case PSDL_SECTION_DIVIDED: {
        double h = p->median > 0 ? p->median / 2 : 0;
        off[0] = h + p->left + sl, rise[0] = sl > 0 ? curb : 0;
        off[1] = h + p->left, rise[1] = 0;
        off[2] = h, rise[2] = 0;
        off[3] = -h, rise[3] = 0;
        off[4] = -(h + p->right), rise[4] = 0;
        off[5] = -(h + p->right + sr), rise[5] = sr > 0 ? curb : 0;
        return 6;
    }
    case PSDL_SECTION_SIDEWALK:
        off[0] = 0, rise[0] = 0;
        off[1] = -sr, rise[1] = sr > 0 ? curb : 0;
        return 2;
    default: return 0;
    }
}

size_t psdl_sections(double *dst, const double *center, size_t n, const psdl_profile *profile,
                     const double *start_dir, const double *end_dir, size_t *clamped) {
    assert(dst && profile && (center || n == 0));
    double off[6], rise[6];
    size_t stride = profile_columns(profile, off, rise);
    if (clamped) *clamped = 0;
    if (stride == 0 || n == 0) return 0;
    double miter = profile->miter_limit > 0 ? profile->miter_limit : 4;
    size_t nclamp = 0;
    /* end directions: perpendicular sections at the ends, overridable */
    for (size_t k = 0; k < n; k++) {
        double u[2];
        psdl_section_dir(u, center, n, k, miter, start_dir, end_dir);
        double lim_pos = INFINITY, lim_neg = INFINITY;
        for (int side = -1; side <= 1; side += 2) {
            if ((side < 0 && k == 0) || (side > 0 && k + 1 >= n)) continue;
            size_t j = side < 0 ? k - 1 : k + 1;
            if (dist2(center + 3 * k, center + 3 * j) < 1e-9) continue;
            double v[2], s, s2;
            psdl_section_dir(v, center, n, j, miter, start_dir, end_dir);
            if (!line_meet(center + 3 * k, u, center + 3 * j, v, &s, &s2)) continue;
            if (s > 0 && s2 > 0 && s < lim_pos) lim_pos = s;
            if (s < 0 && s2 < 0 && -s < lim_neg) lim_neg = -s;
        }
        int any = 0;
        for (size_t c = 0; c < stride; c++) {
            double o = off[c];
            if (o > lim_pos) o = lim_pos, any = 1;
            if (o < -lim_neg) o = -lim_neg, any = 1;
            double *q = dst + 3 * (k * stride + c);
            q[0] = center[3 * k] + o * u[0];
            q[1] = center[3 * k + 1] + rise[c];
            q[2] = center[3 * k + 2] + o * u[1];
        }
        nclamp += (size_t)any;
    }
    if (clamped) *clamped = nclamp;
    return n * stride;
}

/* ================================================================ facades */

unsigned psdl_light_index(double dx, double dz) {
    if (dx * dx + dz * dz < 1e-24) return 0;
    /* outward normal of SetWall(a, b): (-dz, 0, dx) (§4.2) */
    double a = atan2(dx, -dz); /* atan2(n.z, n.x) */
    long i = lround((a + M_PI / 2) * 32.0 / M_PI);
    i %= 64;
    if (i < 0) i += 64;
    return (unsigned)i;
}

size_t psdl_facades_bound(size_t n, int closed) {
    if (n < 2) return 0;
    return closed ? n : n - 1;
}

static uint32_t clamp_repeat(double v) {
    long r = lround(v);
    if (r < 1) r = 1;
    if (r > 32767) r = 32767;
    return (uint32_t)r;
}

size_t psdl_facades(uint32_t *dst, const double *pts, size_t n, const psdl_facade_opts *opts) {
    assert(dst && opts && (pts || n == 0));
    size_t nseg = psdl_facades_bound(n, opts->closed);
    if (nseg == 0) return 0;
    double fh = opts->floor_height > 0 ? opts->floor_height : 3.0;
    double bw = opts->bay_width > 0 ? opts->bay_width : 4.0;
    double col = (opts->collinear_deg > 0 ? opts->collinear_deg : 1.0) * M_PI / 180.0;
    uint32_t vrep = clamp_repeat((opts->top - opts->bottom) / fh);
    /* closed outlines start after a real corner so that a straight wall is one run */
    size_t first = 0;
    if (opts->closed) {
        for (size_t s = 0; s < nseg; s++) {
            /* turn between segment s-1 and s */
            size_t a = (s + nseg - 1) % nseg, b = s;
            const double *a0 = pts + 3 * a, *a1 = pts + 3 * ((a + 1) % n);
            const double *b0 = pts + 3 * b, *b1 = pts + 3 * ((b + 1) % n);
            double u[2], v[2];
            if (!unit2(u, a1[0] - a0[0], a1[2] - a0[2]) || !unit2(v, b1[0] - b0[0], b1[2] - b0[2])) continue;
            if (fabs(atan2(u[0] * v[1] - u[1] * v[0], u[0] * v[0] + u[1] * v[1])) > col) {
                first = s;
                break;
            }
        }
    }
    size_t out = 0;
    double prev[2];
    int have_prev = 0;
    for (size_t t = 0; t < nseg; t++) {
        size_t s = (first + t) % nseg;
        size_t i0 = s, i1 = (s + 1) % n;
        const double *a = pts + 3 * i0, *b = pts + 3 * i1;
        double dx = b[0] - a[0], dz = b[2] - a[2];
        double len = sqrt(dx * dx + dz * dz);
        if (len < 1e-6) continue;
        double u[2] = {dx / len, dz / len};
        int new_run = !have_prev || fabs(atan2(prev[0] * u[1] - prev[1] * u[0], prev[0] * u[0] + prev[1] * u[1])) > col;
        int sloped = a[1] < opts->bottom - 1e-6 || b[1] < opts->bottom - 1e-6;
        uint32_t *w = dst + 6 * out++;
        w[0] = (uint32_t)i0;
        w[1] = (uint32_t)i1;
        w[2] = clamp_repeat(len / bw);
        w[3] = vrep;
        w[4] = psdl_light_index(dx, dz);
        w[5] = (uint32_t)(new_run ? 1u : 0u) | (uint32_t)(sloped ? 2u : 0u);
        prev[0] = u[0];
        prev[1] = u[1];
        have_prev = 1;
    }
    return out;
}

/* ---------------------------------------------------------------- buildings */

size_t psdl_building_bound(size_t n, int closed, size_t *roof_words) {
    if (roof_words) *roof_words = closed ? psdl_fans_bound(n, 0) : 0;
    return 6 * 4 * psdl_facades_bound(n, closed);
}

/* Index of the height h in pool, through a small memo of the heights this building used
 * (each added to the pool at its first use, in use order). */
typedef struct hmemo {
    double v[8];
    uint32_t r[8];
    int n;
} hmemo;

static uint32_t memo_height(psdl_pool *pool, hmemo *m, double h) {
    for (int i = 0; i < m->n; i++)
        if (m->v[i] == h) return m->r[i];
    uint32_t r = psdl_pool_add(pool, &h);
    if (r != UINT32_MAX && m->n < 8) {
        m->v[m->n] = h;
        m->r[m->n++] = r;
    }
    return r;
}

uint32_t psdl_pool_add_snapped(psdl_pool *pool, const double *p, double snap) {
    if (!(snap > 0)) return psdl_pool_add(pool, p);
    double q[3];
    for (int k = 0; k < 3; k++) q[k] = floor(p[k] / snap + 0.5) * snap;
    return psdl_pool_add(pool, q);
}

#define add_point psdl_pool_add_snapped

size_t psdl_building(uint32_t *ops, uint32_t *roof, size_t *nroof, psdl_pool *vpool, psdl_pool *hpool,
                     const double *pts, size_t n, const psdl_building_opts *o) {
    assert(ops && nroof && vpool && hpool && o && (pts || n == 0) && (roof || !o->closed));
    *nroof = 0;
    psdl_facade_opts fo;
    memset(&fo, 0, sizeof fo);
    fo.floor_height = o->floor_height;
    fo.bay_width = o->bay_width;
    fo.bottom = o->base;
    fo.top = o->top;
    fo.closed = o->closed;
    size_t nb = psdl_facades_bound(n, o->closed);
    /* footprints are small: scratch on the stack up to BUILDING_SMALL points */
    enum { BUILDING_SMALL = 32 };
    uint32_t seg_s[6 * BUILDING_SMALL + 1], ref_s[BUILDING_SMALL + 1], fans_s[6 * BUILDING_SMALL + 1];
    unsigned char seen_s[BUILDING_SMALL + 1];
    double rp_s[3 * BUILDING_SMALL + 1], extra_s[3 * (BUILDING_SMALL + 1) + 1];
    int small = n <= BUILDING_SMALL;
    uint32_t *seg = small ? seg_s : (uint32_t *)malloc((6 * nb + 1) * sizeof *seg);
    uint32_t *ref = small ? ref_s : (uint32_t *)malloc((n + 1) * sizeof *ref);
    unsigned char *seen = small ? seen_s : (unsigned char *)malloc(n + 1);
    double *rp = NULL, *extra = NULL;
    uint32_t *fans = NULL;
    size_t result = PSDL_GEOM_NOMEM;
    if (!seg || !ref || !seen) goto done;
    memset(seen, 0, n + 1);
    size_t nseg = psdl_facades(seg, pts, n, &fo);
    /* points reach the pool in the order one attribute call after another would add them:
     * each run's bound ends, each segment's ends, then the roof's points */
#define USE(k)                                                              \
    do {                                                                    \
        size_t k_ = (k);                                                    \
        if (!seen[k_]) {                                                    \
            seen[k_] = 1;                                                   \
            if ((ref[k_] = add_point(vpool, pts + 3 * k_, o->snap)) == UINT32_MAX) goto done; \
        }                                                                   \
    } while (0)
    for (size_t i = 0; i < nseg;) {
        size_t j = i;
        while (j + 1 < nseg && !(seg[6 * (j + 1) + 5] & 1)) j++;
        USE(seg[6 * i]);
        USE(seg[6 * j + 1]);
        for (size_t q = i; q <= j; q++) {
            USE(seg[6 * q]);
            USE(seg[6 * q + 1]);
        }
        i = j + 1;
    }
    if (o->closed)
        for (size_t k = 0; k < n; k++) USE(k);
#undef USE
    /* attributes, 6 words each, heights pooled in the order the attributes use them */
    hmemo hm;
    hm.n = 0;
    double gtop = o->base + o->ground_height;
    size_t w = 0;
#define H(v) (memo_height(hpool, &hm, (v)))
#define PUT(kind, a, b, h1, h2, x)                                          \
    do {                                                                    \
        uint32_t h1_ = (h1), h2_ = (h2);                                    \
        if (h1_ == UINT32_MAX || h2_ == UINT32_MAX) goto done;              \
        uint32_t *d_ = ops + 6 * w++;                                       \
        d_[0] = (kind), d_[1] = (a), d_[2] = (b), d_[3] = h1_, d_[4] = h2_, d_[5] = (x); \
    } while (0)
    for (size_t i = 0; i < nseg;) {
        size_t j = i;
        while (j + 1 < nseg && !(seg[6 * (j + 1) + 5] & 1)) j++;
        PUT(PSDL_BUILDING_BOUND, ref[seg[6 * i]], ref[seg[6 * j + 1]], H(o->top), 0, seg[6 * i + 4]);
        for (size_t q = i; q <= j; q++) {
            const uint32_t *s = seg + 6 * q;
            uint32_t a = ref[s[0]], c = ref[s[1]];
            if (s[5] & 2) {
                uint32_t hb = H(o->base);
                PUT(PSDL_BUILDING_SLIVER, a, c, hb, H(o->sliver_density), 0);
            }
            if (o->ground_height > 0) {
                uint32_t hb = H(o->base);
                PUT(PSDL_BUILDING_GROUND, a, c, hb, H(gtop), s[2]);
            }
            if (o->top > gtop) {
                uint32_t hb = H(gtop);
                PUT(PSDL_BUILDING_UPPER, a, c, hb, H(o->top), s[2]);
            }
        }
        i = j + 1;
    }
    if (o->closed) { /* the roof: fans over the outline as pooled (float), at the top */
        uint32_t ht = H(o->top);
        if (ht == UINT32_MAX) goto done;
        rp = small ? rp_s : (double *)malloc((3 * n + 1) * sizeof *rp);
        fans = small ? fans_s : (uint32_t *)malloc((psdl_fans_bound(n, 0) + 1) * sizeof *fans);
        extra = small ? extra_s : (double *)malloc((3 * (n + 1) + 1) * sizeof *extra);
        if (!rp || !fans || !extra) goto done;
        const float *f = psdl_pool_data(vpool);
        for (size_t k = 0; k < n; k++)
            for (int d = 0; d < 3; d++) rp[3 * k + (size_t)d] = f[3 * (size_t)ref[k] + (size_t)d];
        size_t ne = 0, fw = psdl_fans(fans, extra, &ne, rp, n, NULL, 0, 0);
        if (fw == PSDL_GEOM_NOMEM || fw == PSDL_GEOM_INVALID) goto done;
        uint32_t *xref = ne ? (uint32_t *)malloc(ne * sizeof *xref) : NULL;
        if (ne && !xref) goto done;
        for (size_t k = 0; k < ne; k++)
            if ((xref[k] = add_point(vpool, extra + 3 * k, o->snap)) == UINT32_MAX) {
                free(xref);
                goto done;
            }
        /* [m, refs...] per fan, then the roof height last */
        size_t rw = 0;
        for (size_t i = 0; i < fw;) {
            size_t m = fans[i];
            roof[rw++] = (uint32_t)m;
            for (size_t q = 1; q <= m; q++) {
                uint32_t k = fans[i + q];
                roof[rw++] = k < n ? ref[k] : xref[k - n];
            }
            i += 1 + m;
        }
        free(xref);
        roof[rw++] = ht;
        *nroof = rw;
    }
#undef PUT
#undef H
    result = w;
done:
    if (!small) {
        free(seg);
        free(ref);
        free(seen);
        free(rp);
        free(fans);
        free(extra);
    }
    return result;
}
