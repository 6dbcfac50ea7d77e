/* psdl_raster.c -- RGBA canvas for top-down maps: triangles (top-left rule, exact integer
 * edge functions), even-odd polygons, stripe paints, anti-aliased strokes and markers, a
 * 5 x 7 bitmap font, downsampling, and PNG through libpng (classic API, to and from
 * memory). See psdl_raster.h for the conventions. libpng reports errors by longjmp: each
 * setjmp sits in a small function of its own whose locals are not used after the jump;
 * what must be freed lives in a context struct in the caller's frame. */
#include "psdl_raster.h"

#include "psdl_internal.h"
#include "psdl_png_io.h"
#include "psdl_segment.h"

#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ================================================================== canvas */

psdl_paint psdl_paint_solid(uint32_t rgba) {
    psdl_paint p;
    memset(&p, 0, sizeof p);
    p.rgba = rgba;
    return p;
}

static int size_ok(int w, int h) {
    return w >= 1 && h >= 1 && w <= PSDL_CANVAS_MAX_SIDE && h <= PSDL_CANVAS_MAX_SIDE &&
           (uint64_t)w * (uint64_t)h <= PSDL_CANVAS_MAX_PIXELS;
}

static psdl_canvas *canvas_alloc(int width, int height) {
    if (!size_ok(width, height)) return NULL;
    psdl_canvas *c = malloc(sizeof *c);
    if (!c) return NULL;
    c->width = width;
    c->height = height;
    c->rgba = malloc((size_t)width * (size_t)height * 4u);
    if (!c->rgba) {
        free(c);
        return NULL;
    }
    return c;
}

psdl_canvas *psdl_canvas_new(int width, int height, uint32_t rgba) {
    psdl_canvas *c = canvas_alloc(width, height);
    if (!c) return NULL;
    uint8_t px[4] = {(uint8_t)(rgba >> 24), (uint8_t)(rgba >> 16), (uint8_t)(rgba >> 8), (uint8_t)rgba};
    size_t n = (size_t)width * (size_t)height;
    uint8_t *p = c->rgba;
    for (size_t i = 0; i < n; i++, p += 4) memcpy(p, px, 4);
    return c;
}

void psdl_canvas_free(psdl_canvas *c) {
    if (!c) return;
    free(c->rgba);
    free(c);
}

uint32_t psdl_canvas_get(const psdl_canvas *c, int x, int y) {
    if (x < 0 || y < 0 || x >= c->width || y >= c->height) return 0;
    const uint8_t *p = c->rgba + ((size_t)y * (size_t)c->width + (size_t)x) * 4u;
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* Blend rgba over p with alpha a (0..255, already scaled by coverage). */
static inline void blend_px(uint8_t *p, uint32_t rgba, unsigned a) {
    if (a == 0) return;
    unsigned r = rgba >> 24, g = (rgba >> 16) & 255u, b = (rgba >> 8) & 255u;
    if (a >= 255) {
        p[0] = (uint8_t)r;
        p[1] = (uint8_t)g;
        p[2] = (uint8_t)b;
        p[3] = 255;
        return;
    }
    unsigned da = p[3];
    if (da == 255) { /* the usual case: an opaque canvas */
        unsigned ia = 255u - a;
        p[0] = (uint8_t)((r * a + p[0] * ia + 127u) / 255u);
        p[1] = (uint8_t)((g * a + p[1] * ia + 127u) / 255u);
        p[2] = (uint8_t)((b * a + p[2] * ia + 127u) / 255u);
        return;
    }
    /* general "over" with straight alpha */
    unsigned oa = a * 255u + da * (255u - a); /* out alpha * 255 */
    if (oa == 0) return;
    p[0] = (uint8_t)((r * a * 255u + p[0] * da * (255u - a) + oa / 2u) / oa);
    p[1] = (uint8_t)((g * a * 255u + p[1] * da * (255u - a) + oa / 2u) / oa);
    p[2] = (uint8_t)((b * a * 255u + p[2] * da * (255u - a) + oa / 2u) / oa);
    p[3] = (uint8_t)((oa + 127u) / 255u);
}

static inline uint8_t *px_at(psdl_canvas *c, int x, int y) {
    return c->rgba + ((size_t)y * (size_t)c->width + (size_t)x) * 4u;
}

void psdl_canvas_blend(psdl_canvas *c, int x, int y, uint32_t rgba, unsigned coverage) {
    if (x < 0 || y < 0 || x >= c->width || y >= c->height) return;
    if (coverage > 255u) coverage = 255u;
    blend_px(px_at(c, x, y), rgba, ((rgba & 255u) * coverage + 127u) / 255u);
}

/* Paint pixel (x, y) (inside the canvas) when the paint covers its centre. */
static inline void paint_px(psdl_canvas *c, int x, int y, const psdl_paint *p) {
    if (p->period > 0) {
        double s = ((double)x + 0.5) * p->dx + ((double)y + 0.5) * p->dy + p->phase;
        double f = s / p->period;
        f -= floor(f);
        if (!(f < p->duty)) return;
    }
    blend_px(px_at(c, x, y), p->rgba, p->rgba & 255u);
}

void psdl_canvas_rect(psdl_canvas *c, int x0, int y0, int x1, int y1, uint32_t rgba) {
    if (x0 < 0) x0 = 0;
    if (y0 < 0) y0 = 0;
    if (x1 > c->width) x1 = c->width;
    if (y1 > c->height) y1 = c->height;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) blend_px(px_at(c, x, y), rgba, rgba & 255u);
}

