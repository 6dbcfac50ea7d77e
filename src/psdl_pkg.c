/* psdl_pkg.c -- Angel PKG3 model packages (docs/companion-formats.md §7.2): "PKG3", then
 * chunks to EOF: "FILE", u8 name length (with NUL), name, NUL, u32 body size (the body only,
 * RUST-PKG's reading), body. Geometry, "shaders" and "xrefs" bodies get a structured view
 * when (and only when) the view re-encodes to the identical bytes; any other body, or one
 * the view cannot reproduce exactly (other vertex layouts, inconsistent totals, editor
 * garbage in name fields), stays raw. So every PKG3 round-trips byte for byte. PKG2 has no
 * chunk sizes and is refused. */
#include "psdl_companion_internal.h"

#define FMT "pkg"
#define FVF_KNOWN (PSDL_FVF_XYZ | PSDL_FVF_NORMAL | PSDL_FVF_DIFFUSE | PSDL_FVF_SPECULAR | PSDL_FVF_TEX1)

psdl_pkg *psdl_pkg_new(const psdl_alloc *alloc) {
    psdl_arena *a = pc_arena_new(alloc);
    if (!a) return NULL;
    psdl_pkg *p = psdl_arena_alloc(a, sizeof *p);
    if (!p) {
        psdl_arena_free(a);
        return NULL;
    }
    memcpy(p->magic, "PKG3", 4);
    p->arena_ = a;
    return p;
}

void psdl_pkg_free(psdl_pkg *pkg) {
    if (pkg) psdl_arena_free(pkg->arena_);
}

static unsigned vertex_bytes(uint32_t fvf) {
    return 12u + ((fvf & PSDL_FVF_NORMAL) ? 12u : 0u) + ((fvf & PSDL_FVF_DIFFUSE) ? 4u : 0u) +
           ((fvf & PSDL_FVF_SPECULAR) ? 4u : 0u) + ((fvf & PSDL_FVF_TEX1) ? 8u : 0u);
}

/* ---------------------------------------------------------------- views: writers */

static psdl_status write_geometry(const psdl_pkg_geometry *g, pc_out *o, psdl_cerror *err, long rec) {
    if ((g->fvf & ~FVF_KNOWN) || !(g->fvf & PSDL_FVF_XYZ))
        return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, rec, "fvf 0x%x: only position, normal, diffuse, "
                       "specular and one texture coordinate are supported", (unsigned)g->fvf);
    if (g->nsections > 127)
        return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, rec, "%u sections: at most 127", (unsigned)g->nsections);
    uint64_t tv = 0, ti = 0;
    if (g->nsections && !g->sections) return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, rec, "sections missing");
    for (uint32_t s = 0; s < g->nsections; s++) {
        const psdl_pkg_section *sec = &g->sections[s];
        if (sec->npackets && !sec->packets)
            return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, rec, "section %u: packets missing", s + 1);
        for (uint32_t k = 0; k < sec->npackets; k++) {
            const psdl_pkg_packet *pk = &sec->packets[k];
            if ((pk->nvertices && !pk->vertices) || (pk->nindices && !pk->indices))
                return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, rec, "section %u packet %u: arrays missing", s + 1,
                               k + 1);
            if (pk->nvertices > 65535)
                return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, rec,
                               "section %u packet %u: %u vertices, at most 65535", s + 1, k + 1,
                               (unsigned)pk->nvertices);
            if (pk->primitive == 3 && pk->nindices % 3)
                return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, rec,
                               "section %u packet %u: %u indices, not a multiple of 3", s + 1, k + 1,
                               (unsigned)pk->nindices);
            for (uint32_t i = 0; i < pk->nindices; i++)
                if (pk->indices[i] >= pk->nvertices)
                    return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, rec,
                                   "section %u packet %u index %u: vertex %u of %u", s + 1, k + 1, i + 1,
                                   pk->indices[i] + 1u, (unsigned)pk->nvertices);
            tv += pk->nvertices;
            ti += pk->nindices;
        }
    }
    if (tv > UINT32_MAX || ti > UINT32_MAX)
        return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, rec, "vertex or index total beyond 32 bits");
    pc_put_u32(o, g->nsections);
    pc_put_u32(o, (uint32_t)tv);
    pc_put_u32(o, (uint32_t)ti);
    pc_put_u32(o, g->nsections);
    pc_put_u32(o, g->fvf);
    for (uint32_t s = 0; s < g->nsections; s++) {
        const psdl_pkg_section *sec = &g->sections[s];
        pc_put_u32(o, sec->npackets);
        pc_put_u32(o, sec->shader);
        for (uint32_t k = 0; k < sec->npackets; k++) {
            const psdl_pkg_packet *pk = &sec->packets[k];
            pc_put_u32(o, pk->primitive);
            pc_put_u32(o, pk->nvertices);
            for (uint32_t v = 0; v < pk->nvertices; v++) {
                const psdl_pkg_vertex *vx = &pk->vertices[v];
                pc_put_vec3(o, vx->position);
                if (g->fvf & PSDL_FVF_NORMAL) pc_put_vec3(o, vx->normal);
                if (g->fvf & PSDL_FVF_DIFFUSE) pc_put_u32(o, vx->diffuse);
                if (g->fvf & PSDL_FVF_SPECULAR) pc_put_u32(o, vx->specular);
                if (g->fvf & PSDL_FVF_TEX1) {
                    pc_put_f32(o, vx->u);
                    pc_put_f32(o, vx->v);
                }
            }
            pc_put_u32(o, pk->nindices);
            for (uint32_t i = 0; i < pk->nindices; i++) pc_put_u16(o, pk->indices[i]);
        }
    }
    return PSDL_OK;
}

