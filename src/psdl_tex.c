/* psdl_tex.c -- Angel textures *.tex (docs/companion-formats.md §9): a 14-byte header (u16
 * width, height, format, mip count, a u16 the game does not read, u32 flags), a palette for
 * paletted formats, then the mip levels largest first. Formats with a documented texel
 * layout: 1 P8 and 14 PA8 (256-entry BGRA palette, a byte per texel), 15 P4 and 16 PA4
 * (16 entries, two texels per byte), 6 ARGB1555 (2 bytes), 17 RGB888 (3), 18 RGBA8888 (4).
 * Any other format (2 "P8A8" has no documented layout) keeps its bytes after the header
 * whole. Mip count 0 means the chain down to a side of 1 (CF §9 "Levels halve until a side
 * reaches 1"; [INFER] there, taken as written). P4/PA4 level sizes round a half byte up;
 * which nibble holds the first texel does not matter to the codec (bytes are kept). */
#include "psdl_companion_internal.h"

#define FMT "tex"

unsigned psdl_tex_bpp(unsigned format) {
    switch (format) {
    case 1: case 14: return 8;
    case 15: case 16: return 4;
    case 6: return 16;
    case 17: return 24;
    case 18: return 32;
    default: return 0;
    }
}

size_t psdl_tex_palette_size(unsigned format) {
    switch (format) {
    case 1: case 14: return 1024;
    case 15: case 16: return 64;
    default: return 0;
    }
}

uint32_t psdl_tex_level_count(unsigned width, unsigned height, unsigned mips) {
    if (mips) return mips;
    uint32_t n = 1;
    while (width > 1 && height > 1) {
        width >>= 1;
        height >>= 1;
        n++;
    }
    return n;
}

size_t psdl_tex_level_size(unsigned width, unsigned height, unsigned format, uint32_t level) {
    uint64_t w = level >= 32 ? 1 : (width >> level), h = level >= 32 ? 1 : (height >> level);
    if (w == 0) w = 1;
    if (h == 0) h = 1;
    return (size_t)((w * h * psdl_tex_bpp(format) + 7) / 8);
}

psdl_tex *psdl_tex_new(const psdl_alloc *alloc) {
    psdl_arena *a = pc_arena_new(alloc);
    if (!a) return NULL;
    psdl_tex *t = psdl_arena_alloc(a, sizeof *t);
    if (!t) {
        psdl_arena_free(a);
        return NULL;
    }
    t->arena_ = a;
    t->unknown = 1;
    return t;
}

void psdl_tex_free(psdl_tex *tex) {
    if (tex) psdl_arena_free(tex->arena_);
}

psdl_status psdl_tex_decode(const psdl_alloc *alloc, const void *data, size_t size, psdl_tex **out,
                            psdl_cerror *err) {
    psdl_cerror local;
    if (!err) err = &local;
    *out = NULL;
    pc_in in = {data, size, 0, FMT, -1, err};
    if (pc_need(&in, 14, "header")) return err->code;
    uint16_t w = pc_u16(&in), h = pc_u16(&in), format = pc_u16(&in), mips = pc_u16(&in), unk = pc_u16(&in);
    uint32_t flags = pc_u32(&in);
    if (w == 0 || h == 0) return pc_fail(err, FMT, PSDL_E_BAD_COUNT, 0, 1, -1, "size %ux%u", w, h);
    psdl_tex *t = psdl_tex_new(alloc);
    if (!t) return pc_fail(err, FMT, PSDL_E_NOMEM, 0, 0, -1, "out of memory");
    psdl_arena *a = t->arena_;
    t->width = w;
    t->height = h;
    t->format = format;
    t->mips = mips;
    t->unknown = unk;
    t->flags = flags;
    if (psdl_tex_bpp(format) == 0) {
        t->ndata = pc_left(&in);
        if (t->ndata && !(t->data = pc_dup(a, in.d + in.pos, t->ndata))) goto oom;
        *out = t;
        return PSDL_OK;
    }
    t->layout_known = 1;
    t->npalette = psdl_tex_palette_size(format);
    if (t->npalette) {
        if (pc_need(&in, t->npalette, "palette")) goto fail;
        if (!(t->palette = pc_dup(a, in.d + in.pos, t->npalette))) goto oom;
        in.pos += t->npalette;
    }
    uint32_t nl = psdl_tex_level_count(w, h, mips);
    /* every level holds at least one byte: a count the data cannot hold is refused first */
    if (pc_count(&in, nl, 1, "mip levels")) goto fail;
    if (!(t->levels = psdl_arena_alloc(a, nl * sizeof *t->levels))) goto oom;
    if (!(t->level_size = psdl_arena_alloc(a, nl * sizeof *t->level_size))) goto oom;
    for (uint32_t i = 0; i < nl; i++) {
        size_t ls = psdl_tex_level_size(w, h, format, i);
        in.record = (long)i;
        if (pc_need(&in, ls, "mip level")) goto fail;
        if (!(t->levels[i] = pc_dup(a, in.d + in.pos, ls))) goto oom;
        t->level_size[i] = ls;
        in.pos += ls;
    }
    in.record = -1;
    t->nlevels = nl;
    if (pc_left(&in)) {
        t->ntrailing = pc_left(&in);
        if (!(t->trailing = pc_dup(a, in.d + in.pos, t->ntrailing))) goto oom;
    }
    *out = t;
    return PSDL_OK;
oom:
    pc_fail(err, FMT, PSDL_E_NOMEM, in.pos, 1, in.record, "out of memory");
fail:
    psdl_tex_free(t);
    return err->code;
}

