/* psdl_validate.c -- the rules of §3: what would crash the game or make it misread
 * (errors) and what loads but is wrong or risky (warnings). Allocates nothing. */
#include "psdl_internal.h"

#include <math.h>
#include <stdio.h>

typedef psdl_check_run vctx;

static void report(vctx *v, psdl_severity sev, const char *rule, long room, long attr, long road, const char *path,
                   const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 8, 9)))
#endif
    ;

static void report(vctx *v, psdl_severity sev, const char *rule, long room, long attr, long road, const char *path,
                   const char *fmt, ...) {
    psdl_problem p;
    if (!psdl_problem_begin(v, &p, sev, rule, room, -1, attr, road)) return;
    if (room > 0 && (uint32_t)room < v->doc->nrooms && attr >= 0 && (uint32_t)attr < v->doc->rooms[room].nattrs &&
        v->doc->rooms[room].attrs[attr].type != PSDL_ATTR_TUNNEL &&
        v->doc->rooms[room].attrs[attr].type != PSDL_ATTR_UNKNOWN) { /* the attribute's first vertex */
        const psdl_attr *a = &v->doc->rooms[room].attrs[attr];
        for (uint32_t j = 0; j < a->nrefs && !p.has_position; j++) {
            uint16_t vi = a->refs[j];
            if (vi < v->doc->nvertices && isfinite(v->doc->vertices[vi].x) && isfinite(v->doc->vertices[vi].z))
                p.has_position = 1, p.x = v->doc->vertices[vi].x, p.z = v->doc->vertices[vi].z;
        }
    }
    if (!p.has_position && room > 0 && (uint32_t)room < v->doc->nrooms) { /* the room's perimeter average */
        const psdl_room *rm = &v->doc->rooms[room];
        double sx = 0, sz = 0;
        uint32_t n = 0;
        for (uint32_t k = 0; k < rm->nperimeter; k++) {
            uint16_t vi = rm->perimeter[k].vertex;
            if (vi >= v->doc->nvertices || !isfinite(v->doc->vertices[vi].x) || !isfinite(v->doc->vertices[vi].z))
                continue;
            sx += v->doc->vertices[vi].x, sz += v->doc->vertices[vi].z, n++;
        }
        if (n) p.has_position = 1, p.x = sx / n, p.z = sz / n;
    }
    va_list ap;
    va_start(ap, fmt);
    psdl_problem_vsend(v, &p, path, fmt, ap);
    va_end(ap);
}

#define ERR PSDL_SEV_ERROR
#define WARN PSDL_SEV_WARNING

/* Texture slots a textured attribute reads relative to the current value n (§2.3). */
static unsigned group_span(unsigned type, const psdl_attr *a) {
    switch (type) {
    case PSDL_ATTR_ROAD:
    case PSDL_ATTR_DIVIDED_ROAD:
    case PSDL_ATTR_CROSSWALK: return 2;
    case PSDL_ATTR_SIDEWALK_STRIP: return 1;
    case PSDL_ATTR_TUNNEL: return 5;
    case PSDL_ATTR_WALKWAY:
    case PSDL_ATTR_ROAD_FAN:
    case PSDL_ATTR_FAN:
    case PSDL_ATTR_ROOF:
    case PSDL_ATTR_FACADE:
    case PSDL_ATTR_SLIVER: return 0;
    default: (void)a; return 0xFFFFu; /* not textured */
    }
}

static void check_height(vctx *v, long r, long k, uint32_t h, const char *field) {
    if (h >= v->doc->nheights) {
        char path[96];
        snprintf(path, sizeof path, "rooms[%ld].attributes[%ld].%s", r, k + 1, field);
        report(v, ERR, "height_index", r, k, -1, path, "height index %lu is past the height pool (%lu heights)",
               (unsigned long)h + 1, (unsigned long)v->doc->nheights);
    }
}

/* Returns 1 if the attribute uses vertex 0 (for the once-per-room warning). */
static int check_refs(vctx *v, long r, long k, const psdl_attr *a) {
    int zero = 0;
    for (uint32_t j = 0; j < a->nrefs; j++) {
        uint16_t vi = a->refs[j];
        if (vi == 0) zero = 1;
        if (vi >= v->doc->nvertices) {
            char path[96];
            snprintf(path, sizeof path, "rooms[%ld].attributes[%ld].vertices[%lu]", r, k + 1, (unsigned long)j + 1);
            report(v, ERR, "vertex_index", r, k, -1, path,
                   "vertex %u is past the vertex pool (%lu vertices); the game reads out of bounds (§3.1)",
                   (unsigned)vi + 1, (unsigned long)v->doc->nvertices);
        }
    }
    return zero;
}

