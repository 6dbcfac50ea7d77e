/* psdl_dbpf.c -- DBPF 1.x packages (The Sims 2, SimCity 4; nhtg-format.md §8): header,
 * index, the DIR of compressed resources; extraction (QFS) and "replace one resource"
 * rebuilding. Every count and every (offset, size) is checked against the file before use. */
#include "psdl_internal.h"
#include "psdl_nhtg.h"

#include <stdlib.h>

#define UINT32_LIMIT 0xFFFFFFFFull

void psdl_dbpf_free(psdl_dbpf *p) {
    if (p) psdl_arena_free(p->arena_);
}

/* Does DIR record r (dir_record_size bytes) name entry e? */
static int dir_matches(const psdl_dbpf *p, const uint8_t *r, const psdl_dbpf_entry *e) {
    if (psdl_get_u32(r) != e->type || psdl_get_u32(r + 4) != e->group || psdl_get_u32(r + 8) != e->instance)
        return 0;
    return p->dir_record_size == 16 || psdl_get_u32(r + 12) == e->instance_hi;
}

/* An index entry's DIR key (type, group, instance, instance-high) for sorting; rec is 1 + the
 * last DIR record naming it (0: none), kept on the first entry of each run of equal keys. */
typedef struct tgi_key {
    uint32_t type, group, instance, instance_hi;
    uint32_t k, rec;
} tgi_key;

static int cmp_tgi(const tgi_key *a, uint32_t type, uint32_t group, uint32_t instance, uint32_t hi) {
    if (a->type != type) return a->type < type ? -1 : 1;
    if (a->group != group) return a->group < group ? -1 : 1;
    if (a->instance != instance) return a->instance < instance ? -1 : 1;
    if (a->instance_hi != hi) return a->instance_hi < hi ? -1 : 1;
    return 0;
}

static int cmp_tgi_key(const void *x, const void *y) {
    const tgi_key *a = x, *b = y;
    int c = cmp_tgi(a, b->type, b->group, b->instance, b->instance_hi);
    return c ? c : (a->k > b->k) - (a->k < b->k);
}

/* Marks the entries the DIR names as compressed, each with the uncompressed size of the last
 * record naming it (dir_matches for every record and entry, but with the entries sorted by
 * key and each record binary-searched: O((entries + records) log entries), as untrusted
 * packages may hold tens of thousands of both). Returns 0, or -1 when out of memory. */
static int apply_dir(const psdl_options *opt, psdl_dbpf *p) {
    const psdl_dbpf_entry *de = &p->entries[p->dir];
    size_t rs = p->dir_record_size, nrec = de->size / rs, n = 0;
    if (nrec == 0 || p->nentries < 2) return 0;
    psdl_alloc al = {NULL, NULL};
    if (opt) al = opt->alloc;
    size_t bytes = (p->nentries - 1) * sizeof(tgi_key);
    tgi_key *keys = al.realloc ? al.realloc(al.ud, NULL, 0, bytes) : malloc(bytes);
    if (!keys) return -1;
    for (uint32_t k = 0; k < p->nentries; k++) {
        if ((long)k == p->dir) continue;
        const psdl_dbpf_entry *e = &p->entries[k];
        keys[n].type = e->type, keys[n].group = e->group, keys[n].instance = e->instance;
        keys[n].instance_hi = e->instance_hi; /* 0 with 16-byte records (20-byte index entries) */
        keys[n].k = k, keys[n].rec = 0;
        n++;
    }
    qsort(keys, n, sizeof *keys, cmp_tgi_key);
    for (size_t r = 0; r < nrec; r++) {
        const uint8_t *rec = p->data + de->offset + r * rs;
        uint32_t type = psdl_get_u32(rec), group = psdl_get_u32(rec + 4), inst = psdl_get_u32(rec + 8);
        uint32_t hi = rs == 16 ? 0 : psdl_get_u32(rec + 12);
        size_t lo = 0, up = n;
        while (lo < up) {
            size_t mid = lo + (up - lo) / 2;
            if (cmp_tgi(&keys[mid], type, group, inst, hi) < 0) lo = mid + 1;
            else up = mid;
        }
        if (lo < n && cmp_tgi(&keys[lo], type, group, inst, hi) == 0) keys[lo].rec = (uint32_t)r + 1;
    }
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && cmp_tgi(&keys[j], keys[i].type, keys[i].group, keys[i].instance, keys[i].instance_hi) == 0) j++;
        if (keys[i].rec) {
            uint32_t usize = psdl_get_u32(p->data + de->offset + (size_t)(keys[i].rec - 1) * rs + rs - 4);
            for (size_t m = i; m < j; m++) {
                p->entries[keys[m].k].compressed = 1;
                p->entries[keys[m].k].usize = usize;
            }
        }
        i = j;
    }
    if (al.realloc) al.realloc(al.ud, keys, bytes, 0);
    else free(keys);
    return 0;
}

