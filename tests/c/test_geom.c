/* test_geom.c -- plain-C tests of the geometry kernels (psdl_geom.h); no Lua.
 *
 *   psdl_ctest_geom [ignored args]
 *
 * Every CHECK counts once; the last line printed is "c: N passed, N failed" and the exit
 * status is non-zero when a check failed. Sections: measures, centre lines and offsets,
 * cross-sections, triangulation and fans (convex, collinear, L, U, holes), facades and the
 * light index, pools, surfaces and outlines, neighbour links, T-junctions, intersections
 * (two arms in line, non-finite input), keyhole rings, crossings (rings and open polylines)
 * and containment; limits and preconditions (pool dummy and out of memory, vertex and
 * hole-start ranges, extents, large polygons). */
#define _POSIX_C_SOURCE 200809L /* alarm() for the out-of-memory test */
#include "psdl_geom.h"
#include "psdl.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef PSDL_TEST_WRAP_CALLOC
#include <unistd.h>
#endif

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#include "check.h"

#define NEAR(a, b, tol) (fabs((double)(a) - (double)(b)) <= (tol))

/* ================================================================ helpers */

static void setp(double *p, double x, double y, double z) {
    p[0] = x, p[1] = y, p[2] = z;
}

/* Plan S of the triangle (a, b, c) of points. */
static double tri_s(const double *pts, uint32_t a, uint32_t b, uint32_t c) {
    const double *p = pts + 3 * a, *q = pts + 3 * b, *r = pts + 3 * c;
    return (p[0] * q[2] - q[0] * p[2]) + (q[0] * r[2] - r[0] * q[2]) + (r[0] * p[2] - p[0] * r[2]);
}

/* Gathers the points of a fan (indices into pts or, >= n, into extra) into out. */
static void gather(double *out, const uint32_t *idx, size_t m, const double *pts, size_t n, const double *extra) {
    for (size_t i = 0; i < m; i++) {
        const double *p = idx[i] < n ? pts + 3 * idx[i] : extra + 3 * (idx[i] - n);
        memcpy(out + 3 * i, p, 3 * sizeof *out);
    }
}

/* Checks the fan list of psdl_fans: every fan convex in retail winding with no degenerate
 * triangle, every index in range; returns the total area covered (m², unsigned). */
static double check_fans(const uint32_t *f, size_t words, const double *pts, size_t n, const double *extra,
                         size_t nextra, size_t *nfans) {
    double area = 0;
    size_t w = 0, count = 0;
    double buf[3 * 600];
    while (w < words) {
        size_t m = f[w];
        CHECKF(m >= 3 && m <= 600 && w + 1 + m <= words, "fan size %zu at word %zu", m, w);
        if (m < 3 || m > 600 || w + 1 + m > words) break;
        int in_range = 1;
        for (size_t i = 0; i < m; i++)
            if (f[w + 1 + i] >= n + nextra) in_range = 0;
        CHECKF(in_range, "fan %zu has an index out of range", count);
        if (!in_range) break;
        gather(buf, f + w + 1, m, pts, n, extra);
        CHECKF(psdl_fan_min_area(buf, m) > 1e-9, "fan %zu has a degenerate triangle (%g)", count,
               psdl_fan_min_area(buf, m));
        int retail = 1;
        for (size_t i = 1; i + 1 < m; i++) {
            double s = tri_s(buf, 0, (uint32_t)i, (uint32_t)(i + 1));
            if (s >= 0) retail = 0;
            area += fabs(s) / 2;
        }
        CHECKF(retail, "fan %zu has a triangle not in retail winding (S < 0)", count);
        w += 1 + m;
        count++;
    }
    if (nfans) *nfans = count;
    return area;
}

/* ================================================================ measures */

static void test_measures(void) {
    set_ctx("measures");
    double sq[12];
    setp(sq + 0, 0, 0, 0), setp(sq + 3, 0, 0, 1), setp(sq + 6, 1, 0, 1), setp(sq + 9, 1, 0, 0);
    CHECK(NEAR(psdl_signed_area(sq, 4), -1, 1e-12));
    CHECK(psdl_winding(sq, 4, 1e-9) == -1);
    double rev[12];
    for (int i = 0; i < 4; i++) memcpy(rev + 3 * i, sq + 3 * (3 - i), 3 * sizeof(double));
    CHECK(psdl_winding(rev, 4, 1e-9) == 1);
    CHECK(psdl_winding(sq, 2, 1e-9) == 0);
    double a[3] = {0, 0, 0}, b[3] = {1, 0, 0}, c[3] = {1, 0, 1}, d[3] = {0, 0, 1}, e[3] = {0, 0.5, 1};
    CHECK(psdl_quad_deviation(a, b, c, d) < 1e-12);
    CHECK(psdl_quad_deviation(a, b, c, e) > 0.2);
    double fan[12];
    setp(fan, 0, 1, 0), setp(fan + 3, 1, 1, 0), setp(fan + 6, 1, 1.3, 1), setp(fan + 9, 0, 1, 1);
    CHECK(NEAR(psdl_fan_flatness(fan, 4), 0.3, 1e-12));
    CHECK(NEAR(psdl_fan_min_area(fan, 4), 0.5, 1e-12));
    double bnd[10];
    double pts[9];
    setp(pts, 100, 100, 100), setp(pts + 3, -1, 2, -3), setp(pts + 6, 3, 4, 5);
    CHECK(psdl_bounds(bnd, pts, 3, 1) == 2);
    CHECK(bnd[0] == -1 && bnd[1] == 2 && bnd[2] == -3 && bnd[3] == 3 && bnd[4] == 4 && bnd[5] == 5);
    CHECK(bnd[6] == 1 && bnd[7] == 3 && bnd[8] == 1 && NEAR(bnd[9], sqrt(4 + 1 + 16), 1e-12));
    /* the float form (a vertex pool read in place): the same result bit for bit over the
     * same values, none for an empty range */
    float fp[3 * 40];
    double dp[3 * 40], bf[10], bd[10];
    uint32_t seed = 7;
    for (int i = 0; i < 3 * 40; i++) {
        seed = seed * 1103515245u + 12345u;
        fp[i] = (float)((double)(seed >> 8) / 16777216.0 * 2000.0 - 1000.0) * 1.37f;
        dp[i] = fp[i];
    }
    CHECK(psdl_bounds_f(bf, fp, 40, 1) == 39 && psdl_bounds(bd, dp, 40, 1) == 39);
    CHECK(memcmp(bf, bd, sizeof bf) == 0);
    CHECK(psdl_bounds_f(bf, fp, 40, 40) == 0 && psdl_bounds_f(bf, fp, 0, 0) == 0);
}

/* ================================================================ centre lines */

static void test_spline(void) {
    set_ctx("spline");
    psdl_spline_opts o;
    memset(&o, 0, sizeof o);
    o.spacing = 5;
    double ctrl[6] = {0, 1, 0, 0, 1, 23};
    size_t n = psdl_spline_bound(ctrl, 2, &o);
    CHECKF(n == 6, "straight 23 m at 5 m spacing: %zu points", n);
    double out[3 * 64];
    CHECK(psdl_spline(out, ctrl, 2, &o) == n);
    int straight = 1;
    for (size_t i = 0; i < n; i++)
        if (fabs(out[3 * i]) > 1e-9 || fabs(out[3 * i + 1] - 1) > 1e-9) straight = 0;
    CHECK(straight);
    CHECK(out[2] == 0 && out[3 * (n - 1) + 2] == 23);
    int even = 1;
    for (size_t i = 0; i + 1 < n; i++)
        if (fabs((out[3 * i + 5] - out[3 * i + 2]) - 23.0 / 5.0) > 1e-6) even = 0;
    CHECK(even);
    CHECK(NEAR(psdl_polyline_length(out, n, 0), 23, 1e-9));

    /* a quarter turn through 3 control points: fine sampling where it bends */
    double q[9] = {0, 0, 0, 30, 0, 10, 40, 0, 40};
    o.max_angle = 5;
    size_t m = psdl_spline_bound(q, 3, &o);
    double *pts = (double *)malloc(3 * m * sizeof *pts);
    CHECK(psdl_spline(pts, q, 3, &o) == m);
    CHECK(pts[0] == 0 && pts[3 * (m - 1)] == 40 && pts[3 * (m - 1) + 2] == 40);
    int has_mid = 0, turn_ok = 1, spacing_ok = 1;
    for (size_t i = 0; i < m; i++)
        if (pts[3 * i] == 30 && pts[3 * i + 2] == 10) has_mid = 1;
    for (size_t i = 0; i + 2 < m; i++) {
        double ux = pts[3 * i + 3] - pts[3 * i], uz = pts[3 * i + 5] - pts[3 * i + 2];
        double vx = pts[3 * i + 6] - pts[3 * i + 3], vz = pts[3 * i + 8] - pts[3 * i + 5];
        double ang = fabs(atan2(ux * vz - uz * vx, ux * vx + uz * vz)) * 180 / M_PI;
        if (ang > 5.5) turn_ok = 0;
    }
    for (size_t i = 0; i + 1 < m; i++) {
        double dx = pts[3 * i + 3] - pts[3 * i], dz = pts[3 * i + 5] - pts[3 * i + 2];
        if (sqrt(dx * dx + dz * dz) > 5.0 + 1e-6) spacing_ok = 0;
    }
    CHECK(has_mid);
    CHECKF(turn_ok, "a chord turns more than max_angle");
    CHECKF(spacing_ok, "a chord is longer than spacing");
    free(pts);

    /* climbing quarter circle (radius 40, 8 m rise): the planarity criterion keeps the
     * level-section quads within tolerance */
    double h[12];
    for (int i = 0; i < 4; i++) setp(h + 3 * i, 40 * cos(i * M_PI / 6), i * 8.0 / 3, 40 * sin(i * M_PI / 6));
    memset(&o, 0, sizeof o);
    o.spacing = 5;
    o.half_width = 10;
    o.planar_tol = 0.05;
    m = psdl_spline_bound(h, 4, &o);
    pts = (double *)malloc(3 * m * sizeof *pts);
    psdl_spline(pts, h, 4, &o);
    psdl_profile pr;
    memset(&pr, 0, sizeof pr);
    pr.kind = PSDL_SECTION_WALKWAY, pr.left = pr.right = 10, pr.curb = -1;
    double *sec = (double *)malloc(3 * 2 * m * sizeof *sec);
    psdl_sections(sec, pts, m, &pr, NULL, NULL, NULL);
    double dev = psdl_strip_deviation(sec, m, 2);
    CHECKF(dev <= 0.05 * 1.2, "climbing curve: quad deviation %g m > tolerance (%zu points)", dev, m);
    /* psdl_spline_alloc: the same points in a new array, built once; nothing for bad input */
    {
        double *al = NULL;
        CHECK(psdl_spline_alloc(&al, h, 4, &o) == m);
        CHECK(al != NULL && memcmp(al, pts, 3 * m * sizeof *al) == 0);
        free(al);
        double bad[6] = {0, 0, 0, NAN, 0, 1};
        CHECK(psdl_spline_alloc(&al, bad, 2, &o) == PSDL_GEOM_INVALID && al == NULL);
        CHECK(psdl_spline_alloc(&al, h, 1, &o) == 0 && al == NULL);
    }
    o.half_width = 0;
    size_t m2 = psdl_spline_bound(h, 4, &o);
    CHECKF(m2 < m, "planarity adds samples (%zu vs %zu)", m, m2);
    free(pts);
    free(sec);

    /* end tangents */
    memset(&o, 0, sizeof o);
    o.has_start_dir = o.has_end_dir = 1;
    o.start_dir[0] = 1, o.start_dir[1] = 0;
    o.end_dir[0] = 0, o.end_dir[1] = 1;
    double t2[6] = {0, 0, 0, 30, 0, 30};
    m = psdl_spline_bound(t2, 2, &o);
    pts = (double *)malloc(3 * m * sizeof *pts);
    psdl_spline(pts, t2, 2, &o);
    double sx = pts[3] - pts[0], sz = pts[5] - pts[2];
    double ex = pts[3 * (m - 1)] - pts[3 * (m - 2)], ez = pts[3 * (m - 1) + 2] - pts[3 * (m - 2) + 2];
    CHECKF(fabs(atan2(sz, sx)) < 0.1, "start tangent %g", atan2(sz, sx));
    CHECKF(fabs(atan2(ez, ex) - M_PI / 2) < 0.1, "end tangent %g", atan2(ez, ex));
    free(pts);
    /* both tangents on a lone segment: still reaches the end, evenly */
    double st[6] = {12, 0, 0, 68, 0, 0};
    memset(&o, 0, sizeof o);
    o.has_start_dir = o.has_end_dir = 1;
    o.start_dir[0] = o.end_dir[0] = 1;
    m = psdl_spline_bound(st, 2, &o);
    CHECKF(m == 13, "%zu points on 56 m", m);
    pts = (double *)malloc(3 * m * sizeof *pts);
    psdl_spline(pts, st, 2, &o);
    CHECK(pts[0] == 12 && pts[3 * (m - 1)] == 68);
    int evenly = 1;
    for (size_t i = 0; i + 1 < m; i++)
        if (fabs(pts[3 * i + 3] - pts[3 * i] - 56.0 / 12) > 1e-6 || pts[3 * i + 5] != 0) evenly = 0;
    CHECK(evenly);
    free(pts);
    /* a curve with tangents at both ends and a via point: every chord within spacing */
    double cv[9] = {0, 0, 0, 30, 0, 20, 60, 0, 0};
    o.start_dir[0] = 1, o.start_dir[1] = 1, o.end_dir[0] = 1, o.end_dir[1] = -1;
    o.spacing = 4;
    m = psdl_spline_bound(cv, 3, &o);
    pts = (double *)malloc(3 * m * sizeof *pts);
    psdl_spline(pts, cv, 3, &o);
    CHECK(pts[0] == 0 && pts[3 * (m - 1)] == 60 && pts[3 * (m - 1) + 2] == 0);
    int chords = 1;
    for (size_t i = 0; i + 1 < m; i++)
        if (sqrt(pow(pts[3 * i + 3] - pts[3 * i], 2) + pow(pts[3 * i + 5] - pts[3 * i + 2], 2)) > 4 + 1e-9) chords = 0;
    CHECK(chords);
    free(pts);
    /* degenerate inputs */
    double one[6] = {1, 2, 3, 1, 5, 3};
    CHECK(psdl_spline_bound(one, 2, NULL) == 0);
    CHECK(psdl_spline_bound(one, 1, NULL) == 0);
    /* NaN or infinity (a coordinate, an option, a tangent) is refused before any sampling
     * (it used to make the piece count undefined and the samples grow without bound) */
    set_ctx("spline: non-finite input");
    double bad[6] = {0, 0, 0, NAN, 0, 50};
    psdl_spline_opts bo;
    memset(&bo, 0, sizeof bo);
    bo.half_width = 8;
    CHECK(psdl_spline_bound(bad, 2, &bo) == PSDL_GEOM_INVALID);
    double sink[6] = {7, 7, 7, 7, 7, 7};
    CHECK(psdl_spline(sink, bad, 2, &bo) == PSDL_GEOM_INVALID && sink[0] == 7);
    bad[3] = INFINITY;
    CHECK(psdl_spline_bound(bad, 2, &bo) == PSDL_GEOM_INVALID);
    bad[3] = 0, bad[4] = -INFINITY;
    CHECK(psdl_spline_bound(bad, 2, &bo) == PSDL_GEOM_INVALID);
    bad[4] = 0;
    CHECK(psdl_spline_bound(bad, 2, &bo) == 11);
    bo.spacing = INFINITY;
    CHECK(psdl_spline_bound(bad, 2, &bo) == PSDL_GEOM_INVALID);
    bo.spacing = 0, bo.has_start_dir = 1, bo.start_dir[0] = NAN, bo.start_dir[1] = 1;
    CHECK(psdl_spline_bound(bad, 2, &bo) == PSDL_GEOM_INVALID);
}

