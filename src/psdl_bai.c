/* psdl_bai.c -- the AI road network city/<map>.bai ("CAI1", docs/companion-formats.md §2):
 * lossless decode and encode. Field order follows the game's aiPath::ReadBinary and the
 * retail files (CF §2.3), not the wiki: in a side the length matrix comes before the
 * per-row floats (CF §2.13). The end record is read as u32 intersection, u16 lightIndex,
 * u16 rule, u16 flags, u32 roadIndex, two vec3 (the tools' "u32 rule" is the same bytes). */
#include "psdl_companion_internal.h"

#include <stdio.h>

#define FMT "bai"
#define END_BYTES 38u
/* smallest road: header, no rooms, two empty sides (10 + 4 + 40 each), ends */
#define MIN_ROAD_BYTES (8u + 8u + 2u * 54u + 2u * END_BYTES)

static psdl_status nomem(pc_in *in) {
    return pc_fail(in->err, FMT, PSDL_E_NOMEM, in->pos, 1, in->record, "out of memory");
}

/* Reads n floats into a fresh array (*out NULL when n == 0). */
static int read_floats(pc_in *in, psdl_arena *a, size_t n, float **out, const char *what) {
    *out = NULL;
    if (n == 0) return 0;
    if (pc_need(in, n * 4, what)) return -1;
    float *f = psdl_arena_alloc(a, n * sizeof *f);
    if (!f) return nomem(in), -1;
    for (size_t i = 0; i < n; i++) f[i] = pc_f32(in);
    *out = f;
    return 0;
}

static int read_vecs(pc_in *in, psdl_arena *a, size_t n, psdl_vec3 **out, const char *what) {
    *out = NULL;
    if (n == 0) return 0;
    if (pc_need(in, n * 12, what)) return -1;
    psdl_vec3 *v = psdl_arena_alloc(a, n * sizeof *v);
    if (!v) return nomem(in), -1;
    for (size_t i = 0; i < n; i++) v[i] = pc_vec3(in);
    *out = v;
    return 0;
}

static int read_side(pc_in *in, psdl_arena *a, psdl_bai_side *s, size_t ns, const char *name) {
    char what[64];
    snprintf(what, sizeof what, "side %s counts", name);
    if (pc_need(in, 10, what)) return -1;
    s->nlanes = pc_u16(in);
    s->ntrams = pc_u16(in);
    s->ntrains = pc_u16(in);
    s->nsidewalks = pc_u16(in);
    s->flags = pc_u16(in);
    uint64_t rows = (uint64_t)s->nlanes + 1;
    uint64_t bytes = 4 * rows * ns + 4 * rows + 40 + 12 * (uint64_t)ns * (rows + s->ntrams + s->ntrains + 2);
    snprintf(what, sizeof what, "side %s (%u lanes, %u trams, %u trains, %zu sections)", name, s->nlanes,
             s->ntrams, s->ntrains, ns);
    if (pc_count(in, bytes, 1, what)) return -1;
    snprintf(what, sizeof what, "side %s lengths", name);
    if (read_floats(in, a, (size_t)rows * ns, &s->lengths, what)) return -1;
    if (read_floats(in, a, (size_t)rows, &s->lateral, what)) return -1;
    for (int i = 0; i < 10; i++) s->params[i] = pc_f32(in);
    if (read_vecs(in, a, (size_t)s->nlanes * ns, &s->lanes, "lanes")) return -1;
    if (read_vecs(in, a, ns, &s->sidewalk, "sidewalk")) return -1;
    if (read_vecs(in, a, (size_t)s->ntrams * ns, &s->trams, "trams")) return -1;
    if (read_vecs(in, a, (size_t)s->ntrains * ns, &s->trains, "trains")) return -1;
    if (read_vecs(in, a, ns, &s->curb, "curb")) return -1;
    if (read_vecs(in, a, ns, &s->edge, "edge")) return -1;
    return 0;
}

