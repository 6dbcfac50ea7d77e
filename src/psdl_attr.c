/* psdl_attr.c -- the room attribute stream (§2): header word, subtype/count forms, and
 * per-type payloads, decoded into psdl_attr views and packed back into words. */
#include "psdl_internal.h"

static const char *const type_names[16] = {
    "road", "sidewalk_strip", "walkway", "sliver", "crosswalk", "road_fan", "fan",
    "facade_bound", "divided_road", "tunnel", "texture", "facade", "roof",
    "unknown", "unknown", "unknown",
};

const char *psdl_attr_type_name(int type) {
    if (type < 0 || type > 15) return "unknown";
    return type_names[type];
}

/* Payload length in words for a type given n (subtype or count word), §2.2. */
static uint32_t payload_len(unsigned type, uint32_t n, int counted) {
    switch (type) {
    case PSDL_ATTR_ROAD: return 4u * n;
    case PSDL_ATTR_SIDEWALK_STRIP:
    case PSDL_ATTR_WALKWAY: return 2u * n;
    case PSDL_ATTR_ROAD_FAN:
    case PSDL_ATTR_FAN: return n + 2u;
    case PSDL_ATTR_DIVIDED_ROAD: return 2u + 6u * n;
    case PSDL_ATTR_TUNNEL: return n;
    case PSDL_ATTR_ROOF: return n + 2u;
    case PSDL_ATTR_TEXTURE: return counted ? 0u : 1u;
    default: return psdl_fixed_len(type); /* sliver, crosswalk, facade bound, facade */
    }
}

/* The room's words from i on kept raw in a (an unknown attribute whose header is hdr). */
static void keep_raw(psdl_attr *a, uint16_t *w, uint32_t i, uint32_t nwords, uint16_t hdr) {
    memset(a, 0, sizeof *a);
    a->type = PSDL_ATTR_UNKNOWN;
    a->last = (uint8_t)((hdr >> 7) & 1u);
    a->refs = w + i;
    a->nrefs = nwords - i;
}