/* ================================================================== polygons */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Coordinates beyond this many pixels are clamped to it (only corrupt input gets there):
 * every product below stays finite. */
#define COORD_LIMIT 1e12

static double clampd(double v, double lo, double hi) { return v < lo ? lo : (v > hi ? hi : v); }

size_t psdl_canvas_polygon(psdl_canvas *c, const double *xy_in, size_t n, const psdl_paint *paint) {
    if (n < 3 || n > ((size_t)1 << 26)) return 0;
    for (size_t i = 0; i < 2 * n; i++)
        if (!isfinite(xy_in[i])) return 0;
    /* a copy, with coordinates clamped, and room for the crossings of one row */
    double *xy = malloc(3 * n * sizeof *xy);
    if (!xy) return 0;
    double *xs = xy + 2 * n;
    double ymin = HUGE_VAL, ymax = -HUGE_VAL;
    for (size_t i = 0; i < 2 * n; i++) xy[i] = clampd(xy_in[i], -COORD_LIMIT, COORD_LIMIT);
    for (size_t i = 0; i < n; i++) {
        if (xy[2 * i + 1] < ymin) ymin = xy[2 * i + 1];
        if (xy[2 * i + 1] > ymax) ymax = xy[2 * i + 1];
    }
    /* rows whose centre y + 0.5 lies in [ymin, ymax) */
    double fy0 = ceil(ymin - 0.5), fy1 = ceil(ymax - 0.5) - 1;
    size_t count = 0;
    if (fy1 < 0 || fy0 > c->height - 1 || fy1 < fy0) goto done;
    fy0 = clampd(fy0, 0, c->height - 1);
    fy1 = clampd(fy1, 0, c->height - 1);
    for (int y = (int)fy0; y <= (int)fy1; y++) {
        double yc = y + 0.5;
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            const double *a = xy + 2 * i, *b = xy + 2 * ((i + 1) % n);
            if (a[1] == b[1]) continue;
            /* always from the lower end, so that shared edges give the same crossings */
            const double *lo = a[1] < b[1] ? a : b, *hi = a[1] < b[1] ? b : a;
            if (lo[1] <= yc && yc < hi[1]) xs[k++] = lo[0] + (yc - lo[1]) * (hi[0] - lo[0]) / (hi[1] - lo[1]);
        }
        if (k < 2) continue;
        qsort(xs, k, sizeof *xs, cmp_double);
        for (size_t j = 0; j + 1 < k; j += 2) {
            double fx0 = ceil(xs[j] - 0.5), fx1 = ceil(xs[j + 1] - 0.5) - 1;
            if (!(fx1 >= 0) || !(fx0 <= c->width - 1) || fx1 < fx0) continue;
            fx0 = clampd(fx0, 0, c->width - 1);
            fx1 = clampd(fx1, 0, c->width - 1);
            for (int x = (int)fx0; x <= (int)fx1; x++) {
                paint_px(c, x, y, paint);
                count++;
            }
        }
    }
done:
    free(xy);
    return count;
}

/* ================================================================== triangles */

#define SUB_BITS 8
#define SUB (1 << SUB_BITS)
#define FIXED_LIMIT 2097152.0 /* 2^21 pixels: edge functions stay far below 2^63 */

static int to_fixed(double v, int64_t *out) {
    if (!(v > -FIXED_LIMIT && v < FIXED_LIMIT)) return 0;
    *out = (int64_t)floor(v * SUB + 0.5);
    return 1;
}

/* floor(a / b) and ceil(a / b) for b > 0 */
static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
static int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

size_t psdl_canvas_triangle(psdl_canvas *c, const double xy[6], const psdl_paint *paint) {
    int64_t X[3], Y[3];
    for (int i = 0; i < 3; i++) {
        if (!to_fixed(xy[2 * i], &X[i]) || !to_fixed(xy[2 * i + 1], &Y[i])) {
            for (int k = 0; k < 6; k++)
                if (!isfinite(xy[k])) return 0;
            return psdl_canvas_polygon(c, xy, 3, paint); /* huge but finite: scanlines */
        }
    }
    int64_t area = (X[1] - X[0]) * (Y[2] - Y[0]) - (Y[1] - Y[0]) * (X[2] - X[0]);
    if (area == 0) return 0;
    if (area < 0) { /* make (0, 1, 2) positively oriented */
        int64_t t = X[1];
        X[1] = X[2];
        X[2] = t;
        t = Y[1];
        Y[1] = Y[2];
        Y[2] = t;
    }
    int64_t minx = X[0], maxx = X[0], miny = Y[0], maxy = Y[0];
    for (int i = 1; i < 3; i++) {
        if (X[i] < minx) minx = X[i];
        if (X[i] > maxx) maxx = X[i];
        if (Y[i] < miny) miny = Y[i];
        if (Y[i] > maxy) maxy = Y[i];
    }
    /* pixels whose centre (p * SUB + SUB/2) lies in the bounding box */
    int64_t px0 = ceil_div(minx - SUB / 2, SUB), px1 = floor_div(maxx - SUB / 2, SUB);
    int64_t py0 = ceil_div(miny - SUB / 2, SUB), py1 = floor_div(maxy - SUB / 2, SUB);
    if (px0 < 0) px0 = 0;
    if (py0 < 0) py0 = 0;
    if (px1 > c->width - 1) px1 = c->width - 1;
    if (py1 > c->height - 1) py1 = c->height - 1;
    if (px1 < px0 || py1 < py0) return 0;

    /* edge i runs from vertex i+1 to vertex i+2; E(p) > 0 inside. On an edge, E = 0 counts
     * as inside for top edges (horizontal, interior below) and left edges (interior to the
     * right), the others need E > 0: bias -1 on integers. */
    int64_t A[3], B[3], E0[3];
    int64_t cx = px0 * SUB + SUB / 2, cy = py0 * SUB + SUB / 2;
    for (int i = 0; i < 3; i++) {
        int a = (i + 1) % 3, b = (i + 2) % 3;
        int64_t dx = X[b] - X[a], dy = Y[b] - Y[a];
        A[i] = -dy;
        B[i] = dx;
        int top_left = dy < 0 || (dy == 0 && dx > 0);
        E0[i] = dx * (cy - Y[a]) - dy * (cx - X[a]) + (top_left ? 0 : -1);
    }
    size_t count = 0;
    for (int64_t y = py0; y <= py1; y++) {
        int64_t e0 = E0[0], e1 = E0[1], e2 = E0[2];
        for (int64_t x = px0; x <= px1; x++) {
            if ((e0 | e1 | e2) >= 0) {
                paint_px(c, (int)x, (int)y, paint);
                count++;
            }
            e0 += A[0] * SUB;
            e1 += A[1] * SUB;
            e2 += A[2] * SUB;
        }
        E0[0] += B[0] * SUB;
        E0[1] += B[1] * SUB;
        E0[2] += B[2] * SUB;
    }
    return count;
}

