/* psdl_inst.c -- placed models city/<map>.inst and <map>_ai.inst (docs/companion-formats.md
 * §4): records to EOF, each u16 room, u16 flags, a name byte (bit 7 compact, bits 0-6 the
 * name length including its NUL), the name, then the compact form (x axis x, z; origin) or
 * the full matrix (x, y, z axes; origin). The compact form's implied rows m1 = (0, 1, 0),
 * m2 = (-z, 0, x) are not stored and not invented here: m[1], m[2] stay zero. */
#include "psdl_companion_internal.h"

#define FMT "inst"

psdl_inst *psdl_inst_new(const psdl_alloc *alloc) {
    psdl_arena *a = pc_arena_new(alloc);
    if (!a) return NULL;
    psdl_inst *t = psdl_arena_alloc(a, sizeof *t);
    if (!t) {
        psdl_arena_free(a);
        return NULL;
    }
    t->arena_ = a;
    return t;
}

void psdl_inst_free(psdl_inst *inst) {
    if (inst) psdl_arena_free(inst->arena_);
}

/* Walks one record at in (fills r when not NULL). */
static int read_record(pc_in *in, psdl_arena *a, psdl_inst_record *r) {
    if (pc_need(in, 5, "record header")) return -1;
    size_t start = in->pos;
    uint16_t room = pc_u16(in), flags = pc_u16(in);
    uint8_t nb = pc_u8(in);
    size_t len = nb & 0x7Fu;
    int compact = (nb & 0x80u) != 0;
    if (len == 0) {
        pc_fail(in->err, FMT, PSDL_E_BAD_STRING, start + 4, 1, in->record, "name length 0 (no NUL)");
        return -1;
    }
    if (pc_need(in, len, "name")) return -1;
    if (in->d[in->pos + len - 1] != 0) {
        pc_fail(in->err, FMT, PSDL_E_BAD_STRING, in->pos + len - 1, 1, in->record,
                "name of %zu bytes does not end with a NUL", len);
        return -1;
    }
    const uint8_t *name = in->d + in->pos;
    in->pos += len;
    size_t body = compact ? 20 : 48;
    if (pc_need(in, body, compact ? "compact placement" : "matrix")) return -1;
    if (!r) {
        in->pos += body;
        return 0;
    }
    r->room = room;
    r->flags = flags;
    r->compact = (uint8_t)compact;
    r->name_len = (uint8_t)(len - 1);
    r->name = pc_dup(a, name, len);
    if (!r->name) {
        pc_fail(in->err, FMT, PSDL_E_NOMEM, start, 1, in->record, "out of memory");
        return -1;
    }
    if (compact) {
        r->m[0].x = pc_f32(in);
        r->m[0].y = 0;
        r->m[0].z = pc_f32(in);
        r->m[3] = pc_vec3(in);
    } else {
        for (int k = 0; k < 4; k++) r->m[k] = pc_vec3(in);
    }
    return 0;
}

psdl_status psdl_inst_decode(const psdl_alloc *alloc, const void *data, size_t size, psdl_inst **out,
                             psdl_cerror *err) {
    psdl_cerror local;
    if (!err) err = &local;
    *out = NULL;
    pc_in in = {data, size, 0, FMT, -1, err};
    uint32_t n = 0;
    while (pc_left(&in)) { /* pass 1: count and check */
        in.record = (long)n;
        if (read_record(&in, NULL, NULL)) return err->code;
        n++;
    }
    psdl_inst *t = psdl_inst_new(alloc);
    if (!t) return pc_fail(err, FMT, PSDL_E_NOMEM, 0, 0, -1, "out of memory");
    if (n && !(t->records = psdl_arena_alloc(t->arena_, n * sizeof *t->records))) {
        psdl_inst_free(t);
        return pc_fail(err, FMT, PSDL_E_NOMEM, 0, 0, -1, "out of memory");
    }
    in.pos = 0;
    for (uint32_t i = 0; i < n; i++) {
        in.record = (long)i;
        if (read_record(&in, t->arena_, &t->records[i])) {
            psdl_inst_free(t);
            return err->code;
        }
    }
    t->nrecords = n;
    *out = t;
    return PSDL_OK;
}

static psdl_status write_inst(const void *doc, pc_out *o, psdl_cerror *err) {
    const psdl_inst *t = doc;
    for (uint32_t i = 0; i < t->nrecords; i++) {
        const psdl_inst_record *r = &t->records[i];
        if (r->name_len > 126 || (r->name_len && !r->name))
            return pc_fail(err, FMT, PSDL_E_INVALID, 0, 0, (long)i, "name of %u bytes: at most 126", r->name_len);
        pc_put_u16(o, r->room);
        pc_put_u16(o, r->flags);
        pc_put_u8(o, (uint8_t)((r->compact ? 0x80u : 0u) | (unsigned)(r->name_len + 1)));
        pc_bytes(o, r->name, r->name_len);
        pc_put_u8(o, 0);
        if (r->compact) {
            pc_put_f32(o, r->m[0].x);
            pc_put_f32(o, r->m[0].z);
            pc_put_vec3(o, r->m[3]);
        } else {
            for (int k = 0; k < 4; k++) pc_put_vec3(o, r->m[k]);
        }
    }
    return PSDL_OK;
}

psdl_status psdl_inst_encode(const psdl_inst *inst, void *dst, size_t cap, size_t *written, psdl_cerror *err) {
    return pc_encode(inst, write_inst, FMT, dst, cap, written, err);
}