static int same_tgi(const psdl_dbpf_entry *a, const psdl_dbpf_entry *b) {
    return a->type == b->type && a->group == b->group && a->instance == b->instance &&
           a->instance_hi == b->instance_hi;
}

psdl_status psdl_dbpf_decode(const psdl_options *opt, const void *data, size_t size, psdl_dbpf **out,
                             psdl_error *err) {
    psdl_error local;
    if (!err) err = &local;
    memset(err, 0, sizeof *err);
    err->room = err->attribute = -1;
    *out = NULL;
    const uint8_t *d = data;
    psdl_dbpf *p = NULL;
    if (size < 4 || memcmp(d, "DBPF", 4) != 0) {
        if (size < 4)
            return psdl_fail(err, PSDL_E_TRUNCATED, 0, 1, -1, -1, "need 4 bytes for the magic, %zu remain", size);
        return psdl_fail(err, PSDL_E_BAD_MAGIC, 0, 1, -1, -1, "magic is not \"DBPF\": not a package");
    }
    if (size < PSDL_DBPF_HEADER_SIZE)
        return psdl_fail(err, PSDL_E_TRUNCATED, size, 1, -1, -1, "need %u bytes for the package header, %zu remain",
                         (unsigned)PSDL_DBPF_HEADER_SIZE, size);
    uint32_t major = psdl_get_u32(d + 4), minor = psdl_get_u32(d + 8);
    if (major != 1)
        return psdl_fail(err, PSDL_E_BAD_MAGIC, 4, 1, -1, -1,
                         "DBPF version %u.%u is not supported (The Sims 2 and SimCity 4 use 1.x)", (unsigned)major,
                         (unsigned)minor);
    uint32_t index_major = psdl_get_u32(d + 32);
    if (index_major != 7)
        return psdl_fail(err, PSDL_E_BAD_MAGIC, 32, 1, -1, -1, "index version %u is not supported (7 expected)",
                         (unsigned)index_major);
    uint32_t count = psdl_get_u32(d + 36), index_offset = psdl_get_u32(d + 40), index_size = psdl_get_u32(d + 44);
    uint32_t index_minor = psdl_get_u32(d + 60);
    uint32_t esize = (minor >= 1 && index_minor == 2) ? 24u : 20u;
    if (index_offset > size)
        return psdl_fail(err, PSDL_E_BAD_INDEX, 40, 1, -1, -1, "index offset 0x%X is past the end of the file (%zu bytes)",
                         (unsigned)index_offset, size);
    if (count > (size - index_offset) / esize)
        return psdl_fail(err, PSDL_E_BAD_COUNT, 36, 1, -1, -1,
                         "index of %u entries of %u bytes at 0x%X needs %llu bytes, %zu remain", (unsigned)count,
                         (unsigned)esize, (unsigned)index_offset, (unsigned long long)count * esize,
                         size - index_offset);
    if ((uint64_t)count * esize > index_size)
        return psdl_fail(err, PSDL_E_BAD_COUNT, 44, 1, -1, -1,
                         "index size %u is smaller than %u entries of %u bytes", (unsigned)index_size,
                         (unsigned)count, (unsigned)esize);

    psdl_arena *arena = psdl_arena_new(opt ? &opt->alloc : NULL);
    if (!arena) return psdl_fail(err, PSDL_E_NOMEM, 0, 0, -1, -1, "out of memory");
    p = psdl_arena_alloc(arena, sizeof *p);
    if (!p) {
        psdl_arena_free(arena);
        return psdl_fail(err, PSDL_E_NOMEM, 0, 0, -1, -1, "out of memory");
    }
    p->arena_ = arena;
    memcpy(p->header, d, PSDL_DBPF_HEADER_SIZE);
    p->major = major;
    p->minor = minor;
    p->index_major = index_major;
    p->index_minor = index_minor;
    p->entry_size = esize;
    p->index_offset = index_offset;
    p->index_size = index_size;
    p->hole_count = psdl_get_u32(d + 48);
    p->hole_offset = psdl_get_u32(d + 52);
    p->hole_size = psdl_get_u32(d + 56);
    p->nentries = count;
    p->dir = -1;
    p->dir_record_size = esize == 24 ? 20u : 16u;
    p->data = d;
    p->size = size;
    if (count) {
        p->entries = psdl_arena_alloc(arena, (size_t)count * sizeof *p->entries);
        if (!p->entries) {
            psdl_fail(err, PSDL_E_NOMEM, 0, 0, -1, -1, "out of memory");
            goto fail;
        }
    }
    for (uint32_t k = 0; k < count; k++) {
        const uint8_t *r = d + index_offset + (size_t)k * esize;
        psdl_dbpf_entry *e = &p->entries[k];
        e->type = psdl_get_u32(r);
        e->group = psdl_get_u32(r + 4);
        e->instance = psdl_get_u32(r + 8);
        r += 12;
        if (esize == 24) {
            e->instance_hi = psdl_get_u32(r);
            r += 4;
        }
        e->offset = psdl_get_u32(r);
        e->size = psdl_get_u32(r + 4);
        e->usize = e->size;
        if (e->offset > size || e->size > size - e->offset) {
            psdl_fail(err, PSDL_E_BAD_INDEX, index_offset + (size_t)k * esize, 1, -1, -1,
                      "index entry %u (type 0x%08X): %u bytes at 0x%X run past the end of the file (%zu bytes)",
                      (unsigned)k + 1, (unsigned)e->type, (unsigned)e->size, (unsigned)e->offset, size);
            goto fail;
        }
        if (e->type == PSDL_DBPF_DIR_TYPE) {
            if (p->dir >= 0) {
                psdl_fail(err, PSDL_E_BAD_INDEX, index_offset + (size_t)k * esize, 1, -1, -1,
                          "index entries %ld and %u are both a DIR (type 0x%08X)", p->dir + 1, (unsigned)k + 1,
                          (unsigned)PSDL_DBPF_DIR_TYPE);
                goto fail;
            }
            p->dir = (long)k;
        }
    }
    if (p->dir >= 0) {
        const psdl_dbpf_entry *de = &p->entries[p->dir];
        if (de->size % p->dir_record_size != 0) {
            psdl_fail(err, PSDL_E_BAD_COUNT, de->offset, 1, -1, -1,
                      "DIR of %u bytes is not a whole number of %u-byte records", (unsigned)de->size,
                      (unsigned)p->dir_record_size);
            goto fail;
        }
        if (de->size >= PSDL_QFS_HEADER_SIZE && d[de->offset + 4] == 0x10 && d[de->offset + 5] == 0xFB &&
            psdl_get_u32(d + de->offset) == de->size) {
            psdl_fail(err, PSDL_E_BAD_MAGIC, de->offset, 1, -1, -1, "the DIR itself is compressed: not supported");
            goto fail;
        }
        if (apply_dir(opt, p) != 0) {
            psdl_fail(err, PSDL_E_NOMEM, 0, 0, -1, -1, "out of memory");
            goto fail;
        }
    }
    *out = p;
    return PSDL_OK;
fail:
    psdl_dbpf_free(p);
    return err->code;
}