static void read_end(pc_in *in, psdl_bai_end *e) {
    e->intersection = pc_u32(in);
    e->light_index = pc_u16(in);
    e->rule = pc_u16(in);
    e->flags = pc_u16(in);
    e->road_index = pc_u32(in);
    e->light_pos = pc_vec3(in);
    e->light_axis = pc_vec3(in);
}

static int read_road(pc_in *in, psdl_arena *a, psdl_bai_road *r) {
    if (pc_need(in, 8, "road header")) return -1;
    r->id = pc_u16(in);
    r->nsections = pc_u16(in);
    r->flags = pc_u16(in);
    r->nrooms = pc_u16(in);
    size_t ns = r->nsections;
    if (pc_count(in, r->nrooms, 2, "road rooms")) return -1;
    if (r->nrooms) {
        r->rooms = psdl_arena_alloc(a, r->nrooms * sizeof *r->rooms);
        if (!r->rooms) return nomem(in), -1;
        for (unsigned i = 0; i < r->nrooms; i++) r->rooms[i] = pc_u16(in);
    }
    if (pc_need(in, 8, "half width and speed limit")) return -1;
    r->half_width = pc_f32(in);
    r->speed_limit = pc_f32(in);
    if (read_side(in, a, &r->side[0], ns, "A")) return -1;
    if (read_side(in, a, &r->side[1], ns, "B")) return -1;
    if (pc_count(in, (uint64_t)ns * 64 + 2 * END_BYTES, 1, "road frames and ends")) return -1;
    if (read_floats(in, a, ns, &r->centre_length, "centre lengths")) return -1;
    if (read_vecs(in, a, ns, &r->origin, "origins")) return -1;
    if (read_vecs(in, a, ns, &r->x_axis, "x axes")) return -1;
    if (read_vecs(in, a, ns, &r->y_axis, "y axes")) return -1;
    if (read_vecs(in, a, ns, &r->z_axis, "z axes")) return -1;
    if (read_vecs(in, a, ns, &r->w_axis, "w axes")) return -1;
    read_end(in, &r->end[0]);
    read_end(in, &r->end[1]);
    return 0;
}

static int read_lists(pc_in *in, psdl_arena *a, psdl_bai_list *lists, uint32_t n, const char *what) {
    for (uint32_t i = 0; i < n; i++) {
        if (pc_need(in, 2, what)) return -1;
        lists[i].n = pc_u16(in);
        if (pc_count(in, lists[i].n, 2, what)) return -1;
        if (lists[i].n) {
            lists[i].roads = psdl_arena_alloc(a, lists[i].n * sizeof(uint16_t));
            if (!lists[i].roads) return nomem(in), -1;
            for (unsigned k = 0; k < lists[i].n; k++) lists[i].roads[k] = pc_u16(in);
        }
    }
    return 0;
}

psdl_bai *psdl_bai_new(const psdl_alloc *alloc) {
    psdl_arena *a = pc_arena_new(alloc);
    if (!a) return NULL;
    psdl_bai *b = psdl_arena_alloc(a, sizeof *b);
    if (!b) {
        psdl_arena_free(a);
        return NULL;
    }
    b->arena_ = a;
    return b;
}

void psdl_bai_free(psdl_bai *bai) {
    if (bai) psdl_arena_free(bai->arena_);
}

