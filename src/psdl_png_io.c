/* psdl_png_io.c -- libpng on memory buffers (psdl_png_io.h): the callbacks both PNG
 * readers and writers use, and the chunk walk before libpng reads a file. */
#include "psdl_png_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void psdl_png_io_error(png_structp png, png_const_charp msg) {
    psdl_png_io *c = png_get_error_ptr(png);
    if (c->message[0] == 0) snprintf(c->message, sizeof c->message, "%s", msg);
    png_longjmp(png, 1);
}

void psdl_png_io_warning(png_structp png, png_const_charp msg) {
    (void)png;
    (void)msg;
}

void psdl_png_io_read(png_structp png, png_bytep data, size_t length) {
    psdl_png_io *c = png_get_io_ptr(png);
    if (c->in_size - c->in_pos < length) {
        c->code = PSDL_E_TRUNCATED;
        png_error(png, "the PNG data ends early");
    }
    memcpy(data, c->in + c->in_pos, length);
    c->in_pos += length;
}

void psdl_png_io_write(png_structp png, png_bytep data, size_t length) {
    psdl_png_io *c = png_get_io_ptr(png);
    if (c->out_cap - c->out_size < length) {
        size_t cap = c->out_cap ? c->out_cap : c->first_cap ? c->first_cap : 4096;
        while (cap - c->out_size < length) {
            if (cap > ((size_t)-1) / 2) {
                c->out_failed = 1;
                png_error(png, "out of memory");
            }
            cap *= 2;
        }
        uint8_t *p = c->alloc.realloc ? c->alloc.realloc(c->alloc.ud, c->out, c->out_cap, cap) : realloc(c->out, cap);
        if (!p) {
            c->out_failed = 1;
            png_error(png, "out of memory");
        }
        c->out = p;
        c->out_cap = cap;
    }
    memcpy(c->out + c->out_size, data, length);
    c->out_size += length;
}

void psdl_png_io_flush(png_structp png) { (void)png; }

/* Walk the chunk list before libpng sees it: every chunk must fit in the data (libpng
 * allocates a chunk's claimed length before reading it: a tEXt chunk claiming 2 GB in a
 * 100-byte file would be allocated), and no chunk but IDAT may exceed PSDL_PNG_CHUNK_LIMIT.
 * (psdl_internal.h) */
psdl_status psdl_png_prescan(const uint8_t *d, size_t size, size_t *idat_bytes, psdl_error *err) {
    size_t p = 8;
    if (idat_bytes) *idat_bytes = 0;
    for (;;) {
        if (size - p < 12)
            return psdl_fail(err, PSDL_E_TRUNCATED, p, 1, -1, -1, "PNG: need 12 bytes for a chunk, %zu remain",
                             size - p);
        uint32_t len = (uint32_t)d[p] << 24 | (uint32_t)d[p + 1] << 16 | (uint32_t)d[p + 2] << 8 | d[p + 3];
        const uint8_t *type = d + p + 4;
        int idat = memcmp(type, "IDAT", 4) == 0;
        if (len > 0x7FFFFFFFu || (!idat && len > PSDL_PNG_CHUNK_LIMIT))
            return psdl_fail(err, PSDL_E_BAD_COUNT, p, 1, -1, -1, "PNG chunk of %u bytes is over the limit of %u",
                             (unsigned)len, idat ? 0x7FFFFFFFu : (unsigned)PSDL_PNG_CHUNK_LIMIT);
        if (len > size - p - 12)
            return psdl_fail(err, PSDL_E_TRUNCATED, p, 1, -1, -1, "PNG chunk of %u bytes runs past the end (%zu remain)",
                             (unsigned)len, size - p - 12);
        if (idat && idat_bytes) *idat_bytes += len;
        p += 12 + (size_t)len;
        if (memcmp(type, "IEND", 4) == 0) return PSDL_OK;
    }
}
