/* test_raster.c -- plain-C tests of the map canvas (src/psdl_raster.c), no Lua.
 *
 *   psdl_ctest_raster [ignored arguments]
 *
 * Every CHECK counts once. The last line printed is "c: N passed, N failed"; the exit status
 * is non-zero when any check failed.
 *
 * Sections: a) triangles: exact pixel counts, the top-left rule, shared edges painted once,
 * counts against areas for many random triangles, huge and non-finite coordinates; b)
 * polygons (even-odd holes, agreement with the triangle filler), stripe paints; c) strokes,
 * markers, text; d) downsampling; e) PNG: signature, IHDR, pixels read back, RGBA, bad and
 * truncated input; f) hostile coordinates (huge, infinite, NaN) and text far off the canvas;
 * g) limits: text width clamping, strokes against a per-pixel reference (and their cost),
 * PNG headers claiming more than their data holds, chunks past the end. */
#include "psdl_raster.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

#define BLACK 0x000000FFu
#define WHITE 0xFFFFFFFFu
#define RED 0xFF0000FFu

/* Pixels of c equal to rgba. */
static size_t count_color(const psdl_canvas *c, uint32_t rgba) {
    size_t n = 0;
    for (int y = 0; y < c->height; y++)
        for (int x = 0; x < c->width; x++) n += psdl_canvas_get(c, x, y) == rgba;
    return n;
}

static size_t tri(psdl_canvas *c, double x0, double y0, double x1, double y1, double x2, double y2, uint32_t rgba) {
    double xy[6] = {x0, y0, x1, y1, x2, y2};
    psdl_paint p = psdl_paint_solid(rgba);
    return psdl_canvas_triangle(c, xy, &p);
}

/* A small deterministic generator (xorshift). */
static uint32_t g_rng = 12345u;
static double rnd(double lo, double hi) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 17;
    g_rng ^= g_rng << 5;
    return lo + (hi - lo) * (g_rng / 4294967296.0);
}

/* ================================================================ a) triangles */