long psdl_dbpf_find(const psdl_dbpf *p, uint32_t type, size_t start) {
    for (size_t k = start; k < p->nentries; k++)
        if (p->entries[k].type == type) return (long)k;
    return -1;
}

static psdl_status check_entry(const psdl_dbpf *p, size_t i, psdl_error *err) {
    if (i >= p->nentries)
        return psdl_fail(err, PSDL_E_BAD_INDEX, 0, 0, -1, -1, "entry %zu does not exist (the index has %u)", i + 1,
                         (unsigned)p->nentries);
    return PSDL_OK;
}

psdl_status psdl_dbpf_resource_size(const psdl_dbpf *p, size_t i, size_t *usize, psdl_error *err) {
    psdl_status st = check_entry(p, i, err);
    if (st != PSDL_OK) return st;
    const psdl_dbpf_entry *e = &p->entries[i];
    if (!e->compressed) {
        *usize = e->size;
        return PSDL_OK;
    }
    psdl_error lerr;
    st = psdl_qfs_size(p->data + e->offset, e->size, usize, &lerr);
    if (st != PSDL_OK)
        return psdl_fail(err, st, e->offset + lerr.offset, 1, -1, -1,
                         "entry %zu (type 0x%08X) is listed as compressed but %s", i + 1, (unsigned)e->type,
                         st == PSDL_E_TRUNCATED ? "is shorter than a QFS header" : "has no QFS signature");
    return PSDL_OK;
}