static psdl_status write_shaders(const psdl_pkg_shaders *sh, pc_out *o, psdl_cerror *err, long rec) {
    if (sh->paint_jobs > 127)
        return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, rec, "%u paint jobs: at most 127", (unsigned)sh->paint_jobs);
    pc_put_u32(o, sh->paint_jobs | (sh->compact ? 0x80u : 0u));
    pc_put_u32(o, sh->per_job);
    uint64_t n = (uint64_t)sh->paint_jobs * sh->per_job;
    if (n && !sh->shaders) return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, rec, "shaders missing");
    for (uint64_t i = 0; i < n; i++) {
        const psdl_pkg_shader *s = &sh->shaders[i];
        if (s->textured) {
            if (s->name_len > 254)
                return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, rec, "shader %llu: texture name of %u bytes, at most 254",
                               (unsigned long long)i + 1, s->name_len);
            pc_put_u8(o, (uint8_t)(s->name_len + 1));
            pc_bytes(o, s->name, s->name_len);
            pc_put_u8(o, 0);
        } else {
            pc_put_u8(o, 0);
        }
        if (sh->compact) {
            for (int c = 0; c < 3; c++) pc_bytes(o, s->bytes[c], 4);
        } else {
            for (int c = 0; c < 4; c++)
                for (int k = 0; k < 4; k++) pc_put_f32(o, s->colour[c][k]);
        }
        pc_put_f32(o, s->power);
    }
    return PSDL_OK;
}

static psdl_status write_xrefs(const psdl_pkg_chunk *c, pc_out *o, psdl_cerror *err, long rec) {
    if (c->nxrefs && !c->xrefs) return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, rec, "xrefs missing");
    pc_put_u32(o, c->nxrefs);
    for (uint32_t i = 0; i < c->nxrefs; i++) {
        const psdl_pkg_xref *x = &c->xrefs[i];
        size_t len = 0;
        while (len < sizeof x->name && x->name[len]) len++;
        if (len > 31)
            return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, rec, "xref %u: name longer than 31 bytes", i + 1);
        for (int k = 0; k < 12; k++) pc_put_f32(o, x->m[k]);
        pc_bytes(o, x->name, len);
        pc_zeros(o, 32 - len);
    }
    return PSDL_OK;
}