long psdl_attrs_decode(uint16_t *w, uint32_t nwords, psdl_attr *attrs, long room,
                       size_t base_offset, psdl_error *err) {
    uint32_t i = 0;
    long k = 0;
    int seen_last = 0;
    while (i < nwords) {
        uint16_t hdr = w[i];
        unsigned type = (hdr >> 3) & 0xFu, sub = hdr & 7u;
        psdl_attr *a = attrs ? &attrs[k] : NULL;
        if (type > PSDL_ATTR_ROOF) {
            /* types 13..15: length unknowable, keep the rest of the room raw (§2.1) */
            if (a) keep_raw(a, w, i, nwords, hdr);
            return k + 1;
        }
        int counted = sub == 0;
        uint32_t n = sub;
        uint64_t end;
        if (counted) {
            if (i + 1 >= nwords) goto overrun;
            n = w[i + 1];
        }
        uint32_t start = i + 1u + (counted ? 1u : 0u);
        end = (uint64_t)start + payload_len(type, n, counted);
        if (end > nwords) goto overrun;
        if (a) {
            uint16_t *p = w + start;
            memset(a, 0, sizeof *a);
            a->type = (uint8_t)type;
            a->subtype = (uint8_t)sub;
            a->last = (uint8_t)((hdr >> 7) & 1u);
            a->header_high = (uint8_t)(hdr >> 8);
            a->form = counted ? PSDL_FORM_COUNTED : PSDL_FORM_INLINE;
            a->count = counted ? (uint16_t)n : 0;
            a->refs = p;
            a->nrefs = (uint32_t)(end - start);
            switch (type) {
            case PSDL_ATTR_SIDEWALK_STRIP:
                /* end cap: exactly 2 pairs whose first is (0,0) start or (1,1) end (§2.4 0x1) */
                if (n == 2 && p[0] == p[1] && p[0] < 2) {
                    a->cap = p[0] == 0 ? PSDL_CAP_START : PSDL_CAP_END;
                    a->refs += 2;
                    a->nrefs = 2;
                }
                break;
            case PSDL_ATTR_DIVIDED_ROAD:
                a->param[0] = p[0] & 0x3Fu;       /* divider type */
                a->param[1] = (p[0] >> 6) & 3u;   /* cap bits */
                a->param[2] = p[0] >> 8;          /* divider texture value */
                a->param[3] = p[1];               /* 8.8 value */
                a->refs += 2;
                a->nrefs -= 2;
                break;
            case PSDL_ATTR_ROOF:
                a->param[0] = p[0];
                a->refs += 1;
                a->nrefs -= 1;
                break;
            case PSDL_ATTR_TEXTURE:
                if (counted) {
                    a->param[0] = n;  /* the count word is the value (§2.3) */
                    a->param[1] = n;
                } else {
                    a->param[0] = (sub << 8) | p[0];
                    a->param[1] = p[0];
                }
                a->refs = NULL;
                a->nrefs = 0;
                break;
            case PSDL_ATTR_SLIVER:
            case PSDL_ATTR_FACADE_BOUND:
                a->param[0] = p[0];
                a->param[1] = p[1];
                a->refs += 2;
                a->nrefs = 2;
                break;
            case PSDL_ATTR_FACADE:
                a->param[0] = p[0];
                a->param[1] = p[1];
                a->param[2] = p[2];
                a->param[3] = p[3];
                a->refs += 4;
                a->nrefs = 2;
                break;
            default: break; /* road, walkway, crosswalk, fans, tunnel: refs as they are */
            }
        }
        if ((hdr >> 7) & 1u) seen_last = 1;
        i = (uint32_t)end;
        k++;
        continue;
    overrun:
        if (seen_last) {
            /* after LAST the game reads nothing: keep what does not parse as raw words */
            if (a) keep_raw(a, w, i, nwords, hdr);
            return k + 1;
        }
        psdl_fail(err, PSDL_E_BAD_ATTRIBUTE, base_offset + 2u * (size_t)i, 1, room, k,
                  "%s attribute (header 0x%04x) runs past the end of the room's %u words",
                  psdl_attr_type_name((int)type), hdr, (unsigned)nwords);
        return -1;
    }
    return k;
}

/* n (sections, pairs, triangles, words, vertices - 1) of a variable-size attribute, or
 * -1 when nrefs does not fit the type's stride. */
static long variable_count(const psdl_attr *a) {
    uint32_t r = a->nrefs;
    switch (a->type) {
    case PSDL_ATTR_ROAD: return r % 4 ? -1 : (long)(r / 4);
    case PSDL_ATTR_SIDEWALK_STRIP:
        if (a->cap) return r == 2 ? 2 : -1;
        return r % 2 ? -1 : (long)(r / 2);
    case PSDL_ATTR_WALKWAY: return r % 2 ? -1 : (long)(r / 2);
    case PSDL_ATTR_ROAD_FAN:
    case PSDL_ATTR_FAN: return r < 2 ? -1 : (long)(r - 2);
    case PSDL_ATTR_DIVIDED_ROAD: return r % 6 ? -1 : (long)(r / 6);
    case PSDL_ATTR_TUNNEL: return (long)r;
    case PSDL_ATTR_ROOF: return r < 1 ? -1 : (long)(r - 1);
    default: return -1;
    }
}

/* Whether a variable-length attribute of n (sections, pairs, triangles...) is written in
 * the counted form (subtype 0 + count word): when it was read so, when n does not fit the
 * 3-bit subtype, and -- for attributes built in memory (AUTO) -- when a sidewalk strip,
 * rectangle strip or roof has n = 1: subtype 1 of types 0x1, 0x2 and 0xC is read as a
 * count word by at least one third-party reader (psdl-format.md §2.2 note), so psdlkit
 * never writes it; a file read with it keeps it (INLINE), byte for byte. */
static int auto_counted(const psdl_attr *a, long n) {
    if (a->form == PSDL_FORM_COUNTED || n == 0 || n > 7) return 1;
    if (a->form == PSDL_FORM_AUTO && n == 1 &&
        (a->type == PSDL_ATTR_SIDEWALK_STRIP || a->type == PSDL_ATTR_WALKWAY || a->type == PSDL_ATTR_ROOF))
        return 1;
    return 0;
}

