/* psdl_raster.h -- a small RGBA canvas for top-down maps (psdl render): filled triangles
 * and polygons, stripe patterns, anti-aliased strokes and markers, a built-in 5 x 7 bitmap
 * font, box-filter downsampling, and PNG encoding/decoding through libpng. C99, no Lua.
 *
 * Pixels: 8-bit RGBA, straight (not premultiplied) alpha, row-major, top row first. A
 * colour is a uint32_t 0xRRGGBBAA. Pixel (x, y) covers [x, x+1) x [y, y+1); its centre is
 * (x + 0.5, y + 0.5). Drawing blends "source over" with the colour's alpha (255 replaces).
 *
 * Fill rule (triangles and polygons): a pixel is painted when its centre is inside the
 * shape; a centre exactly on an edge is inside for top and left edges only (the Direct3D
 * "top-left rule"), so triangles sharing an edge paint every pixel along it exactly once
 * (no gaps, no double blending). Triangle vertices are snapped to 1/256 pixel and tested
 * with exact integer edge functions. Polygons (even-odd rule) are filled by scanlines
 * with the same convention: spans [left, right), rows [top, bottom).
 *
 * Strokes and markers are anti-aliased: coverage is the distance from the pixel centre to
 * the shape, with a one-pixel ramp. A stroke call draws many segments through one
 * coverage mask (the largest coverage wins), so overlapping segments and joints do not
 * darken a translucent line.
 *
 * Memory: canvases and encoded PNG buffers are malloc'd; free them with psdl_canvas_free
 * and psdl_canvas_png_free. */
#ifndef PSDL_RASTER_H
#define PSDL_RASTER_H

#include <stddef.h>
#include <stdint.h>

#include "psdl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest canvas side and pixel count accepted (new, downsample, PNG decode). */
#define PSDL_CANVAS_MAX_SIDE 16384
#define PSDL_CANVAS_MAX_PIXELS (1u << 26) /* 64 Mpixels = 256 MiB */

typedef struct psdl_canvas {
    int width, height;
    uint8_t *rgba; /* width * height * 4 bytes */
} psdl_canvas;

/* How a fill paints the pixels it covers: `rgba` everywhere (period <= 0), or stripes:
 * with s = x*dx + y*dy + phase at the pixel centre (pixel units), the pixel is painted
 * when frac(s / period) < duty. (dx, dy) is the direction across the stripes (unit length
 * for `period` in pixels). */
typedef struct psdl_paint {
    uint32_t rgba;
    double dx, dy, phase;
    double period, duty;
} psdl_paint;

/** A plain paint of one colour. */
psdl_paint psdl_paint_solid(uint32_t rgba);

/** A new canvas filled with rgba; NULL when a side is < 1 or too large, or out of memory. */
psdl_canvas *psdl_canvas_new(int width, int height, uint32_t rgba);

/** Free a canvas. NULL-safe. */
void psdl_canvas_free(psdl_canvas *c);

/** Pixel (x, y) as 0xRRGGBBAA; 0 outside the canvas. */
uint32_t psdl_canvas_get(const psdl_canvas *c, int x, int y);

/** Blend rgba over pixel (x, y) with its alpha scaled by coverage/255; ignored outside. */
void psdl_canvas_blend(psdl_canvas *c, int x, int y, uint32_t rgba, unsigned coverage);

/** Fill the triangle (x0,y0) (x1,y1) (x2,y2) (either winding) with the top-left rule.
 *  Returns the number of pixels whose centre is inside (those within the canvas; with a
 *  stripe paint, including the ones left unpainted). Non-finite or degenerate triangles
 *  paint nothing; a triangle with a coordinate of magnitude 2^21 or more goes through
 *  the polygon filler (the fixed-point edge functions' limit, FIXED_LIMIT in
 *  psdl_raster.c). */
size_t psdl_canvas_triangle(psdl_canvas *c, const double xy[6], const psdl_paint *paint);

/** psdl_canvas_triangle for ntri triangles, xy holding 6 numbers each. Returns the sum. */
size_t psdl_canvas_triangles(psdl_canvas *c, const double *xy, size_t ntri, const psdl_paint *paint);

/** Fill a polygon of n points (xy: 2n numbers, closed implicitly) with the even-odd rule.
 *  Coordinates beyond +-1e12 are clamped to it. Returns the number of pixels inside (within
 *  the canvas); 0, painting nothing, when n < 3, n > 2^26, a coordinate is NaN or infinite,
 *  or out of memory. */
size_t psdl_canvas_polygon(psdl_canvas *c, const double *xy, size_t n, const psdl_paint *paint);