static psdl_status write_body(const psdl_pkg_chunk *c, pc_out *o, psdl_cerror *err, long rec) {
    switch (c->kind) {
    case PSDL_PKG_GEOMETRY: return write_geometry(&c->geometry, o, err, rec);
    case PSDL_PKG_SHADERS: return write_shaders(&c->shaders, o, err, rec);
    case PSDL_PKG_XREFS: return write_xrefs(c, o, err, rec);
    default:
        if (c->size && !c->data) return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, rec, "chunk body missing");
        pc_bytes(o, c->data, c->size);
        return PSDL_OK;
    }
}

/* ---------------------------------------------------------------- views: readers */

/* Each returns 0 with the view filled, or -1 (the body is then kept raw). in covers the
 * body only; in->err is NULL-safe scratch. */
static int parse_geometry(pc_in *in, psdl_arena *a, psdl_pkg_geometry *g) {
    if (pc_left(in) < 20) return -1;
    uint32_t ns = pc_u32(in);
    pc_u32(in); /* totals: re-derived; the exactness check catches a mismatch */
    pc_u32(in);
    uint32_t ns2 = pc_u32(in);
    g->fvf = pc_u32(in);
    if (ns != ns2 || ns > 127 || (g->fvf & ~FVF_KNOWN) || !(g->fvf & PSDL_FVF_XYZ)) return -1;
    unsigned vb = vertex_bytes(g->fvf);
    g->nsections = ns;
    if (ns && !(g->sections = psdl_arena_alloc(a, ns * sizeof *g->sections))) return -1;
    for (uint32_t s = 0; s < ns; s++) {
        psdl_pkg_section *sec = &g->sections[s];
        if (pc_left(in) < 8) return -1;
        sec->npackets = pc_u32(in);
        sec->shader = pc_u32(in);
        if (sec->npackets > pc_left(in) / 12) return -1;
        if (sec->npackets && !(sec->packets = psdl_arena_alloc(a, sec->npackets * sizeof *sec->packets)))
            return -1;
        for (uint32_t k = 0; k < sec->npackets; k++) {
            psdl_pkg_packet *pk = &sec->packets[k];
            if (pc_left(in) < 8) return -1;
            pk->primitive = pc_u32(in);
            pk->nvertices = pc_u32(in);
            if (pk->nvertices > pc_left(in) / vb) return -1;
            if (pk->nvertices && !(pk->vertices = psdl_arena_alloc(a, pk->nvertices * sizeof *pk->vertices)))
                return -1;
            for (uint32_t v = 0; v < pk->nvertices; v++) {
                psdl_pkg_vertex *vx = &pk->vertices[v];
                vx->position = pc_vec3(in);
                if (g->fvf & PSDL_FVF_NORMAL) vx->normal = pc_vec3(in);
                if (g->fvf & PSDL_FVF_DIFFUSE) vx->diffuse = pc_u32(in);
                if (g->fvf & PSDL_FVF_SPECULAR) vx->specular = pc_u32(in);
                if (g->fvf & PSDL_FVF_TEX1) {
                    vx->u = pc_f32(in);
                    vx->v = pc_f32(in);
                }
            }
            if (pc_left(in) < 4) return -1;
            pk->nindices = pc_u32(in);
            if (pk->nindices > pc_left(in) / 2) return -1;
            if (pk->nindices && !(pk->indices = psdl_arena_alloc(a, pk->nindices * sizeof *pk->indices)))
                return -1;
            for (uint32_t i = 0; i < pk->nindices; i++) pk->indices[i] = pc_u16(in);
        }
    }
    return 0;
}