/* Twice the signed XZ area (shoelace sum) of a polygon of vertex indices; out-of-range
 * vertices are skipped. Retail up-facing polygons have a negative sum (§4.2). */
static double polygon_area2(const psdl_doc *d, const uint16_t *refs, uint32_t n) {
    double s = 0;
    for (uint32_t j = 0; j < n; j++) {
        uint16_t i0 = refs[j], i1 = refs[(j + 1) % n];
        if (i0 >= d->nvertices || i1 >= d->nvertices) continue;
        const psdl_vec3 *a = &d->vertices[i0], *b = &d->vertices[i1];
        double c = (double)a->x * b->z - (double)b->x * a->z;
        if (isfinite(c)) s += c; /* a NaN vertex is reported by "nonfinite"; it must not hide this */
    }
    return s;
}

static int is_strip_target(unsigned type) {
    return type == PSDL_ATTR_ROAD || type == PSDL_ATTR_WALKWAY || type == PSDL_ATTR_DIVIDED_ROAD;
}

/* The path of attribute k of room r, formatted into `path` only when a problem is reported. */
#define APATH() (snprintf(path, sizeof path, "rooms[%ld].attributes[%ld]", r, k + 1), path)

static void check_attributes(vctx *v, long r, const psdl_room *rm) {
    const psdl_doc *d = v->doc;
    char path[96];
    long last_index = -1;
    for (uint32_t k = 0; k < rm->nattrs; k++)
        if (rm->attrs[k].last) {
            last_index = (long)k;
            break;
        }
    if (rm->nwords > 0 && last_index < 0) {
        snprintf(path, sizeof path, "rooms[%ld].attributes", r);
        report(v, ERR, "missing_last", r, -1, -1, path,
               "no attribute carries the LAST bit: the game reads past the room's attributes (§2.1)");
        last_index = (long)rm->nattrs - 1;
    }
    for (uint32_t k = (uint32_t)(last_index + 1); k < rm->nattrs; k++) {
        unsigned t = rm->attrs[k].type;
        if (t == PSDL_ATTR_TEXTURE || t == PSDL_ATTR_TUNNEL || t == PSDL_ATTR_UNKNOWN) continue;
        snprintf(path, sizeof path, "rooms[%ld].attributes[%lu]", r, (unsigned long)k + 1);
        report(v, WARN, "after_last", r, (long)k, -1, path,
               "%s follows the LAST attribute (%ld): the game never reads it (§2.1)",
               psdl_attr_type_name((int)t), last_index + 1);
        break;
    }
    uint32_t tex = 0;
    int seen_tex = 0, warned_first = 0, warned_zero = 0, warned_winding = 0;
    for (long k = 0; k <= last_index; k++) {
        const psdl_attr *a = &rm->attrs[k];
        unsigned t = a->type;
        if (a->header_high)
            report(v, ERR, "header_high", r, k, -1, APATH(), "header bits 8-15 are 0x%02x; they must be 0 (§2.1)",
                   a->header_high);
        if (t == PSDL_ATTR_UNKNOWN) {
            report(v, ERR, "attribute_type", r, k, -1, APATH(),
                   "attribute type 13-15 before the LAST attribute: the game quits with \"Invalid cmd\" (§3.1)");
            break;
        }
        if (psdl_fixed_subtype(t)) {
            if (a->form == PSDL_FORM_COUNTED)
                report(v, ERR, "counted_fixed", r, k, -1, APATH(),
                       "%s stored with subtype 0: the game eats a count word and misreads the payload (§2.2)",
                       psdl_attr_type_name((int)t));
            else if (a->subtype != 0 && a->subtype != psdl_fixed_subtype(t)) /* 0 + AUTO: standard */
                report(v, WARN, "fixed_subtype", r, k, -1, APATH(), "%s uses subtype %u; retail always uses %u (§2.2)",
                       psdl_attr_type_name((int)t), a->subtype, psdl_fixed_subtype(t));
        }
        if (t == PSDL_ATTR_TEXTURE) {
            uint32_t val = a->param[0];
            if (a->form == PSDL_FORM_COUNTED && val >= 256)
                report(v, ERR, "texture_data", r, k, -1, APATH(),
                       "texture with subtype 0 and data %lu >= 256: the game reads a third word (§2.3)",
                       (unsigned long)val);
            if (val >= d->ntextures)
                report(v, ERR, "texture_index", r, k, -1, APATH(),
                       "texture value %lu is past the texture table (%lu names)", (unsigned long)val,
                       (unsigned long)d->ntextures - 1);
            else if (val > PSDL_STOCK_TEXTURE_VALUE)
                report(v, WARN, "texture_limit", r, k, -1, APATH(),
                       "texture value %lu > %d: stock MM2 is reported not to load it without MM2Hook (§3.2)",
                       (unsigned long)val, PSDL_STOCK_TEXTURE_VALUE);
            else if (val > PSDL_RENDERED_TEXTURE_VALUE)
                report(v, WARN, "texture_limit", r, k, -1, APATH(),
                       "texture value %lu > %d: reported not to render properly (§3.2)", (unsigned long)val,
                       PSDL_RENDERED_TEXTURE_VALUE);
            tex = val;
            seen_tex = 1;
            continue;
        }
        unsigned span = group_span(t, a);
        if (span != 0xFFFFu) {
            if (!seen_tex && !warned_first && t != PSDL_ATTR_TUNNEL) {
                report(v, WARN, "texture_first", r, k, -1, APATH(),
                       "%s before any texture attribute: it collides but is not drawn (§2.3)",
                       psdl_attr_type_name((int)t));
                warned_first = 1;
            }
            if (tex > 0 && tex < d->ntextures && (uint64_t)tex + span >= d->ntextures)
                report(v, WARN, "texture_group", r, k, -1, APATH(),
                       "%s reads texture slots %lu..%lu but the table ends at %lu (§2.3)", psdl_attr_type_name((int)t),
                       (unsigned long)tex, (unsigned long)tex + span, (unsigned long)d->ntextures - 1);
        }
        if (t != PSDL_ATTR_TUNNEL && check_refs(v, r, k, a) && !warned_zero) {
            report(v, WARN, "vertex_zero", r, k, -1, APATH(),
                   "geometry uses vertex 1 (file vertex 0), which should be a reserved dummy (§3.2)");
            warned_zero = 1;
        }
        if ((t == PSDL_ATTR_ROAD_FAN || t == PSDL_ATTR_FAN || t == PSDL_ATTR_ROOF) && !warned_winding &&
            polygon_area2(d, a->refs, a->nrefs) > 0) {
            report(v, WARN, "winding", r, k, -1, APATH(),
                   "%s is wound opposite to retail (positive shoelace sum in x, z): sloped collision normals "
                   "point down and the game culls it (§4.2)",
                   psdl_attr_type_name((int)t));
            warned_winding = 1;
        }
        if ((t <= PSDL_ATTR_WALKWAY || t == PSDL_ATTR_DIVIDED_ROAD) && a->cap == PSDL_CAP_NONE &&
            a->nrefs < (t == PSDL_ATTR_ROAD ? 8u : t == PSDL_ATTR_DIVIDED_ROAD ? 12u : 4u))
            report(v, WARN, "empty_attribute", r, k, -1, APATH(), "%s with fewer than 2 sections draws nothing",
                   psdl_attr_type_name((int)t));
        if ((t == PSDL_ATTR_ROAD_FAN || t == PSDL_ATTR_FAN || t == PSDL_ATTR_ROOF) &&
            a->nrefs < 3u)
            report(v, WARN, "empty_attribute", r, k, -1, APATH(), "%s with no triangle draws nothing",
                   psdl_attr_type_name((int)t));
        switch (t) {
        case PSDL_ATTR_ROAD:
        case PSDL_ATTR_SIDEWALK_STRIP:
        case PSDL_ATTR_WALKWAY:
        case PSDL_ATTR_DIVIDED_ROAD: {
            unsigned stride = t == PSDL_ATTR_ROAD ? 4 : t == PSDL_ATTR_DIVIDED_ROAD ? 6 : 2;
            if (a->nrefs / stride > 256)
                report(v, WARN, "section_count", r, k, -1, APATH(),
                       "%lu sections: keep strips to 256 (the game's draw buffers, §3.2)",
                       (unsigned long)(a->nrefs / stride));
            if (t == PSDL_ATTR_DIVIDED_ROAD) {
                if (seen_tex && tex == 0)
                    report(v, ERR, "divided_no_texture", r, k, -1, APATH(),
                           "divided road under texture value 0: the game's collision walks it with the wrong "
                           "stride (§2.4 0x8)");
                unsigned D = a->param[2];
                if (a->param[0] < 1 || a->param[0] > 3)
                    report(v, WARN, "divider_type", r, k, -1, APATH(),
                           "divider type %lu is not 1 (flat), 2 (elevated) or 3 (wedge): the game logs \"Bad "
                           "Median Type\" and draws none (§2.4 0x8)",
                           (unsigned long)a->param[0]);
                else if (D == 0)
                    report(v, ERR, "divider_texture", r, k, -1, APATH(),
                           "divider texture value 0: the divider reads texture slot -1 (§2.4 0x8)");
                else if ((uint64_t)D + 3 >= d->ntextures) /* D is slot t+1: slots D..D+3 (§2.4 0x8) */
                    report(v, WARN, "texture_group", r, k, -1, APATH(),
                           "divider texture group %u..%u runs past the texture table (%lu names) (§2.3)", D,
                           D + 3, (unsigned long)d->ntextures - 1);
            }
            break;
        }
        case PSDL_ATTR_ROAD_FAN:
            if (a->nrefs > 0 && a->refs[0] < d->nvertices) {
                float hy = d->vertices[a->refs[0]].y;
                for (uint32_t j = 1; j < a->nrefs; j++) {
                    if (a->refs[j] < d->nvertices && fabsf(d->vertices[a->refs[j]].y - hy) > 0.05f) {
                        report(v, WARN, "road_fan_flat", r, k, -1, APATH(),
                               "road triangle fan is not flat (vertex %u is %.2f m off the hub's height); the game "
                               "flattens it to the hub (§2.4 0x5)",
                               (unsigned)a->refs[j] + 1, (double)(d->vertices[a->refs[j]].y - hy));
                        break;
                    }
                }
            }
            break;
        case PSDL_ATTR_SLIVER:
            check_height(v, r, k, a->param[0], "top");
            check_height(v, r, k, a->param[1], "density");
            break;
        case PSDL_ATTR_FACADE_BOUND:
            if (a->param[0] > 63)
                report(v, WARN, "light_range", r, k, -1, APATH(),
                       "facade-bound light %lu > 63: the game uses light & 63 = %lu (§2.4 0x7)",
                       (unsigned long)a->param[0], (unsigned long)(a->param[0] & 63u));
            check_height(v, r, k, a->param[1], "top");
            break;
        case PSDL_ATTR_FACADE:
            check_height(v, r, k, a->param[0], "bottom");
            check_height(v, r, k, a->param[1], "top");
            if (a->param[2] >= 32768 || a->param[3] >= 32768)
                report(v, WARN, "facade_repeat", r, k, -1, APATH(),
                       "facade repeat counts %lu x %lu: values >= 32768 are negative to some tools; write "
                       "1..32767 (§2.4 0xB)",
                       (unsigned long)a->param[2], (unsigned long)a->param[3]);
            break;
        case PSDL_ATTR_ROOF: check_height(v, r, k, a->param[0], "height"); break;
        case PSDL_ATTR_TUNNEL:
            if (a->nrefs == 3) {
                /* the strip form describes the next road, walkway or divided road, skipping one
                 * texture attribute (§2.4 0x9) */
                long n = k + 1;
                if (n < (long)rm->nattrs && rm->attrs[n].type == PSDL_ATTR_TEXTURE) n++;
                if (n >= (long)rm->nattrs || !is_strip_target(rm->attrs[n].type))
                    report(v, ERR, "tunnel_target", r, k, -1, APATH(),
                           "road tunnel is not followed by [texture] and a road, walkway or divided road: the "
                           "game reads past the room (§2.4 0x9)");
            } else if (a->nrefs == 10) {
                if (rm->nperimeter > 32)
                    report(v, WARN, "junction_perimeter", r, k, -1, APATH(),
                           "junction tunnel in a room of %lu perimeter points: its wall mask covers 32 edges "
                           "(§3.2)",
                           (unsigned long)rm->nperimeter);
            } else {
                report(v, ERR, "tunnel_form", r, k, -1, APATH(),
                       "tunnel with %lu data words: the game handles 3 (road tunnel) and 10 (junction tunnel) "
                       "and misreads others (§2.4 0x9)",
                       (unsigned long)a->nrefs);
            }
            break;
        default: break;
        }
    }
}