size_t psdl_canvas_triangles(psdl_canvas *c, const double *xy, size_t ntri, const psdl_paint *paint) {
    size_t count = 0;
    for (size_t t = 0; t < ntri; t++) count += psdl_canvas_triangle(c, xy + 6 * t, paint);
    return count;
}

/* ================================================================== strokes, markers */

static double clamp01(double v) { return v > 0 ? (v < 1 ? v : 1) : 0; /* NaN -> 0 */ }

/* A segment the stroke can measure: finite, within COORD_LIMIT. */
static int seg_ok(const double *s) {
    for (int k = 0; k < 4; k++)
        if (!(fabs(s[k]) <= COORD_LIMIT)) return 0;
    return 1;
}

/* The x-span [*xa, *xb] of the points within r of the segment s on the line y = yc (a
 * superset: a point within r of s(t) lies within r of it in y, which bounds t, and in x).
 * Returns 0 when the line passes farther than r from s. */
static int seg_row_span(const double *s, double yc, double r, double *xa, double *xb) {
    double dy = s[3] - s[1], t0 = 0, t1 = 1;
    if (dy != 0) {
        t0 = (yc - r - s[1]) / dy;
        t1 = (yc + r - s[1]) / dy;
        if (t0 > t1) {
            double t = t0;
            t0 = t1;
            t1 = t;
        }
        if (t0 < 0) t0 = 0;
        if (t1 > 1) t1 = 1;
        if (!(t0 <= t1)) return 0;
    } else if (!(fabs(yc - s[1]) <= r)) {
        return 0;
    }
    double dx = s[2] - s[0], xp = s[0] + t0 * dx, xq = s[0] + t1 * dx;
    *xa = fmin(xp, xq) - r;
    *xb = fmax(xp, xq) + r;
    return 1;
}