static int parse_shaders(pc_in *in, psdl_arena *a, psdl_pkg_shaders *sh) {
    if (pc_left(in) < 8) return -1;
    uint32_t type = pc_u32(in);
    sh->paint_jobs = type & 0x7Fu;
    sh->compact = (type & 0x80u) != 0;
    sh->per_job = pc_u32(in);
    uint64_t n = (uint64_t)sh->paint_jobs * sh->per_job;
    size_t min = sh->compact ? 17 : 69;
    if (n > pc_left(in) / min) return -1;
    if (n && !(sh->shaders = psdl_arena_alloc(a, (size_t)n * sizeof *sh->shaders))) return -1;
    for (uint64_t i = 0; i < n; i++) {
        psdl_pkg_shader *s = &sh->shaders[i];
        if (pc_left(in) < 1) return -1;
        uint8_t len = pc_u8(in);
        if (len) {
            if (pc_left(in) < len || in->d[in->pos + len - 1] != 0) return -1;
            s->textured = 1;
            s->name_len = (uint8_t)(len - 1);
            if (!(s->name = pc_dup(a, in->d + in->pos, len))) return -1;
            in->pos += len;
        }
        if (pc_left(in) < min - 1) return -1;
        if (sh->compact) {
            for (int c = 0; c < 3; c++)
                for (int k = 0; k < 4; k++) s->bytes[c][k] = pc_u8(in);
        } else {
            for (int c = 0; c < 4; c++)
                for (int k = 0; k < 4; k++) s->colour[c][k] = pc_f32(in);
        }
        s->power = pc_f32(in);
    }
    return 0;
}

static int parse_xrefs(pc_in *in, psdl_arena *a, psdl_pkg_chunk *c) {
    if (pc_left(in) < 4) return -1;
    uint32_t n = pc_u32(in);
    if (n > pc_left(in) / 80) return -1;
    if (n && !(c->xrefs = psdl_arena_alloc(a, n * sizeof *c->xrefs))) return -1;
    c->nxrefs = n;
    for (uint32_t i = 0; i < n; i++) {
        for (int k = 0; k < 12; k++) c->xrefs[i].m[k] = pc_f32(in);
        memcpy(c->xrefs[i].name, in->d + in->pos, 32);
        in->pos += 32;
        if (!memchr(c->xrefs[i].name, 0, 32)) return -1;
    }
    return 0;
}