static int room_has_neighbour(const psdl_room *rm, uint32_t id) {
    for (uint32_t k = 0; k < rm->nperimeter; k++)
        if (rm->perimeter[k].neighbour == id) return 1;
    return 0;
}

static void check_perimeter(vctx *v, long r, const psdl_room *rm) {
    const psdl_doc *d = v->doc;
    char path[96];
    if (rm->nperimeter > PSDL_MAX_PERIMETER) {
        snprintf(path, sizeof path, "rooms[%ld].perimeter", r);
        report(v, ERR, "perimeter_size", r, -1, -1, path,
               "%lu perimeter points: the game keeps the count in one byte, 255 at most (§3.2)",
               (unsigned long)rm->nperimeter);
    } else if (rm->nperimeter < 3) {
        snprintf(path, sizeof path, "rooms[%ld].perimeter", r);
        report(v, WARN, "perimeter_small", r, -1, -1, path,
               "%lu perimeter points: the room encloses no area and the game can never find it (§1.5)",
               (unsigned long)rm->nperimeter);
    }
    double area2 = 0;
    int zero = 0;
    for (uint32_t k = 0; k < rm->nperimeter; k++) {
        const psdl_perimeter_point *pp = &rm->perimeter[k];
        if (pp->vertex >= d->nvertices) {
            snprintf(path, sizeof path, "rooms[%ld].perimeter[%lu].vertex", r, (unsigned long)k + 1);
            report(v, ERR, "vertex_index", r, -1, -1, path, "vertex %u is past the vertex pool (%lu vertices)",
                   (unsigned)pp->vertex + 1, (unsigned long)d->nvertices);
        } else {
            const psdl_perimeter_point *nx = &rm->perimeter[(k + 1) % rm->nperimeter];
            if (nx->vertex < d->nvertices) {
                const psdl_vec3 *a = &d->vertices[pp->vertex], *b = &d->vertices[nx->vertex];
                double c = (double)a->x * b->z - (double)b->x * a->z;
                if (isfinite(c)) area2 += c; /* NaN: reported by "nonfinite", must not hide this */
            }
        }
        if (pp->vertex == 0) zero = 1;
        if (pp->neighbour == 0) continue;
#define NPATH() (snprintf(path, sizeof path, "rooms[%ld].perimeter[%lu].neighbour", r, (unsigned long)k + 1), path)
        if (pp->neighbour >= d->nrooms) {
            report(v, ERR, "room_index", r, -1, -1, NPATH(), "neighbour room %u does not exist (%lu rooms)",
                   (unsigned)pp->neighbour, (unsigned long)d->nrooms - 1);
        } else if ((long)pp->neighbour == r) {
            report(v, WARN, "self_neighbour", r, -1, -1, NPATH(), "room lists itself as its neighbour");
        } else if (!room_has_neighbour(&d->rooms[pp->neighbour], (uint32_t)r)) {
            report(v, WARN, "neighbour_symmetry", r, -1, -1, NPATH(),
                   "room %ld lists room %u as a neighbour but room %u does not list room %ld (§1.5)", r,
                   (unsigned)pp->neighbour, (unsigned)pp->neighbour, r);
        }
    }
    if (zero) {
        snprintf(path, sizeof path, "rooms[%ld].perimeter", r);
        report(v, WARN, "vertex_zero", r, -1, -1, path,
               "perimeter uses vertex 1 (file vertex 0), which should be a reserved dummy (§3.2)");
    }
    if (area2 > 0) {
        snprintf(path, sizeof path, "rooms[%ld].perimeter", r);
        report(v, WARN, "winding", r, -1, -1, path,
               "perimeter is wound opposite to retail (positive shoelace sum in x, z; §4.2)");
    }
}