static const char *stride_text(unsigned type) {
    switch (type) {
    case PSDL_ATTR_ROAD: return "a multiple of 4 vertices (outer L, curb L, curb R, outer R per section)";
    case PSDL_ATTR_SIDEWALK_STRIP: return "a multiple of 2 vertices (curb, outer), or exactly 2 for an end cap";
    case PSDL_ATTR_WALKWAY: return "a multiple of 2 vertices";
    case PSDL_ATTR_ROAD_FAN:
    case PSDL_ATTR_FAN: return "at least 2 vertices (hub and rim)";
    case PSDL_ATTR_DIVIDED_ROAD: return "a multiple of 6 vertices";
    case PSDL_ATTR_ROOF: return "at least 1 vertex";
    case PSDL_ATTR_CROSSWALK: return "exactly 4 vertices";
    default: return "exactly 2 vertices";
    }
}

size_t psdl_attr_size(const psdl_attr *a) {
    if (a->type == PSDL_ATTR_UNKNOWN) return a->nrefs;
    if (a->type == PSDL_ATTR_TEXTURE) return 2;
    if (psdl_fixed_subtype(a->type)) return 1u + (a->form == PSDL_FORM_COUNTED) + psdl_fixed_len(a->type);
    long n = variable_count(a);
    if (n < 0) return 0;
    return 1u + (auto_counted(a, n) ? 1u : 0u) + payload_len(a->type, (uint32_t)n, 0);
}

#define PACK_FAIL(...) (psdl_fail(err, PSDL_E_INVALID, 0, 0, -1, -1, __VA_ARGS__), (size_t)0)

