/* psdl_heightmap.c -- grayscale heightmap rasters: PNG through libpng (classic API, from and
 * to memory, no gamma transform), binary PGM (P5, netpbm: 16-bit samples big-endian) by
 * hand. libpng reports errors by longjmp: each setjmp sits in a small function of its own
 * whose locals are not used after the jump, and everything it must free lives in the
 * caller's frame. */
#include "psdl_internal.h"
#include "psdl_nhtg.h"
#include "psdl_png_io.h"

#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

void psdl_buffer_free(const psdl_options *opt, void *p, size_t size) {
    if (!p) return;
    psdl_alloc al = psdl_alloc_of(opt);
    al.realloc(al.ud, p, size, 0);
}

void psdl_raster_free(psdl_raster *r) {
    if (r) psdl_arena_free(r->arena_);
}

static psdl_raster *raster_shell(const psdl_options *opt) {
    psdl_arena *arena = psdl_arena_new(opt ? &opt->alloc : NULL);
    if (!arena) return NULL;
    psdl_raster *r = psdl_arena_alloc(arena, sizeof *r);
    if (!r) {
        psdl_arena_free(arena);
        return NULL;
    }
    r->arena_ = arena;
    return r;
}

static psdl_status check_raster(const psdl_raster *r, uint32_t max_maxval, psdl_error *err) {
    if (r->width == 0 || r->height == 0 || (uint64_t)r->width * r->height > PSDL_RASTER_MAX_PIXELS)
        return psdl_fail(err, PSDL_E_INVALID, 0, 0, -1, -1, "raster of %u x %u pixels (1 .. %u pixels)",
                         (unsigned)r->width, (unsigned)r->height, (unsigned)PSDL_RASTER_MAX_PIXELS);
    if (r->maxval == 0 || r->maxval > max_maxval)
        return psdl_fail(err, PSDL_E_INVALID, 0, 0, -1, -1, "maxval %u is out of range", (unsigned)r->maxval);
    size_t n = (size_t)r->width * r->height;
    for (size_t k = 0; k < n; k++)
        if (r->samples[k] > r->maxval)
            return psdl_fail(err, PSDL_E_INVALID, 0, 0, -1, -1, "sample at row %zu, column %zu is %u, over maxval %u",
                             k / r->width, k % r->width, (unsigned)r->samples[k], (unsigned)r->maxval);
    return PSDL_OK;
}

/* ================================================================== PNG */

typedef struct png_ctx {
    psdl_png_io io; /* first: libpng's error and io pointer */
    psdl_error *err;
} png_ctx;

/* Reads the whole image into r (whose arena owns the memory). Returns 0 after a libpng
 * error (c->io.message says what) or a refusal (c->err filled, c->io.code set). */