static void test_triangles(void) {
    psdl_canvas *c = psdl_canvas_new(128, 128, BLACK);
    CHECK(c != NULL);
    if (!c) return;

    /* right triangle with legs of 100: pixels with x + y + 1 < 100 (the hypotenuse is a
     * right edge and excluded), i.e. 99 + 98 + ... + 1 = 4950, area 5000 */
    size_t n = tri(c, 0, 0, 100, 0, 0, 100, RED);
    CHECKF(n == 4950, "%zu", n);
    CHECK(count_color(c, RED) == 4950);
    CHECK(psdl_canvas_get(c, 0, 0) == RED);
    CHECK(psdl_canvas_get(c, 98, 0) == RED);
    CHECK(psdl_canvas_get(c, 99, 0) == BLACK); /* centre 99.5 + 0.5 = 100: on the hypotenuse */
    CHECK(psdl_canvas_get(c, 50, 49) == BLACK);
    CHECK(psdl_canvas_get(c, 49, 49) == RED);
    CHECK(psdl_canvas_get(c, 48, 50) == RED);
    /* either winding gives the same pixels */
    psdl_canvas *d = psdl_canvas_new(128, 128, BLACK);
    CHECK(tri(d, 0, 0, 0, 100, 100, 0, RED) == 4950);
    CHECK(memcmp(c->rgba, d->rgba, (size_t)128 * 128 * 4) == 0);
    psdl_canvas_free(d);

    /* an axis-aligned 10 x 10 square as two triangles, at integer and at half-pixel
     * positions: exactly 100 pixels, each painted once (a translucent colour would show a
     * double blend as a different value) */
    static const double offs[3][2] = {{10, 10}, {20.5, 30.5}, {40.25, 60.75}};
    for (int k = 0; k < 3; k++) {
        psdl_canvas *s = psdl_canvas_new(80, 80, BLACK);
        double ox = offs[k][0], oy = offs[k][1];
        uint32_t half = 0xFFFFFF80u;
        size_t a = tri(s, ox, oy, ox + 10, oy, ox + 10, oy + 10, half);
        size_t b = tri(s, ox, oy, ox + 10, oy + 10, ox, oy + 10, half);
        CHECKF(a + b == 100, "offset %g,%g: %zu + %zu", ox, oy, a, b);
        uint32_t once = psdl_canvas_get(s, (int)ox + 5, (int)oy + 5);
        CHECKF(((once >> 24) & 255u) == 128 && count_color(s, once) == 100, "%08x x %zu", (unsigned)once,
               count_color(s, once));
        psdl_canvas_free(s);
    }

    /* a fan of 12 triangles around a centre (shared edges at every angle): each pixel of
     * the disc painted once */
    {
        psdl_canvas *s = psdl_canvas_new(100, 100, BLACK);
        uint32_t q = 0x00FF0040u;
        size_t total = 0;
        for (int i = 0; i < 12; i++) {
            double a0 = i * 3.14159265358979 / 6, a1 = (i + 1) * 3.14159265358979 / 6;
            total += tri(s, 50.3, 49.7, 50.3 + 40 * cos(a0), 49.7 + 40 * sin(a0), 50.3 + 40 * cos(a1),
                         49.7 + 40 * sin(a1), q);
        }
        uint32_t once = psdl_canvas_get(s, 50, 50);
        size_t same = count_color(s, once), untouched = count_color(s, BLACK);
        CHECKF(same == total && same + untouched == 100 * 100, "fan: %zu painted once, %zu total, %zu untouched",
               same, total, untouched);
        /* area of the dodecagon: 3 r^2 = 4800 */
        CHECKF(fabs((double)total - 4800.0) < 0.03 * 4800, "%zu", total);
        psdl_canvas_free(s);
    }

    /* random triangles: the pixel count is the area within the pixels along the edges */
    int bad = 0;
    for (int i = 0; i < 500; i++) {
        double xy[6];
        for (int k = 0; k < 6; k++) xy[k] = rnd(2, 126);
        double area = fabs((xy[2] - xy[0]) * (xy[5] - xy[1]) - (xy[3] - xy[1]) * (xy[4] - xy[0])) / 2;
        double perim = hypot(xy[2] - xy[0], xy[3] - xy[1]) + hypot(xy[4] - xy[2], xy[5] - xy[3]) +
                       hypot(xy[0] - xy[4], xy[1] - xy[5]);
        psdl_canvas *s = psdl_canvas_new(128, 128, BLACK);
        psdl_paint p = psdl_paint_solid(RED);
        size_t got = psdl_canvas_triangle(s, xy, &p);
        /* the polygon filler samples the same centres */
        psdl_canvas *t = psdl_canvas_new(128, 128, BLACK);
        size_t poly = psdl_canvas_polygon(t, xy, 3, &p);
        if (fabs((double)got - area) > perim / 2 + 2 || count_color(s, RED) != got ||
            (area > 1 && fabs((double)got - (double)poly) > 2)) {
            if (bad++ < 5)
                printf("  triangle %d: %zu pixels (polygon %zu), area %.1f, perimeter %.1f\n", i, got, poly, area,
                       perim);
        }
        psdl_canvas_free(s);
        psdl_canvas_free(t);
    }
    CHECKF(bad == 0, "%d of 500 random triangles off", bad);

    /* a large triangle: relative error below 0.5 % */
    {
        psdl_canvas *s = psdl_canvas_new(1000, 1000, BLACK);
        size_t got = tri(s, 13.3, 20.7, 980.2, 140.9, 400.6, 990.1, RED);
        double area = fabs((980.2 - 13.3) * (990.1 - 20.7) - (140.9 - 20.7) * (400.6 - 13.3)) / 2;
        CHECKF(fabs((double)got - area) / area < 0.005, "%zu vs %.1f", got, area);
        psdl_canvas_free(s);
    }

    /* clipping, degenerate, huge and non-finite input */
    psdl_canvas *e = psdl_canvas_new(50, 40, BLACK);
    CHECK(tri(e, -100, -100, 300, -100, -100, 300, RED) == 50 * 40); /* covers the canvas */
    CHECK(tri(e, 5, 5, 10, 10, 20, 20, RED) == 0);                    /* collinear */
    CHECK(tri(e, 5, 5, 5, 5, 5, 5, RED) == 0);
    CHECK(tri(e, -1e9, -1e9, 3e9, -1e9, -1e9, 3e9, RED) == 50 * 40); /* beyond the fixed-point range */
    CHECK(tri(e, NAN, 0, 10, 0, 0, 10, RED) == 0);
    CHECK(tri(e, INFINITY, 0, 10, 0, 0, 10, RED) == 0);
    CHECK(tri(e, 100, 100, 200, 100, 100, 200, RED) == 0); /* outside */
    double many[12] = {0, 0, 10, 0, 0, 10, 20, 20, 30, 20, 20, 30};
    psdl_paint p = psdl_paint_solid(RED);
    psdl_canvas *f = psdl_canvas_new(50, 50, BLACK);
    CHECK(psdl_canvas_triangles(f, many, 2, &p) == 45 + 45);
    psdl_canvas_free(f);
    psdl_canvas_free(e);
    psdl_canvas_free(c);
}