static void test_offset(void) {
    set_ctx("offset");
    double line[9] = {0, 0, 0, 0, 0, 10, 10, 0, 10};
    double out[9];
    size_t cl = psdl_offset(out, line, 3, 2, 0);
    CHECK(cl == 0);
    /* travelling +Z the left is +X (§4.2) */
    CHECK(NEAR(out[0], 2, 1e-12) && NEAR(out[2], 0, 1e-12));
    /* the corner point is mitred: 2 m from both legs */
    CHECKF(NEAR(out[3], 2, 1e-9) && NEAR(out[5], 8, 1e-9), "(%g, %g)", out[3], out[5]);
    /* tight curve: radius 3, offset 5 to the inside never reverses */
    double arc[3 * 13];
    for (int i = 0; i <= 12; i++) {
        double a = M_PI * i / 12;
        setp(arc + 3 * i, 3 * cos(a), 0, 3 * sin(a));
    }
    double off[3 * 13];
    /* travelling counter-clockwise in x-z, the left (tz, -tx) points away from the centre */
    cl = psdl_offset(off, arc, 13, -5, 0);
    CHECKF(cl > 0, "clamped %zu", cl);
    int reversed = 0;
    for (int i = 0; i < 12; i++) {
        double cx = arc[3 * i + 3] - arc[3 * i], cz = arc[3 * i + 5] - arc[3 * i + 2];
        double ox = off[3 * i + 3] - off[3 * i], oz = off[3 * i + 5] - off[3 * i + 2];
        if (cx * ox + cz * oz < -1e-9) reversed = 1;
    }
    CHECK(!reversed);
    /* the outside is never clamped */
    cl = psdl_offset(off, arc, 13, 5, 0);
    CHECK(cl == 0);
}

/* ================================================================ cross-sections */

static void test_sections(void) {
    set_ctx("sections");
    psdl_profile p;
    memset(&p, 0, sizeof p);
    p.kind = PSDL_SECTION_ROAD, p.left = 6, p.right = 6, p.sidewalk_left = 3, p.sidewalk_right = 3, p.curb = -1;
    double ctr[12] = {0, 2, 0, 0, 2.5, 10, 0, 3, 20, 0, 3.5, 30};
    CHECK(psdl_section_stride(PSDL_SECTION_ROAD) == 4 && psdl_section_stride(PSDL_SECTION_DIVIDED) == 6);
    CHECK(psdl_section_stride(PSDL_SECTION_WALKWAY) == 2 && psdl_section_stride(PSDL_SECTION_SIDEWALK) == 2);
    CHECK(psdl_sections_bound(4, &p) == 16);
    double s[48];
    CHECK(psdl_sections(s, ctr, 4, &p, NULL, NULL, NULL) == 16);
    /* first point on the left (+X when travelling +Z), outer 0.15 above the curb */
    CHECK(NEAR(s[0], 9, 1e-12) && NEAR(s[3], 6, 1e-12) && NEAR(s[6], -6, 1e-12) && NEAR(s[9], -9, 1e-12));
    CHECK(NEAR(s[1] - s[4], 0.15, 1e-12) && NEAR(s[10] - s[7], 0.15, 1e-12) && NEAR(s[4], 2, 1e-12));
    CHECK(psdl_strip_deviation(s, 4, 4) < 1e-9);
    /* up normal per §4.2: ((last - first) x (c1 - c0)).y > 0 */
    double lx = s[9] - s[0], lz = s[11] - s[2], tx = ctr[3] - ctr[0], tz = ctr[5] - ctr[2];
    CHECK(lz * tx - lx * tz > 0);
    /* no sidewalk: outer == curb */
    p.sidewalk_left = 0;
    psdl_sections(s, ctr, 4, &p, NULL, NULL, NULL);
    CHECK(s[0] == s[3] && s[1] == s[4] && s[2] == s[5]);
    /* flat curve: planar; climbing curve: not exactly */
    double arc[3 * 10];
    for (int i = 0; i < 10; i++) setp(arc + 3 * i, 50 * cos(i * 0.08), 0, 50 * sin(i * 0.08));
    p.sidewalk_left = 3;
    double cs[3 * 40];
    psdl_sections(cs, arc, 10, &p, NULL, NULL, NULL);
    CHECKF(psdl_strip_deviation(cs, 10, 4) < 1e-9, "flat curve deviation %g", psdl_strip_deviation(cs, 10, 4));
    /* every section straight across and level */
    int straight = 1;
    for (int k = 0; k < 10; k++) {
        const double *r = cs + 12 * k;
        for (int j = 1; j < 3; j++) {
            double cr = (r[3 * j] - r[0]) * (r[11] - r[2]) - (r[3 * j + 2] - r[2]) * (r[9] - r[0]);
            if (fabs(cr) > 1e-6) straight = 0;
        }
        if (r[4] != r[7]) straight = 0;
    }
    CHECK(straight);
    /* divided: 6 columns, median in the middle at road level */
    p.kind = PSDL_SECTION_DIVIDED, p.median = 2, p.left = p.right = 7;
    double d[3 * 6 * 4];
    CHECK(psdl_sections(d, ctr, 4, &p, NULL, NULL, NULL) == 24);
    CHECK(NEAR(d[0], 11, 1e-12) && NEAR(d[3], 8, 1e-12) && NEAR(d[6], 1, 1e-12) && NEAR(d[9], -1, 1e-12) &&
          NEAR(d[12], -8, 1e-12) && NEAR(d[15], -11, 1e-12));
    CHECK(d[7] == d[4] && d[10] == d[4] && NEAR(d[1] - d[4], 0.15, 1e-12));
    CHECK(psdl_strip_deviation(d, 4, 6) < 1e-9);
    /* walkway and sidewalk strip */
    p.kind = PSDL_SECTION_WALKWAY, p.left = 2, p.right = 3;
    double w[12];
    CHECK(psdl_sections(w, ctr, 2, &p, NULL, NULL, NULL) == 4);
    CHECK(NEAR(w[0], 2, 1e-12) && NEAR(w[3], -3, 1e-12) && w[1] == w[4]);
    p.kind = PSDL_SECTION_SIDEWALK, p.sidewalk_right = 4;
    CHECK(psdl_sections(w, ctr, 2, &p, NULL, NULL, NULL) == 4);
    CHECK(NEAR(w[0], 0, 1e-12) && NEAR(w[3], -4, 1e-12) && NEAR(w[4] - w[1], 0.15, 1e-12));
    /* tight curve clamps and reports it */
    double tight[3 * 7];
    for (int i = 0; i < 7; i++) setp(tight + 3 * i, 4 * cos(i * 0.5), 0, 4 * sin(i * 0.5));
    p.kind = PSDL_SECTION_ROAD, p.left = p.right = 6, p.sidewalk_left = p.sidewalk_right = 2;
    size_t clamped = 0;
    double ts[3 * 28];
    psdl_sections(ts, tight, 7, &p, NULL, NULL, &clamped);
    CHECKF(clamped > 0, "clamped %zu", clamped);
    /* end directions override the end sections */
    double sd[2] = {1, 1};
    p.kind = PSDL_SECTION_WALKWAY, p.left = p.right = 1;
    psdl_sections(w, ctr, 2, &p, sd, NULL, NULL);
    CHECK(NEAR(w[0] - w[3], sqrt(2), 1e-9) && NEAR(w[2] - w[5], -sqrt(2), 1e-9));
}

/* ================================================================ triangulation and fans */

/* Area of a polygon with holes: |outer| - sum |hole|. */
static double poly_area(const double *pts, size_t n, const uint32_t *hs, size_t nh) {
    size_t end = nh ? hs[0] : n;
    double a = fabs(psdl_signed_area(pts, end));
    for (size_t h = 0; h < nh; h++) {
        size_t s = hs[h], e = h + 1 < nh ? hs[h + 1] : n;
        a -= fabs(psdl_signed_area(pts + 3 * s, e - s));
    }
    return a;
}

static void check_polygon(const char *name, const double *pts, size_t n, const uint32_t *hs, size_t nh,
                          size_t want_max_fans) {
    set_ctx("%s", name);
    double area = poly_area(pts, n, hs, nh);
    size_t tb = psdl_triangulate_bound(n, nh);
    uint32_t *tri = (uint32_t *)malloc(3 * tb * sizeof *tri);
    size_t nt = psdl_triangulate(tri, pts, n, hs, nh);
    CHECKF(nt == n + 2 * nh - 2, "%zu triangles for %zu points and %zu holes", nt, n, nh);
    double ta = 0;
    int ok = 1, range = 1;
    for (size_t t = 0; t < nt && t < tb; t++) {
        for (int j = 0; j < 3; j++)
            if (tri[3 * t + (size_t)j] >= n) range = 0;
        if (!range) break;
        double s = tri_s(pts, tri[3 * t], tri[3 * t + 1], tri[3 * t + 2]);
        if (!(s < -1e-9)) ok = 0;
        ta += fabs(s) / 2;
    }
    CHECK(range);
    CHECKF(ok, "a triangle is degenerate or not in retail winding");
    CHECKF(NEAR(ta, area, 1e-6 * (area + 1)), "triangles cover %g m², the polygon %g m²", ta, area);
    free(tri);
    for (int pass = 0; pass < 2; pass++) {
        unsigned flags = pass ? PSDL_FANS_NO_EXTRA : 0;
        size_t fb = psdl_fans_bound(n, nh);
        uint32_t *f = (uint32_t *)malloc(fb * sizeof *f);
        double *extra = (double *)malloc(3 * (n + 2 * nh) * sizeof *extra);
        size_t nextra = 0;
        size_t words = psdl_fans(f, extra, &nextra, pts, n, hs, nh, flags);
        CHECK(words != PSDL_GEOM_NOMEM && words <= fb);
        if (pass) CHECK(nextra == 0);
        size_t nf = 0;
        double fa = check_fans(f, words, pts, n, extra, nextra, &nf);
        CHECKF(NEAR(fa, area, 1e-6 * (area + 1)), "fans cover %g m², the polygon %g m² (flags %u)", fa, area, flags);
        if (!pass) CHECKF(nf <= want_max_fans, "%zu fans, expected at most %zu", nf, want_max_fans);
        /* every input point is used by some fan (no vertex dropped: no T-junction) */
        int *used = (int *)calloc(n, sizeof *used);
        for (size_t w = 0; w < words;) {
            size_t m = f[w];
            for (size_t i = 0; i < m; i++)
                if (f[w + 1 + i] < n) used[f[w + 1 + i]] = 1;
            w += 1 + m;
        }
        int all = 1;
        for (size_t i = 0; i < n; i++)
            if (!used[i]) all = 0;
        CHECKF(all, "a polygon point is in no fan");
        free(used);
        free(f);
        free(extra);
    }
}