int psdl_canvas_stroke(psdl_canvas *c, const double *seg, size_t nseg, double width, uint32_t rgba) {
    if (!(width > 0) || !(width < 1e6) || nseg == 0) return 0;
    double hw = width * 0.5, pad = hw + 1.0;
    double bx0 = HUGE_VAL, by0 = HUGE_VAL, bx1 = -HUGE_VAL, by1 = -HUGE_VAL;
    for (size_t i = 0; i < nseg; i++) {
        const double *s = seg + 4 * i;
        if (!seg_ok(s)) continue;
        bx0 = fmin(bx0, fmin(s[0], s[2]) - pad);
        by0 = fmin(by0, fmin(s[1], s[3]) - pad);
        bx1 = fmax(bx1, fmax(s[0], s[2]) + pad);
        by1 = fmax(by1, fmax(s[1], s[3]) + pad);
    }
    if (bx0 > bx1) return 0;
    int x0 = (int)clampd(floor(bx0), 0, c->width), y0 = (int)clampd(floor(by0), 0, c->height);
    int x1 = (int)clampd(ceil(bx1), 0, c->width), y1 = (int)clampd(ceil(by1), 0, c->height);
    if (x1 <= x0 || y1 <= y0) return 0;
    size_t mw = (size_t)(x1 - x0), mh = (size_t)(y1 - y0);
    uint8_t *mask = calloc(mw * mh, 1);
    int *span = malloc(2 * mh * sizeof *span); /* per mask row: the columns [lo, hi) touched */
    if (!mask || !span) {
        free(mask);
        free(span);
        return -1;
    }
    for (size_t r = 0; r < mh; r++) span[2 * r] = x1, span[2 * r + 1] = x0;
    double reach = hw + 0.5; /* coverage is 0 at this distance from the segment and beyond */
    for (size_t i = 0; i < nseg; i++) {
        const double *s = seg + 4 * i;
        if (!seg_ok(s)) continue;
        int sx0 = (int)clampd(floor(fmin(s[0], s[2]) - pad), x0, x1);
        int sx1 = (int)clampd(ceil(fmax(s[0], s[2]) + pad), x0, x1);
        int sy0 = (int)clampd(floor(fmin(s[1], s[3]) - pad), y0, y1);
        int sy1 = (int)clampd(ceil(fmax(s[1], s[3]) + pad), y0, y1);
        for (int y = sy0; y < sy1; y++) {
            /* only this row's x-span of the stroke shape: the cost follows the shape's
             * area, not its bounding box (a long diagonal) */
            double xa, xb;
            if (!seg_row_span(s, y + 0.5, reach, &xa, &xb)) continue;
            int rx0 = (int)clampd(floor(xa - 0.5) - 1, sx0, sx1), rx1 = (int)clampd(ceil(xb - 0.5) + 2, sx0, sx1);
            if (rx1 <= rx0) continue;
            uint8_t *row = mask + (size_t)(y - y0) * mw;
            int *sp = span + 2 * (size_t)(y - y0);
            if (rx0 < sp[0]) sp[0] = rx0;
            if (rx1 > sp[1]) sp[1] = rx1;
            for (int x = rx0; x < rx1; x++) {
                double cov = clamp01(hw + 0.5 - psdl_seg_dist(x + 0.5, y + 0.5, s[0], s[1], s[2], s[3]));
                /* a line thinner than a pixel: coverage no more than its width */
                if (width < 1) cov *= width;
                unsigned m = (unsigned)(cov * 255.0 + 0.5);
                if (m > row[x - x0]) row[x - x0] = (uint8_t)m;
            }
        }
    }
    unsigned alpha = rgba & 255u;
    for (int y = y0; y < y1; y++) {
        const uint8_t *row = mask + (size_t)(y - y0) * mw;
        const int *sp = span + 2 * (size_t)(y - y0);
        for (int x = sp[0]; x < sp[1]; x++) {
            unsigned m = row[x - x0];
            if (m) blend_px(px_at(c, x, y), rgba, (alpha * m + 127u) / 255u);
        }
    }
    free(mask);
    free(span);
    return 0;
}

/* Signed distance (pixels, negative inside) from (dx, dy) to a shape of radius r. */
static double shape_dist(int shape, double dx, double dy, double r) {
    switch (shape) {
    case PSDL_MARK_DIAMOND: return (fabs(dx) + fabs(dy) - r) * 0.70710678118654752;
    case PSDL_MARK_SQUARE: return fmax(fabs(dx), fabs(dy)) - r;
    default: return sqrt(dx * dx + dy * dy) - r;
    }
}

void psdl_canvas_marker(psdl_canvas *c, double x, double y, double r, int shape, uint32_t fill,
                        double outline_width, uint32_t outline) {
    if (!(fabs(x) <= COORD_LIMIT) || !(fabs(y) <= COORD_LIMIT) || !(r > 0) || !(r < 1e6)) return;
    if (!(outline_width > 0) || !(outline_width < 1e6)) outline_width = 0;
    double ext = r + outline_width + 1.5;
    int x0 = (int)clampd(floor(x - ext), 0, c->width), x1 = (int)clampd(ceil(x + ext), 0, c->width);
    int y0 = (int)clampd(floor(y - ext), 0, c->height), y1 = (int)clampd(ceil(y + ext), 0, c->height);
    for (int py = y0; py < y1; py++)
        for (int px = x0; px < x1; px++) {
            double d = shape_dist(shape, px + 0.5 - x, py + 0.5 - y, r);
            uint8_t *p = px_at(c, px, py);
            if (outline_width > 0) {
                double co = clamp01(0.5 - (d - outline_width));
                if (co > 0) blend_px(p, outline, (unsigned)((outline & 255u) * co + 0.5));
            }
            double cf = clamp01(0.5 - d);
            if (cf > 0) blend_px(p, fill, (unsigned)((fill & 255u) * cf + 0.5));
        }
}

/* ================================================================== font */