static int png_read_inner(png_structp png, png_infop info, png_ctx *c, psdl_raster *r) {
    if (setjmp(png_jmpbuf(png))) return 0;
    png_set_read_fn(png, &c->io, psdl_png_io_read);
    /* libpng's own size limit is lifted to the format's (2^31 - 1 a side): the header is read
     * (no pixel is allocated before the check below), so that a huge image is refused with
     * the documented pixel limit instead of libpng's "Invalid IHDR data" */
    png_set_user_limits(png, 0x7FFFFFFFu, 0x7FFFFFFFu);
    /* no ancillary chunk may make libpng allocate more than this (a tEXt chunk claiming
     * 2 GB would otherwise be allocated before the data runs out) */
    png_set_chunk_malloc_max(png, PSDL_PNG_CHUNK_LIMIT);
    png_set_chunk_cache_max(png, 64);
    png_read_info(png, info);
    png_uint_32 w = 0, h = 0;
    int depth = 0, color = 0, interlace = 0;
    png_get_IHDR(png, info, &w, &h, &depth, &color, &interlace, NULL, NULL);
    if (color != PNG_COLOR_TYPE_GRAY && color != PNG_COLOR_TYPE_GRAY_ALPHA) {
        const char *name = color == PNG_COLOR_TYPE_RGB         ? "RGB"
                           : color == PNG_COLOR_TYPE_RGB_ALPHA ? "RGBA"
                           : color == PNG_COLOR_TYPE_PALETTE   ? "palette"
                                                               : "unknown";
        c->io.code = PSDL_E_BAD_MAGIC;
        psdl_fail(c->err, PSDL_E_BAD_MAGIC, 25, 1, -1, -1,
                  "PNG colour type %d (%s) is not grayscale: save the heightmap as 8- or 16-bit grayscale", color,
                  name);
        return 0;
    }
    if ((uint64_t)w * h > PSDL_RASTER_MAX_PIXELS) {
        c->io.code = PSDL_E_BAD_COUNT;
        psdl_fail(c->err, PSDL_E_BAD_COUNT, 16, 1, -1, -1, "PNG of %u x %u pixels is over the limit of %u pixels",
                  (unsigned)w, (unsigned)h, (unsigned)PSDL_RASTER_MAX_PIXELS);
        return 0;
    }
    if (depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (color == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_strip_alpha(png);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    size_t rowbytes = png_get_rowbytes(png, info);
    int bytes = depth == 16 ? 2 : 1;
    if (rowbytes != (size_t)w * (size_t)bytes) {
        c->io.code = PSDL_E_INVALID;
        psdl_fail(c->err, PSDL_E_INVALID, 0, 0, -1, -1, "unexpected PNG row size %zu for %u pixels", rowbytes,
                  (unsigned)w);
        return 0;
    }
    /* the rows are read straight into the samples' memory (2 bytes a pixel), then turned
     * into samples in place: no second copy of the image */
    png_bytep *rows = psdl_arena_alloc(r->arena_, sizeof(png_bytep) * h);
    r->samples = psdl_arena_alloc(r->arena_, sizeof(uint16_t) * (size_t)w * h);
    uint8_t *pixels = (uint8_t *)r->samples;
    if (!rows || !r->samples) {
        c->io.code = PSDL_E_NOMEM;
        psdl_fail(c->err, PSDL_E_NOMEM, 0, 0, -1, -1, "out of memory");
        return 0;
    }
    for (png_uint_32 y = 0; y < h; y++) rows[y] = pixels + (size_t)y * rowbytes;
    png_read_image(png, rows);
    png_read_end(png, info);
    size_t n = (size_t)w * h;
    if (bytes == 2) /* big-endian pairs; each read before its own 2 bytes are written */
        for (size_t k = 0; k < n; k++) {
            unsigned hi = pixels[2 * k], lo = pixels[2 * k + 1];
            r->samples[k] = (uint16_t)(hi << 8 | lo);
        }
    else /* one byte a pixel in the first half: widen from the end, never over an unread byte */
        for (size_t k = n; k-- > 0;) {
            unsigned v = pixels[k];
            r->samples[k] = (uint16_t)v;
        }
    r->width = w;
    r->height = h;
    r->maxval = bytes == 2 ? 65535u : 255u;
    png_textp text = NULL;
    int ntext = 0;
    png_get_text(png, info, &text, &ntext);
    for (int k = 0; k < ntext; k++) {
        if (strcmp(text[k].key, PSDL_RASTER_TEXT_KEY) == 0 && text[k].text) {
            size_t len = strlen(text[k].text);
            char *t = psdl_arena_alloc(r->arena_, len + 1);
            if (!t) {
                c->io.code = PSDL_E_NOMEM;
                psdl_fail(c->err, PSDL_E_NOMEM, 0, 0, -1, -1, "out of memory");
                return 0;
            }
            memcpy(t, text[k].text, len);
            r->text = t;
            break;
        }
    }
    return 1;
}

psdl_status psdl_png_decode(const psdl_options *opt, const void *data, size_t size, psdl_raster **out,
                            psdl_error *err) {
    psdl_error local;
    if (!err) err = &local;
    memset(err, 0, sizeof *err);
    err->room = err->attribute = -1;
    *out = NULL;
    if (size < 8 || png_sig_cmp((png_const_bytep)data, 0, 8) != 0) {
        if (size < 8) return psdl_fail(err, PSDL_E_TRUNCATED, 0, 1, -1, -1, "need 8 bytes for the PNG signature");
        return psdl_fail(err, PSDL_E_BAD_MAGIC, 0, 1, -1, -1, "not a PNG file (bad signature)");
    }
    if (psdl_png_prescan(data, size, NULL, err) != PSDL_OK) return err->code;
    png_ctx c;
    memset(&c, 0, sizeof c);
    c.err = err;
    c.io.code = PSDL_E_INVALID;
    c.io.in = data;
    c.io.in_size = size;
    psdl_raster *r = raster_shell(opt);
    if (!r) return psdl_fail(err, PSDL_E_NOMEM, 0, 0, -1, -1, "out of memory");
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &c.io, psdl_png_io_error, psdl_png_io_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_read_struct(png ? &png : NULL, NULL, NULL);
        psdl_raster_free(r);
        return psdl_fail(err, PSDL_E_NOMEM, 0, 0, -1, -1, "out of memory");
    }
    int ok = png_read_inner(png, info, &c, r);
    png_destroy_read_struct(&png, &info, NULL);
    if (!ok) {
        psdl_raster_free(r);
        if (c.io.message[0]) /* libpng's error; not yet in err */
            psdl_fail(err, c.io.code, c.io.code == PSDL_E_TRUNCATED ? size : 0, c.io.code == PSDL_E_TRUNCATED, -1, -1,
                      "PNG: %s", c.io.message);
        return err->code;
    }
    *out = r;
    return PSDL_OK;
}

static int png_write_inner(png_structp png, png_infop info, png_ctx *c, const psdl_raster *r, uint8_t *row) {
    if (setjmp(png_jmpbuf(png))) return 0;
    int bytes = r->maxval > 255 ? 2 : 1;
    png_set_write_fn(png, &c->io, psdl_png_io_write, psdl_png_io_flush);
    png_set_IHDR(png, info, r->width, r->height, bytes * 8, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_text text;
    memset(&text, 0, sizeof text);
    if (r->text) {
        text.compression = PNG_TEXT_COMPRESSION_NONE;
        text.key = (png_charp)(uintptr_t)PSDL_RASTER_TEXT_KEY;
        text.text = (png_charp)(uintptr_t)r->text;
        text.text_length = strlen(r->text);
        png_set_text(png, info, &text, 1);
    }
    png_write_info(png, info);
    for (uint32_t y = 0; y < r->height; y++) {
        const uint16_t *s = r->samples + (size_t)y * r->width;
        if (bytes == 2)
            for (uint32_t x = 0; x < r->width; x++) {
                row[2 * x] = (uint8_t)(s[x] >> 8);
                row[2 * x + 1] = (uint8_t)s[x];
            }
        else
            for (uint32_t x = 0; x < r->width; x++) row[x] = (uint8_t)s[x];
        png_write_row(png, row);
    }
    png_write_end(png, info);
    return 1;
}

psdl_status psdl_png_encode(const psdl_options *opt, const psdl_raster *r, void **out, size_t *out_size,
                            psdl_error *err) {
    *out = NULL;
    *out_size = 0;
    psdl_status st = check_raster(r, 65535, err);
    if (st != PSDL_OK) return st;
    if (r->maxval != 255 && r->maxval != 65535)
        return psdl_fail(err, PSDL_E_INVALID, 0, 0, -1, -1, "a PNG holds maxval 255 or 65535, not %u",
                         (unsigned)r->maxval);
    png_ctx c;
    memset(&c, 0, sizeof c);
    c.err = err;
    c.io.alloc = psdl_alloc_of(opt);
    size_t rowbytes = (size_t)r->width * (r->maxval > 255 ? 2 : 1);
    uint8_t *row = c.io.alloc.realloc(c.io.alloc.ud, NULL, 0, rowbytes);
    if (!row) return psdl_fail(err, PSDL_E_NOMEM, 0, 0, -1, -1, "out of memory");
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &c.io, psdl_png_io_error, psdl_png_io_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    int ok = png && info && png_write_inner(png, info, &c, r, row);
    png_destroy_write_struct(png ? &png : NULL, info ? &info : NULL);
    c.io.alloc.realloc(c.io.alloc.ud, row, rowbytes, 0);
    if (!ok) {
        psdl_buffer_free(opt, c.io.out, c.io.out_cap);
        if (c.io.out_failed || !c.io.message[0]) return psdl_fail(err, PSDL_E_NOMEM, 0, 0, -1, -1, "out of memory");
        return psdl_fail(err, PSDL_E_INVALID, 0, 0, -1, -1, "PNG: %s", c.io.message);
    }
    /* hand back a buffer of exactly out_size bytes, so that psdl_buffer_free gets the size */
    uint8_t *exact = c.io.alloc.realloc(c.io.alloc.ud, c.io.out, c.io.out_cap, c.io.out_size ? c.io.out_size : 1);
    if (!exact) {
        psdl_buffer_free(opt, c.io.out, c.io.out_cap);
        return psdl_fail(err, PSDL_E_NOMEM, 0, 0, -1, -1, "out of memory");
    }
    *out = exact;
    *out_size = c.io.out_size;
    return PSDL_OK;
}

/* ================================================================== PGM */

typedef struct pgm_rd {
    const uint8_t *s;
    size_t n, pos;
    const char *text; /* start of the psdlkit comment's value, or NULL */
    size_t text_len;
} pgm_rd;

/* Skip whitespace and comments; remember a "# psdlkit:heightmap <text>" comment. */
static void pgm_skip(pgm_rd *r) {
    static const char key[] = "psdlkit:heightmap";
    while (r->pos < r->n) {
        uint8_t ch = r->s[r->pos];
        if (ch == '#') {
            size_t start = ++r->pos;
            while (r->pos < r->n && r->s[r->pos] != '\n' && r->s[r->pos] != '\r') r->pos++;
            size_t k = start;
            while (k < r->pos && r->s[k] == ' ') k++;
            if (!r->text && r->pos - k > sizeof key - 1 && memcmp(r->s + k, key, sizeof key - 1) == 0 &&
                r->s[k + sizeof key - 1] == ' ') {
                r->text = (const char *)r->s + k + sizeof key;
                r->text_len = r->pos - (k + sizeof key);
            }
        } else if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f') {
            r->pos++;
        } else {
            break;
        }
    }
}

/* A decimal header number (up to 9 digits). Returns 0 on failure with err filled. */
static int pgm_number(pgm_rd *r, uint32_t *v, const char *what, psdl_error *err) {
    pgm_skip(r);
    size_t start = r->pos;
    uint32_t x = 0;
    while (r->pos < r->n && r->s[r->pos] >= '0' && r->s[r->pos] <= '9' && r->pos - start < 9)
        x = x * 10u + (uint32_t)(r->s[r->pos++] - '0');
    if (r->pos == start) {
        if (r->pos >= r->n)
            psdl_fail(err, PSDL_E_TRUNCATED, r->pos, 1, -1, -1, "PGM header ends before the %s", what);
        else
            psdl_fail(err, PSDL_E_BAD_MAGIC, r->pos, 1, -1, -1, "PGM header: %s expected, got byte 0x%02X", what,
                      r->s[r->pos]);
        return 0;
    }
    if (r->pos < r->n && r->s[r->pos] >= '0' && r->s[r->pos] <= '9') {
        psdl_fail(err, PSDL_E_BAD_COUNT, start, 1, -1, -1, "PGM %s has too many digits", what);
        return 0;
    }
    *v = x;
    return 1;
}

psdl_status psdl_pgm_decode(const psdl_options *opt, const void *data, size_t size, psdl_raster **out,
                            psdl_error *err) {
    psdl_error local;
    if (!err) err = &local;
    memset(err, 0, sizeof *err);
    err->room = err->attribute = -1;
    *out = NULL;
    const uint8_t *s = data;
    if (size < 2) return psdl_fail(err, PSDL_E_TRUNCATED, 0, 1, -1, -1, "need 2 bytes for the PGM magic");
    if (s[0] != 'P' || s[1] != '5')
        return psdl_fail(err, PSDL_E_BAD_MAGIC, 0, 1, -1, -1, "not a binary PGM (magic \"P5\")%s",
                         (s[0] == 'P' && s[1] == '2') ? ": ASCII PGM (P2) is not supported" : "");
    pgm_rd r = {s, size, 2, NULL, 0};
    uint32_t w, h, maxval;
    if (!pgm_number(&r, &w, "width", err) || !pgm_number(&r, &h, "height", err) ||
        !pgm_number(&r, &maxval, "maxval", err))
        return err->code;
    if (w == 0 || h == 0 || (uint64_t)w * h > PSDL_RASTER_MAX_PIXELS)
        return psdl_fail(err, PSDL_E_BAD_COUNT, 2, 1, -1, -1, "PGM of %u x %u pixels (1 .. %u pixels)", (unsigned)w,
                         (unsigned)h, (unsigned)PSDL_RASTER_MAX_PIXELS);
    if (maxval == 0 || maxval > 65535)
        return psdl_fail(err, PSDL_E_BAD_COUNT, r.pos, 1, -1, -1, "PGM maxval %u is not 1..65535", (unsigned)maxval);
    /* exactly one whitespace byte ends the header */
    if (r.pos >= size) return psdl_fail(err, PSDL_E_TRUNCATED, r.pos, 1, -1, -1, "PGM header ends after maxval");
    uint8_t ws = s[r.pos];
    if (ws != ' ' && ws != '\t' && ws != '\n' && ws != '\r' && ws != '\v' && ws != '\f')
        return psdl_fail(err, PSDL_E_BAD_MAGIC, r.pos, 1, -1, -1, "PGM maxval not followed by whitespace");
    r.pos++;
    size_t bps = maxval > 255 ? 2 : 1, n = (size_t)w * h;
    if (n > (size - r.pos) / bps)
        return psdl_fail(err, PSDL_E_TRUNCATED, r.pos, 1, -1, -1, "need %zu bytes for %u x %u samples, %zu remain",
                         n * bps, (unsigned)w, (unsigned)h, size - r.pos);
    size_t end = r.pos + n * bps;
    if (end != size)
        return psdl_fail(err, PSDL_E_TRAILING, end, 1, -1, -1, "%zu bytes after the PGM image", size - end);
    const uint8_t *px = s + r.pos;
    for (size_t k = 0; k < n; k++) {
        uint32_t v = bps == 2 ? ((uint32_t)px[2 * k] << 8 | px[2 * k + 1]) : px[k];
        if (v > maxval)
            return psdl_fail(err, PSDL_E_INVALID, r.pos + k * bps, 1, -1, -1,
                             "sample at row %zu, column %zu is %u, over maxval %u", k / w, k % w, (unsigned)v,
                             (unsigned)maxval);
    }
    psdl_raster *ras = raster_shell(opt);
    if (!ras) return psdl_fail(err, PSDL_E_NOMEM, 0, 0, -1, -1, "out of memory");
    ras->width = w;
    ras->height = h;
    ras->maxval = maxval;
    ras->samples = psdl_arena_alloc(ras->arena_, n * sizeof(uint16_t));
    char *text = r.text ? psdl_arena_alloc(ras->arena_, r.text_len + 1) : NULL;
    if (!ras->samples || (r.text && !text)) {
        psdl_raster_free(ras);
        return psdl_fail(err, PSDL_E_NOMEM, 0, 0, -1, -1, "out of memory");
    }
    for (size_t k = 0; k < n; k++)
        ras->samples[k] = (uint16_t)(bps == 2 ? ((unsigned)px[2 * k] << 8 | px[2 * k + 1]) : px[k]);
    if (text) {
        memcpy(text, r.text, r.text_len);
        ras->text = text;
    }
    *out = ras;
    return PSDL_OK;
}

/* "P5\n" ["# psdlkit:heightmap <text>\n"] "<w> <h>\n<maxval>\n" */
static int pgm_header(const psdl_raster *r, char *buf, size_t cap) {
    return snprintf(buf, cap, "P5\n%s%s%s%u %u\n%u\n", r->text ? "# " PSDL_RASTER_TEXT_KEY " " : "",
                    r->text ? r->text : "", r->text ? "\n" : "", (unsigned)r->width, (unsigned)r->height,
                    (unsigned)r->maxval);
}

size_t psdl_pgm_encoded_size(const psdl_raster *r) {
    if (r->width == 0 || r->height == 0 || r->maxval == 0 || r->maxval > 65535) return 0;
    int h = pgm_header(r, NULL, 0);
    if (h < 0) return 0;
    uint64_t n = (uint64_t)r->width * r->height * (r->maxval > 255 ? 2u : 1u);
    if (n > (uint64_t)((size_t)-1) - (size_t)h) return 0;
    return (size_t)h + (size_t)n;
}

psdl_status psdl_pgm_encode(const psdl_raster *r, void *dst, size_t cap, size_t *written, psdl_error *err) {
    if (written) *written = 0;
    psdl_status st = check_raster(r, 65535, err);
    if (st != PSDL_OK) return st;
    if (r->text && strpbrk(r->text, "\r\n"))
        return psdl_fail(err, PSDL_E_INVALID, 0, 0, -1, -1, "heightmap text holds a line break");
    size_t need = psdl_pgm_encoded_size(r);
    if (need == 0 || cap < need)
        return psdl_fail(err, PSDL_E_INVALID, 0, 0, -1, -1, "destination of %zu bytes is smaller than %zu", cap, need);
    uint8_t *p = dst;
    int h = pgm_header(r, (char *)p, cap);
    p += h;
    size_t n = (size_t)r->width * r->height;
    if (r->maxval > 255)
        for (size_t k = 0; k < n; k++) {
            *p++ = (uint8_t)(r->samples[k] >> 8);
            *p++ = (uint8_t)r->samples[k];
        }
    else
        for (size_t k = 0; k < n; k++) *p++ = (uint8_t)r->samples[k];
    if (written) *written = need;
    return PSDL_OK;
}