/* A grid coordinate clamped to 0..63 before any conversion to int (a huge float would
 * make the conversion undefined). */
static int probe_cell(double c) {
    if (!(c > 0)) return 0;
    if (c >= 63) return 63;
    return (int)c;
}

/* The game's FullProbe grid: 64 x 64 cells over the perimeters' XZ extent; a cell with 128
 * rooms makes MM2 quit (§3.1). */
static void check_probe_grid(vctx *v) {
    const psdl_doc *d = v->doc;
    float minx = INFINITY, minz = INFINITY, maxx = -INFINITY, maxz = -INFINITY;
    for (uint32_t r = 1; r < d->nrooms; r++)
        for (uint32_t k = 0; k < d->rooms[r].nperimeter; k++) {
            uint16_t vi = d->rooms[r].perimeter[k].vertex;
            if (vi >= d->nvertices) continue;
            const psdl_vec3 *p = &d->vertices[vi];
            if (!isfinite(p->x) || !isfinite(p->z)) continue;
            /* (inline: fminf and fmaxf are library calls; no NaN gets here) */
            minx = p->x < minx ? p->x : minx, maxx = p->x > maxx ? p->x : maxx;
            minz = p->z < minz ? p->z : minz, maxz = p->z > maxz ? p->z : maxz;
        }
    if (!(minx <= maxx && minz <= maxz)) return;
    double cw = ((double)maxx - minx) / 64.0, ch = ((double)maxz - minz) / 64.0;
    if (cw <= 0) cw = 1;
    if (ch <= 0) ch = 1;
    uint32_t cells[64 * 64];
    memset(cells, 0, sizeof cells);
    for (uint32_t r = 1; r < d->nrooms; r++) {
        const psdl_room *rm = &d->rooms[r];
        float x0 = INFINITY, z0 = INFINITY, x1 = -INFINITY, z1 = -INFINITY;
        for (uint32_t k = 0; k < rm->nperimeter; k++) {
            uint16_t vi = rm->perimeter[k].vertex;
            if (vi >= d->nvertices) continue;
            const psdl_vec3 *p = &d->vertices[vi];
            if (!isfinite(p->x) || !isfinite(p->z)) continue;
            x0 = p->x < x0 ? p->x : x0, x1 = p->x > x1 ? p->x : x1;
            z0 = p->z < z0 ? p->z : z0, z1 = p->z > z1 ? p->z : z1;
        }
        if (!(x0 <= x1 && z0 <= z1)) continue;
        int cx0 = probe_cell(((double)x0 - minx) / cw), cx1 = probe_cell(((double)x1 - minx) / cw);
        int cz0 = probe_cell(((double)z0 - minz) / ch), cz1 = probe_cell(((double)z1 - minz) / ch);
        for (int cz = cz0; cz <= cz1; cz++)
            for (int cx = cx0; cx <= cx1; cx++) cells[cz * 64 + cx]++;
    }
    for (int c = 0; c < 64 * 64; c++)
        if (cells[c] >= 128) {
            report(v, ERR, "probe_cell_full", -1, -1, -1, "rooms",
                   "%u rooms overlap probe cell (%d, %d) of the game's 64 x 64 room grid; MM2 quits at 128 "
                   "(§3.1): make rooms smaller or fewer",
                   (unsigned)cells[c], c % 64, c / 64);
            return;
        }
}