static psdl_status write_tex(const void *doc, pc_out *o, psdl_cerror *err) {
    const psdl_tex *t = doc;
    pc_put_u16(o, t->width);
    pc_put_u16(o, t->height);
    pc_put_u16(o, t->format);
    pc_put_u16(o, t->mips);
    pc_put_u16(o, t->unknown);
    pc_put_u32(o, t->flags);
    if (!t->layout_known) {
        pc_bytes(o, t->data, t->ndata);
        return PSDL_OK;
    }
    if (psdl_tex_bpp(t->format) == 0)
        return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, -1, "format %u has no known texel layout", t->format);
    if (t->width == 0 || t->height == 0)
        return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, -1, "size %ux%u", t->width, t->height);
    size_t np = psdl_tex_palette_size(t->format);
    if (np && (t->npalette != np || !t->palette))
        return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, -1, "format %u needs a palette of %zu bytes", t->format, np);
    pc_bytes(o, t->palette, np);
    uint32_t nl = psdl_tex_level_count(t->width, t->height, t->mips);
    if (t->nlevels != nl)
        return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, -1, "%u levels given, the header describes %u",
                       (unsigned)t->nlevels, (unsigned)nl);
    for (uint32_t i = 0; i < nl; i++) {
        size_t ls = psdl_tex_level_size(t->width, t->height, t->format, i);
        if (t->level_size[i] != ls || !t->levels[i])
            return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, (long)i, "level of %zu bytes, %zu expected",
                           t->level_size[i], ls);
        pc_bytes(o, t->levels[i], ls);
    }
    pc_bytes(o, t->trailing, t->ntrailing);
    return PSDL_OK;
}

psdl_status psdl_tex_encode(const psdl_tex *tex, void *dst, size_t cap, size_t *written, psdl_cerror *err) {
    return pc_encode(tex, write_tex, FMT, dst, cap, written, err);
}

void psdl_tex_halve(const uint8_t *src, unsigned w, unsigned h, unsigned bpp, uint8_t *dst) {
    unsigned nw = w > 1 ? w / 2 : 1, nh = h > 1 ? h / 2 : 1;
    unsigned sx = w > 1 ? 2 : 1, sy = h > 1 ? 2 : 1;
    for (unsigned y = 0; y < nh; y++)
        for (unsigned x = 0; x < nw; x++)
            for (unsigned c = 0; c < bpp; c++) {
                unsigned sum = 0;
                for (unsigned dy = 0; dy < sy; dy++)
                    for (unsigned dx = 0; dx < sx; dx++)
                        sum += src[((size_t)(y * sy + dy) * w + (x * sx + dx)) * bpp + c];
                unsigned n = sx * sy;
                dst[((size_t)y * nw + x) * bpp + c] = (uint8_t)((sum + n / 2) / n);
            }
}