/* ================================================================ b) polygons, stripes */

static void test_polygons(void) {
    psdl_canvas *c = psdl_canvas_new(64, 64, BLACK);
    psdl_paint p = psdl_paint_solid(WHITE);
    /* a 40 x 40 square with a 20 x 20 hole (even-odd: the hole's winding does not matter) */
    double ring[16] = {10, 10, 50, 10, 50, 50, 10, 50, 20, 20, 40, 20, 40, 40, 20, 40};
    double outer[8], inner[8];
    memcpy(outer, ring, sizeof outer);
    memcpy(inner, ring + 8, sizeof inner);
    CHECK(psdl_canvas_polygon(c, outer, 4, &p) == 1600);
    psdl_canvas *h = psdl_canvas_new(64, 64, BLACK);
    /* one polygon with the hole as a second loop joined by a zero-width cut */
    double cut[20] = {10, 10, 50, 10, 50, 50, 10, 50, 10, 20, 20, 20, 20, 40, 40, 40, 40, 20, 10, 20};
    size_t n = psdl_canvas_polygon(h, cut, 10, &p);
    CHECKF(n == 1600 - 400, "%zu", n);
    CHECK(psdl_canvas_get(h, 30, 30) == BLACK);
    CHECK(psdl_canvas_get(h, 15, 30) == WHITE);
    (void)inner;
    /* a concave L */
    psdl_canvas *l = psdl_canvas_new(64, 64, BLACK);
    double L[12] = {0, 0, 30, 0, 30, 10, 10, 10, 10, 30, 0, 30};
    CHECK(psdl_canvas_polygon(l, L, 6, &p) == 300 + 200);
    /* fewer than 3 points, non-finite */
    CHECK(psdl_canvas_polygon(l, L, 2, &p) == 0);
    double bad[6] = {0, 0, NAN, 5, 5, 5};
    CHECK(psdl_canvas_polygon(l, bad, 3, &p) == 0);

    /* stripes: vertical bands 4 px apart, 1 px wide (period 4, duty 0.25, across x) */
    psdl_canvas *s = psdl_canvas_new(64, 64, BLACK);
    psdl_paint st = psdl_paint_solid(RED);
    st.dx = 1;
    st.dy = 0;
    st.period = 4;
    st.duty = 0.25;
    double sq[12] = {0, 0, 40, 0, 40, 40, 0, 0, 40, 40, 0, 40};
    size_t inside = psdl_canvas_triangles(s, sq, 2, &st);
    CHECK(inside == 1600);
    CHECKF(count_color(s, RED) == 400, "%zu", count_color(s, RED));
    CHECK(psdl_canvas_get(s, 0, 7) == RED && psdl_canvas_get(s, 1, 7) == BLACK && psdl_canvas_get(s, 4, 7) == RED);
    /* diagonal hatching covers about duty of the area */
    psdl_canvas *d = psdl_canvas_new(64, 64, BLACK);
    psdl_paint hatch = psdl_paint_solid(RED);
    hatch.dx = hatch.dy = 0.70710678;
    hatch.period = 6;
    hatch.duty = 0.5;
    double full[8] = {0, 0, 64, 0, 64, 64, 0, 64};
    CHECK(psdl_canvas_polygon(d, full, 4, &hatch) == 64 * 64);
    size_t hatched = count_color(d, RED);
    CHECKF(fabs((double)hatched - 2048) < 64 * 2, "%zu", hatched);

    psdl_canvas_free(c);
    psdl_canvas_free(h);
    psdl_canvas_free(l);
    psdl_canvas_free(s);
    psdl_canvas_free(d);
}

/* ================================================================ c) strokes, markers, text */