static void check_roads(vctx *v) {
    const psdl_doc *d = v->doc;
    char path[96];
    for (uint32_t i = 0; i < d->nroads; i++) {
        const psdl_road *rd = &d->roads[i];
        long ri = (long)i;
        for (int e = 0; e < 2; e++)
            for (int k = 0; k < 4; k++) {
                uint16_t vi = e ? rd->end_crossroads[k] : rd->start_crossroads[k];
                if (vi >= d->nvertices) {
                    snprintf(path, sizeof path, "roads[%lu].%s[%d]", (unsigned long)i + 1,
                             e ? "end_crossroads" : "start_crossroads", k + 1);
                    report(v, ERR, "vertex_index", -1, -1, ri, path, "vertex %u is past the vertex pool",
                           (unsigned)vi + 1);
                }
            }
        if (rd->nrooms == 0) {
            snprintf(path, sizeof path, "roads[%lu].rooms", (unsigned long)i + 1);
            report(v, WARN, "road_rooms", -1, -1, ri, path, "road record lists no rooms");
        }
        for (unsigned j = 0; j < rd->nrooms; j++) {
            long id = rd->rooms[j] < 0 ? -(long)rd->rooms[j] : rd->rooms[j];
            snprintf(path, sizeof path, "roads[%lu].rooms[%u]", (unsigned long)i + 1, j + 1);
            if (id == 0) {
                report(v, ERR, "room_zero", -1, -1, ri, path, "road record references room 0, which is reserved (§3.3)");
                continue;
            }
            if ((uint32_t)id >= d->nrooms) {
                report(v, ERR, "room_index", -1, -1, ri, path, "room %ld does not exist (%lu rooms)", id,
                       (unsigned long)d->nrooms - 1);
                continue;
            }
            const psdl_room *rm = &d->rooms[id];
            unsigned roads = 0;
            for (uint32_t k = 0; k < rm->nattrs; k++) {
                unsigned t = rm->attrs[k].type;
                if (t == PSDL_ATTR_ROAD || t == PSDL_ATTR_WALKWAY || t == PSDL_ATTR_DIVIDED_ROAD) roads++;
                if (rm->attrs[k].last) break;
            }
            if (roads != 1)
                report(v, WARN, "road_room_attributes", id, -1, ri, path,
                       "room %ld holds %u road-type attributes (road, walkway, divided road); the game's prop "
                       "and traffic walk expects exactly one per listed room (§1.7)",
                       id, roads);
        }
    }
}

