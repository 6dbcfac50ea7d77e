/* psdl_heightfield.c -- per-point work on a grid of heights (psdl_heightfield.h): reading
 * samples of any type, clamped and bilinear sampling, statistics, quantising to heightmap
 * samples, conversion to an NHTG's floats, and rasterising a city's ground. */
#include "psdl_heightfield.h"

#include <float.h>
#include <math.h>
#include <stdint.h>

size_t psdl_hf_count(const psdl_heightfield *f) { return (size_t)f->rows * f->cols; }

size_t psdl_hf_sample_size(psdl_hf_type type) {
    switch (type) {
    case PSDL_HF_F32: return 4;
    case PSDL_HF_F64: return 8;
    case PSDL_HF_U16: return 2;
    case PSDL_HF_U8: return 1;
    }
    return 0;
}

double psdl_hf_get(const psdl_heightfield *f, size_t k) {
    switch (f->type) {
    case PSDL_HF_F32: return (double)((const float *)f->data)[k];
    case PSDL_HF_F64: return ((const double *)f->data)[k];
    case PSDL_HF_U16: return f->offset + f->scale * (double)((const uint16_t *)f->data)[k];
    case PSDL_HF_U8: return f->offset + f->scale * (double)((const uint8_t *)f->data)[k];
    }
    return NAN;
}

double psdl_hf_point(const psdl_heightfield *f, int64_t i, int64_t j) {
    if (i < 0) i = 0;
    else if (i > (int64_t)f->rows - 1) i = (int64_t)f->rows - 1;
    if (j < 0) j = 0;
    else if (j > (int64_t)f->cols - 1) j = (int64_t)f->cols - 1;
    return psdl_hf_get(f, (size_t)i * f->cols + (size_t)j);
}

double psdl_hf_bilinear(const psdl_heightfield *f, double u, double v) {
    double cols = (double)f->cols, rows = (double)f->rows;
    if (u < 0) u = 0;
    else if (u > cols - 1) u = cols - 1;
    if (v < 0) v = 0;
    else if (v > rows - 1) v = rows - 1;
    if (isnan(u) || isnan(v)) return NAN;
    double j0 = floor(u), i0 = floor(v);
    if (j0 > cols - 2) j0 = cols - 2 > 0 ? cols - 2 : 0;
    if (i0 > rows - 2) i0 = rows - 2 > 0 ? rows - 2 : 0;
    double fu = u - j0, fv = v - i0;
    double j1 = j0 + 1 < cols - 1 ? j0 + 1 : cols - 1;
    double i1 = i0 + 1 < rows - 1 ? i0 + 1 : rows - 1;
    size_t c = f->cols;
    double h00 = psdl_hf_get(f, (size_t)i0 * c + (size_t)j0);
    double h01 = psdl_hf_get(f, (size_t)i0 * c + (size_t)j1);
    double h10 = psdl_hf_get(f, (size_t)i1 * c + (size_t)j0);
    double h11 = psdl_hf_get(f, (size_t)i1 * c + (size_t)j1);
    double top = h00 + (h01 - h00) * fu;
    double bottom = h10 + (h11 - h10) * fu;
    return top + (bottom - top) * fv;
}

void psdl_hf_stats_of(const psdl_heightfield *f, double water, psdl_hf_stats *s) {
    size_t n = psdl_hf_count(f);
    double lo = HUGE_VAL, hi = -HUGE_VAL, sum = 0;
    size_t lo_at = 0, hi_at = 0, below = 0;
    int lo_found = 0, hi_found = 0;
    for (size_t k = 0; k < n; k++) {
        double v = psdl_hf_get(f, k);
        sum = sum + v;
        if (v < lo) {
            lo = v;
            lo_at = k;
            lo_found = 1;
        }
        if (v > hi) {
            hi = v;
            hi_at = k;
            hi_found = 1;
        }
        if (v < water) below++;
    }
    s->min = lo;
    s->max = hi;
    s->mean = n ? sum / (double)n : NAN;
    s->min_at = lo_at;
    s->max_at = hi_at;
    s->below = below;
    s->count = n;
    s->found = lo_found && hi_found;
}

psdl_status psdl_hf_quantize(const psdl_heightfield *f, double offset, double scale, uint32_t maxval,
                             uint16_t *out, size_t *bad, double *value) {
    size_t n = psdl_hf_count(f);
    for (size_t k = 0; k < n; k++) {
        double v = floor((psdl_hf_get(f, k) - offset) / scale + 0.5);
        if (!(v >= 0 && v <= (double)maxval)) {
            if (bad) *bad = k;
            if (value) *value = v;
            return PSDL_E_BAD_COUNT;
        }
        out[k] = (uint16_t)v;
    }
    return PSDL_OK;
}

