/* psdl_pathset.c -- prop paths *.pathset ("PTH1", docs/companion-formats.md §5.1): u32 path
 * count, u32 editor cursor, then per path a 32-byte name field, u32 point count, u32
 * selection, (u32 word, vec3 point) per point, u8 type, u8 spacing (quarter metres), two pad
 * bytes. The whole name field is kept (editor garbage after the NUL included). */
#include "psdl_companion_internal.h"

#define FMT "pathset"
#define MIN_PATH_BYTES 44u /* name, counts, type, spacing, pad */

psdl_pathset *psdl_pathset_new(const psdl_alloc *alloc) {
    psdl_arena *a = pc_arena_new(alloc);
    if (!a) return NULL;
    psdl_pathset *p = psdl_arena_alloc(a, sizeof *p);
    if (!p) {
        psdl_arena_free(a);
        return NULL;
    }
    p->arena_ = a;
    return p;
}

void psdl_pathset_free(psdl_pathset *ps) {
    if (ps) psdl_arena_free(ps->arena_);
}

psdl_status psdl_pathset_decode(const psdl_alloc *alloc, const void *data, size_t size,
                                psdl_pathset **out, psdl_cerror *err) {
    psdl_cerror local;
    if (!err) err = &local;
    *out = NULL;
    pc_in in = {data, size, 0, FMT, -1, err};
    if (size < 4 || memcmp(data, "PTH1", 4) != 0)
        return pc_fail(err, FMT, PSDL_E_BAD_MAGIC, 0, 1, -1, "not a PTH1 file");
    in.pos = 4;
    if (pc_need(&in, 8, "path count and cursor")) return err->code;
    uint32_t n = pc_u32(&in), current = pc_u32(&in);
    if (pc_count(&in, n, MIN_PATH_BYTES, "paths")) return err->code;
    psdl_pathset *p = psdl_pathset_new(alloc);
    if (!p) return pc_fail(err, FMT, PSDL_E_NOMEM, 0, 0, -1, "out of memory");
    p->current = current;
    if (n && !(p->paths = psdl_arena_alloc(p->arena_, n * sizeof *p->paths))) goto oom;
    for (uint32_t i = 0; i < n; i++) {
        psdl_path *q = &p->paths[i];
        in.record = (long)i;
        if (pc_need(&in, 40, "path name and counts")) goto fail;
        memcpy(q->name, in.d + in.pos, 32);
        q->name[32] = 0;
        in.pos += 32;
        q->npoints = pc_u32(&in);
        q->selection = pc_u32(&in);
        if (pc_count(&in, q->npoints, 16, "points")) goto fail;
        if (q->npoints) {
            q->words = psdl_arena_alloc(p->arena_, q->npoints * sizeof *q->words);
            q->points = psdl_arena_alloc(p->arena_, q->npoints * sizeof *q->points);
            if (!q->words || !q->points) goto oom;
            for (uint32_t k = 0; k < q->npoints; k++) {
                q->words[k] = pc_u32(&in);
                q->points[k] = pc_vec3(&in);
            }
        }
        if (pc_need(&in, 4, "type, spacing and pad")) goto fail;
        q->type = pc_u8(&in);
        q->spacing = pc_u8(&in);
        q->pad = pc_u16(&in);
    }
    p->npaths = n;
    if (pc_left(&in)) {
        p->ntrailing = pc_left(&in);
        if (!(p->trailing = pc_dup(p->arena_, in.d + in.pos, p->ntrailing))) goto oom;
    }
    *out = p;
    return PSDL_OK;
oom:
    pc_fail(err, FMT, PSDL_E_NOMEM, in.pos, 1, in.record, "out of memory");
fail:
    psdl_pathset_free(p);
    return err->code;
}

static psdl_status write_pathset(const void *doc, pc_out *o, psdl_cerror *err) {
    const psdl_pathset *p = doc;
    pc_bytes(o, "PTH1", 4);
    pc_put_u32(o, p->npaths);
    pc_put_u32(o, p->current);
    for (uint32_t i = 0; i < p->npaths; i++) {
        const psdl_path *q = &p->paths[i];
        if (q->npoints && (!q->points || !q->words))
            return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, (long)i, "points missing");
        pc_bytes(o, q->name, 32);
        pc_put_u32(o, q->npoints);
        pc_put_u32(o, q->selection);
        for (uint32_t k = 0; k < q->npoints; k++) {
            pc_put_u32(o, q->words[k]);
            pc_put_vec3(o, q->points[k]);
        }
        pc_put_u8(o, q->type);
        pc_put_u8(o, q->spacing);
        pc_put_u16(o, q->pad);
    }
    pc_bytes(o, p->trailing, p->ntrailing);
    return PSDL_OK;
}

psdl_status psdl_pathset_encode(const psdl_pathset *ps, void *dst, size_t cap, size_t *written,
                                psdl_cerror *err) {
    return pc_encode(ps, write_pathset, FMT, dst, cap, written, err);
}