/* One warning for the vertices lying beyond +-PSDL_MAX_COORDINATE on an axis (what the builder
 * refuses; a file from elsewhere may have them), naming the first and how many. Non-finite
 * ones are left to "nonfinite". */
static void check_far_vertices(vctx *v) {
    const psdl_doc *doc = v->doc;
    uint32_t first = 0, count = 0;
    for (uint32_t i = 0; i < doc->nvertices; i++) {
        const psdl_vec3 *p = &doc->vertices[i];
        double m = fmax(fabs((double)p->x), fmax(fabs((double)p->y), fabs((double)p->z)));
        if (m > PSDL_MAX_COORDINATE && isfinite(m)) {
            if (count++ == 0) first = i;
        }
    }
    if (count == 0) return;
    char path[48];
    const psdl_vec3 *p = &doc->vertices[first];
    snprintf(path, sizeof path, "vertices[%lu]", (unsigned long)first + 1);
    report(v, WARN, "far_vertex", -1, -1, -1, path,
           "%lu vertices beyond +-%.0f m, the first at (%g, %g, %g): 32-bit floats lose their centimetres there "
           "(§1.2); the game's cities lie within a few km of the origin",
           (unsigned long)count, PSDL_MAX_COORDINATE, (double)p->x, (double)p->y, (double)p->z);
}