/* Printable ASCII 32..126, 7 rows of 5 columns each, '#' = ink. */
static const char *const FONT[95] = {
    /*   */ "....." "....." "....." "....." "....." "....." ".....",
    /* ! */ "..#.." "..#.." "..#.." "..#.." "..#.." "....." "..#..",
    /* " */ ".#.#." ".#.#." ".#.#." "....." "....." "....." ".....",
    /* # */ ".#.#." ".#.#." "#####" ".#.#." "#####" ".#.#." ".#.#.",
    /* $ */ "..#.." ".####" "#.#.." ".###." "..#.#" "####." "..#..",
    /* % */ "##..." "##..#" "...#." "..#.." ".#..." "#..##" "...##",
    /* & */ ".##.." "#..#." "#.#.." ".#..." "#.#.#" "#..#." ".##.#",
    /* ' */ "..#.." "..#.." ".#..." "....." "....." "....." ".....",
    /* ( */ "...#." "..#.." ".#..." ".#..." ".#..." "..#.." "...#.",
    /* ) */ ".#..." "..#.." "...#." "...#." "...#." "..#.." ".#...",
    /* * */ "....." "..#.." "#.#.#" ".###." "#.#.#" "..#.." ".....",
    /* + */ "....." "..#.." "..#.." "#####" "..#.." "..#.." ".....",
    /* , */ "....." "....." "....." "....." ".##.." "..#.." ".#...",
    /* - */ "....." "....." "....." "#####" "....." "....." ".....",
    /* . */ "....." "....." "....." "....." "....." ".##.." ".##..",
    /* / */ "....." "....#" "...#." "..#.." ".#..." "#...." ".....",
    /* 0 */ ".###." "#...#" "#..##" "#.#.#" "##..#" "#...#" ".###.",
    /* 1 */ "..#.." ".##.." "..#.." "..#.." "..#.." "..#.." ".###.",
    /* 2 */ ".###." "#...#" "....#" "...#." "..#.." ".#..." "#####",
    /* 3 */ "#####" "...#." "..#.." "...#." "....#" "#...#" ".###.",
    /* 4 */ "...#." "..##." ".#.#." "#..#." "#####" "...#." "...#.",
    /* 5 */ "#####" "#...." "####." "....#" "....#" "#...#" ".###.",
    /* 6 */ "..##." ".#..." "#...." "####." "#...#" "#...#" ".###.",
    /* 7 */ "#####" "....#" "...#." "..#.." ".#..." ".#..." ".#...",
    /* 8 */ ".###." "#...#" "#...#" ".###." "#...#" "#...#" ".###.",
    /* 9 */ ".###." "#...#" "#...#" ".####" "....#" "...#." ".##..",
    /* : */ "....." ".##.." ".##.." "....." ".##.." ".##.." ".....",
    /* ; */ "....." ".##.." ".##.." "....." ".##.." "..#.." ".#...",
    /* < */ "...#." "..#.." ".#..." "#...." ".#..." "..#.." "...#.",
    /* = */ "....." "....." "#####" "....." "#####" "....." ".....",
    /* > */ ".#..." "..#.." "...#." "....#" "...#." "..#.." ".#...",
    /* ? */ ".###." "#...#" "....#" "...#." "..#.." "....." "..#..",
    /* @ */ ".###." "#...#" "....#" ".##.#" "#.#.#" "#.#.#" ".###.",
    /* A */ ".###." "#...#" "#...#" "#####" "#...#" "#...#" "#...#",
    /* B */ "####." "#...#" "#...#" "####." "#...#" "#...#" "####.",
    /* C */ ".###." "#...#" "#...." "#...." "#...." "#...#" ".###.",
    /* D */ "###.." "#..#." "#...#" "#...#" "#...#" "#..#." "###..",
    /* E */ "#####" "#...." "#...." "####." "#...." "#...." "#####",
    /* F */ "#####" "#...." "#...." "####." "#...." "#...." "#....",
    /* G */ ".###." "#...#" "#...." "#.###" "#...#" "#...#" ".####",
    /* H */ "#...#" "#...#" "#...#" "#####" "#...#" "#...#" "#...#",
    /* I */ ".###." "..#.." "..#.." "..#.." "..#.." "..#.." ".###.",
    /* J */ "..###" "...#." "...#." "...#." "...#." "#..#." ".##..",
    /* K */ "#...#" "#..#." "#.#.." "##..." "#.#.." "#..#." "#...#",
    /* L */ "#...." "#...." "#...." "#...." "#...." "#...." "#####",
    /* M */ "#...#" "##.##" "#.#.#" "#.#.#" "#...#" "#...#" "#...#",
    /* N */ "#...#" "#...#" "##..#" "#.#.#" "#..##" "#...#" "#...#",
    /* O */ ".###." "#...#" "#...#" "#...#" "#...#" "#...#" ".###.",
    /* P */ "####." "#...#" "#...#" "####." "#...." "#...." "#....",
    /* Q */ ".###." "#...#" "#...#" "#...#" "#.#.#" "#..#." ".##.#",
    /* R */ "####." "#...#" "#...#" "####." "#.#.." "#..#." "#...#",
    /* S */ ".####" "#...." "#...." ".###." "....#" "....#" "####.",
    /* T */ "#####" "..#.." "..#.." "..#.." "..#.." "..#.." "..#..",
    /* U */ "#...#" "#...#" "#...#" "#...#" "#...#" "#...#" ".###.",
    /* V */ "#...#" "#...#" "#...#" "#...#" "#...#" ".#.#." "..#..",
    /* W */ "#...#" "#...#" "#...#" "#.#.#" "#.#.#" "#.#.#" ".#.#.",
    /* X */ "#...#" "#...#" ".#.#." "..#.." ".#.#." "#...#" "#...#",
    /* Y */ "#...#" "#...#" "#...#" ".#.#." "..#.." "..#.." "..#..",
    /* Z */ "#####" "....#" "...#." "..#.." ".#..." "#...." "#####",
    /* [ */ ".###." ".#..." ".#..." ".#..." ".#..." ".#..." ".###.",
    /* \ */ "....." "#...." ".#..." "..#.." "...#." "....#" ".....",
    /* ] */ ".###." "...#." "...#." "...#." "...#." "...#." ".###.",
    /* ^ */ "..#.." ".#.#." "#...#" "....." "....." "....." ".....",
    /* _ */ "....." "....." "....." "....." "....." "....." "#####",
    /* ` */ ".#..." "..#.." "...#." "....." "....." "....." ".....",
    /* a */ "....." "....." ".###." "....#" ".####" "#...#" ".####",
    /* b */ "#...." "#...." "#.##." "##..#" "#...#" "#...#" "####.",
    /* c */ "....." "....." ".###." "#...." "#...." "#...#" ".###.",
    /* d */ "....#" "....#" ".##.#" "#..##" "#...#" "#...#" ".####",
    /* e */ "....." "....." ".###." "#...#" "#####" "#...." ".###.",
    /* f */ "..##." ".#..#" ".#..." "###.." ".#..." ".#..." ".#...",
    /* g */ "....." "....." ".####" "#...#" ".####" "....#" ".###.",
    /* h */ "#...." "#...." "#.##." "##..#" "#...#" "#...#" "#...#",
    /* i */ "..#.." "....." ".##.." "..#.." "..#.." "..#.." ".###.",
    /* j */ "...#." "....." "..##." "...#." "...#." "#..#." ".##..",
    /* k */ "#...." "#...." "#..#." "#.#.." "##..." "#.#.." "#..#.",
    /* l */ ".##.." "..#.." "..#.." "..#.." "..#.." "..#.." ".###.",
    /* m */ "....." "....." "##.#." "#.#.#" "#.#.#" "#...#" "#...#",
    /* n */ "....." "....." "#.##." "##..#" "#...#" "#...#" "#...#",
    /* o */ "....." "....." ".###." "#...#" "#...#" "#...#" ".###.",
    /* p */ "....." "....." "####." "#...#" "####." "#...." "#....",
    /* q */ "....." "....." ".##.#" "#..##" ".####" "....#" "....#",
    /* r */ "....." "....." "#.##." "##..#" "#...." "#...." "#....",
    /* s */ "....." "....." ".###." "#...." ".###." "....#" "####.",
    /* t */ ".#..." ".#..." "###.." ".#..." ".#..." ".#..#" "..##.",
    /* u */ "....." "....." "#...#" "#...#" "#...#" "#..##" ".##.#",
    /* v */ "....." "....." "#...#" "#...#" "#...#" ".#.#." "..#..",
    /* w */ "....." "....." "#...#" "#...#" "#.#.#" "#.#.#" ".#.#.",
    /* x */ "....." "....." "#...#" ".#.#." "..#.." ".#.#." "#...#",
    /* y */ "....." "....." "#...#" "#...#" ".####" "....#" ".###.",
    /* z */ "....." "....." "#####" "...#." "..#.." ".#..." "#####",
    /* { */ "...#." "..#.." "..#.." ".#..." "..#.." "..#.." "...#.",
    /* | */ "..#.." "..#.." "..#.." "..#.." "..#.." "..#.." "..#..",
    /* } */ ".#..." "..#.." "..#.." "...#." "..#.." "..#.." ".#...",
    /* ~ */ "....." "....." ".#..." "#.#.#" "...#." "....." ".....",
};