static void test_strokes_text(void) {
    psdl_canvas *c = psdl_canvas_new(64, 64, BLACK);
    /* a horizontal line along the middle of row 10: full coverage there, nothing at row 12 */
    double seg[4] = {5, 10.5, 40, 10.5};
    CHECK(psdl_canvas_stroke(c, seg, 1, 1.0, WHITE) == 0);
    CHECK(psdl_canvas_get(c, 20, 10) == WHITE);
    CHECK(psdl_canvas_get(c, 20, 12) == BLACK);
    CHECK(psdl_canvas_get(c, 20, 8) == BLACK);
    /* between rows 9 and 10 (y = 10.0): two half-covered rows */
    psdl_canvas *h = psdl_canvas_new(64, 64, BLACK);
    double seg2[4] = {5, 10.0, 40, 10.0};
    psdl_canvas_stroke(h, seg2, 1, 1.0, WHITE);
    uint32_t a = psdl_canvas_get(h, 20, 9), b = psdl_canvas_get(h, 20, 10);
    CHECKF(a == b && (a >> 24) > 100 && (a >> 24) < 156, "%08x %08x", (unsigned)a, (unsigned)b);
    /* overlapping translucent segments: the joint is no darker than the rest */
    psdl_canvas *j = psdl_canvas_new(64, 64, BLACK);
    double path[8] = {10, 30.5, 30, 30.5, 30, 30.5, 50, 30.5};
    psdl_canvas_stroke(j, path, 2, 2.0, 0xFFFFFF80u);
    CHECK(psdl_canvas_get(j, 30, 30) == psdl_canvas_get(j, 20, 30));
    psdl_canvas_free(j);

    /* a disc of radius 8: pixels at least half covered about pi r^2 */
    psdl_canvas *m = psdl_canvas_new(40, 40, BLACK);
    psdl_canvas_marker(m, 20, 20, 8, PSDL_MARK_DISC, WHITE, 0, 0);
    size_t half = 0;
    for (int y = 0; y < 40; y++)
        for (int x = 0; x < 40; x++) half += (psdl_canvas_get(m, x, y) >> 24) >= 128;
    CHECKF(fabs((double)half - 201.06) < 12, "%zu", half);
    CHECK(psdl_canvas_get(m, 20, 20) == WHITE);
    CHECK(psdl_canvas_get(m, 2, 2) == BLACK);
    /* outline outside the fill */
    psdl_canvas_marker(m, 20, 20, 5, PSDL_MARK_DIAMOND, RED, 2, 0x0000FFFFu);
    CHECK(psdl_canvas_get(m, 20, 20) == RED);
    CHECK(psdl_canvas_get(m, 26, 20) == 0x0000FFFFu); /* 6.5 from the centre: in the outline */
    psdl_canvas_free(m);

    /* text: the ink of "0" and "1" at scale 1 and 2, the halo around it */
    psdl_canvas *t = psdl_canvas_new(64, 32, BLACK);
    int w = psdl_canvas_text(t, 2, 2, "10", 2, 1, WHITE, 0);
    CHECK(w == 11 && psdl_text_width(2, 1) == 11 && psdl_text_width(3, 2) == 34 && psdl_text_width(0, 3) == 0);
    /* "1": 10 ink pixels; "0": 19 */
    CHECKF(count_color(t, WHITE) == 29, "%zu", count_color(t, WHITE));
    CHECK(psdl_canvas_get(t, 2 + 2, 2) == WHITE); /* top of the 1 */
    psdl_canvas *t2 = psdl_canvas_new(64, 32, BLACK);
    psdl_canvas_text(t2, 2, 2, "1", 1, 2, WHITE, RED);
    CHECKF(count_color(t2, WHITE) == 40, "%zu", count_color(t2, WHITE));
    CHECK(count_color(t2, RED) > 40);
    CHECK(psdl_canvas_get(t2, 2 + 4, 1) == RED);   /* a halo 1 px wide above the top of the 1 */
    CHECK(psdl_canvas_get(t2, 2 + 4, 0) == BLACK);
    /* an unknown byte draws a box; text off the canvas is clipped */
    psdl_canvas *t3 = psdl_canvas_new(16, 16, BLACK);
    psdl_canvas_text(t3, 1, 1, "\x01", 1, 1, WHITE, 0);
    CHECK(count_color(t3, WHITE) == 20);
    CHECK(psdl_canvas_text(t3, -100, -100, "12345", 5, 3, WHITE, RED) == psdl_text_width(5, 3));
    CHECK(psdl_canvas_text(t3, 10, 10, "88888", 5, 3, WHITE, RED) > 0);
    psdl_canvas_free(t3);
    psdl_canvas_free(t);
    psdl_canvas_free(t2);
    psdl_canvas_free(c);
    psdl_canvas_free(h);
}