psdl_status psdl_dbpf_extract(const psdl_dbpf *p, size_t i, void *dst, size_t cap, size_t *written,
                              psdl_error *err) {
    if (written) *written = 0;
    size_t usize;
    psdl_status st = psdl_dbpf_resource_size(p, i, &usize, err);
    if (st != PSDL_OK) return st;
    const psdl_dbpf_entry *e = &p->entries[i];
    if (!e->compressed) {
        if (cap < e->size)
            return psdl_fail(err, PSDL_E_BAD_COUNT, 0, 0, -1, -1, "destination of %zu bytes is smaller than %u", cap,
                             (unsigned)e->size);
        if (e->size) memcpy(dst, p->data + e->offset, e->size);
        if (written) *written = e->size;
        return PSDL_OK;
    }
    return psdl_qfs_decompress_at(p->data + e->offset, e->size, e->offset, dst, cap, written, err);
}

/* ------------------------------------------------------------------ rebuild */

typedef struct plan {
    long dir;          /* the DIR entry kept (index), or -1 */
    int dir_removed;   /* the existing DIR entry is dropped (it would be empty) */
    int dir_added;     /* a DIR entry is appended */
    size_t dir_size;   /* bytes of the new DIR */
    size_t nentries;   /* entries of the new index */
} plan;

/* What happens to the DIR when entry i becomes (compressed or not). */
static void make_plan(const psdl_dbpf *p, size_t i, int compressed, plan *pl) {
    size_t rs = p->dir_record_size, keep = 0;
    if (p->dir >= 0) {
        const psdl_dbpf_entry *de = &p->entries[p->dir];
        size_t nrec = de->size / rs;
        for (size_t r = 0; r < nrec; r++)
            if (!dir_matches(p, p->data + de->offset + r * rs, &p->entries[i])) keep++;
    }
    size_t n = keep + (compressed ? 1u : 0u);
    pl->dir = p->dir;
    pl->dir_removed = p->dir >= 0 && n == 0;
    pl->dir_added = p->dir < 0 && n > 0;
    pl->dir_size = n * rs;
    pl->nentries = p->nentries - (pl->dir_removed ? 1u : 0u) + (pl->dir_added ? 1u : 0u);
}

size_t psdl_dbpf_rebuild_size(const psdl_dbpf *p, size_t i, size_t record_size, int compressed) {
    if (i >= p->nentries || (long)i == p->dir) return 0;
    plan pl;
    make_plan(p, i, compressed, &pl);
    uint64_t s = PSDL_DBPF_HEADER_SIZE;
    for (size_t k = 0; k < p->nentries; k++) {
        if ((long)k == p->dir) continue;
        s += k == i ? (uint64_t)record_size : p->entries[k].size;
    }
    if (pl.dir >= 0 && !pl.dir_removed) s += pl.dir_size;
    if (pl.dir_added) s += pl.dir_size;
    s += (uint64_t)pl.nentries * p->entry_size;
    if (s > UINT32_LIMIT || record_size > UINT32_LIMIT || s > (uint64_t)(size_t)-1) return 0;
    return (size_t)s;
}

/* Write the DIR for entry i's new state at w; returns the bytes written. */
static size_t write_dir(const psdl_dbpf *p, size_t i, int compressed, uint32_t usize, uint8_t *w) {
    size_t rs = p->dir_record_size, written = 0;
    int placed = 0;
    const psdl_dbpf_entry *e = &p->entries[i];
    if (p->dir >= 0) {
        const psdl_dbpf_entry *de = &p->entries[p->dir];
        size_t nrec = de->size / rs;
        for (size_t r = 0; r < nrec; r++) {
            const uint8_t *rec = p->data + de->offset + r * rs;
            if (!dir_matches(p, rec, e)) {
                memcpy(w + written, rec, rs);
                written += rs;
            } else if (compressed && !placed) {
                /* the record stays where it was, with the new size */
                memcpy(w + written, rec, rs - 4);
                psdl_put_u32(w + written + rs - 4, usize);
                written += rs;
                placed = 1;
            }
        }
    }
    if (compressed && !placed) {
        psdl_put_u32(w + written, e->type);
        psdl_put_u32(w + written + 4, e->group);
        psdl_put_u32(w + written + 8, e->instance);
        if (rs == 20) psdl_put_u32(w + written + 12, e->instance_hi);
        psdl_put_u32(w + written + rs - 4, usize);
        written += rs;
    }
    return written;
}