void psdl_validate(const psdl_doc *doc, psdl_problem_fn fn, void *ud, psdl_validate_result *result) {
    psdl_validate_ex(doc, 0, fn, ud, result);
}

void psdl_validate_ex(const psdl_doc *doc, unsigned flags, psdl_problem_fn fn, void *ud,
                      psdl_validate_result *result) {
    psdl_validate_result local;
    if (!result) result = &local;
    result->errors = result->warnings = 0;
    vctx v = {doc, fn, ud, result, 0};
    char path[96];

    if (memcmp(doc->magic, "PSD0", 4) != 0)
        report(&v, ERR, "magic", -1, -1, -1, "magic",
               "magic is \"%.4s\": MM2 loads only \"PSD0\" (\"PSD1\" is Midnight Club) (§1.9)", doc->magic);
    if (doc->target_size != 2)
        report(&v, ERR, "target_size", -1, -1, -1, "target_size",
               "target size is %lu; the game quits unless it is 2 (§1.2)", (unsigned long)doc->target_size);
    if (doc->nvertices > PSDL_SAFE_VERTEX_BUDGET)
        report(&v, WARN, "vertex_budget", -1, -1, -1, "vertices",
               "%lu vertices: above %d the game's 512 generated collision vertices overflow 16-bit indices "
               "(§3.2)",
               (unsigned long)doc->nvertices, PSDL_SAFE_VERTEX_BUDGET);
    check_far_vertices(&v);
    for (uint32_t i = 1; i < doc->ntextures; i++) {
        const psdl_texture *t = &doc->textures[i];
        if (t->name && memchr(t->name, 0, t->name_len)) {
            snprintf(path, sizeof path, "textures[%lu]", (unsigned long)i);
            report(&v, WARN, "texture_name_nul", -1, -1, -1, path,
                   "texture name contains a NUL byte: the game reads it only up to there (§1.3)");
        }
        if (t->name && t->name_len > 31) {
            snprintf(path, sizeof path, "textures[%lu]", (unsigned long)i);
            report(&v, ERR, "texture_name_length", -1, -1, -1, path,
                   "texture name of %u characters: the game reads names into a 32-byte buffer, keep them to 31 "
                   "(§1.3)",
                   (unsigned)t->name_len);
        }
    }
    if (doc->nrooms > 0 && doc->rooms[0].flags != 0)
        report(&v, WARN, "room0", -1, -1, -1, "room0.flags", "room 0's flag byte is 0x%02x; retail writes 0 (§1.2)",
               doc->rooms[0].flags);
    for (uint32_t r = 1; r < doc->nrooms; r++) {
        check_perimeter(&v, (long)r, &doc->rooms[r]);
        check_attributes(&v, (long)r, &doc->rooms[r]);
    }
    check_probe_grid(&v);
    check_roads(&v);
    if (!(flags & PSDL_VALIDATE_NO_DRIVABLE)) psdl_check_drivable(doc, fn, ud, result);
    if (doc->has_tail && doc->nvertices > 0) {
        for (uint32_t i = 1; i < doc->nvertices; i++) {
            const psdl_vec3 *p = &doc->vertices[i];
            if (p->x < doc->bounds_min.x || p->x > doc->bounds_max.x || p->z < doc->bounds_min.z ||
                p->z > doc->bounds_max.z) {
                snprintf(path, sizeof path, "vertices[%lu]", (unsigned long)i + 1);
                report(&v, WARN, "bounds", -1, -1, -1, path,
                       "vertex lies outside the file's bounding box in x or z; retail bounds hold every vertex "
                       "(§1.6)");
                break;
            }
        }
    }
}

/* ------------------------------------------------------------------ the list of rules */