static void test_fans(void) {
    /* convex square, either winding: one fan of 4 */
    double sq[12];
    setp(sq + 0, 0, 0, 0), setp(sq + 3, 10, 0, 0), setp(sq + 6, 10, 0, 10), setp(sq + 9, 0, 0, 10);
    check_polygon("square", sq, 4, NULL, 0, 1);
    uint32_t f[64];
    double extra[30];
    size_t ne;
    size_t w = psdl_fans(f, extra, &ne, sq, 4, NULL, 0, 0);
    CHECK(w == 5 && f[0] == 4 && ne == 0);
    /* rectangle with 3 points on each side: collinear runs defeat every boundary hub */
    double rc[3 * 16];
    int k = 0;
    for (int i = 0; i < 4; i++) setp(rc + 3 * k++, i * 10.0, 1, 0);
    for (int i = 0; i < 4; i++) setp(rc + 3 * k++, 40, 1, i * 5.0);
    for (int i = 0; i < 4; i++) setp(rc + 3 * k++, 40 - i * 10.0, 1, 20);
    for (int i = 0; i < 4; i++) setp(rc + 3 * k++, 0, 1, 20 - i * 5.0);
    check_polygon("collinear rectangle", rc, 16, NULL, 0, 1);
    w = psdl_fans(f, extra, &ne, rc, 16, NULL, 0, 0);
    CHECK(ne == 1 && f[0] == 18 && NEAR(extra[0], 20, 1e-9) && NEAR(extra[1], 1, 1e-12) && NEAR(extra[2], 10, 1e-9));
    /* L-shaped block */
    double L[18];
    setp(L + 0, 0, 0, 0), setp(L + 3, 30, 0, 0), setp(L + 6, 30, 0, 10), setp(L + 9, 10, 0, 10),
        setp(L + 12, 10, 0, 30), setp(L + 15, 0, 0, 30);
    check_polygon("L-shaped block", L, 6, NULL, 0, 2);
    /* U-shaped block, with extra points along its long sides */
    double U[3 * 12];
    k = 0;
    setp(U + 3 * k++, 0, 0, 0), setp(U + 3 * k++, 15, 0, 0), setp(U + 3 * k++, 30, 0, 0);
    setp(U + 3 * k++, 30, 0, 20), setp(U + 3 * k++, 20, 0, 20), setp(U + 3 * k++, 20, 0, 8);
    setp(U + 3 * k++, 10, 0, 8), setp(U + 3 * k++, 10, 0, 20), setp(U + 3 * k++, 0, 0, 20);
    setp(U + 3 * k++, 0, 0, 15), setp(U + 3 * k++, 0, 0, 10), setp(U + 3 * k++, 0, 0, 5);
    check_polygon("U-shaped block", U, 12, NULL, 0, 5);
    /* square with a square hole */
    double H[24];
    setp(H + 0, 0, 0, 0), setp(H + 3, 20, 0, 0), setp(H + 6, 20, 0, 20), setp(H + 9, 0, 0, 20);
    setp(H + 12, 5, 0, 5), setp(H + 15, 5, 0, 15), setp(H + 18, 15, 0, 15), setp(H + 21, 15, 0, 5);
    uint32_t hs[1] = {4};
    check_polygon("square with a hole", H, 8, hs, 1, 6);
    /* two holes */
    double H2[3 * 12];
    setp(H2 + 0, 0, 0, 0), setp(H2 + 3, 40, 0, 0), setp(H2 + 6, 40, 0, 20), setp(H2 + 9, 0, 0, 20);
    setp(H2 + 12, 5, 0, 5), setp(H2 + 15, 15, 0, 5), setp(H2 + 18, 15, 0, 15), setp(H2 + 21, 5, 0, 15);
    setp(H2 + 24, 25, 0, 5), setp(H2 + 27, 35, 0, 5), setp(H2 + 30, 35, 0, 15), setp(H2 + 33, 25, 0, 15);
    uint32_t hs2[2] = {4, 8};
    check_polygon("rectangle with two holes", H2, 12, hs2, 2, 10);
    /* a star (many reflex vertices) on a slope: the extra hub lies on the plane */
    double st[3 * 16];
    for (int i = 0; i < 16; i++) {
        double r = i % 2 ? 4 : 10, a = -2 * M_PI * i / 16;
        setp(st + 3 * i, r * cos(a), 0.1 * r * cos(a), r * sin(a));
    }
    check_polygon("star", st, 16, NULL, 0, 16);
    /* a circle (convex, many points): one fan */
    double ci[3 * 40];
    for (int i = 0; i < 40; i++) setp(ci + 3 * i, 10 * cos(2 * M_PI * i / 40), 0, 10 * sin(2 * M_PI * i / 40));
    check_polygon("circle", ci, 40, NULL, 0, 1);
}

/* ================================================================ facades */

static void test_facades(void) {
    set_ctx("light index");
    /* walls facing each axis: the base runs so that (-dz, 0, dx) is the facing */
    CHECK(psdl_light_index(-1, 0) == 0);  /* faces -Z */
    CHECK(psdl_light_index(0, -1) == 16); /* faces +X */
    CHECK(psdl_light_index(1, 0) == 32);  /* faces +Z */
    CHECK(psdl_light_index(0, 1) == 48);  /* faces -X */
    CHECK(psdl_light_index(0, 0) == 0);
    int range = 1;
    for (int i = 0; i < 360; i++) {
        unsigned v = psdl_light_index(cos(i * M_PI / 180), sin(i * M_PI / 180));
        if (v > 63) range = 0;
    }
    CHECK(range);
    set_ctx("facades");
    /* a 20 x 12 building, retail winding (S < 0), ground sloping along x */
    double b[3 * 5];
    setp(b + 0, 0, 0, 0), setp(b + 3, 0, 0, 12), setp(b + 6, 10, 0.5, 12), setp(b + 9, 20, 1, 12), setp(b + 12, 20, 1, 0);
    CHECK(psdl_winding(b, 5, 1e-9) == -1);
    psdl_facade_opts o;
    memset(&o, 0, sizeof o);
    o.floor_height = 3, o.bay_width = 4, o.bottom = 1, o.top = 13, o.closed = 1;
    uint32_t d[6 * 5];
    CHECK(psdl_facades_bound(5, 1) == 5 && psdl_facades_bound(5, 0) == 4);
    size_t ns = psdl_facades(d, b, 5, &o);
    CHECK(ns == 5);
    size_t runs = 0;
    int outward = 1, sloped_ok = 1;
    for (size_t i = 0; i < ns; i++) {
        uint32_t *w = d + 6 * i;
        runs += w[5] & 1;
        const double *l = b + 3 * w[0], *r = b + 3 * w[1];
        double dx = r[0] - l[0], dz = r[2] - l[2];
        double mx = (l[0] + r[0]) / 2 - 10, mz = (l[2] + r[2]) / 2 - 6; /* from the centre */
        if (-dz * mx + dx * mz <= 0) outward = 0;
        CHECK(w[3] == 4);
        CHECK(w[4] == psdl_light_index(dx, dz));
        int low = l[1] < 1 || r[1] < 1;
        if (((w[5] & 2) != 0) != low) sloped_ok = 0;
        if (w[0] == 1 && w[1] == 2) CHECK(w[2] == 3 && w[4] == 32); /* 10 m along +X, faces +Z */
    }
    CHECK(outward);
    CHECK(sloped_ok);
    CHECKF(runs == 4, "%zu runs (the split wall is one run)", runs);
    /* open outline */
    o.closed = 0;
    CHECK(psdl_facades(d, b, 5, &o) == 4);
}

/* ================================================================ pools */

static void test_pools(void) {
    set_ctx("pools");
    psdl_pool *p = psdl_pool_new(3, 1);
    CHECK(p != NULL);
    if (!p) return;
    CHECK(psdl_pool_count(p) == 1);
    double a[3] = {1, 2, 3}, b[3] = {1, 2, 3.0000001}, z[3] = {0, 0, 0}, nz[3] = {-0.0, 0, -0.0};
    uint32_t ia = psdl_pool_add(p, a);
    CHECK(ia == 1);
    CHECK(psdl_pool_add(p, a) == 1);
    CHECK(psdl_pool_add(p, b) == ((float)b[2] == (float)a[2] ? 1u : 2u));
    uint32_t iz = psdl_pool_add(p, z);
    CHECK(iz != 0); /* the dummy never matches */
    CHECK(psdl_pool_add(p, nz) == iz);
    CHECK(psdl_pool_find(p, z) == iz);
    double q[3] = {5, 5, 5};
    CHECK(psdl_pool_find(p, q) == UINT32_MAX);
    /* many points: indices stay stable through rehashes */
    int stable = 1;
    for (int i = 0; i < 20000; i++) {
        double v[3] = {i * 0.5, i % 7, -i * 0.25};
        uint32_t k = psdl_pool_add(p, v);
        if (psdl_pool_add(p, v) != k) stable = 0;
    }
    for (int i = 0; i < 20000; i += 997) {
        double v[3] = {i * 0.5, i % 7, -i * 0.25};
        uint32_t k = psdl_pool_find(p, v);
        const float *f = psdl_pool_data(p) + 3 * (size_t)k;
        if (k == UINT32_MAX || f[0] != (float)v[0] || f[2] != (float)v[2]) stable = 0;
    }
    CHECK(stable);
    double dm[3] = {7, 8, 9};
    psdl_pool_set_dummy(p, dm);
    CHECK(psdl_pool_data(p)[0] == 7 && psdl_pool_find(p, dm) == UINT32_MAX);
    psdl_pool_free(p);
    psdl_pool *h = psdl_pool_new(1, 0);
    double h1 = 12.5, h2 = 3;
    CHECK(psdl_pool_add(h, &h1) == 0 && psdl_pool_add(h, &h2) == 1 && psdl_pool_add(h, &h1) == 0);
    CHECK(psdl_pool_count(h) == 2);
    psdl_pool_free(h);
    psdl_pool_free(NULL);
}

/* ================================================================ rooms */

/* A 3 x 3 grid of points 10 m apart: index = z * 3 + x. */
static void grid_points(double *g) {
    for (int z = 0; z < 3; z++)
        for (int x = 0; x < 3; x++) setp(g + 3 * (z * 3 + x), x * 10.0, 0, z * 10.0);
}

static void test_outline(void) {
    set_ctx("surface and outline");
    double g[27];
    grid_points(g);
    /* four square fans forming a 2 x 2 block, each fan in retail winding */
    uint32_t fans[4][5] = {{0, 3, 4, 1, 0}, {1, 4, 5, 2, 1}, {3, 6, 7, 4, 3}, {4, 7, 8, 5, 4}};
    uint32_t tris[64];
    size_t nt = 0;
    for (int i = 0; i < 4; i++) nt += psdl_surface_triangles(tris + nt, 6, fans[i], 4) / 3 * 3;
    CHECK(nt == 24);
    uint32_t out[32];
    size_t n = psdl_boundary(out, tris, nt / 3, g, 9);
    CHECKF(n == 8, "outline of %zu points", n);
    double poly[3 * 8];
    for (size_t i = 0; i < n && i < 8; i++) memcpy(poly + 3 * i, g + 3 * out[i], 3 * sizeof(double));
    CHECK(NEAR(psdl_signed_area(poly, n), -400, 1e-9));
    int has_centre = 0;
    for (size_t i = 0; i < n; i++)
        if (out[i] == 4) has_centre = 1;
    CHECK(!has_centre);
    /* a road strip of 3 sections: outline runs round the outer points */
    uint32_t strip[12] = {0, 1, 1, 2, 3, 4, 4, 5, 6, 7, 7, 8};
    nt = psdl_surface_triangles(tris, 0, strip, 12);
    CHECKF(nt == 24, "%zu indices (quads with a repeated index are triangles)", nt);
    n = psdl_boundary(out, tris, nt / 3, g, 9);
    CHECK(n == 8);
    CHECK(psdl_surface_triangles(tris, 7, strip, 4) == 0);
    uint32_t cw[4] = {0, 3, 1, 4};
    CHECK(psdl_surface_triangles(tris, 4, cw, 4) == 6);
    CHECK(psdl_surface_bound(12) == 72);
}

static void test_link(void) {
    set_ctx("neighbour links");
    double g[27];
    grid_points(g);
    /* rooms: the four squares of the grid, perimeters in retail winding */
    uint32_t verts[16] = {0, 3, 4, 1, 1, 4, 5, 2, 3, 6, 7, 4, 4, 7, 8, 5};
    uint32_t start[5] = {0, 4, 8, 12, 16};
    size_t bound = psdl_link_bound(start, verts, 4, 9);
    CHECK(bound != PSDL_GEOM_NOMEM && bound >= 16);
    uint32_t *dv = (uint32_t *)malloc(bound * sizeof *dv), *dn = (uint32_t *)malloc(bound * sizeof *dn);
    uint32_t ds[5];
    size_t n = psdl_link(dv, dn, ds, start, verts, 4, 9);
    /* rooms 1 and 4, and rooms 2 and 3, touch only at vertex 4: one repeat in each room */
    CHECKF(n == 20, "%zu points", n);
    int sym = 1;
    for (uint32_t r = 0; r < 4; r++)
        for (uint32_t k = ds[r]; k < ds[r + 1]; k++) {
            uint32_t x = dn[k];
            if (!x) continue;
            int back = 0;
            for (uint32_t j = ds[x - 1]; j < ds[x]; j++)
                if (dn[j] == r + 1) back = 1;
            if (!back) sym = 0;
        }
    CHECK(sym);
    /* room 1: edge 3->4 borders room 3, edge 4->1 room 2, vertex 4 repeated for room 4 */
    CHECK(ds[1] - ds[0] == 5);
    CHECK(dv[0] == 0 && dn[0] == 0 && dv[1] == 3 && dn[1] == 3 && dv[2] == 4 && dn[2] == 4 && dv[3] == 4 &&
          dn[3] == 2 && dv[4] == 1 && dn[4] == 0);
    free(dv);
    free(dn);
    /* consecutive duplicates and a closing duplicate are dropped */
    uint32_t v2[10] = {0, 3, 3, 4, 1, 0, 1, 4, 5, 2};
    uint32_t s2[3] = {0, 6, 10};
    uint32_t ov[32], on[32], os[3];
    n = psdl_link(ov, on, os, s2, v2, 2, 9);
    CHECK(n == 8 && os[1] == 4);
    CHECK(on[2] == 2 && on[4 + 0] == 1);
}