psdl_status psdl_bai_decode(const psdl_alloc *alloc, const void *data, size_t size, psdl_bai **out,
                            psdl_cerror *err) {
    psdl_cerror local;
    if (!err) err = &local;
    *out = NULL;
    pc_in in = {data, size, 0, FMT, -1, err};
    if (size < 4 || memcmp(data, "CAI1", 4) != 0)
        return pc_fail(err, FMT, PSDL_E_BAD_MAGIC, 0, 1, -1, "not a CAI1 file");
    in.pos = 4;
    if (pc_need(&in, 4, "counts")) return err->code;
    psdl_bai *b = psdl_bai_new(alloc);
    if (!b) return pc_fail(err, FMT, PSDL_E_NOMEM, 0, 0, -1, "out of memory");
    psdl_arena *a = b->arena_;
    b->nintersections = pc_u16(&in);
    b->nroads = pc_u16(&in);
    if (pc_count(&in, b->nroads, MIN_ROAD_BYTES, "roads")) goto fail;
    if (b->nroads && !(b->roads = psdl_arena_alloc(a, b->nroads * sizeof *b->roads))) goto oom;
    for (unsigned i = 0; i < b->nroads; i++) {
        in.record = (long)i;
        if (read_road(&in, a, &b->roads[i])) goto fail;
    }
    in.record = -1;
    if (pc_count(&in, b->nintersections, 18, "intersections")) goto fail;
    if (b->nintersections &&
        !(b->intersections = psdl_arena_alloc(a, b->nintersections * sizeof *b->intersections)))
        goto oom;
    for (unsigned i = 0; i < b->nintersections; i++) {
        psdl_bai_intersection *x = &b->intersections[i];
        in.record = (long)i;
        if (pc_need(&in, 18, "intersection")) goto fail;
        x->id = pc_u16(&in);
        x->room = pc_u16(&in);
        x->center = pc_vec3(&in);
        x->nroads = pc_u16(&in);
        if (pc_count(&in, x->nroads, 4, "intersection roads")) goto fail;
        if (x->nroads) {
            if (!(x->roads = psdl_arena_alloc(a, x->nroads * sizeof *x->roads))) goto oom;
            for (unsigned k = 0; k < x->nroads; k++) x->roads[k] = pc_u32(&in);
        }
    }
    in.record = -1;
    if (pc_need(&in, 4, "culling room count")) goto fail;
    b->ncull = pc_u32(&in);
    if (pc_count(&in, (uint64_t)b->ncull * 2, 2, "culling lists")) goto fail;
    if (b->ncull) {
        if (!(b->near = psdl_arena_alloc(a, b->ncull * sizeof *b->near))) goto oom;
        if (!(b->in = psdl_arena_alloc(a, b->ncull * sizeof *b->in))) goto oom;
    }
    if (read_lists(&in, a, b->near, b->ncull, "near list")) goto fail;
    if (read_lists(&in, a, b->in, b->ncull, "in list")) goto fail;
    if (pc_left(&in)) {
        b->ntrailing = pc_left(&in);
        if (!(b->trailing = pc_dup(a, in.d + in.pos, b->ntrailing))) goto oom;
    }
    *out = b;
    return PSDL_OK;
oom:
    nomem(&in);
fail:
    psdl_bai_free(b);
    return err->code;
}

/* ---------------------------------------------------------------- encode */

static void put_floats(pc_out *o, const float *f, size_t n) {
    for (size_t i = 0; i < n; i++) pc_put_f32(o, f[i]);
}
static void put_vecs(pc_out *o, const psdl_vec3 *v, size_t n) {
    for (size_t i = 0; i < n; i++) pc_put_vec3(o, v[i]);
}

static void put_end(pc_out *o, const psdl_bai_end *e) {
    pc_put_u32(o, e->intersection);
    pc_put_u16(o, e->light_index);
    pc_put_u16(o, e->rule);
    pc_put_u16(o, e->flags);
    pc_put_u32(o, e->road_index);
    pc_put_vec3(o, e->light_pos);
    pc_put_vec3(o, e->light_axis);
}

/* Arrays must be present for their counts (a NULL array with a non-zero count is invalid). */
static int side_ok(const psdl_bai_side *s, size_t ns) {
    size_t rows = (size_t)s->nlanes + 1;
    if (ns && (!s->lengths || !s->sidewalk || !s->curb || !s->edge)) return 0;
    if (!s->lateral) return 0;
    if (ns && s->nlanes && !s->lanes) return 0;
    if (ns && s->ntrams && !s->trams) return 0;
    if (ns && s->ntrains && !s->trains) return 0;
    (void)rows;
    return 1;
}