/* ================================================================ d) downsampling */

static void test_downsample(void) {
    psdl_canvas *c = psdl_canvas_new(5, 4, BLACK);
    psdl_canvas_rect(c, 0, 0, 1, 1, WHITE); /* one white pixel in the first 2 x 2 block */
    psdl_canvas_rect(c, 2, 0, 4, 2, RED);   /* the second block all red */
    psdl_canvas *d = psdl_canvas_downsample(c, 2);
    CHECK(d && d->width == 2 && d->height == 2);
    if (d) {
        CHECKF(psdl_canvas_get(d, 0, 0) == 0x404040FFu, "%08x", (unsigned)psdl_canvas_get(d, 0, 0));
        CHECK(psdl_canvas_get(d, 1, 0) == RED);
        CHECK(psdl_canvas_get(d, 1, 1) == BLACK);
    }
    psdl_canvas_free(d);
    CHECK(psdl_canvas_downsample(c, 0) == NULL);
    psdl_canvas *one = psdl_canvas_downsample(c, 8);
    CHECK(one && one->width == 1 && one->height == 1);
    psdl_canvas_free(one);
    psdl_canvas_free(c);
    CHECK(psdl_canvas_new(0, 10, BLACK) == NULL);
    CHECK(psdl_canvas_new(PSDL_CANVAS_MAX_SIDE + 1, 1, BLACK) == NULL);
    CHECK(psdl_canvas_new(PSDL_CANVAS_MAX_SIDE, PSDL_CANVAS_MAX_SIDE, BLACK) == NULL); /* over the pixels */
}

/* ================================================================ e) PNG */

static uint32_t be32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void test_png(void) {
    psdl_canvas *c = psdl_canvas_new(37, 23, 0x336699FFu);
    tri(c, 0, 0, 37, 0, 0, 23, RED);
    psdl_canvas_rect(c, 30, 20, 37, 23, 0x12345678u); /* translucent over opaque: stays opaque */
    void *png = NULL;
    size_t size = 0;
    psdl_error err;
    CHECK(psdl_canvas_png_encode(c, 9, &png, &size, &err) == PSDL_OK);
    const uint8_t *b = png;
    CHECK(size > 33 && memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0);
    CHECK(be32(b + 8) == 13 && memcmp(b + 12, "IHDR", 4) == 0);
    CHECK(be32(b + 16) == 37 && be32(b + 20) == 23);
    CHECK(b[24] == 8 && b[25] == 2); /* 8-bit RGB: every pixel opaque */
    psdl_canvas *d = NULL;
    CHECK(psdl_canvas_png_decode(png, size, &d, &err) == PSDL_OK);
    CHECK(d && d->width == 37 && d->height == 23);
    if (d) CHECK(memcmp(c->rgba, d->rgba, (size_t)37 * 23 * 4) == 0);
    psdl_canvas_free(d);

    /* truncated at every length below the size: an error, never a crash */
    int bad = 0;
    for (size_t cut = 0; cut < size; cut += (cut < 64 ? 1 : 17)) {
        psdl_canvas *e = NULL;
        psdl_status st = psdl_canvas_png_decode(png, cut, &e, &err);
        if (st == PSDL_OK || e != NULL) bad++;
        if (cut >= 8 && st != PSDL_E_TRUNCATED && st != PSDL_E_INVALID) bad++;
        if (cut < 8 && st != PSDL_E_BAD_MAGIC) bad++;
    }
    CHECKF(bad == 0, "%d", bad);
    psdl_canvas *e = NULL;
    CHECK(psdl_canvas_png_decode("GIF89a....", 10, &e, &err) == PSDL_E_BAD_MAGIC && e == NULL);
    CHECK(strstr(err.message, "not a PNG") != NULL);
    psdl_canvas_png_free(png);

    /* a canvas with transparency: RGBA, read back exactly */
    psdl_canvas *t = psdl_canvas_new(8, 8, 0x00000000u);
    psdl_canvas_rect(t, 2, 2, 6, 6, 0x80FF20C0u);
    CHECK(psdl_canvas_png_encode(t, 6, &png, &size, &err) == PSDL_OK);
    CHECK(((const uint8_t *)png)[25] == 6); /* RGBA */
    CHECK(psdl_canvas_png_decode(png, size, &d, &err) == PSDL_OK);
    if (d) {
        CHECK(memcmp(t->rgba, d->rgba, 8 * 8 * 4) == 0);
        CHECK(psdl_canvas_get(d, 3, 3) == 0x80FF20C0u && psdl_canvas_get(d, 0, 0) == 0);
    }
    psdl_canvas_free(d);
    psdl_canvas_png_free(png);
    psdl_canvas_free(t);
    psdl_canvas_free(c);
}