static void test_tjunctions(void) {
    set_ctx("T-junctions");
    double g[27];
    grid_points(g);
    /* room A: the left column as one tall rectangle 0,6,7,1 (x 0..10, z 0..20);
     * rooms B and C: the two squares of the right column, which put vertex 4 on A's edge 7->1 */
    uint32_t verts[12] = {0, 6, 7, 1, 1, 4, 5, 2, 4, 7, 8, 5};
    uint32_t start[4] = {0, 4, 8, 12};
    uint32_t d[3 * 8];
    size_t n = psdl_tjunctions(d, 8, g, 9, start, verts, 3, 1e-3);
    CHECKF(n == 1, "%zu T-junctions", n);
    CHECK(d[0] == 0 && d[1] == 2 && d[2] == 4);
    /* after inserting vertex 4 into A's perimeter there are none */
    uint32_t fixed[13] = {0, 6, 7, 4, 1, 1, 4, 5, 2, 4, 7, 8, 5};
    uint32_t fs[4] = {0, 5, 9, 13};
    CHECK(psdl_tjunctions(d, 8, g, 9, fs, fixed, 3, 1e-3) == 0);
    /* cap smaller than the count: the total is still returned */
    CHECK(psdl_tjunctions(NULL, 0, g, 9, start, verts, 3, 1e-3) == 1);
    /* a vertex 1 cm off the edge is not one; with eps 2 cm it is */
    double g2[27];
    memcpy(g2, g, sizeof g2);
    g2[3 * 4] += 0.01;
    CHECK(psdl_tjunctions(d, 8, g2, 9, start, verts, 3, 1e-3) == 0);
    CHECK(psdl_tjunctions(d, 8, g2, 9, start, verts, 3, 2e-2) == 1);
}

/* ================================================================ intersections */

typedef struct jres {
    psdl_junction j;
    psdl_junction_sizes cap;
} jres;

static size_t run_junction(jres *r, const psdl_arm *arms, size_t n, const psdl_junction_opts *o) {
    psdl_junction_bound(&r->cap, arms, n, o);
    r->j.points = (double *)malloc(3 * r->cap.points * sizeof(double));
    r->j.surface = (uint32_t *)malloc(r->cap.surface * sizeof(uint32_t));
    r->j.sections = (uint32_t *)malloc(r->cap.sections * sizeof(uint32_t));
    r->j.distance = (double *)malloc(n * sizeof(double));
    r->j.strips = (uint32_t *)malloc(r->cap.strips * sizeof(uint32_t));
    r->j.crosswalks = (uint32_t *)malloc(4 * r->cap.crosswalks * sizeof(uint32_t));
    r->j.outline = (uint32_t *)malloc(r->cap.outline * sizeof(uint32_t));
    return psdl_junction_build(&r->j, arms, n, o);
}

static void free_junction(jres *r) {
    free(r->j.points);
    free(r->j.surface);
    free(r->j.sections);
    free(r->j.distance);
    free(r->j.strips);
    free(r->j.crosswalks);
    free(r->j.outline);
}

/* Same cyclic sequence? */
static int same_cycle(const uint32_t *a, size_t na, const uint32_t *b, size_t nb) {
    if (na != nb || na == 0) return 0;
    for (size_t s = 0; s < nb; s++) {
        size_t k = 0;
        while (k < na && a[k] == b[(s + k) % nb]) k++;
        if (k == na) return 1;
    }
    return 0;
}

/* Removes the fold points of a boundary cycle: a point where the cycle runs back along the
 * line it came on (in plan). A sidewalk ending along another arm's edge (a mitred end) meets
 * the road surface along a piece of that edge at another height: the union's boundary runs
 * out to the sidewalk's outer point, back to the curb corner and out again, while the
 * outline goes straight on. */
static void drop_folds(uint32_t *bd, size_t *nb, const double *pts) {
    int again = 1;
    while (again && *nb > 3) {
        again = 0;
        for (size_t i = 0; i < *nb; i++) {
            const double *p = pts + 3 * bd[(i + *nb - 1) % *nb], *q = pts + 3 * bd[i], *r = pts + 3 * bd[(i + 1) % *nb];
            double ax = p[0] - q[0], az = p[2] - q[2], bx = r[0] - q[0], bz = r[2] - q[2];
            double la = sqrt(ax * ax + az * az), lb = sqrt(bx * bx + bz * bz);
            if (la < 1e-9 || lb < 1e-9) continue;
            if (fabs(ax * bz - az * bx) < 1e-6 * la * lb && ax * bx + az * bz > 0) {
                memmove(bd + i, bd + i + 1, (*nb - i - 1) * sizeof *bd);
                (*nb)--;
                again = 1;
                break;
            }
        }
    }
}

static void check_junction(const char *name, const psdl_arm *arms, size_t n, const psdl_junction_opts *o,
                           size_t want_strips, size_t want_caps) {
    set_ctx("%s", name);
    jres r;
    size_t st = run_junction(&r, arms, n, o);
    CHECKF(st == 0, "status %zu", st);
    if (st != 0) {
        free_junction(&r);
        return;
    }
    psdl_junction *j = &r.j;
    size_t np = j->size.points;
    /* every index in range */
    int range = 1;
    for (size_t i = 0; i < j->size.surface; i++) range &= j->surface[i] < np;
    for (size_t i = 0; i < j->size.sections; i++) range &= j->sections[i] < np;
    for (size_t i = 0; i < 4 * j->size.crosswalks; i++) range &= j->crosswalks[i] < np;
    for (size_t i = 0; i < j->size.outline; i++) range &= j->outline[i] < np;
    CHECK(range);
    /* the road surface: flat at the node, retail winding, fans cover it */
    double *sp = (double *)malloc(3 * j->size.surface * sizeof(double));
    for (size_t i = 0; i < j->size.surface; i++) memcpy(sp + 3 * i, j->points + 3 * j->surface[i], 3 * sizeof(double));
    CHECK(psdl_winding(sp, j->size.surface, 1e-9) == -1);
    int flat = 1;
    for (size_t i = 0; i < j->size.surface; i++) flat &= sp[3 * i + 1] == o->center[1];
    CHECK(flat);
    size_t fb = psdl_fans_bound(j->size.surface, 0);
    uint32_t *fans = (uint32_t *)malloc(fb * sizeof *fans);
    double *extra = (double *)malloc(3 * j->size.surface * sizeof(double) + 24);
    size_t ne = 0, words = psdl_fans(fans, extra, &ne, sp, j->size.surface, NULL, 0, 0);
    double fa = check_fans(fans, words, sp, j->size.surface, extra, ne, NULL);
    CHECKF(NEAR(fa, fabs(psdl_signed_area(sp, j->size.surface)), 1e-6), "fans %g vs surface %g", fa,
           fabs(psdl_signed_area(sp, j->size.surface)));
    /* the outline equals the boundary of surface + crosswalks + sidewalk strips */
    size_t cap = 6 * (j->size.surface + 4 * j->size.crosswalks + j->size.strips) + 16;
    uint32_t *tris = (uint32_t *)malloc(cap * sizeof *tris);
    size_t nt = 0;
    for (size_t i = 1; i + 1 < j->size.surface; i++) {
        /* surface as a fan from point 0 may overlap for concave shapes; use the fans */
        (void)i;
    }
    for (size_t w = 0; w < words;) {
        size_t m = fans[w];
        int ok = 1;
        for (size_t i = 0; i < m; i++) ok &= fans[w + 1 + i] < j->size.surface;
        if (ok) {
            uint32_t tmp[600];
            for (size_t i = 0; i < m; i++) tmp[i] = j->surface[fans[w + 1 + i]];
            nt += psdl_surface_triangles(tris + nt, 5, tmp, m);
        }
        w += 1 + m;
    }
    CHECKF(ne == 0, "the surface needed %zu extra hub points (outline check uses boundary hubs)", ne);
    for (size_t c = 0; c < j->size.crosswalks; c++) nt += psdl_surface_triangles(tris + nt, 4, j->crosswalks + 4 * c, 4);
    size_t nstrips = 0, ncaps = 0;
    int curb_left = 1, strip_flat = 1;
    for (size_t w = 0; w < j->size.strips;) {
        uint32_t npairs = j->strips[w], caps = j->strips[w + 1];
        ncaps += (caps & 1) + ((caps >> 1) & 1);
        nt += psdl_surface_triangles(tris + nt, 1, j->strips + w + 2, 2 * npairs);
        /* curb on the left of travel: ((outer - curb) x (next curb - curb)).y > 0 is the
         * up-normal rule of §4.2 with the first point (curb) on the left */
        for (uint32_t k = 0; k + 1 < npairs; k++) {
            const double *cb = j->points + 3 * j->strips[w + 2 + 2 * k], *ou = j->points + 3 * j->strips[w + 3 + 2 * k];
            const double *nc = j->points + 3 * j->strips[w + 4 + 2 * k], *no = j->points + 3 * j->strips[w + 5 + 2 * k];
            double mx = (nc[0] + no[0] - cb[0] - ou[0]) / 2, mz = (nc[2] + no[2] - cb[2] - ou[2]) / 2;
            double lx = ou[0] - cb[0], lz = ou[2] - cb[2];
            if (lz * mx - lx * mz < -1e-9) curb_left = 0;
            if (cb[1] != o->center[1] || nc[1] != o->center[1]) strip_flat = 0;
        }
        w += 2 + 2 * npairs;
        nstrips++;
    }
    CHECK(curb_left);
    CHECK(strip_flat);
    CHECKF(nstrips == want_strips, "%zu sidewalk strips", nstrips);
    CHECKF(ncaps == want_caps, "%zu caps", ncaps);
    uint32_t *bd = (uint32_t *)malloc((nt + 3) * sizeof *bd);
    size_t nb = psdl_boundary(bd, tris, nt / 3, j->points, np);
    drop_folds(bd, &nb, j->points);
    CHECKF(same_cycle(bd, nb, j->outline, j->size.outline), "outline (%zu points) differs from the surface's (%zu)",
           j->size.outline, nb);
    double *op = (double *)malloc(3 * j->size.outline * sizeof(double));
    for (size_t i = 0; i < j->size.outline; i++) memcpy(op + 3 * i, j->points + 3 * j->outline[i], 3 * sizeof(double));
    CHECK(psdl_winding(op, j->size.outline, 1e-9) == -1);
    /* no gap, no overlap: the union's area equals the sum of the parts */
    double parts = 0;
    for (size_t t = 0; t < nt / 3; t++) parts += fabs(tri_s(j->points, tris[3 * t], tris[3 * t + 1], tris[3 * t + 2])) / 2;
    CHECKF(NEAR(parts, fabs(psdl_signed_area(op, j->size.outline)), 1e-6), "parts %g, outline %g", parts,
           fabs(psdl_signed_area(op, j->size.outline)));
    /* each arm's end section lies at its distance, straight across, left to right */
    size_t off = 0;
    for (size_t a = 0; a < n; a++) {
        size_t stv = psdl_section_stride(arms[a].profile.kind);
        double dl = sqrt(arms[a].dir[0] * arms[a].dir[0] + arms[a].dir[1] * arms[a].dir[1]);
        double dx = arms[a].dir[0] / dl, dz = arms[a].dir[1] / dl;
        int at_e = 1;
        for (size_t c = 0; c < stv; c++) {
            const double *p = j->points + 3 * j->sections[off + c];
            double t = (p[0] - o->center[0]) * dx + (p[2] - o->center[2]) * dz;
            if (!NEAR(t, j->distance[a], 1e-9)) at_e = 0;
        }
        CHECKF(at_e, "arm %zu's section is not at distance %g", a, j->distance[a]);
        const double *first = j->points + 3 * j->sections[off], *last = j->points + 3 * j->sections[off + stv - 1];
        /* left of outward travel (dz, -dx) */
        CHECK((first[0] - last[0]) * dz - (first[2] - last[2]) * dx > 0);
        CHECK(j->distance[a] >= arms[a].min_distance && j->distance[a] >= arms[a].crosswalk);
        off += stv;
    }
    free(op);
    free(bd);
    free(tris);
    free(sp);
    free(fans);
    free(extra);
    free_junction(&r);
}

static psdl_arm road_arm(double dx, double dz, double w, double sw, double cw) {
    psdl_arm a;
    memset(&a, 0, sizeof a);
    a.dir[0] = dx, a.dir[1] = dz;
    a.profile.kind = PSDL_SECTION_ROAD;
    a.profile.left = a.profile.right = w;
    a.profile.sidewalk_left = a.profile.sidewalk_right = sw;
    a.profile.curb = -1;
    a.crosswalk = cw;
    return a;
}