static const psdl_rule_info rules[] = {
    {"magic", "error", "magic is not \"PSD0\" (§1.9)"},
    {"target_size", "error", "target size is not 2 (§1.2)"},
    {"vertex_budget", "warning", "more than 65,024 vertices (§3.2)"},
    {"texture_name_nul", "warning", "a texture name holds a NUL byte (§1.3)"},
    {"texture_name_length", "error", "a texture name longer than 31 characters (§1.3)"},
    {"room0", "warning", "room 0's flag byte is not 0 (§1.2)"},
    {"perimeter_size", "error", "more than 255 perimeter points (§3.2)"},
    {"perimeter_small", "warning", "fewer than 3 perimeter points (§1.5)"},
    {"vertex_index", "error", "a vertex index past the vertex pool (§3.1)"},
    {"room_index", "error", "a room id past the room list"},
    {"self_neighbour", "warning", "a room lists itself as a neighbour"},
    {"neighbour_symmetry", "warning", "a neighbour link with no link back (§1.5)"},
    {"vertex_zero", "warning", "geometry uses vertex 0, the reserved dummy (§3.2)"},
    {"winding", "warning", "a perimeter, fan or roof wound opposite to retail (§4.2)"},
    {"missing_last", "error", "no attribute carries the LAST bit (§2.1)"},
    {"after_last", "warning", "geometry after the LAST attribute is never read (§2.1)"},
    {"header_high", "error", "attribute header bits 8-15 set (§2.1)"},
    {"attribute_type", "error", "attribute type 13-15 before LAST (§3.1)"},
    {"counted_fixed", "error", "a fixed-size attribute stored with a count word (§2.2)"},
    {"fixed_subtype", "warning", "a fixed-size attribute with a non-retail subtype (§2.2)"},
    {"texture_data", "error", "texture with subtype 0 and data >= 256 (§2.3)"},
    {"texture_index", "error", "texture value past the texture table (§2.3)"},
    {"texture_limit", "warning", "texture value above 511 or 767 (§3.2)"},
    {"texture_first", "warning", "geometry before any texture attribute (§2.3)"},
    {"texture_group", "warning", "texture slots read past the table's end (§2.3)"},
    {"empty_attribute", "warning", "a strip or fan that draws nothing"},
    {"section_count", "warning", "a strip of more than 256 sections (§3.2)"},
    {"divided_no_texture", "error", "divided road under texture value 0 (§2.4 0x8)"},
    {"divider_type", "warning", "divider type not 1, 2 or 3 (§2.4 0x8)"},
    {"divider_texture", "error", "divider texture value 0 (§2.4 0x8)"},
    {"road_fan_flat", "warning", "road fan not flat within 5 cm (§2.4 0x5)"},
    {"height_index", "error", "a height index past the height pool"},
    {"light_range", "warning", "facade-bound light above 63 (§2.4 0x7)"},
    {"facade_repeat", "warning", "facade repeat count of 32768 or more (§2.4 0xB)"},
    {"tunnel_target", "error", "road tunnel not followed by a strip (§2.4 0x9)"},
    {"junction_perimeter", "warning", "junction tunnel in a room of more than 32 points (§3.2)"},
    {"tunnel_form", "error", "tunnel with neither 3 nor 10 data words (§2.4 0x9)"},
    {"probe_cell_full", "error", "128 rooms in one cell of the game's probe grid (§3.1)"},
    {"road_rooms", "warning", "a road record listing no rooms (§1.7)"},
    {"room_zero", "error", "a road record referencing room 0 (§3.3)"},
    {"road_room_attributes", "warning", "a road record's room without exactly one road-type attribute (§1.7)"},
    {"bounds", "warning", "a vertex outside the file's bounding box (§1.6)"},
    {"far_vertex", "warning", "vertices more than 65,536 m from the origin on an axis (§1.2)"},
    {"nonfinite", "error", "NaN or infinite vertex, height, bound or lane value"},
    {"empty_city", "error", "the city has no room"},
    {"perimeter_crossing", "error", "a perimeter crosses itself"},
    {"perimeter_spike", "warning", "a perimeter runs out and straight back (edges within 2 degrees)"},
    {"perimeter_kink", "warning", "a perimeter folds back and forth (edge under 0.5 m between turns under 30 degrees)"},
    {"room_overlap", "error", "two non-warp rooms overlap by more than 0.5 m²"},
    {"hole", "error/warning", "ground enclosed by rooms in no room: error above 1 m², warning above 0.01 m²"},
    {"edge_gap", "warning",
     "a gap wider than 2 cm along a shared edge (enclosed, at most 0.01 m²; or a linked edge off its neighbour)"},
    {"floor_outside", "error/warning",
     "a floor attribute more than 5 cm outside its room: warning above 1 % of its area, error above 25 %"},
    {"unreachable", "error/warning",
     "a room no neighbour-link chain from the largest road room reaches: error for road and intersection rooms"},
    {"drivable_nomem", "error", "out of memory during the drivability rules"},
    {"encodable", "error", "the document cannot be encoded at all (Lua documents)"},
    {"city_name", "warning", "the city name contains \"london\" or \"sf\" (§3.4)"},
};

const psdl_rule_info *psdl_rules(size_t *count) {
    if (count) *count = sizeof rules / sizeof rules[0];
    return rules;
}