/* ================================================================ f) hostile coordinates */

static void test_hostile(void) {
    /* coordinates a corrupt file can produce: nothing crashes, nothing is written outside */
    psdl_canvas *c = psdl_canvas_new(32, 32, BLACK);
    psdl_paint p = psdl_paint_solid(RED);
    double huge_tri[6] = {-1e300, -1e300, 1e300, -1e300, -1e300, 1e300};
    /* clamped to +-1e12: the hypotenuse x + y = 0 keeps the canvas outside */
    size_t n = psdl_canvas_triangle(c, huge_tri, &p);
    CHECKF(n == 0 && count_color(c, RED) == 0, "%zu", n);
    double huge_tri2[6] = {-1e300, -1e300, 1e300, -1e300, 1e300, 1e300}; /* the half x > y */
    n = psdl_canvas_triangle(c, huge_tri2, &p);
    CHECKF(n == count_color(c, RED) && n >= 32 * 31 / 2 && n <= 32 * 33 / 2, "%zu", n); /* +- the diagonal */
    double far_tri[6] = {1e300, 1e300, 1e300, 2e300, 2e300, 1e300};
    CHECK(psdl_canvas_triangle(c, far_tri, &p) == 0);
    double sliver[8] = {-1e308, 5, 1e308, 5.2, 1e308, 5.4, -1e308, 6};
    psdl_canvas_polygon(c, sliver, 4, &p);
    double inf_poly[6] = {0, 0, INFINITY, 0, 0, 10};
    CHECK(psdl_canvas_polygon(c, inf_poly, 3, &p) == 0);
    double segs[12] = {-1e300, 5, 1e300, 5, NAN, 1, 2, 3, 1e13, 1e13, 1e13, 2e13};
    CHECK(psdl_canvas_stroke(c, segs, 3, 1.0, WHITE) == 0);
    CHECK(psdl_canvas_stroke(c, segs, 3, NAN, WHITE) == 0);
    CHECK(psdl_canvas_stroke(c, segs, 3, 1e300, WHITE) == 0);
    psdl_canvas_marker(c, 1e300, 1e300, 5, PSDL_MARK_DISC, WHITE, 1, RED);
    psdl_canvas_marker(c, 10, 10, 1e300, PSDL_MARK_DISC, WHITE, 1, RED);
    psdl_canvas_marker(c, 10, 10, 3, PSDL_MARK_SQUARE, WHITE, NAN, RED);
    CHECK(psdl_canvas_get(c, 10, 10) == WHITE);
    /* text far away, huge scale and length: the mask covers only the canvas */
    static char long_text[5000];
    memset(long_text, '8', sizeof long_text);
    CHECK(psdl_canvas_text(c, 2147483000, 5, "123", 3, 64, WHITE, RED) == psdl_text_width(3, 64));
    CHECK(psdl_canvas_text(c, -2147483000, -2147483000, long_text, sizeof long_text, 64, WHITE, RED) ==
          psdl_text_width(4096, 64));
    CHECK(psdl_canvas_text(c, 0, 0, long_text, sizeof long_text, 64, WHITE, RED) > 0);
    psdl_canvas_free(c);
}

/* ================================================================ g) limits (review fixes) */

/* psdl_text_width clamps len and scale as psdl_canvas_text does: no signed overflow (UBSan
 * aborted on 400000000 bytes at scale 2). */
static void test_text_width_limits(void) {
    int wmax = psdl_text_width(PSDL_TEXT_MAX_LEN, PSDL_TEXT_MAX_SCALE);
    CHECK(wmax == (PSDL_TEXT_MAX_LEN * PSDL_FONT_ADVANCE - 1) * PSDL_TEXT_MAX_SCALE && wmax == 1572800);
    CHECK(psdl_text_width(400000000u, 2) == psdl_text_width(PSDL_TEXT_MAX_LEN, 2));
    CHECK(psdl_text_width(1000000u, 64) == wmax);
    CHECK(psdl_text_width((size_t)-1, 2147483647) == wmax);
    CHECK(psdl_text_width(3, 1000) == psdl_text_width(3, PSDL_TEXT_MAX_SCALE));
    CHECK(psdl_text_width(5, -3) == 0);
}