static void test_junctions(void) {
    psdl_junction_opts o;
    memset(&o, 0, sizeof o);
    o.center[0] = 100, o.center[1] = 5, o.center[2] = -40;
    o.radius = 4, o.arc_step = 15, o.curb = -1;
    psdl_arm four[4] = {road_arm(1, 0, 6, 3, 3), road_arm(0, 1, 6, 3, 3), road_arm(-1, 0, 6, 3, 3), road_arm(0, -1, 6, 3, 3)};
    check_junction("4-way", four, 4, &o, 4, 0);
    psdl_arm tee[3] = {road_arm(1, 0, 6, 3, 3), road_arm(-1, 0, 6, 3, 3), road_arm(0, 1, 5, 2.5, 3)};
    check_junction("T-junction", tee, 3, &o, 3, 0);
    psdl_arm y3[3] = {road_arm(1, 0, 5, 3, 2), road_arm(cos(2.3), sin(2.3), 5, 3, 2), road_arm(cos(-2.0), sin(-2.0), 7, 4, 0)};
    check_junction("Y-junction", y3, 3, &o, 3, 0);
    psdl_arm bend[2] = {road_arm(1, 0, 5, 3, 0), road_arm(cos(2.0), sin(2.0), 5, 3, 0)};
    check_junction("bend", bend, 2, &o, 2, 0);
    psdl_arm dead[1] = {road_arm(0, 1, 5, 3, 0)};
    check_junction("dead end", dead, 1, &o, 1, 0);
    /* two arms in line (a mid-block crosswalk): the corners go straight through the node,
     * and the arms end 1 m beyond their crosswalks so that road surface stays between */
    psdl_arm straight[2] = {road_arm(1, 0, 5, 3, 3), road_arm(-1, 0, 5, 3, 3)};
    check_junction("straight 2-arm", straight, 2, &o, 2, 0);
    {
        jres r;
        run_junction(&r, straight, 2, &o);
        CHECK(NEAR(r.j.distance[0], 4, 1e-12) && NEAR(r.j.distance[1], 4, 1e-12));
        free_junction(&r);
    }
    /* a change of width there: the curb steps at the node */
    psdl_arm widen[2] = {road_arm(1, 0, 5, 3, 3), road_arm(-1, 0, 7, 3, 3)};
    check_junction("width change", widen, 2, &o, 2, 0);
    /* the sidewalk stops there on one side (the curbs in line: it ends at the node with a
     * cap), or on one side of a widening road (it ends beside the crosswalk) */
    psdl_arm stop[2] = {road_arm(1, 0, 5, 3, 3), road_arm(-1, 0, 5, 0, 3)};
    check_junction("sidewalks stop", stop, 2, &o, 2, 2);
    psdl_arm widen1[2] = {road_arm(1, 0, 5, 3, 3), road_arm(-1, 0, 7, 3, 3)};
    widen1[1].profile.sidewalk_left = 0;
    check_junction("width change, one sidewalk", widen1, 2, &o, 2, 1);
    /* nearly in line (half a degree off), and walkways with no crosswalk */
    psdl_arm skew[2] = {road_arm(1, 0, 5, 3, 3), road_arm(cos(M_PI - 0.003), sin(M_PI - 0.003), 6, 3, 3)};
    check_junction("almost straight", skew, 2, &o, 2, 0);
    psdl_arm walk[2] = {road_arm(0, 1, 2, 0, 0), road_arm(0, -1, 2, 0, 0)};
    walk[0].profile.kind = walk[1].profile.kind = PSDL_SECTION_WALKWAY;
    check_junction("straight walkway", walk, 2, &o, 0, 0);
    /* a radius far too big for the corner: the largest fillet that fits, not 40 shrinks of it */
    {
        psdl_junction_opts big = o;
        big.radius = 1e6;
        check_junction("huge radius", four, 4, &big, 4, 0);
        jres r;
        run_junction(&r, four, 4, &big);
        CHECKF(r.j.distance[0] < 30, "end distance %g", r.j.distance[0]);
        free_junction(&r);
    }
    /* a walkway meets a street: the street's sidewalks stop at the walkway with caps */
    psdl_arm mixed[3] = {road_arm(1, 0, 6, 3, 3), road_arm(-1, 0, 6, 3, 3), road_arm(0, -1, 3, 0, 0)};
    mixed[2].profile.kind = PSDL_SECTION_WALKWAY;
    check_junction("walkway mouth", mixed, 3, &o, 3, 2);
    /* a divided avenue crossing a street: three crosswalks per avenue arm */
    psdl_arm div[4] = {road_arm(1, 0, 7, 4, 3), road_arm(0, 1, 5, 3, 3), road_arm(-1, 0, 7, 4, 3), road_arm(0, -1, 5, 3, 3)};
    div[0].profile.kind = div[2].profile.kind = PSDL_SECTION_DIVIDED;
    div[0].profile.median = div[2].profile.median = 2;
    check_junction("divided crossing", div, 4, &o, 4, 0);
    {
        jres r;
        run_junction(&r, div, 4, &o);
        CHECKF(r.j.size.crosswalks == 8, "%zu crosswalks", r.j.size.crosswalks);
        free_junction(&r);
    }
    /* a road with a sidewalk on one side only, sharp corners */
    o.radius = 0;
    psdl_arm half[3] = {road_arm(1, 0, 6, 3, 3), road_arm(-1, 0, 6, 3, 3), road_arm(0, 1, 6, 3, 3)};
    half[2].profile.sidewalk_left = 0;
    check_junction("one-sided arm", half, 3, &o, 3, 1);
    /* min_distance pushes the ends out */
    four[0].min_distance = 40;
    {
        jres r;
        run_junction(&r, four, 4, &o);
        CHECK(NEAR(r.j.distance[0], 40, 1e-12) && r.j.distance[1] < 40);
        free_junction(&r);
    }
    /* invalid input */
    set_ctx("junction errors");
    psdl_arm same[2] = {road_arm(1, 0, 6, 3, 3), road_arm(1, 0.001, 6, 3, 3)};
    jres r;
    CHECK(run_junction(&r, same, 2, &o) == PSDL_GEOM_INVALID);
    free_junction(&r);
    psdl_arm zero[1] = {road_arm(0, 0, 6, 3, 3)};
    CHECK(run_junction(&r, zero, 1, &o) == PSDL_GEOM_INVALID);
    free_junction(&r);
    /* NaN or infinity anywhere, or a negative width: refused (NaN points would defeat the
     * deduplication and overrun the bounds) */
    psdl_arm two[2] = {road_arm(1, 0, 5, 3, 3), road_arm(0, 1, 5, 3, 3)};
    psdl_junction_opts bo = o;
    bo.radius = INFINITY;
    CHECK(run_junction(&r, two, 2, &bo) == PSDL_GEOM_INVALID);
    free_junction(&r);
    bo = o, bo.center[0] = NAN;
    CHECK(run_junction(&r, two, 2, &bo) == PSDL_GEOM_INVALID);
    free_junction(&r);
    bo = o, bo.curb = NAN;
    CHECK(run_junction(&r, two, 2, &bo) == PSDL_GEOM_INVALID);
    free_junction(&r);
    two[1].profile.left = NAN;
    CHECK(run_junction(&r, two, 2, &o) == PSDL_GEOM_INVALID);
    free_junction(&r);
    two[1].profile.left = -5;
    CHECK(run_junction(&r, two, 2, &o) == PSDL_GEOM_INVALID);
    free_junction(&r);
    two[1].profile.left = 5, two[1].crosswalk = INFINITY;
    CHECK(run_junction(&r, two, 2, &o) == PSDL_GEOM_INVALID);
    free_junction(&r);
    two[1].crosswalk = 3, two[1].dir[1] = NAN;
    CHECK(run_junction(&r, two, 2, &o) == PSDL_GEOM_INVALID);
    free_junction(&r);
}

/* Crossing-number test of §1.5 (the game's PointInPerimeter) over a ring of points. */
static int in_ring(const double *ring, size_t n, double x, double z) {
    int in = 0;
    for (size_t i = 0; i < n; i++) {
        const double *a = ring + 3 * i, *b = ring + 3 * ((i + 1) % n);
        if ((a[2] > z) != (b[2] > z) && x < a[0] + (z - a[2]) * (b[0] - a[0]) / (b[2] - a[2])) in = !in;
    }
    return in;
}

static void test_keyhole(void) {
    set_ctx("keyhole");
    /* a 30 m square with a 10 m square hole */
    double pts[3 * 8];
    setp(pts + 0, 0, 0, 0), setp(pts + 3, 0, 0, 30), setp(pts + 6, 30, 0, 30), setp(pts + 9, 30, 0, 0);
    setp(pts + 12, 10, 0, 10), setp(pts + 15, 20, 0, 10), setp(pts + 18, 20, 0, 20), setp(pts + 21, 10, 0, 20);
    uint32_t hs[1] = {4}, k[16];
    CHECK(psdl_keyhole_bound(8, 1) == 10);
    size_t n = psdl_keyhole(k, pts, 8, hs, 1);
    CHECKF(n == 10, "%zu points", n);
    CHECK(k[0] == 0);
    double ring[3 * 10];
    for (size_t i = 0; i < n && i < 10; i++) memcpy(ring + 3 * i, pts + 3 * k[i], 3 * sizeof(double));
    CHECK(NEAR(psdl_signed_area(ring, n), -800, 1e-9));
    /* every point once, the bridge ends twice */
    int seen[8] = {0};
    for (size_t i = 0; i < n; i++) seen[k[i]]++;
    int twice = 0, once = 0;
    for (int i = 0; i < 8; i++) twice += seen[i] == 2, once += seen[i] == 1;
    CHECK(twice == 2 && once == 6);
    /* the hole turns the other way: its four points in the ring have S > 0 */
    double hole[12];
    size_t nh = 0;
    for (size_t i = 0; i < n; i++)
        if (k[i] >= 4 && (nh == 0 || memcmp(hole + 3 * (nh - 1), pts + 3 * k[i], 3 * sizeof(double)) != 0) && nh < 4)
            memcpy(hole + 3 * nh++, pts + 3 * k[i], 3 * sizeof(double));
    CHECK(nh == 4 && psdl_signed_area(hole, 4) > 0);
    /* the game's crossing-number test leaves the hole out, wherever the bridge runs */
    CHECK(in_ring(ring, n, 5, 25) && in_ring(ring, n, 25, 5) && in_ring(ring, n, 2, 3) && in_ring(ring, n, 3, 2));
    CHECK(!in_ring(ring, n, 15, 15) && !in_ring(ring, n, 11, 19) && !in_ring(ring, n, 40, 15));
    /* no hole: the outer ring in retail winding */
    n = psdl_keyhole(k, pts, 4, NULL, 0);
    for (size_t i = 0; i < n; i++) memcpy(ring + 3 * i, pts + 3 * k[i], 3 * sizeof(double));
    CHECK(n == 4 && psdl_signed_area(ring, 4) < 0);
    /* the outline of fans over a polygon with a hole keyholes the hole the same way */
    set_ctx("keyhole: boundary");
    uint32_t tri[3 * 16];
    size_t nt = psdl_triangulate(tri, pts, 8, hs, 1);
    uint32_t bd[3 * 16];
    size_t nb = psdl_boundary(bd, tri, nt, pts, 8);
    CHECKF(nb == 10, "%zu points", nb);
    for (size_t i = 0; i < nb && i < 10; i++) memcpy(ring + 3 * i, pts + 3 * bd[i], 3 * sizeof(double));
    CHECK(NEAR(psdl_signed_area(ring, nb), -800, 1e-9));
    CHECK(in_ring(ring, nb, 5, 25) && !in_ring(ring, nb, 15, 15));
}

static void test_crossings(void) {
    set_ctx("self crossing");
    double bow[12];
    setp(bow + 0, 0, 0, 0), setp(bow + 3, 10, 0, 10), setp(bow + 6, 10, 0, 0), setp(bow + 9, 0, 0, 10);
    uint32_t e[2] = {9, 9};
    CHECK(psdl_self_crossing(e, bow, 4, NULL, 0, 1e-6) == 1 && e[0] == 0 && e[1] == 2);
    double sq[3 * 8];
    setp(sq + 0, 0, 0, 0), setp(sq + 3, 0, 0, 30), setp(sq + 6, 30, 0, 30), setp(sq + 9, 30, 0, 0);
    CHECK(psdl_self_crossing(e, sq, 4, NULL, 0, 1e-6) == 0);
    /* a hole poking out of the outer ring */
    setp(sq + 12, 25, 0, 5), setp(sq + 15, 35, 0, 5), setp(sq + 18, 35, 0, 10), setp(sq + 21, 25, 0, 10);
    uint32_t hs[1] = {4};
    CHECK(psdl_self_crossing(e, sq, 8, hs, 1, 1e-6) == 1 && e[0] == 2 && e[1] == 4);
    /* inside: fine; a hole touching the outer ring at a point is no crossing */
    setp(sq + 12, 10, 0, 10), setp(sq + 15, 20, 0, 10), setp(sq + 18, 20, 0, 20), setp(sq + 21, 10, 0, 20);
    CHECK(psdl_self_crossing(e, sq, 8, hs, 1, 1e-6) == 0);
    setp(sq + 12, 0, 0, 10);
    CHECK(psdl_self_crossing(e, sq, 8, hs, 1, 1e-6) == 0);

    /* rings of up to 32 points take a pairwise path without sorting: the same answer (the
     * lowest crossing pair) as the sweep, which a ring with a far-off hole takes */
    set_ctx("self crossing, small rings");
    unsigned long seed = 12345;
    int same = 1, crossed = 0, clean = 0;
    for (int trial = 0; trial < 3000; trial++) {
        size_t n = 4 + (size_t)(trial % 31);
        double pts[3 * 37];
        for (size_t k = 0; k < n; k++) {
            seed = seed * 6364136223846793005ul + 1442695040888963407ul;
            double ang = 2 * M_PI * ((double)k + (double)((seed >> 33) % 1000) / 1000.0 * (trial % 3 ? 0.4 : 3)) / (double)n;
            double rad = 10 + (double)((seed >> 20) % 1000) / 100.0;
            if (trial % 7 == 0) rad = (k % 2) ? 10 : 10 + 1e-7; /* near-collinear rims */
            setp(pts + 3 * k, rad * cos(ang), 0, rad * sin(ang));
        }
        if (trial % 11 == 0) memcpy(pts + 3 * (n - 1), pts + 3 * (n / 2), 3 * sizeof(double)); /* a repeated point */
        setp(pts + 3 * n, 1000, 0, 1000), setp(pts + 3 * (n + 1), 1001, 0, 1000), setp(pts + 3 * (n + 2), 1000, 0, 1001);
        uint32_t small[2] = {0, 0}, sweep[2] = {0, 0}, hole[1] = {(uint32_t)n};
        size_t a = psdl_self_crossing(small, pts, n, NULL, 0, 1e-6);
        size_t b = psdl_self_crossing(sweep, pts, n + 3, hole, 1, 1e-6);
        if (a != b || (a == 1 && (small[0] != sweep[0] || small[1] != sweep[1]))) same = 0;
        if (a == 1) crossed++;
        else clean++;
    }
    CHECK(same);
    CHECK(crossed > 100 && clean > 100);

    set_ctx("first outside");
    double room[3 * 4], b[3 * 4];
    setp(room + 0, 0, 0, 0), setp(room + 3, 0, 0, 30), setp(room + 6, 30, 0, 30), setp(room + 9, 30, 0, 0);
    setp(b + 0, 5, 0, 5), setp(b + 3, 5, 0, 10), setp(b + 6, 10, 0, 10), setp(b + 9, 10, 0, 5);
    CHECK(psdl_first_outside(room, 4, b, 4, 1, 0.005) == 0);
    /* on the boundary, and a hair outside within eps */
    setp(b + 0, 0, 0, 5), setp(b + 3, -0.004, 0, 10);
    CHECK(psdl_first_outside(room, 4, b, 4, 1, 0.005) == 0);
    setp(b + 3, -0.5, 0, 10);
    CHECK(psdl_first_outside(room, 4, b, 4, 1, 0.005) == 2);
    /* all corners inside a concave room, an edge across its notch */
    double L[3 * 6];
    setp(L + 0, 0, 0, 0), setp(L + 3, 0, 0, 30), setp(L + 6, 10, 0, 30), setp(L + 9, 10, 0, 10), setp(L + 12, 30, 0, 10),
        setp(L + 15, 30, 0, 0);
    double cut[3 * 3];
    setp(cut + 0, 2, 0, 25), setp(cut + 3, 25, 0, 2), setp(cut + 6, 2, 0, 2);
    CHECK(psdl_first_outside(L, 6, cut, 3, 1, 0.005) == 1);
    CHECK(psdl_first_outside(L, 6, cut + 3, 2, 0, 0.005) == 0);
    /* a keyhole room: the hole is outside, the bridge bounds nothing */
    double pts[3 * 8];
    memcpy(pts, room, sizeof room);
    setp(pts + 12, 10, 0, 10), setp(pts + 15, 20, 0, 10), setp(pts + 18, 20, 0, 20), setp(pts + 21, 10, 0, 20);
    uint32_t k[16];
    size_t n = psdl_keyhole(k, pts, 8, hs, 1);
    double ring[3 * 10];
    for (size_t i = 0; i < n && i < 10; i++) memcpy(ring + 3 * i, pts + 3 * k[i], 3 * sizeof(double));
    setp(b + 0, 12, 0, 12), setp(b + 3, 12, 0, 18), setp(b + 6, 18, 0, 18), setp(b + 9, 18, 0, 12);
    CHECK(psdl_first_outside(ring, n, b, 4, 1, 0.005) == 1);
    /* a square across the bridge (from (0, 0) to the hole at (10, 10)) */
    setp(b + 0, 2, 0, 2), setp(b + 3, 2, 0, 6), setp(b + 6, 6, 0, 6), setp(b + 9, 6, 0, 2);
    CHECK(psdl_first_outside(ring, n, b, 4, 1, 0.005) == 0);
}