static int name_is(const char *name, const char *want) {
    for (; *name && *want; name++, want++) {
        char a = *name, b = *want;
        if (a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
        if (a != b) return 0;
    }
    return *name == 0 && *want == 0;
}

/* Give chunk c (raw body set) a view when one reproduces the body exactly. */
static void try_view(psdl_pkg_chunk *c, psdl_arena *a) {
    pc_in in = {c->data, c->size, 0, FMT, -1, NULL};
    int kind, ok;
    if (name_is(c->name, "offset")) return;
    if (name_is(c->name, "shaders")) {
        kind = PSDL_PKG_SHADERS;
        ok = parse_shaders(&in, a, &c->shaders) == 0;
    } else if (name_is(c->name, "xrefs")) {
        kind = PSDL_PKG_XREFS;
        ok = parse_xrefs(&in, a, c) == 0;
    } else {
        kind = PSDL_PKG_GEOMETRY;
        ok = parse_geometry(&in, a, &c->geometry) == 0;
    }
    if (!ok || pc_left(&in)) goto raw;
    c->kind = kind;
    pc_out cmp = {NULL, c->size, 0, 0, c->data, 0};
    psdl_cerror scratch;
    if (write_body(c, &cmp, &scratch, -1) != PSDL_OK || cmp.mismatch || cmp.pos != c->size) goto raw;
    return;
raw:
    c->kind = PSDL_PKG_RAW;
    memset(&c->geometry, 0, sizeof c->geometry);
    memset(&c->shaders, 0, sizeof c->shaders);
    c->nxrefs = 0;
    c->xrefs = NULL;
}

/* ---------------------------------------------------------------- container */

/* Walks one chunk header at in; fills c when not NULL. */
static int read_chunk(pc_in *in, psdl_arena *a, psdl_pkg_chunk *c) {
    size_t start = in->pos;
    if (pc_need(in, 5, "chunk tag and name length")) return -1;
    if (memcmp(in->d + in->pos, "FILE", 4) != 0) {
        pc_fail(in->err, FMT, PSDL_E_BAD_MAGIC, start, 1, in->record, "chunk tag is not FILE");
        return -1;
    }
    in->pos += 4;
    uint8_t len = pc_u8(in);
    if (len == 0) {
        pc_fail(in->err, FMT, PSDL_E_BAD_STRING, start + 4, 1, in->record, "chunk name length 0");
        return -1;
    }
    if (pc_need(in, len, "chunk name")) return -1;
    if (in->d[in->pos + len - 1] != 0) {
        pc_fail(in->err, FMT, PSDL_E_BAD_STRING, in->pos + len - 1, 1, in->record,
                "chunk name of %u bytes does not end with a NUL", len);
        return -1;
    }
    const uint8_t *name = in->d + in->pos;
    in->pos += len;
    if (pc_need(in, 4, "chunk size")) return -1;
    uint32_t size = pc_u32(in);
    if (pc_need(in, size, "chunk body")) return -1;
    if (c) {
        c->name_len = (uint8_t)(len - 1);
        c->name = pc_dup(a, name, len);
        c->size = size;
        c->data = size ? pc_dup(a, in->d + in->pos, size) : NULL;
        if (!c->name || (size && !c->data)) {
            pc_fail(in->err, FMT, PSDL_E_NOMEM, start, 1, in->record, "out of memory");
            return -1;
        }
        try_view(c, a);
    }
    in->pos += size;
    return 0;
}

psdl_status psdl_pkg_decode(const psdl_alloc *alloc, const void *data, size_t size, psdl_pkg **out,
                            psdl_cerror *err) {
    psdl_cerror local;
    if (!err) err = &local;
    *out = NULL;
    pc_in in = {data, size, 0, FMT, -1, err};
    if (size >= 4 && memcmp(data, "PKG2", 4) == 0)
        return pc_fail(err, FMT, PSDL_E_BAD_MAGIC, 0, 1, -1, "PKG2 has no chunk sizes: only PKG3 is supported");
    if (size < 4 || memcmp(data, "PKG3", 4) != 0)
        return pc_fail(err, FMT, PSDL_E_BAD_MAGIC, 0, 1, -1, "not a PKG3 file");
    in.pos = 4;
    uint32_t n = 0;
    while (pc_left(&in)) {
        in.record = (long)n;
        if (read_chunk(&in, NULL, NULL)) return err->code;
        n++;
    }
    psdl_pkg *p = psdl_pkg_new(alloc);
    if (!p) return pc_fail(err, FMT, PSDL_E_NOMEM, 0, 0, -1, "out of memory");
    if (n && !(p->chunks = psdl_arena_alloc(p->arena_, n * sizeof *p->chunks))) {
        psdl_pkg_free(p);
        return pc_fail(err, FMT, PSDL_E_NOMEM, 0, 0, -1, "out of memory");
    }
    in.pos = 4;
    for (uint32_t i = 0; i < n; i++) {
        in.record = (long)i;
        if (read_chunk(&in, p->arena_, &p->chunks[i])) {
            psdl_pkg_free(p);
            return err->code;
        }
    }
    p->nchunks = n;
    *out = p;
    return PSDL_OK;
}

static psdl_status write_pkg(const void *doc, pc_out *o, psdl_cerror *err) {
    const psdl_pkg *p = doc;
    pc_bytes(o, "PKG3", 4);
    for (uint32_t i = 0; i < p->nchunks; i++) {
        const psdl_pkg_chunk *c = &p->chunks[i];
        if (c->name_len > 254 || (c->name_len && !c->name))
            return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, (long)i, "chunk name of %u bytes: at most 254",
                           c->name_len);
        pc_out m = {NULL, 0, 0, 0, NULL, 0};
        psdl_status st = write_body(c, &m, err, (long)i);
        if (st != PSDL_OK) return st;
        if (m.pos > UINT32_MAX) return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, (long)i, "chunk beyond 4 GiB");
        pc_bytes(o, "FILE", 4);
        pc_put_u8(o, (uint8_t)(c->name_len + 1));
        pc_bytes(o, c->name, c->name_len);
        pc_put_u8(o, 0);
        pc_put_u32(o, (uint32_t)m.pos);
        st = write_body(c, o, err, (long)i);
        if (st != PSDL_OK) return st;
    }
    return PSDL_OK;
}

psdl_status psdl_pkg_encode(const psdl_pkg *pkg, void *dst, size_t cap, size_t *written, psdl_cerror *err) {
    return pc_encode(pkg, write_pkg, FMT, dst, cap, written, err);
}
