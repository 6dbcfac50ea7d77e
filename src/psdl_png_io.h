/* psdl_png_io.h -- libpng on memory buffers, shared by the heightmap rasters
 * (psdl_heightmap.c) and the render canvas (psdl_raster.c): the error, read and write
 * callbacks on one psdl_png_io, and the chunk walk before libpng sees a file
 * (psdl_png_prescan, declared in psdl_internal.h). C99, no Lua. */
#ifndef PSDL_PNG_IO_H
#define PSDL_PNG_IO_H

#include <png.h>
#include <stddef.h>
#include <stdint.h>

#include "psdl_internal.h"

/* The state libpng's callbacks see (png_create_*_struct's error pointer and
 * png_set_read_fn / png_set_write_fn's io pointer). Zero it, then set what applies. */
typedef struct psdl_png_io {
    psdl_status code;  /* status for libpng's own errors (the read callback sets truncated) */
    char message[160]; /* libpng's first error message ("" when none) */
    /* reading: in[in_pos .. in_size - 1] is what libpng has not read yet */
    const uint8_t *in;
    size_t in_size, in_pos;
    /* writing: out[0 .. out_size - 1] written so far in out_cap bytes, grown from first_cap
     * (4,096 when 0) by doubling through alloc (the C library's realloc when alloc.realloc is
     * NULL); out_failed says the growth failed (libpng then reports "out of memory") */
    psdl_alloc alloc;
    size_t first_cap;
    uint8_t *out;
    size_t out_size, out_cap;
    int out_failed;
} psdl_png_io;

/* libpng's error callback: keeps the first message in io->message, then longjmps. */
void psdl_png_io_error(png_structp png, png_const_charp msg);
/* libpng's warning callback: warnings are dropped. */
void psdl_png_io_warning(png_structp png, png_const_charp msg);
/* libpng's read callback: the next `length` bytes of io->in, or png_error "the PNG data
 * ends early" with io->code = PSDL_E_TRUNCATED. */
void psdl_png_io_read(png_structp png, png_bytep data, size_t length);
/* libpng's write callback: appends to io->out, growing it (see psdl_png_io). */
void psdl_png_io_write(png_structp png, png_bytep data, size_t length);
/* libpng's flush callback: nothing to flush in memory. */
void psdl_png_io_flush(png_structp png);

#endif