/* psdl_polyline_crossing: an open road centre line meeting itself (crossing or touching),
 * repeated points, a loop closing where it began, the earliest meeting along the line. */
static void test_polyline_crossing(void) {
    set_ctx("polyline crossing");
    uint32_t k[4] = {9, 9, 9, 9};
    double at[2] = {-1, -1};
    double z[3 * 8];
    /* a Z whose last segment comes back across the first: segments 0 and 2 cross at (5, 0) */
    setp(z + 0, 0, 0, 0), setp(z + 3, 10, 0, 0), setp(z + 6, 10, 0, 10), setp(z + 9, 0, 0, -10);
    CHECK(psdl_polyline_crossing(k, at, z, 4) == 1 && k[0] == 0 && k[1] == 1 && k[2] == 2 && k[3] == 3);
    CHECKF(at[0] == 5 && at[1] == 0, "at %g, %g", at[0], at[1]);
    /* fewer than 4 points, and a simple line */
    CHECK(psdl_polyline_crossing(k, at, z, 3) == 0);
    CHECK(psdl_polyline_crossing(k, at, NULL, 0) == 0);
    setp(z + 9, 20, 0, 10);
    CHECK(psdl_polyline_crossing(k, at, z, 4) == 0);
    /* an end lying exactly on a segment that is not its neighbour counts (touching) */
    setp(z + 9, 4, 0, 0);
    CHECK(psdl_polyline_crossing(k, at, z, 4) == 1 && k[0] == 0 && k[2] == 2 && at[0] == 4 && at[1] == 0);
    /* a repeated point is dropped (it makes no zero-length neighbour), indices stay the caller's */
    setp(z + 0, 0, 0, 0), setp(z + 3, 10, 5, 0), setp(z + 6, 10, 0, 0), setp(z + 9, 10, 0, 10),
        setp(z + 12, 5, 0, -5);
    CHECK(psdl_polyline_crossing(k, at, z, 5) == 1 && k[0] == 0 && k[1] == 1 && k[2] == 3 && k[3] == 4);
    /* two distinct points after dropping repeats: nothing to cross */
    setp(z + 9, 10, 0, 0), setp(z + 12, 10, 0, 0);
    CHECK(psdl_polyline_crossing(k, at, z, 5) == 0);
    /* a loop between two nodes at one place closes where it began; one that touches its start
     * elsewhere does not */
    setp(z + 0, 0, 0, 0), setp(z + 3, 10, 0, 0), setp(z + 6, 10, 0, 10), setp(z + 9, 0, 0, 0);
    CHECK(psdl_polyline_crossing(k, at, z, 4) == 0);
    setp(z + 9, 0, 0, 10), setp(z + 12, 0, 0, 0);
    CHECK(psdl_polyline_crossing(k, at, z, 5) == 0);
    setp(z + 12, 5, 0, 0);
    CHECK(psdl_polyline_crossing(k, at, z, 5) == 1 && k[0] == 0 && k[2] == 3 && at[0] == 5 && at[1] == 0);
    /* two meetings: the earliest along the line counts (lowest first segment, then second) */
    double w[3 * 8];
    setp(w + 0, 0, 0, 0), setp(w + 3, 20, 0, 0), setp(w + 6, 20, 0, 10), setp(w + 9, 15, 0, -10),
        setp(w + 12, 10, 0, 10), setp(w + 15, 5, 0, -10);
    CHECK(psdl_polyline_crossing(k, at, w, 6) == 1 && k[0] == 0 && k[2] == 2);
    CHECKF(NEAR(at[0], 17.5, 1e-12) && at[1] == 0, "at %g, %g", at[0], at[1]);
    /* collinear overlap: an end of the later segment on the first */
    setp(w + 0, 0, 0, 0), setp(w + 3, 10, 0, 0), setp(w + 6, 10, 0, 5), setp(w + 9, 8, 0, 0), setp(w + 12, 2, 0, 0);
    CHECK(psdl_polyline_crossing(k, at, w, 5) == 1 && k[0] == 0 && k[2] == 2 && at[0] == 8 && at[1] == 0);
    /* a long zigzag that never meets itself: the sweep pairs only overlapping boxes */
    enum { NZ = 5000 };
    double *zz = (double *)malloc(3 * NZ * sizeof *zz);
    if (CHECK(zz != NULL)) {
        for (int i = 0; i < NZ; i++) setp(zz + 3 * i, i, 0, (i % 2) ? 1.0 : 0.0);
        CHECK(psdl_polyline_crossing(k, at, zz, NZ) == 0);
        /* and the same line bent back over its start at the end */
        setp(zz + 3 * (NZ - 1), 0.5, 0, 0.5);
        CHECK(psdl_polyline_crossing(k, at, zz, NZ) == 1 && k[0] == 0 && k[2] == NZ - 2);
        free(zz);
    }
}

/* ================================================================ limits and preconditions */

/* set_dummy on a pool without the reserved entry: refused (it asserted, or overwrote a
 * hashed entry in release builds). */
static void test_pool_dummy(void) {
    set_ctx("pool dummy");
    psdl_pool *p = psdl_pool_new(3, 0);
    if (!p) return;
    double a[3] = {1, 2, 3}, d[3] = {4, 5, 6};
    CHECK(psdl_pool_add(p, a) == 0);
    CHECK(psdl_pool_set_dummy(p, d) == -1);
    CHECK(psdl_pool_data(p)[0] == 1 && psdl_pool_find(p, a) == 0 && psdl_pool_find(p, d) == UINT32_MAX);
    CHECK(psdl_pool_add(p, a) == 0 && psdl_pool_count(p) == 1);
    psdl_pool_free(p);
    p = psdl_pool_new(3, 1);
    if (!p) return;
    CHECK(psdl_pool_set_dummy(p, d) == 0 && psdl_pool_data(p)[2] == 6);
    psdl_pool_free(p);
}

/* truncate: the pool goes back to an earlier count; kept entries keep their indices and are
 * found, dropped ones are new again (taking the dropped indices), across a rehash; counts
 * out of range (above the count, below the reserved dummy) are refused with nothing changed. */
static void test_pool_truncate(void) {
    set_ctx("pool truncate");
    psdl_pool *p = psdl_pool_new(3, 1);
    if (!p) return;
    double v[3];
    for (int i = 0; i < 10; i++) {
        v[0] = i, v[1] = 0, v[2] = -i;
        CHECK(psdl_pool_add(p, v) == (uint32_t)i + 1);
    }
    size_t mark = psdl_pool_count(p);
    CHECK(mark == 11);
    for (int i = 10; i < 500; i++) { /* grows the hash several times */
        v[0] = i, v[1] = 0, v[2] = -i;
        CHECK(psdl_pool_add(p, v) == (uint32_t)i + 1);
    }
    CHECK(psdl_pool_truncate(p, 502) == -1 && psdl_pool_truncate(p, 0) == -1 && psdl_pool_count(p) == 501);
    CHECK(psdl_pool_truncate(NULL, 1) == -1);
    CHECK(psdl_pool_truncate(p, mark) == 0 && psdl_pool_count(p) == 11);
    for (int i = 0; i < 10; i++) {
        v[0] = i, v[1] = 0, v[2] = -i;
        CHECK(psdl_pool_find(p, v) == (uint32_t)i + 1);
    }
    v[0] = 10, v[1] = 0, v[2] = -10;
    CHECK(psdl_pool_find(p, v) == UINT32_MAX);
    v[0] = 77, v[1] = 1, v[2] = 1;
    CHECK(psdl_pool_add(p, v) == 11 && psdl_pool_count(p) == 12);
    v[0] = 3, v[1] = 0, v[2] = -3;
    CHECK(psdl_pool_add(p, v) == 4 && psdl_pool_count(p) == 12);
    CHECK(psdl_pool_truncate(p, 1) == 0 && psdl_pool_count(p) == 1 && psdl_pool_find(p, v) == UINT32_MAX);
    psdl_pool_free(p);
    p = psdl_pool_new(1, 0);
    if (!p) return;
    double h = 2.5;
    CHECK(psdl_pool_add(p, &h) == 0);
    CHECK(psdl_pool_truncate(p, 0) == 0 && psdl_pool_count(p) == 0 && psdl_pool_find(p, &h) == UINT32_MAX);
    CHECK(psdl_pool_add(p, &h) == 0);
    psdl_pool_free(p);
}

#ifdef PSDL_TEST_WRAP_CALLOC
/* The test binary is linked with --wrap=calloc (CMakeLists.txt): the pool's rehash can be
 * made to fail. */
void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);
static int g_fail_calloc;
void *__wrap_calloc(size_t n, size_t size) { return g_fail_calloc ? NULL : __real_calloc(n, size); }
#endif

/* Adds under sustained out-of-memory: the pool refuses new entries before its table fills
 * (the probe for a free slot looped forever once it was full), finds the old ones, and
 * grows again when memory comes back. */
static void test_pool_oom(void) {
#ifdef PSDL_TEST_WRAP_CALLOC
    set_ctx("pool out of memory");
    psdl_pool *p = psdl_pool_new(3, 1);
    if (!p) return;
    alarm(120); /* a regression hangs: end it */
    g_fail_calloc = 1;
    size_t added = 0;
    int refused = 0, stable = 1;
    for (int i = 0; i < 3000 && !refused; i++) {
        double v[3] = {i, 2.0 * i, -i};
        uint32_t k = psdl_pool_add(p, v);
        if (k == UINT32_MAX) refused = 1;
        else if (k != (uint32_t)++added) stable = 0;
    }
    CHECKF(refused && added > 512 && added < 1024, "%zu added before refusing", added);
    CHECK(stable);
    int found = 1;
    for (size_t i = 0; i < added; i++) {
        double v[3] = {(double)i, 2.0 * (double)i, -(double)i};
        if (psdl_pool_find(p, v) != (uint32_t)i + 1 || psdl_pool_add(p, v) != (uint32_t)i + 1) found = 0;
    }
    CHECK(found);
    double nv[3] = {-1, -1, -1};
    CHECK(psdl_pool_find(p, nv) == UINT32_MAX && psdl_pool_add(p, nv) == UINT32_MAX);
    g_fail_calloc = 0;
    int grew = 1;
    for (int i = 0; i < 5000; i++) {
        double v[3] = {i, 2.0 * i, -i};
        uint32_t k = psdl_pool_add(p, v);
        if (k == UINT32_MAX || psdl_pool_find(p, v) != k) grew = 0;
    }
    CHECK(grew && psdl_pool_count(p) == 5001);
    alarm(0);
    psdl_pool_free(p);
#endif
}

/* Vertices >= npts: psdl_link_bound skipped them while psdl_link wrote repeats for them
 * (heap overflow); both refuse now. Scratch is sized by the largest vertex used, not npts. */
static void test_link_limits(void) {
    set_ctx("neighbour links: vertex range");
    uint32_t start[5] = {0, 3, 6, 9, 12};
    uint32_t verts[12] = {0, 1, 20, 2, 3, 20, 4, 5, 20, 6, 7, 20};
    uint32_t dv[64], dn[64], ds[5];
    CHECK(psdl_link_bound(start, verts, 4, 8) == PSDL_GEOM_INVALID);
    CHECK(psdl_link(dv, dn, ds, start, verts, 4, 8) == PSDL_GEOM_INVALID);
    CHECK(psdl_link_bound(start, verts, 4, 20) == PSDL_GEOM_INVALID);
    /* in range: four triangles meeting only at vertex 20, each repeating it for the others */
    size_t b = psdl_link_bound(start, verts, 4, 21);
    CHECKF(b == 36, "bound %zu", b);
    size_t w = psdl_link(dv, dn, ds, start, verts, 4, 21);
    CHECKF(w == 24 && w <= b, "%zu points", w);
    /* a point count far beyond the vertices used (2^31 took 8 GB) */
    CHECK(psdl_link_bound(start, verts, 4, (size_t)-1 / 2) == b);
    CHECK(psdl_link(dv, dn, ds, start, verts, 4, (size_t)-1 / 2) == w);
    uint32_t empty_start[2] = {0, 0};
    CHECK(psdl_link_bound(empty_start, NULL, 1, 0) == 0);
    /* psdl_boundary: indices into pts must be below npts */
    double g[27];
    grid_points(g);
    uint32_t tris[6] = {0, 3, 4, 0, 4, 9};
    uint32_t out[8];
    CHECK(psdl_boundary(out, tris, 2, g, 9) == PSDL_GEOM_INVALID);
    CHECK(psdl_boundary(out, tris, 1, g, 9) == 3);
}