/* Stroke coverage as psdl_canvas_stroke defines it, evaluated at every pixel (the
 * reference the span-limited stroke must match byte for byte). */
static void stroke_reference(psdl_canvas *c, const double *seg, size_t nseg, double width, uint32_t rgba) {
    double hw = width * 0.5;
    for (int y = 0; y < c->height; y++)
        for (int x = 0; x < c->width; x++) {
            unsigned best = 0;
            for (size_t i = 0; i < nseg; i++) {
                const double *s = seg + 4 * i;
                double px = x + 0.5, py = y + 0.5, dx = s[2] - s[0], dy = s[3] - s[1], l2 = dx * dx + dy * dy;
                double t = l2 > 0 ? ((px - s[0]) * dx + (py - s[1]) * dy) / l2 : 0;
                t = t > 0 ? (t < 1 ? t : 1) : 0;
                double qx = s[0] + t * dx - px, qy = s[1] + t * dy - py;
                double cov = hw + 0.5 - sqrt(qx * qx + qy * qy);
                cov = cov > 0 ? (cov < 1 ? cov : 1) : 0;
                if (width < 1) cov *= width;
                unsigned m = (unsigned)(cov * 255.0 + 0.5);
                if (m > best) best = m;
            }
            if (best) psdl_canvas_blend(c, x, y, rgba, best);
        }
}

/* Strokes visit only each row's span of the stroke shape (a long diagonal cost its whole
 * bounding box: 0.4 s for one 8192-pixel diagonal), with the same pixels as before. */
static void test_stroke_spans(void) {
    int same = 1;
    for (int trial = 0; trial < 40; trial++) {
        psdl_canvas *a = psdl_canvas_new(67, 45, 0x204060FFu), *b = psdl_canvas_new(67, 45, 0x204060FFu);
        if (!a || !b) break;
        double seg[4 * 6];
        size_t nseg = 1 + (size_t)rnd(0, 6);
        for (size_t i = 0; i < nseg; i++) {
            double *s = seg + 4 * i;
            s[0] = rnd(-15, 80), s[1] = rnd(-15, 60);
            int kind = trial % 4;
            if (kind == 0) s[2] = s[0] + rnd(0, 60), s[3] = s[1] + rnd(-1e-9, 1e-9); /* near horizontal */
            else if (kind == 1) s[2] = s[0], s[3] = s[1] + rnd(-40, 40);             /* vertical */
            else if (kind == 2) s[2] = s[0], s[3] = s[1];                              /* a dot */
            else s[2] = rnd(-15, 80), s[3] = rnd(-15, 60);
        }
        double widths[5] = {0.4, 1, 2.5, 6, 13.3};
        double w = widths[trial % 5];
        uint32_t col = trial % 2 ? 0xFF8000FFu : 0x00FF8080u;
        CHECK(psdl_canvas_stroke(a, seg, nseg, w, col) == 0);
        stroke_reference(b, seg, nseg, w, col);
        if (memcmp(a->rgba, b->rgba, (size_t)67 * 45 * 4) != 0) same = 0;
        psdl_canvas_free(a);
        psdl_canvas_free(b);
    }
    CHECKF(same, "a stroke differs from the per-pixel reference");
    /* 100 long diagonals over a 4096-pixel canvas: well under a second (took 7 s) */
    psdl_canvas *c = psdl_canvas_new(4096, 4096, BLACK);
    if (c) {
        double seg[4 * 100];
        for (int k = 0; k < 100; k++) {
            seg[4 * k] = k * 10, seg[4 * k + 1] = 0, seg[4 * k + 2] = 4095 - k * 10, seg[4 * k + 3] = 4095;
        }
        clock_t t0 = clock();
        CHECK(psdl_canvas_stroke(c, seg, 100, 2, WHITE) == 0);
        double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
        CHECKF(secs < 2.0, "100 diagonals took %.2f s", secs);
        CHECK(psdl_canvas_get(c, 2048, 2048) == WHITE && psdl_canvas_get(c, 2048, 100) == BLACK);
        psdl_canvas_free(c);
    }
}

static uint32_t crc32_png(const unsigned char *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
}

static void be32_put(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16), p[2] = (unsigned char)(v >> 8),
    p[3] = (unsigned char)v;
}