size_t psdl_attr_pack(const psdl_attr *a, uint16_t *dst, psdl_error *err) {
    unsigned type = a->type;
    if (type == PSDL_ATTR_UNKNOWN) {
        if (a->nrefs == 0) return PACK_FAIL("unknown attribute has no words");
        memcpy(dst, a->refs, a->nrefs * sizeof *dst);
        return a->nrefs;
    }
    if (type > PSDL_ATTR_ROOF) return PACK_FAIL("attribute type %u is not 0..12", type);
    unsigned sub;
    int counted = 0;
    uint16_t count_word = 0;
    size_t o = 1;
    for (int j = 0; j < 4; j++) {
        if (a->param[j] > 0xFFFFu && type != PSDL_ATTR_TEXTURE)
            return PACK_FAIL("%s field %d value %lu does not fit 16 bits", psdl_attr_type_name((int)type), j + 1,
                             (unsigned long)a->param[j]);
    }
    if (type == PSDL_ATTR_TEXTURE) {
        uint32_t v = a->param[0], data;
        if (a->form == PSDL_FORM_AUTO) {
            if (v > PSDL_MAX_TEXTURE_VALUE)
                return PACK_FAIL("texture value %lu exceeds %d, the largest the 3-bit subtype and data byte "
                                 "can encode (psdl-format.md §2.3)",
                                 (unsigned long)v, PSDL_MAX_TEXTURE_VALUE);
            sub = v >> 8;
            data = v & 0xFFu;
        } else {
            sub = a->subtype & 7u;
            data = a->param[1];
            if (data > 0xFFFFu || (sub ? ((sub << 8) | data) : data) != v)
                return PACK_FAIL("texture value %lu disagrees with its stored subtype %u and data %lu",
                                 (unsigned long)v, sub, (unsigned long)data);
        }
        dst[1] = (uint16_t)data;
        o = 2;
    } else if (psdl_fixed_subtype(type)) {
        uint32_t want = type == PSDL_ATTR_CROSSWALK ? 4u : 2u;
        if (a->nrefs != want)
            return PACK_FAIL("%s needs %s, got %lu", psdl_attr_type_name((int)type), stride_text(type),
                             (unsigned long)a->nrefs);
        if (a->form == PSDL_FORM_COUNTED) {
            sub = 0;
            counted = 1;
            count_word = a->count;
        } else {
            sub = a->subtype ? (a->subtype & 7u) : psdl_fixed_subtype(type);
        }
        if (counted) dst[o++] = count_word;
        switch (type) {
        case PSDL_ATTR_SLIVER:
        case PSDL_ATTR_FACADE_BOUND:
            dst[o++] = (uint16_t)a->param[0];
            dst[o++] = (uint16_t)a->param[1];
            break;
        case PSDL_ATTR_FACADE:
            for (int j = 0; j < 4; j++) dst[o++] = (uint16_t)a->param[j];
            break;
        default: break;
        }
        if (a->nrefs) memcpy(dst + o, a->refs, a->nrefs * sizeof *dst);
        o += a->nrefs;
    } else {
        long n = variable_count(a);
        if (n < 0)
            return PACK_FAIL("%s needs %s, got %lu", psdl_attr_type_name((int)type), stride_text(type),
                             (unsigned long)a->nrefs);
        if (n > 0xFFFF)
            return PACK_FAIL("%s count %ld does not fit the 16-bit count word", psdl_attr_type_name((int)type), n);
        counted = auto_counted(a, n);
        sub = counted ? 0u : (unsigned)n;
        if (counted) dst[o++] = (uint16_t)n;
        switch (type) {
        case PSDL_ATTR_SIDEWALK_STRIP:
            if (a->cap) {
                uint16_t m = a->cap == PSDL_CAP_START ? 0 : 1;
                dst[o++] = m;
                dst[o++] = m;
            }
            break;
        case PSDL_ATTR_DIVIDED_ROAD:
            if (a->param[0] > 0x3Fu)
                return PACK_FAIL("divider type %lu does not fit 6 bits", (unsigned long)a->param[0]);
            if (a->param[1] > 3u) return PACK_FAIL("divider cap bits %lu are not 0..3", (unsigned long)a->param[1]);
            if (a->param[2] > 0xFFu)
                return PACK_FAIL("divider texture value %lu exceeds 255: the divided road stores it in one "
                                 "byte, so divider groups must sit in the first 255 slots (psdl-format.md §2.4 0x8)",
                                 (unsigned long)a->param[2]);
            dst[o++] = (uint16_t)(a->param[0] | (a->param[1] << 6) | (a->param[2] << 8));
            dst[o++] = (uint16_t)a->param[3];
            break;
        case PSDL_ATTR_ROOF: dst[o++] = (uint16_t)a->param[0]; break;
        default: break;
        }
        if (a->nrefs) memcpy(dst + o, a->refs, a->nrefs * sizeof *dst);
        o += a->nrefs;
    }
    dst[0] = (uint16_t)(((unsigned)a->header_high << 8) | (a->last ? 0x80u : 0u) | (type << 3) | sub);
    return o;
}

psdl_status psdl_room_pack(psdl_doc *doc, psdl_room *room, psdl_error *err) {
    size_t total = 0;
    for (uint32_t k = 0; k < room->nattrs; k++) {
        size_t s = psdl_attr_size(&room->attrs[k]);
        if (s == 0) {
            /* psdl_attr_pack rejects this attribute before writing a word: let it explain */
            uint16_t none[1];
            psdl_attr_pack(&room->attrs[k], none, err);
            if (err) err->attribute = (long)k;
            return PSDL_E_INVALID;
        }
        total += s;
    }
    if (total > 0xFFFFFFFFu) return psdl_fail(err, PSDL_E_INVALID, 0, 0, -1, -1, "attribute stream too long");
    uint16_t *words = total ? psdl_doc_alloc(doc, total * sizeof *words) : NULL;
    if (total && !words) return psdl_fail(err, PSDL_E_NOMEM, 0, 0, -1, -1, "out of memory packing a room");
    size_t o = 0;
    for (uint32_t k = 0; k < room->nattrs; k++) {
        size_t s = psdl_attr_pack(&room->attrs[k], words + o, err);
        if (s == 0) {
            if (err) err->attribute = (long)k;
            return PSDL_E_INVALID;
        }
        o += s;
    }
    room->words = words;
    room->nwords = (uint32_t)total;
    return PSDL_OK;
}