static uint8_t *put_entry(const psdl_dbpf *p, uint8_t *w, const psdl_dbpf_entry *e, uint32_t offset,
                          uint32_t size) {
    psdl_put_u32(w, e->type);
    psdl_put_u32(w + 4, e->group);
    psdl_put_u32(w + 8, e->instance);
    w += 12;
    if (p->entry_size == 24) {
        psdl_put_u32(w, e->instance_hi);
        w += 4;
    }
    psdl_put_u32(w, offset);
    psdl_put_u32(w + 4, size);
    return w + 8;
}

psdl_status psdl_dbpf_rebuild(const psdl_dbpf *p, size_t i, const void *record, size_t record_size,
                              int compressed, uint32_t usize, void *dst, size_t cap, size_t *written,
                              psdl_error *err) {
    if (written) *written = 0;
    psdl_status st = check_entry(p, i, err);
    if (st != PSDL_OK) return st;
    if ((long)i == p->dir)
        return psdl_fail(err, PSDL_E_BAD_INDEX, 0, 0, -1, -1, "entry %zu is the DIR, which is rebuilt, not replaced",
                         i + 1);
    for (size_t k = 0; k < p->nentries; k++)
        if (k != i && same_tgi(&p->entries[k], &p->entries[i]))
            return psdl_fail(err, PSDL_E_BAD_INDEX, 0, 0, -1, -1,
                             "entries %zu and %zu share type, group and instance: the DIR cannot tell them apart",
                             i + 1, k + 1);
    size_t need = psdl_dbpf_rebuild_size(p, i, record_size, compressed);
    if (need == 0)
        return psdl_fail(err, PSDL_E_INVALID, 0, 0, -1, -1, "the package would not fit the format's 32-bit sizes");
    if (cap < need)
        return psdl_fail(err, PSDL_E_INVALID, 0, 0, -1, -1, "destination of %zu bytes is smaller than %zu", cap, need);
    plan pl;
    make_plan(p, i, compressed, &pl);

    uint8_t *out = dst, *w = out + PSDL_DBPF_HEADER_SIZE;
    uint32_t index_offset;
    {
        /* first pass: the resources' bytes, in index order */
        for (size_t k = 0; k < p->nentries; k++) {
            if ((long)k == p->dir) {
                if (!pl.dir_removed) w += write_dir(p, i, compressed, usize, w);
            } else if (k == i) {
                if (record_size) memcpy(w, record, record_size);
                w += record_size;
            } else {
                const psdl_dbpf_entry *e = &p->entries[k];
                if (e->size) memcpy(w, p->data + e->offset, e->size);
                w += e->size;
            }
        }
        if (pl.dir_added) w += write_dir(p, i, compressed, usize, w);
        index_offset = (uint32_t)(w - out);
    }
    /* second pass: the index, recomputing the offsets in the same order */
    uint32_t off = PSDL_DBPF_HEADER_SIZE;
    for (size_t k = 0; k < p->nentries; k++) {
        const psdl_dbpf_entry *e = &p->entries[k];
        uint32_t sz;
        if ((long)k == p->dir) {
            if (pl.dir_removed) continue;
            sz = (uint32_t)pl.dir_size;
        } else {
            sz = k == i ? (uint32_t)record_size : e->size;
        }
        w = put_entry(p, w, e, off, sz);
        off += sz;
    }
    if (pl.dir_added) {
        psdl_dbpf_entry de;
        memset(&de, 0, sizeof de);
        de.type = PSDL_DBPF_DIR_TYPE;
        de.group = PSDL_DBPF_DIR_GROUP;
        de.instance = PSDL_DBPF_DIR_INSTANCE;
        w = put_entry(p, w, &de, off, (uint32_t)pl.dir_size);
    }
    /* header: the original, with the index fields updated and no holes */
    memcpy(out, p->header, PSDL_DBPF_HEADER_SIZE);
    psdl_put_u32(out + 36, (uint32_t)pl.nentries);
    psdl_put_u32(out + 40, index_offset);
    psdl_put_u32(out + 44, (uint32_t)(pl.nentries * p->entry_size));
    psdl_put_u32(out + 48, 0);
    psdl_put_u32(out + 52, 0);
    psdl_put_u32(out + 56, 0);
    if (written) *written = (size_t)(w - out);
    return PSDL_OK;
}