static const char BOX[] = "#####" "#...#" "#...#" "#...#" "#...#" "#...#" "#####";

/* Whether font pixel (gx, gy) of byte ch is ink. */
static int glyph_ink(unsigned char ch, int gx, int gy) {
    const char *g = (ch >= 32 && ch <= 126) ? FONT[ch - 32] : BOX;
    return g[gy * PSDL_FONT_W + gx] == '#';
}

int psdl_text_width(size_t len, int scale) {
    if (len == 0 || scale < 1) return 0;
    /* the limits psdl_canvas_text draws with: at most (4096 * 6 - 1) * 64, no overflow */
    if (len > PSDL_TEXT_MAX_LEN) len = PSDL_TEXT_MAX_LEN;
    if (scale > PSDL_TEXT_MAX_SCALE) scale = PSDL_TEXT_MAX_SCALE;
    return (int)(len * PSDL_FONT_ADVANCE - 1) * scale;
}

int psdl_canvas_text(psdl_canvas *c, int x, int y, const char *text, size_t len, int scale, uint32_t rgba,
                     uint32_t halo) {
    if (scale < 1) scale = 1;
    if (scale > PSDL_TEXT_MAX_SCALE) scale = PSDL_TEXT_MAX_SCALE;
    if (len > PSDL_TEXT_MAX_LEN) len = PSDL_TEXT_MAX_LEN;
    int w = psdl_text_width(len, scale);
    if (w == 0) return 0;
    int h = (halo & 255u) ? (scale + 1) / 2 : 0;
    /* the text's box with its halo, in canvas coordinates (64-bit: x may be far out) */
    int64_t bx0 = (int64_t)x - h, by0 = (int64_t)y - h;
    int64_t bx1 = (int64_t)x + w + h, by1 = (int64_t)y + PSDL_FONT_H * scale + h;
    /* the mask covers only the part on the canvas: 1 halo, 2 ink */
    int64_t mx0 = bx0 < 0 ? 0 : bx0, my0 = by0 < 0 ? 0 : by0;
    int64_t mx1 = bx1 > c->width ? c->width : bx1, my1 = by1 > c->height ? c->height : by1;
    if (mx1 <= mx0 || my1 <= my0) return w;
    size_t mw = (size_t)(mx1 - mx0), mh = (size_t)(my1 - my0);
    uint8_t *mask = calloc(mw * mh, 1);
    if (!mask) return -1;
    for (size_t i = 0; i < len; i++) {
        int64_t gx0 = (int64_t)x + (int64_t)i * PSDL_FONT_ADVANCE * scale;
        if (gx0 - h >= mx1 || gx0 + PSDL_FONT_W * scale + h <= mx0) continue; /* off the canvas */
        for (int gy = 0; gy < PSDL_FONT_H; gy++)
            for (int gx = 0; gx < PSDL_FONT_W; gx++) {
                if (!glyph_ink((unsigned char)text[i], gx, gy)) continue;
                int64_t ix = gx0 + gx * scale, iy = (int64_t)y + gy * scale; /* the ink block */
                for (int64_t yy = iy - h; yy < iy + scale + h; yy++) {
                    if (yy < my0 || yy >= my1) continue;
                    for (int64_t xx = ix - h; xx < ix + scale + h; xx++) {
                        if (xx < mx0 || xx >= mx1) continue;
                        uint8_t *m = mask + (size_t)(yy - my0) * mw + (size_t)(xx - mx0);
                        int ink = xx >= ix && xx < ix + scale && yy >= iy && yy < iy + scale;
                        if (ink) *m = 2;
                        else if (*m == 0) *m = 1;
                    }
                }
            }
    }
    for (size_t yy = 0; yy < mh; yy++)
        for (size_t xx = 0; xx < mw; xx++) {
            uint8_t m = mask[yy * mw + xx];
            if (!m) continue;
            uint8_t *p = px_at(c, (int)(mx0 + (int64_t)xx), (int)(my0 + (int64_t)yy));
            if (m == 2) blend_px(p, rgba, rgba & 255u);
            else blend_px(p, halo, halo & 255u);
        }
    free(mask);
    return w;
}