/* Appends a chunk (length, type, data, CRC) at b + n; returns the new length. `claim` is the
 * length written into the chunk header (normally len). */
static size_t put_chunk(unsigned char *b, size_t n, const char *type, const void *data, uint32_t len, uint32_t claim) {
    be32_put(b + n, claim);
    memcpy(b + n + 4, type, 4);
    if (len) memcpy(b + n + 8, data, len);
    be32_put(b + n + 8 + len, crc32_png(b + n + 4, 4 + (size_t)len));
    return n + 12 + len;
}

/* A PNG header claiming w x h RGBA pixels over a few bytes of image data. */
static size_t tiny_png(unsigned char *b, uint32_t w, uint32_t h) {
    memcpy(b, "\x89PNG\r\n\x1a\n", 8);
    unsigned char ihdr[13] = {0, 0, 0, 0, 0, 0, 0, 0, 8, 6, 0, 0, 0};
    be32_put(ihdr, w);
    be32_put(ihdr + 4, h);
    size_t n = put_chunk(b, 8, "IHDR", ihdr, 13, 13);
    static const unsigned char idat[10] = {0x78, 0x9C, 0x63, 0x60, 0x00, 0x00, 0x00, 0x02, 0x00, 0x01};
    n = put_chunk(b, n, "IDAT", idat, 10, 10);
    return put_chunk(b, n, "IEND", NULL, 0, 0);
}

/* PNG decoding: the chunk list is walked first, and a header may not claim more pixels than
 * its compressed data can inflate to (a 70-byte file allocated a 256 MiB canvas). */
static void test_png_limits(void) {
    unsigned char b[256];
    psdl_canvas *d = NULL;
    psdl_error err;
    size_t n = tiny_png(b, 8192, 8192); /* exactly PSDL_CANVAS_MAX_PIXELS */
    CHECK(n < 80);
    CHECK(psdl_canvas_png_decode(b, n, &d, &err) == PSDL_E_BAD_COUNT && d == NULL);
    CHECKF(strstr(err.message, "compressed data") != NULL, "%s", err.message);
    n = tiny_png(b, 300, 300);
    CHECK(psdl_canvas_png_decode(b, n, &d, &err) == PSDL_E_BAD_COUNT && d == NULL);
    /* a tEXt chunk claiming 2 GB in a small file: refused before libpng allocates it */
    n = tiny_png(b, 1, 1);
    size_t iend = n - 12;
    n = put_chunk(b, iend, "tEXt", "k\0v", 3, 0x7FFFFF00u);
    CHECK(psdl_canvas_png_decode(b, n, &d, &err) == PSDL_E_BAD_COUNT && d == NULL);
    CHECKF(err.offset == iend && strstr(err.message, "over the limit") != NULL, "%s", err.message);
    n = put_chunk(b, iend, "tEXt", "k\0v", 3, 5000); /* under the chunk limit, past the end */
    CHECK(psdl_canvas_png_decode(b, n, &d, &err) == PSDL_E_TRUNCATED && d == NULL);
    CHECKF(err.offset == iend && strstr(err.message, "runs past the end") != NULL, "%s", err.message);
    /* real images, however well they compress, stay within the bound */
    psdl_canvas *u = psdl_canvas_new(2048, 1024, BLACK);
    void *png = NULL;
    size_t size = 0;
    if (u && psdl_canvas_png_encode(u, 9, &png, &size, &err) == PSDL_OK) {
        CHECKF(psdl_canvas_png_decode(png, size, &d, &err) == PSDL_OK && d && d->width == 2048, "%s", err.message);
        psdl_canvas_free(d);
        d = NULL;
        psdl_canvas_png_free(png);
    } else {
        CHECK(!"encode");
    }
    psdl_canvas_free(u);
    psdl_canvas *t = psdl_canvas_new(1, 1, 0x00000000u);
    if (t && psdl_canvas_png_encode(t, 9, &png, &size, &err) == PSDL_OK) {
        CHECK(psdl_canvas_png_decode(png, size, &d, &err) == PSDL_OK && d && d->width == 1);
        psdl_canvas_free(d);
        psdl_canvas_png_free(png);
    }
    psdl_canvas_free(t);
}

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    test_triangles();
    test_polygons();
    test_strokes_text();
    test_downsample();
    test_png();
    test_hostile();
    test_text_width_limits();
    test_stroke_spans();
    test_png_limits();
    printf("c: %lu passed, %lu failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