/* Finite input whose extent is not (-1e308 .. 1e308): the grid's cell size became infinite
 * and the cell counts NaN, converted to size_t (undefined). */
static void test_tjunction_limits(void) {
    set_ctx("T-junctions: extent");
    double pts[15] = {-1e308, 0, 0, 1e308, 0, 0, 0, 0, 1, 0, 0, 0, 5, 0, 5};
    uint32_t start[3] = {0, 3, 5}, verts[5] = {0, 1, 2, 3, 4};
    CHECK(psdl_tjunctions(NULL, 0, pts, 5, start, verts, 2, 0.01) == PSDL_GEOM_INVALID);
    pts[0] = -INFINITY;
    CHECK(psdl_tjunctions(NULL, 0, pts, 5, start, verts, 2, 0.01) == PSDL_GEOM_INVALID);
    /* large but representable: the vertex (0, 0, 0) lies on the edge (-1e150 .. 1e150) */
    pts[0] = -1e150, pts[3] = 1e150, pts[8] = 1e150;
    uint32_t d[3];
    CHECK(psdl_tjunctions(d, 1, pts, 5, start, verts, 2, 0.01) == 1 && d[0] == 0 && d[1] == 0 && d[2] == 3);
    /* coincident points and a NaN eps: the default eps, no NaN cell size */
    double same[9] = {1, 0, 1, 1, 0, 1, 1, 0, 1};
    uint32_t s2[3] = {0, 2, 3}, v2[3] = {0, 1, 2};
    CHECK(psdl_tjunctions(NULL, 0, same, 3, s2, v2, 2, NAN) == 0);
    CHECK(psdl_tjunctions(NULL, 0, same, 3, s2, v2, 2, INFINITY) == 0);
    /* no vertex in range: nothing to grid */
    uint32_t v3[3] = {7, 8, 9};
    CHECK(psdl_tjunctions(NULL, 0, same, 3, s2, v3, 2, 0.01) == 0);
}

/* Hole starts that do not increase, or fall outside 1 .. n-1: refused by every kernel that
 * takes them (they were never checked: rings past the array, a ring array overflow). */
