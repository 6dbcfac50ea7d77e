/* psdl_segment.c -- plan segment tests with the former Lua's arithmetic (psdl_segment.h). */
#include "psdl_segment.h"

#include <math.h>
#include <stddef.h>

/* Lua's math.min(a, b) and math.max(a, b) on two numbers */
static double lmin(double a, double b) { return b < a ? b : a; }
static double lmax(double a, double b) { return a < b ? b : a; }

int psdl_seg_unit(double x, double z, double *u) {
    double l = sqrt(x * x + z * z);
    if (l < 1e-9) return 0;
    u[0] = x / l, u[1] = z / l;
    return 1;
}

int psdl_seg_cross(const double *p, const double *q, const double *u, const double *v, double *t, double *w) {
    double rx = q[0] - p[0], rz = q[1] - p[1];
    double sx = v[0] - u[0], sz = v[1] - u[1];
    double den = rx * sz - rz * sx;
    if (fabs(den) < 1e-12) return 0;
    double wx = u[0] - p[0], wz = u[1] - p[1];
    double tt = (wx * sz - wz * sx) / den;
    double ww = (wx * rz - wz * rx) / den;
    if (tt > 1e-9 && tt < 1 - 1e-9 && ww > 1e-9 && ww < 1 - 1e-9) {
        *t = tt;
        if (w) *w = ww;
        return 1;
    }
    return 0;
}

double psdl_seg_closest(double x, double z, const double *p, const double *q, double *t) {
    double dx = q[0] - p[0], dz = q[1] - p[1];
    double l2 = dx * dx + dz * dz;
    double tt = l2 > 0 ? lmax(0, lmin(1, ((x - p[0]) * dx + (z - p[1]) * dz) / l2)) : 0;
    double ex = p[0] + tt * dx - x, ez = p[1] + tt * dz - z;
    if (t) *t = tt;
    return sqrt(ex * ex + ez * ez);
}