/* ================================================================== downsampling */

psdl_canvas *psdl_canvas_downsample(const psdl_canvas *c, int factor) {
    if (factor < 1 || factor > 64) return NULL;
    int w = c->width / factor, h = c->height / factor;
    if (w < 1) w = 1;
    if (h < 1) h = 1;
    psdl_canvas *d = canvas_alloc(w, h);
    if (!d) return NULL;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint64_t sr = 0, sg = 0, sb = 0, sa = 0, n = 0;
            for (int yy = y * factor; yy < (y + 1) * factor && yy < c->height; yy++)
                for (int xx = x * factor; xx < (x + 1) * factor && xx < c->width; xx++) {
                    const uint8_t *p = c->rgba + ((size_t)yy * (size_t)c->width + (size_t)xx) * 4u;
                    sr += (uint64_t)p[0] * p[3];
                    sg += (uint64_t)p[1] * p[3];
                    sb += (uint64_t)p[2] * p[3];
                    sa += p[3];
                    n++;
                }
            uint8_t *q = d->rgba + ((size_t)y * (size_t)w + (size_t)x) * 4u;
            if (sa == 0) {
                q[0] = q[1] = q[2] = q[3] = 0;
            } else {
                q[0] = (uint8_t)((sr + sa / 2) / sa);
                q[1] = (uint8_t)((sg + sa / 2) / sa);
                q[2] = (uint8_t)((sb + sa / 2) / sa);
                q[3] = (uint8_t)((sa + n / 2) / n);
            }
        }
    return d;
}

/* ================================================================== PNG */

typedef struct png_io {
    psdl_png_io m; /* first: libpng's error and io pointer (code: default invalid) */
    uint8_t *row;  /* writing: one RGB row */
    /* reading */
    size_t idat_bytes; /* compressed image data (psdl_png_prescan) */
    psdl_canvas *canvas;
    png_bytep *rows;
} png_io;

static int opaque(const psdl_canvas *c) {
    size_t n = (size_t)c->width * (size_t)c->height;
    for (size_t i = 0; i < n; i++)
        if (c->rgba[4 * i + 3] != 255) return 0;
    return 1;
}

static int png_write_inner(png_structp png, png_infop info, png_io *io, const psdl_canvas *c, int level, int rgb) {
    if (setjmp(png_jmpbuf(png))) return 0;
    png_set_write_fn(png, &io->m, psdl_png_io_write, psdl_png_io_flush);
    png_set_compression_level(png, level);
    png_set_IHDR(png, info, (png_uint_32)c->width, (png_uint_32)c->height, 8,
                 rgb ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_RGBA, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int y = 0; y < c->height; y++) {
        const uint8_t *src = c->rgba + (size_t)y * (size_t)c->width * 4u;
        if (rgb) {
            for (int x = 0; x < c->width; x++) {
                io->row[3 * x] = src[4 * x];
                io->row[3 * x + 1] = src[4 * x + 1];
                io->row[3 * x + 2] = src[4 * x + 2];
            }
            png_write_row(png, io->row);
        } else {
            png_write_row(png, src);
        }
    }
    png_write_end(png, NULL);
    return 1;
}

psdl_status psdl_canvas_png_encode(const psdl_canvas *c, int level, void **out, size_t *out_size,
                                   psdl_error *err) {
    *out = NULL;
    *out_size = 0;
    if (!c || !size_ok(c->width, c->height))
        return psdl_fail(err, PSDL_E_INVALID, 0, 0, -1, -1, "canvas size out of range");
    if (level < 0) level = 0;
    if (level > 9) level = 9;
    png_io io;
    memset(&io, 0, sizeof io);
    io.m.first_cap = 65536;
    int rgb = opaque(c);
    if (rgb) {
        io.row = malloc((size_t)c->width * 3u);
        if (!io.row) return psdl_fail(err, PSDL_E_NOMEM, 0, 0, -1, -1, "out of memory");
    }
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &io.m, psdl_png_io_error, psdl_png_io_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    int ok = png && info && png_write_inner(png, info, &io, c, level, rgb);
    png_destroy_write_struct(png ? &png : NULL, info ? &info : NULL);
    free(io.row);
    if (!ok) {
        free(io.m.out);
        if (io.m.out_failed || !io.m.message[0]) return psdl_fail(err, PSDL_E_NOMEM, 0, 0, -1, -1, "out of memory");
        return psdl_fail(err, PSDL_E_INVALID, 0, 0, -1, -1, "PNG: %s", io.m.message);
    }
    *out = io.m.out;
    *out_size = io.m.out_size;
    return PSDL_OK;
}