/** Fill the pixel rectangle [x0, x1) x [y0, y1) (clipped) with rgba. */
void psdl_canvas_rect(psdl_canvas *c, int x0, int y0, int x1, int y1, uint32_t rgba);

/** Anti-aliased strokes of width `width` pixels (round caps) along nseg segments (seg:
 *  x0,y0,x1,y1 per segment), composited once. Returns 0, or -1 when out of memory. */
int psdl_canvas_stroke(psdl_canvas *c, const double *seg, size_t nseg, double width, uint32_t rgba);

/* Marker shapes. */
enum { PSDL_MARK_DISC = 0, PSDL_MARK_DIAMOND = 1, PSDL_MARK_SQUARE = 2 };

/** An anti-aliased marker centred on (x, y): shape of radius r filled with fill, with an
 *  outline `outline_width` pixels wide outside it (none when 0 or outline's alpha is 0). */
void psdl_canvas_marker(psdl_canvas *c, double x, double y, double r, int shape, uint32_t fill,
                        double outline_width, uint32_t outline);

/* Built-in font: printable ASCII (32-126) in 5 x 7 cells, advance 6 per character at scale
 * 1; any other byte draws as a hollow box. */
#define PSDL_FONT_W 5
#define PSDL_FONT_H 7
#define PSDL_FONT_ADVANCE 6
/* Longest text (bytes) and largest scale drawn; longer text and larger scales are clamped. */
#define PSDL_TEXT_MAX_LEN 4096
#define PSDL_TEXT_MAX_SCALE 64

/** Width in pixels of len bytes of text at an integer scale (no trailing gap):
 *  (6 * len - 1) * scale, 0 when len is 0 or scale < 1. len is clamped to
 *  PSDL_TEXT_MAX_LEN and scale to PSDL_TEXT_MAX_SCALE, as psdl_canvas_text draws them, so the
 *  result is at most 1572800 and never overflows. */
int psdl_text_width(size_t len, int scale);

/** Draw len bytes of text with its top-left corner at (x, y), each font pixel a
 *  scale x scale block, over a halo (scale + 1) / 2 pixels wide around the ink (none when
 *  halo's alpha is 0). scale is clamped to 1 .. PSDL_TEXT_MAX_SCALE and len to
 *  PSDL_TEXT_MAX_LEN (the rest of the text is not drawn).
 *  Returns the text width (psdl_text_width), or -1 when out of memory. */
int psdl_canvas_text(psdl_canvas *c, int x, int y, const char *text, size_t len, int scale, uint32_t rgba,
                     uint32_t halo);

/** A new canvas `factor` times smaller on each side (sides rounded down, at least 1), each
 *  pixel the average of a factor x factor block (alpha-weighted). NULL on bad factor or
 *  out of memory. */
psdl_canvas *psdl_canvas_downsample(const psdl_canvas *c, int factor);

/** Encode as PNG (8-bit RGB when every pixel is opaque, RGBA otherwise) with zlib level
 *  0-9. *out is malloc'd: release it with psdl_canvas_png_free. Errors: nomem, invalid. */
psdl_status psdl_canvas_png_encode(const psdl_canvas *c, int level, void **out, size_t *out_size,
                                   psdl_error *err);

/** Release a buffer from psdl_canvas_png_encode. NULL-safe. */
void psdl_canvas_png_free(void *p);

/* Deflate's largest expansion: a 258-byte match coded in 2 bits, 1032 bytes per input byte. */
#define PSDL_PNG_MAX_INFLATE 1032u

/** Decode any PNG into a new RGBA canvas (palette, grey, 16-bit and transparency are
 *  converted). Before libpng reads it the chunk list is walked (the heightmap decoder's
 *  psdl_png_prescan): a chunk running past the end is truncated, one other than IDAT over
 *  1 MiB bad_count. The image's filtered scanlines (h rows of 1 + ceil(w * bits per pixel
 *  / 8) bytes) must not exceed PSDL_PNG_MAX_INFLATE * (IDAT bytes + 1), what the
 *  compressed data can hold at most: the canvas allocated (4 bytes a pixel) is at most
 *  about 1032 times the compressed data for 8-bit RGBA, 33000 times for 1-bit grey, and
 *  never over PSDL_CANVAS_MAX_PIXELS. Errors: bad_magic (not a PNG), bad_count (over the size limits,
 *  or a size the data cannot hold), truncated or invalid (libpng's message), nomem. */
psdl_status psdl_canvas_png_decode(const void *data, size_t size, psdl_canvas **out, psdl_error *err);

#ifdef __cplusplus
}
#endif
#endif /* PSDL_RASTER_H */