psdl_status psdl_hf_to_f32(const psdl_heightfield *f, float *out, size_t *bad) {
    size_t n = psdl_hf_count(f);
    for (size_t k = 0; k < n; k++) {
        double h = psdl_hf_get(f, k);
        if (!(fabs(h) <= (double)FLT_MAX)) { /* NaN, infinite, or beyond a float's range */
            if (bad) *bad = k;
            return PSDL_E_INVALID;
        }
        out[k] = (float)h;
    }
    return PSDL_OK;
}

psdl_status psdl_hf_check_f32(const psdl_heightfield *f, size_t *bad) {
    size_t n = psdl_hf_count(f);
    for (size_t k = 0; k < n; k++) {
        double h = psdl_hf_get(f, k);
        if (!(fabs(h) <= (double)FLT_MAX)) {
            if (bad) *bad = k;
            return PSDL_E_INVALID;
        }
    }
    return PSDL_OK;
}

float psdl_hf_get_f32(const psdl_heightfield *f, size_t k) {
    double h = psdl_hf_get(f, k);
    return fabs(h) <= (double)FLT_MAX ? (float)h : (float)NAN;
}

void psdl_hf_to_f64(const psdl_heightfield *f, double *out) {
    size_t n = psdl_hf_count(f);
    for (size_t k = 0; k < n; k++) out[k] = psdl_hf_get(f, k);
}

/* Lua's math.min / math.max of three: the first argument, replaced by a later one only when
 * that compares smaller (larger); NaN never replaces and is kept when first. */
static double min3(double a, double b, double c) {
    double m = a;
    if (b < m) m = b;
    if (c < m) m = c;
    return m;
}

static double max3(double a, double b, double c) {
    double m = a;
    if (m < b) m = b;
    if (m < c) m = c;
    return m;
}

void psdl_hf_rasterize(const double *tris, size_t ntris, double ox, double oz, double cell, uint32_t rows,
                       uint32_t cols, double *best) {
    const double eps = 1e-7;
    double last_col = (double)cols - 1, last_row = (double)rows - 1;
    for (size_t t = 0; t < ntris; t++) {
        const double *p = tris + 9 * t;
        double ax = p[0], ay = p[1], az = p[2], bx = p[3], by = p[4], bz = p[5], cx = p[6], cy = p[7], cz = p[8];
        double j0 = ceil((min3(ax, bx, cx) - ox) / cell - 1e-6);
        double j1 = floor((max3(ax, bx, cx) - ox) / cell + 1e-6);
        double i0 = ceil((min3(az, bz, cz) - oz) / cell - 1e-6);
        double i1 = floor((max3(az, bz, cz) - oz) / cell + 1e-6);
        if (!(0 < j0)) j0 = 0; /* max(0, x): NaN gives 0 */
        if (!(0 < i0)) i0 = 0;
        if (!(j1 < last_col)) j1 = last_col; /* min(last, x): NaN gives last */
        if (!(i1 < last_row)) i1 = last_row;
        if (!(j0 <= j1 && i0 <= i1)) continue;
        double d = (bz - cz) * (ax - cx) + (cx - bx) * (az - cz);
        for (uint32_t i = (uint32_t)i0; i <= (uint32_t)i1; i++) {
            double z = oz + (double)i * cell;
            for (uint32_t j = (uint32_t)j0; j <= (uint32_t)j1; j++) {
                double x = ox + (double)j * cell;
                double l1 = ((bz - cz) * (x - cx) + (cx - bx) * (z - cz)) / d;
                double l2 = ((cz - az) * (x - cx) + (ax - cx) * (z - cz)) / d;
                double l3 = 1 - l1 - l2;
                if (l1 >= -eps && l2 >= -eps && l3 >= -eps) {
                    double y = l1 * ay + l2 * by + l3 * cy;
                    size_t k = (size_t)i * cols + j;
                    if (y > best[k] && y < HUGE_VAL) best[k] = y;
                }
            }
        }
    }
}

size_t psdl_hf_fill_nearest(double *best, uint8_t *covered, uint32_t rows, uint32_t cols, size_t *queue) {
    size_t n = (size_t)rows * cols, tail = 0;
    for (size_t k = 0; k < n; k++) {
        covered[k] = best[k] != -HUGE_VAL;
        if (covered[k]) queue[tail++] = k;
    }
    size_t ncov = tail;
    for (size_t head = 0; head < tail; head++) {
        size_t k = queue[head];
        size_t i = k / cols, j = k % cols;
        double v = best[k];
        size_t next[4];
        int m = 0;
        if (i > 0) next[m++] = k - cols;
        if (i + 1 < rows) next[m++] = k + cols;
        if (j > 0) next[m++] = k - 1;
        if (j + 1 < cols) next[m++] = k + 1;
        for (int q = 0; q < m; q++)
            if (best[next[q]] == -HUGE_VAL) {
                best[next[q]] = v;
                queue[tail++] = next[q];
            }
    }
    return ncov;
}