static void test_hole_starts(void) {
    set_ctx("hole starts");
    double p[3 * 8];
    setp(p + 0, 0, 0, 0), setp(p + 3, 0, 0, 30), setp(p + 6, 30, 0, 30), setp(p + 9, 30, 0, 0);
    setp(p + 12, 10, 0, 10), setp(p + 15, 20, 0, 10), setp(p + 18, 20, 0, 20), setp(p + 21, 10, 0, 20);
    uint32_t good[1] = {4};
    static const uint32_t bad[][2] = {{4, 1}, {4, 4}, {0, 4}, {4, 8}, {9, 0}, {10, 0}, {3, 2}};
    uint32_t t[3 * 32], f[6 * 32], k[32], e[2];
    double extra[3 * 32];
    size_t ne;
    CHECK(psdl_triangulate(t, p, 8, good, 1) == 8);
    CHECK(psdl_keyhole(k, p, 8, good, 1) == 10);
    CHECK(psdl_fans(f, extra, &ne, p, 8, good, 1, 0) != PSDL_GEOM_INVALID);
    CHECK(psdl_self_crossing(e, p, 8, good, 1, 1e-6) == 0);
    int refused = 1;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        for (size_t nh = 1; nh <= 2; nh++) {
            if (nh == 1 && bad[i][0] >= 1 && bad[i][0] <= 7) continue; /* the first start alone is fine */
            if (psdl_triangulate(t, p, 8, bad[i], nh) != PSDL_GEOM_INVALID) refused = 0;
            if (psdl_fans(f, extra, &ne, p, 8, bad[i], nh, 0) != PSDL_GEOM_INVALID) refused = 0;
            if (psdl_fans(f, extra, &ne, p, 8, bad[i], nh, PSDL_FANS_NO_EXTRA) != PSDL_GEOM_INVALID) refused = 0;
            if (psdl_keyhole(k, p, 8, bad[i], nh) != PSDL_GEOM_INVALID) refused = 0;
            if (psdl_self_crossing(e, p, 8, bad[i], nh, 1e-6) != PSDL_GEOM_INVALID) refused = 0;
            CHECKF(refused, "hole starts {%u, %u} (%zu) accepted", bad[i][0], bad[i][1], nh);
        }
    /* more holes than points can start */
    uint32_t many[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    CHECK(psdl_triangulate(t, p, 8, many, 8) == PSDL_GEOM_INVALID);
    CHECK(psdl_triangulate(t, p, 8, many, 7) != PSDL_GEOM_INVALID);
}

/* first_outside on a large polygon: the keyhole-bridge check sorts the edges once (it
 * compared every pair: 31 ms per call at 4000 points, minutes at 100000). */
static void test_first_outside_scale(void) {
    set_ctx("first outside: scale");
    size_t n = 100000;
    double *poly = (double *)malloc(3 * n * sizeof *poly);
    if (!poly) return;
    for (size_t i = 0; i < n; i++) {
        double a = -2 * M_PI * (double)i / (double)n;
        setp(poly + 3 * i, 100 * cos(a), 0, 100 * sin(a));
    }
    double fp[12];
    setp(fp + 0, 0, 0, 0), setp(fp + 3, 1, 0, 0), setp(fp + 6, 1, 0, 1), setp(fp + 9, 0, 0, 1);
    clock_t t0 = clock();
    CHECK(psdl_first_outside(poly, n, fp, 4, 1, 0.01) == 0);
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    CHECKF(secs < 3.0, "%.2f s", secs);
    setp(fp + 6, 150, 0, 1);
    CHECK(psdl_first_outside(poly, n, fp, 4, 1, 0.01) == 3);
    free(poly);
    /* a keyhole ring whose bridge comes back with -0 coordinates: still a bridge */
    double pts[3 * 8];
    setp(pts + 0, 0, 0, 0), setp(pts + 3, 0, 0, 30), setp(pts + 6, 30, 0, 30), setp(pts + 9, 30, 0, 0);
    setp(pts + 12, 10, 0, 10), setp(pts + 15, 20, 0, 10), setp(pts + 18, 20, 0, 20), setp(pts + 21, 10, 0, 20);
    uint32_t hs[1] = {4}, k[16];
    size_t m = psdl_keyhole(k, pts, 8, hs, 1);
    CHECK(m == 10);
    double ring[3 * 10];
    int flipped = 0;
    for (size_t i = 0; i < m && i < 10; i++) {
        memcpy(ring + 3 * i, pts + 3 * k[i], 3 * sizeof(double));
        if (i > 0 && k[i] == k[0]) ring[3 * i] = -0.0, ring[3 * i + 2] = -0.0, flipped = 1;
    }
    CHECK(flipped);
    double b[12];
    setp(b + 0, 2, 0, 2), setp(b + 3, 2, 0, 6), setp(b + 6, 6, 0, 6), setp(b + 9, 6, 0, 2);
    CHECK(psdl_first_outside(ring, m, b, 4, 1, 0.005) == 0);
    setp(b + 0, 12, 0, 12), setp(b + 3, 12, 0, 18), setp(b + 6, 18, 0, 18), setp(b + 9, 18, 0, 12);
    CHECK(psdl_first_outside(ring, m, b, 4, 1, 0.005) == 1);
}

/* psdl_junction_pool: every junction point pooled (refs give back its float coordinates),
 * the fans cover the surface (their area equals the surface polygon's), hubs pooled after
 * the points; snapping rounds what is pooled; a second pooling adds nothing. */
static void test_junction_pool(void) {
    set_ctx("junction pool");
    psdl_junction_opts o;
    memset(&o, 0, sizeof o);
    o.center[0] = 100, o.center[1] = 5, o.center[2] = -40;
    o.radius = 4, o.arc_step = 15, o.curb = -1;
    psdl_arm four[4] = {road_arm(1, 0, 6, 3, 3), road_arm(0, 1, 6, 3, 3), road_arm(-1, 0, 6, 3, 3), road_arm(0, -1, 6, 3, 3)};
    jres r;
    CHECK(run_junction(&r, four, 4, &o) == 0);
    psdl_pool *pool = psdl_pool_new(3, 1);
    size_t np = r.j.size.points, fb = psdl_junction_pool_bound(&r.j);
    uint32_t *refs = (uint32_t *)malloc(np * sizeof *refs), *fans = (uint32_t *)malloc(fb * sizeof *fans);
    size_t w = psdl_junction_pool(refs, fans, pool, &r.j, 0);
    CHECKF(w > 0 && w <= fb, "%zu words of %zu", w, fb);
    const float *d = psdl_pool_data(pool);
    for (size_t i = 0; i < np; i++) {
        CHECK(refs[i] >= 1);
        for (int k = 0; k < 3; k++) CHECK(d[3 * refs[i] + k] == (float)r.j.points[3 * i + k]);
    }
    /* fan area (fans are convex, hub first) = surface area */
    double fan_area = 0, surf_area = 0;
    size_t nfans = 0;
    for (size_t i = 0; i < w; i += 1 + fans[i], nfans++) {
        size_t m = fans[i];
        CHECK(m >= 3);
        for (size_t k = 1; k + 1 < m; k++) {
            const float *a = d + 3 * fans[i + 1], *b = d + 3 * fans[i + 1 + k], *c = d + 3 * fans[i + 2 + k];
            fan_area += 0.5 * fabs((double)(b[0] - a[0]) * (c[2] - a[2]) - (double)(b[2] - a[2]) * (c[0] - a[0]));
        }
        for (size_t k = 1; k <= m; k++) CHECK(fans[i + k] < psdl_pool_count(pool));
    }
    for (size_t i = 0; i < r.j.size.surface; i++) {
        const double *a = r.j.points + 3 * r.j.surface[i], *b = r.j.points + 3 * r.j.surface[(i + 1) % r.j.size.surface];
        surf_area += a[0] * b[2] - b[0] * a[2];
    }
    surf_area = fabs(surf_area) / 2;
    CHECKF(nfans >= 1 && NEAR(fan_area, surf_area, 1e-2 * surf_area), "fans %g m², surface %g m²", fan_area, surf_area);
    /* pooling again adds nothing and gives the same references */
    size_t before = psdl_pool_count(pool);
    uint32_t *refs2 = (uint32_t *)malloc(np * sizeof *refs2), *fans2 = (uint32_t *)malloc(fb * sizeof *fans2);
    CHECK(psdl_junction_pool(refs2, fans2, pool, &r.j, 0) == w);
    CHECK(psdl_pool_count(pool) == before && memcmp(refs, refs2, np * sizeof *refs) == 0 &&
          memcmp(fans, fans2, w * sizeof *fans) == 0);
    /* snapped to a 0.5 m grid: every pooled coordinate is a multiple of 0.5 */
    psdl_pool *snapped = psdl_pool_new(3, 1);
    CHECK(psdl_junction_pool(refs2, fans2, snapped, &r.j, 0.5) != PSDL_GEOM_NOMEM);
    const float *ds = psdl_pool_data(snapped);
    for (size_t i = 3; i < 3 * psdl_pool_count(snapped); i++) CHECK(fmod((double)ds[i], 0.5) == 0);
    psdl_pool_free(snapped);
    free(refs2);
    free(fans2);
    free(refs);
    free(fans);
    psdl_pool_free(pool);
    free_junction(&r);
}

/* psdl_street_rooms: rooms of at most `split` sections sharing their end sections, as even
 * as can be; outlines of 2 * stride + 2 * (sections - 2) points going round the strip;
 * split < 2 and stride 0 refused; no sections, no rooms. */
static void test_street_rooms(void) {
    set_ctx("street rooms");
    enum { NSEC = 23, STRIDE = 4 };
    double sf[3 * NSEC * STRIDE];
    for (size_t k = 0; k < NSEC; k++)
        for (size_t c = 0; c < STRIDE; c++) {
            double *p = sf + 3 * (k * STRIDE + c);
            p[0] = 10.0 - 5.0 * (double)c, p[1] = 0.25 * (double)k, p[2] = 7.0 * (double)k;
        }
    size_t ow, nr = psdl_street_rooms_bound(NSEC, STRIDE, 8, &ow);
    CHECKF(nr == 4, "%zu rooms", nr); /* (23 - 2) / 7 + 1 */
    uint32_t refs[NSEC * STRIDE], ranges[8], *outl = (uint32_t *)malloc(ow * sizeof *outl);
    psdl_pool *pool = psdl_pool_new(3, 1);
    size_t nw, made = psdl_street_rooms(refs, ranges, outl, &nw, pool, sf, NSEC, STRIDE, 8, 0);
    CHECKF(made == 4 && nw <= ow, "%zu rooms, %zu words of %zu", made, nw, ow);
    CHECK(psdl_pool_count(pool) == 1 + NSEC * STRIDE);
    CHECK(ranges[0] == 0 && ranges[2 * made - 1] == NSEC - 1);
    for (size_t k = 0, w = 0; k < made; k++) {
        size_t a = ranges[2 * k], b = ranges[2 * k + 1], ns = b - a + 1;
        CHECKF(ns >= 2 && ns <= 8 && (k == 0 || a == ranges[2 * k - 1]), "room %zu: %zu..%zu", k, a, b);
        CHECKF(ns == 6 || ns == 7, "room %zu: %zu sections (even cuts)", k, ns);
        size_t n = outl[w];
        CHECKF(n == 2 * STRIDE + 2 * (ns - 2), "room %zu: outline of %zu points", k, n);
        /* first section left to right, then the right rail */
        CHECK(outl[w + 1] == refs[a * STRIDE] && outl[w + STRIDE] == refs[a * STRIDE + STRIDE - 1]);
        CHECK(outl[w + STRIDE + 1] == refs[(a + 1) * STRIDE + STRIDE - 1]);
        /* ends on the left rail next to the first point */
        CHECK(outl[w + n] == refs[(a + 1) * STRIDE]);
        w += 1 + n;
    }
    /* a narrow strip (a width of 0: two columns on one point) skips the repeat */
    double thin[3 * 2 * 2] = {0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 10};
    uint32_t trefs[4], trange[2], tout[16];
    psdl_pool *tp = psdl_pool_new(3, 1);
    CHECK(psdl_street_rooms(trefs, trange, tout, &nw, tp, thin, 2, 2, 64, 0) == 1);
    CHECKF(tout[0] == 2, "%u outline points", tout[0]);
    psdl_pool_free(tp);
    CHECK(psdl_street_rooms(refs, ranges, outl, &nw, pool, sf, NSEC, STRIDE, 1, 0) == PSDL_GEOM_INVALID);
    CHECK(psdl_street_rooms(refs, ranges, outl, &nw, pool, sf, NSEC, 0, 8, 0) == PSDL_GEOM_INVALID);
    CHECK(psdl_street_rooms(refs, ranges, outl, &nw, pool, sf, 1, STRIDE, 8, 0) == 0 && nw == 0);
    CHECK(psdl_street_rooms_bound(0, STRIDE, 8, NULL) == 0 && psdl_street_rooms_bound(5, STRIDE, 1, NULL) == 0);
    free(outl);
    psdl_pool_free(pool);
}

/* psdl_grid's point items: the nearest in growing squares (the first of equals, a nearer one
 * in the next square found when the first square's best is farther than its radius), box
 * items passed over, the one-cell lookup with repeats, hostile input refused. */
static void test_grid_points(void) {
    set_ctx("grid points");
    psdl_grid *g = psdl_grid_new(20);
    CHECK(g != NULL);
    uint32_t id = 0;
    double d2 = -1;
    CHECK(psdl_grid_nearest(g, 0, 0, 5, &id, &d2) == 0); /* empty */
    CHECK(psdl_grid_insert_point(g, 1, 0, 0) == 0);
    CHECK(psdl_grid_insert_point(g, 2, 100, 0) == 0);
    CHECK(psdl_grid_insert_point(g, 3, 0, 100) == 0);
    CHECK(psdl_grid_insert(g, 9, 85, -5, 105, 5) == 0); /* a box item: no position */
    CHECK(psdl_grid_nearest(g, 90, 5, 10, &id, &d2) == 1 && id == 2 && d2 == 125);
    CHECK(psdl_grid_nearest(g, 10, 48, 10, &id, &d2) == 1 && id == 1 && d2 == 10 * 10 + 48 * 48);
    CHECK(psdl_grid_nearest(g, 0, 52, 10, &id, &d2) == 1 && id == 3);
    CHECK(psdl_grid_nearest(g, 5000, 5000, 3, &id, &d2) == 0); /* nothing within the span */
    CHECK(psdl_grid_insert_point(g, 4, 0, 100) == 0);           /* equal to 3: 3 stays first */
    CHECK(psdl_grid_nearest(g, 0, 100, 2, &id, &d2) == 1 && id == 3 && d2 == 0);
    /* (39, 1) is in cell (1, 0); point 5 at (41, 1) in cell (2, 0) is nearer than point 1 */
    CHECK(psdl_grid_insert_point(g, 5, 41, 1) == 0);
    CHECK(psdl_grid_nearest(g, 39, 1, 4, &id, &d2) == 1 && id == 5 && d2 == 4);
    size_t n = 0;
    const uint32_t *c = psdl_grid_cell(g, 101, 1, &n);
    CHECKF(c && n == 2 && c[0] == 2 && c[1] == 9, "%zu", n);
    CHECK(psdl_grid_insert(g, 9, 101, 1, 102, 2) == 0); /* again in the same cell: listed twice */
    c = psdl_grid_cell(g, 101, 1, &n);
    CHECK(c && n == 3 && c[2] == 9);
    CHECK(psdl_grid_cell(g, 1000, 1000, &n) == NULL && n == 0);
    CHECK(psdl_grid_cell(g, NAN, 0, &n) == NULL && n == 0);
    /* hostile input */
    CHECK(psdl_grid_insert_point(g, 6, NAN, 0) == -1);
    CHECK(psdl_grid_insert_point(g, 6, 0, INFINITY) == -1);
    CHECK(psdl_grid_insert_point(g, PSDL_GRID_MAX_ID + 1, 0, 0) == -1);
    CHECK(psdl_grid_nearest(g, NAN, 0, 3, &id, &d2) == -1);
    CHECK(psdl_grid_nearest(g, 1e300, 0, 3, &id, &d2) == -1);
    CHECK(psdl_grid_nearest(g, 0, 0, -1, &id, &d2) == 0);
    /* a large id after small ones: the positions grow with it */
    CHECK(psdl_grid_insert_point(g, 100000, -30, -30) == 0);
    CHECK(psdl_grid_nearest(g, -29, -29, 3, &id, &d2) == 1 && id == 100000);
    /* far cells: keys wrap as Lua's integers do, no overflow */
    CHECK(psdl_grid_insert_point(g, 7, 3e15, -3e15) == 0);
    CHECK(psdl_grid_nearest(g, 3e15, -3e15, 1, &id, &d2) == 1 && id == 7);
    psdl_grid_free(g);
    /* box items only: nothing is nearest */
    g = psdl_grid_new(5);
    CHECK(psdl_grid_insert(g, 1, 0, 0, 1, 1) == 0);
    CHECK(psdl_grid_nearest(g, 0, 0, 3, &id, &d2) == 0);
    psdl_grid_free(g);
}

/* psdl_grid: items found once per query, cells x-major and insertion order within a cell (as
 * psdl.plan's Grid), boxes on cell boundaries and negative coordinates, retries when the
 * buffer is short, hostile boxes and ids refused. */
static void test_grid(void) {
    set_ctx("grid");
    CHECK(psdl_grid_new(0) == NULL && psdl_grid_new(NAN) == NULL && psdl_grid_new(INFINITY) == NULL);
    psdl_grid *g = psdl_grid_new(10);
    CHECK(g != NULL);
    /* item 1 spans cells (0..1, 0), item 2 cell (0, 0), item 3 cell (-1, -1), item 4 cell (1, 0) */
    CHECK(psdl_grid_insert(g, 1, 0, 0, 15, 5) == 0);
    CHECK(psdl_grid_insert(g, 2, 1, 1, 2, 2) == 0);
    CHECK(psdl_grid_insert(g, 3, -5, -5, -1, -1) == 0);
    CHECK(psdl_grid_insert(g, 4, 12, 1, 13, 2) == 0);
    uint32_t out[8];
    size_t n = psdl_grid_collect(g, out, 8, -10, -10, 19, 9);
    /* cells x-major: (-1, -1): 3; (0, 0): 1, 2; (1, 0): 1 (seen), 4 */
    CHECKF(n == 4 && out[0] == 3 && out[1] == 1 && out[2] == 2 && out[3] == 4, "%zu: %u %u %u %u", n, out[0], out[1],
           out[2], out[3]);
    n = psdl_grid_collect(g, out, 8, 10, 0, 10, 0); /* on the boundary: cell (1, 0) */
    CHECKF(n == 2 && out[0] == 1 && out[1] == 4, "%zu", n);
    n = psdl_grid_collect(g, out, 8, 100, 100, 200, 200);
    CHECK(n == 0);
    /* a short buffer: the count, then all of them with room */
    n = psdl_grid_collect(g, out, 1, -10, -10, 19, 9);
    CHECK(n == 4 && out[0] == 3);
    CHECK(psdl_grid_collect(g, out, 8, -10, -10, 19, 9) == 4 && out[3] == 4);
    /* many items in one cell keep their order */
    for (uint32_t i = 10; i < 1000; i++) CHECK(psdl_grid_insert(g, i, 501, 501, 502, 502) == 0);
    uint32_t *big = (uint32_t *)malloc(2000 * sizeof *big);
    n = psdl_grid_collect(g, big, 2000, 500, 500, 505, 505);
    CHECK(n == 990);
    int ordered = 1;
    for (size_t i = 0; i < n; i++) ordered &= big[i] == 10 + i;
    CHECK(ordered);
    free(big);
    /* hostile boxes and ids */
    CHECK(psdl_grid_insert(g, 5, 0, 0, 1e300, 1) == -1);
    CHECK(psdl_grid_insert(g, 5, NAN, 0, 1, 1) == -1);
    CHECK(psdl_grid_insert(g, 5, -1e9, -1e9, 1e9, 1e9) == -1);
    CHECK(psdl_grid_insert(g, PSDL_GRID_MAX_ID + 1, 0, 0, 1, 1) == -1);
    CHECK(psdl_grid_collect(g, out, 8, 0, 0, INFINITY, 1) == PSDL_GEOM_INVALID);
    CHECK(psdl_grid_collect(g, out, 8, -1e9, -1e9, 1e9, 1e9) == PSDL_GEOM_INVALID);
    psdl_grid_free(g);
    psdl_grid_free(NULL);
}

/* psdl_height_mismatches_doc gives the records psdl_height_mismatches gives for the same
 * rooms in CSR form: random lattice cities (shared vertices, heights 0 / 0.15 / 0.5 / 3 m,
 * some edges linked, kinds at random), and a document with a bad vertex reference. */
static void test_height_mismatches_doc(void) {
    unsigned long long seed = 12345;
#define RND() (seed = seed * 6364136223846793005ull + 1442695040888963407ull, (double)(seed >> 11) / 9007199254740992.0)
    size_t total = 0;
    for (int trial = 0; trial < 40; trial++) {
        psdl_doc *doc = psdl_doc_new(NULL);
        CHECK(doc != NULL);
        if (!doc) return;
        const int G = 8; /* G x G lattice points, each at two heights */
        static const double hs[4] = {0, 0.15, 0.5, 3};
        doc->nvertices = (uint32_t)(1 + 2 * G * G);
        doc->vertices = psdl_doc_alloc(doc, doc->nvertices * sizeof *doc->vertices);
        for (int i = 0; i < G * G; i++)
            for (int h = 0; h < 2; h++) {
                psdl_vec3 *v = &doc->vertices[1 + 2 * i + h];
                v->x = (float)(10 * (i % G) + (RND() < 0.2 ? RND() * 0.01 : 0));
                v->z = (float)(10 * (i / G));
                v->y = (float)hs[(int)(RND() * 4)];
            }
        size_t nr = (size_t)(G - 1) * (G - 1);
        doc->nrooms = (uint32_t)nr + 1;
        doc->rooms = psdl_doc_alloc(doc, doc->nrooms * sizeof *doc->rooms);
        unsigned char kind[64];
        uint32_t start[65], verts[256], nb[256];
        size_t w = 0;
        for (size_t r = 0; r < nr; r++) {
            int cx = (int)(r % (size_t)(G - 1)), cz = (int)(r / (size_t)(G - 1));
            int corner[4] = {cz * G + cx, (cz + 1) * G + cx, (cz + 1) * G + cx + 1, cz * G + cx + 1};
            psdl_room *rm = &doc->rooms[r + 1];
            rm->nperimeter = 4;
            rm->perimeter = psdl_doc_alloc(doc, 4 * sizeof *rm->perimeter);
            kind[r] = (unsigned char)(RND() * 3);
            start[r] = (uint32_t)w;
            for (int k = 0; k < 4; k++) {
                uint16_t v = (uint16_t)(1 + 2 * corner[k] + (RND() < 0.5));
                if (trial == 39 && r == 3 && k == 2) v = 60000; /* past the vertex pool */
                rm->perimeter[k].vertex = v;
                rm->perimeter[k].neighbour = (uint16_t)(RND() < 0.3 ? 1 + (size_t)(RND() * nr) : 0);
                verts[w] = v;
                nb[w] = rm->perimeter[k].neighbour;
                w++;
            }
        }
        start[nr] = (uint32_t)w;
        double *pts = malloc(3 * doc->nvertices * sizeof *pts);
        for (uint32_t i = 0; i < doc->nvertices; i++)
            pts[3 * i] = doc->vertices[i].x, pts[3 * i + 1] = doc->vertices[i].y, pts[3 * i + 2] = doc->vertices[i].z;
        psdl_height_mismatch a[128], b[128];
        size_t na = psdl_height_mismatches(a, 128, pts, doc->nvertices, start, verts, nb, kind, nr, 1e-3, 1.0, 16);
        size_t nb2 = psdl_height_mismatches_doc(b, 128, doc, kind, 1e-3, 1.0, 16);
        CHECK(na == nb2);
        CHECK(na != PSDL_GEOM_NOMEM);
        if (na == nb2 && na <= 128)
            for (size_t i = 0; i < na; i++)
                CHECK(a[i].block == b[i].block && a[i].edge == b[i].edge && a[i].road == b[i].road &&
                      a[i].road_edge == b[i].road_edge && a[i].dy == b[i].dy);
        total += na;
        free(pts);
        psdl_doc_free(doc);
    }
    CHECK(total > 20); /* the cities did have mismatches to compare */
#undef RND
}

int main(void) {
    test_measures();
    test_spline();
    test_offset();
    test_sections();
    test_fans();
    test_facades();
    test_pools();
    test_outline();
    test_link();
    test_tjunctions();
    test_junctions();
    test_keyhole();
    test_crossings();
    test_polyline_crossing();
    test_pool_dummy();
    test_pool_truncate();
    test_pool_oom();
    test_link_limits();
    test_tjunction_limits();
    test_hole_starts();
    test_first_outside_scale();
    test_junction_pool();
    test_street_rooms();
    test_grid();
    test_grid_points();
    test_height_mismatches_doc();
    printf("c: %lu passed, %lu failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