static psdl_status write_bai(const void *doc, pc_out *o, psdl_cerror *err) {
    const psdl_bai *b = doc;
    pc_bytes(o, "CAI1", 4);
    pc_put_u16(o, b->nintersections);
    pc_put_u16(o, b->nroads);
    for (unsigned i = 0; i < b->nroads; i++) {
        const psdl_bai_road *r = &b->roads[i];
        size_t ns = r->nsections;
        if ((r->nrooms && !r->rooms) || !side_ok(&r->side[0], ns) || !side_ok(&r->side[1], ns) ||
            (ns && (!r->centre_length || !r->origin || !r->x_axis || !r->y_axis || !r->z_axis || !r->w_axis)))
            return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, (long)i, "road arrays missing for its counts");
        pc_put_u16(o, r->id);
        pc_put_u16(o, r->nsections);
        pc_put_u16(o, r->flags);
        pc_put_u16(o, r->nrooms);
        for (unsigned k = 0; k < r->nrooms; k++) pc_put_u16(o, r->rooms[k]);
        pc_put_f32(o, r->half_width);
        pc_put_f32(o, r->speed_limit);
        for (int sd = 0; sd < 2; sd++) {
            const psdl_bai_side *s = &r->side[sd];
            size_t rows = (size_t)s->nlanes + 1;
            pc_put_u16(o, s->nlanes);
            pc_put_u16(o, s->ntrams);
            pc_put_u16(o, s->ntrains);
            pc_put_u16(o, s->nsidewalks);
            pc_put_u16(o, s->flags);
            put_floats(o, s->lengths, rows * ns);
            put_floats(o, s->lateral, rows);
            put_floats(o, s->params, 10);
            put_vecs(o, s->lanes, (size_t)s->nlanes * ns);
            put_vecs(o, s->sidewalk, ns);
            put_vecs(o, s->trams, (size_t)s->ntrams * ns);
            put_vecs(o, s->trains, (size_t)s->ntrains * ns);
            put_vecs(o, s->curb, ns);
            put_vecs(o, s->edge, ns);
        }
        put_floats(o, r->centre_length, ns);
        put_vecs(o, r->origin, ns);
        put_vecs(o, r->x_axis, ns);
        put_vecs(o, r->y_axis, ns);
        put_vecs(o, r->z_axis, ns);
        put_vecs(o, r->w_axis, ns);
        put_end(o, &r->end[0]);
        put_end(o, &r->end[1]);
    }
    for (unsigned i = 0; i < b->nintersections; i++) {
        const psdl_bai_intersection *x = &b->intersections[i];
        if (x->nroads && !x->roads)
            return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, (long)i, "intersection road list missing");
        pc_put_u16(o, x->id);
        pc_put_u16(o, x->room);
        pc_put_vec3(o, x->center);
        pc_put_u16(o, x->nroads);
        for (unsigned k = 0; k < x->nroads; k++) pc_put_u32(o, x->roads[k]);
    }
    pc_put_u32(o, b->ncull);
    for (int t = 0; t < 2; t++) {
        const psdl_bai_list *lists = t ? b->in : b->near;
        if (b->ncull && !lists) return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, -1, "culling lists missing");
        for (uint32_t i = 0; i < b->ncull; i++) {
            if (lists[i].n && !lists[i].roads)
                return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, -1, "culling list %u missing", i);
            pc_put_u16(o, lists[i].n);
            for (unsigned k = 0; k < lists[i].n; k++) pc_put_u16(o, lists[i].roads[k]);
        }
    }
    pc_bytes(o, b->trailing, b->ntrailing);
    return PSDL_OK;
}

psdl_status psdl_bai_encode(const psdl_bai *bai, void *dst, size_t cap, size_t *written, psdl_cerror *err) {
    return pc_encode(bai, write_bai, FMT, dst, cap, written, err);
}