void psdl_canvas_png_free(void *p) { free(p); }

/* Reads the image into io->canvas. Returns 1, or 0 with io->m.code/message set. */
static int png_read_inner(png_structp png, png_infop info, png_io *io) {
    if (setjmp(png_jmpbuf(png))) return 0;
    png_set_read_fn(png, &io->m, psdl_png_io_read);
    png_set_user_limits(png, PSDL_CANVAS_MAX_SIDE, PSDL_CANVAS_MAX_SIDE);
    png_set_chunk_malloc_max(png, PSDL_PNG_CHUNK_LIMIT);
    png_set_chunk_cache_max(png, 64);
    png_read_info(png, info);
    png_uint_32 w = 0, h = 0;
    int depth = 0, color = 0;
    png_get_IHDR(png, info, &w, &h, &depth, &color, NULL, NULL, NULL);
    if (!size_ok((int)w, (int)h) || w > PSDL_CANVAS_MAX_SIDE || h > PSDL_CANVAS_MAX_SIDE) {
        io->m.code = PSDL_E_BAD_COUNT;
        snprintf(io->m.message, sizeof io->m.message, "image of %lu x %lu pixels is over the limit", (unsigned long)w,
                 (unsigned long)h);
        return 0;
    }
    /* The filtered scanlines (a filter byte per row, then the packed samples; interlacing
     * only adds bytes) must fit what the IDAT data can inflate to, so that a small header
     * claiming a huge image gets no huge canvas. */
    uint64_t channels = color == PNG_COLOR_TYPE_GRAY_ALPHA ? 2 : color == PNG_COLOR_TYPE_RGB ? 3
                        : color == PNG_COLOR_TYPE_RGB_ALPHA ? 4 : 1;
    uint64_t raw = ((uint64_t)w * (uint64_t)depth * channels + 7) / 8 + 1;
    raw *= h;
    if (raw > (uint64_t)PSDL_PNG_MAX_INFLATE * ((uint64_t)io->idat_bytes + 1)) {
        io->m.code = PSDL_E_BAD_COUNT;
        snprintf(io->m.message, sizeof io->m.message,
                 "image of %lu x %lu pixels needs %llu bytes of scanlines, more than its %zu bytes of compressed "
                 "data can hold",
                 (unsigned long)w, (unsigned long)h, (unsigned long long)raw, io->idat_bytes);
        return 0;
    }
    png_set_expand(png); /* palette -> RGB, grey < 8 bits -> 8, tRNS -> alpha */
    png_set_strip_16(png);
    if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
    if (!(color & PNG_COLOR_MASK_ALPHA) && !png_get_valid(png, info, PNG_INFO_tRNS))
        png_set_add_alpha(png, 0xFF, PNG_FILLER_AFTER);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != (size_t)w * 4u) {
        io->m.code = PSDL_E_INVALID;
        snprintf(io->m.message, sizeof io->m.message, "unexpected row size after conversion to RGBA");
        return 0;
    }
    io->canvas = canvas_alloc((int)w, (int)h);
    io->rows = io->canvas ? malloc(sizeof(png_bytep) * h) : NULL;
    if (!io->rows) {
        io->m.code = PSDL_E_NOMEM;
        snprintf(io->m.message, sizeof io->m.message, "out of memory");
        return 0;
    }
    for (png_uint_32 y = 0; y < h; y++) io->rows[y] = io->canvas->rgba + (size_t)y * (size_t)w * 4u;
    png_read_image(png, io->rows);
    png_read_end(png, NULL);
    return 1;
}

psdl_status psdl_canvas_png_decode(const void *data, size_t size, psdl_canvas **out, psdl_error *err) {
    *out = NULL;
    if (size < 8 || png_sig_cmp((png_const_bytep)data, 0, 8) != 0)
        return psdl_fail(err, PSDL_E_BAD_MAGIC, 0, 1, -1, -1, "not a PNG file (no PNG signature)");
    png_io io;
    memset(&io, 0, sizeof io);
    psdl_status st = psdl_png_prescan(data, size, &io.idat_bytes, err);
    if (st != PSDL_OK) return st;
    io.m.code = PSDL_E_INVALID;
    io.m.in = data;
    io.m.in_size = size;
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &io.m, psdl_png_io_error, psdl_png_io_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_read_struct(png ? &png : NULL, NULL, NULL);
        return psdl_fail(err, PSDL_E_NOMEM, 0, 0, -1, -1, "out of memory");
    }
    int ok = png_read_inner(png, info, &io);
    png_destroy_read_struct(&png, &info, NULL);
    free(io.rows);
    if (!ok) {
        psdl_canvas_free(io.canvas);
        return psdl_fail(err, io.m.code, 0, 0, -1, -1, "PNG: %s", io.m.message[0] ? io.m.message : "decoding failed");
    }
    *out = io.canvas;
    return PSDL_OK;
}
