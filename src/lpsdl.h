/* lpsdl.h -- shared declarations of the binding files (src/lpsdl*.c), the only files that
 * include lua.h. lpsdl.c creates the module table `psdl.core`; each further binding file
 * registers its functions into that table (on top of the stack) from its opener, which
 * luaopen_psdl_core calls. */
#ifndef LPSDL_H
#define LPSDL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "lauxlib.h"
#include "lua.h"

/* t[k] = v for the table on top of the stack (the fields of the tables the bindings make). */
static inline void lpsdl_set_int(lua_State *L, const char *k, lua_Integer v) {
    lua_pushinteger(L, v);
    lua_setfield(L, -2, k);
}
static inline void lpsdl_set_number(lua_State *L, const char *k, lua_Number v) {
    lua_pushnumber(L, v);
    lua_setfield(L, -2, k);
}

/* An unsigned integer field of a C struct that a binding copies into a Lua table (a decoded
 * header's counts and sizes): its name, offset and size in bytes (1, 2, 4 or 8).
 * LPSDL_UFIELD(type, member) makes one; lpsdl_set_ufields (lpsdl.c) copies a list of them:
 * t[name] = the field of obj, in list order, for the table on top of the stack. */
typedef struct lpsdl_ufield {
    const char *name;
    size_t offset, size;
} lpsdl_ufield;
#define LPSDL_UFIELD(T, m) {#m, offsetof(T, m), sizeof(((T *)0)->m)}
void lpsdl_set_ufields(lua_State *L, const void *obj, const lpsdl_ufield *f, size_t n);

/* The crossing tests' answer (core.self_crossing, rings_crossing, refs_crossing): nil when
 * none was found (found 0), else the two edges e[0], e[1] (0-based) as 1-based numbers;
 * returns the count pushed. */
static inline int lpsdl_push_edges(lua_State *L, int found, const uint32_t *e) {
    if (!found) {
        lua_pushnil(L);
        return 1;
    }
    lua_pushinteger(L, (lua_Integer)e[0] + 1);
    lua_pushinteger(L, (lua_Integer)e[1] + 1);
    return 2;
}

/* The argument readers' one table-reading step (lpsdl_blocks.c, lpsdl_rows.c, lpsdl_store.c,
 * lpsdl_perims.c, lpsdl_geom.c): entry i of the table at stack index t, read raw (runs no
 * Lua, allocates nothing, leaves the stack as it was), as an integer in lo..hi. Returns 1 when
 * it is one, else 0 (the caller raises, naming the entry in its own words); *v is what was
 * read either way (0 when no integer). */
static inline int lpsdl_rawint(lua_State *L, int t, lua_Integer i, lua_Integer lo, lua_Integer hi, lua_Integer *v) {
    int ok;
    lua_rawgeti(L, t, i);
    *v = lua_tointegerx(L, -1, &ok);
    lua_pop(L, 1);
    return ok && *v >= lo && *v <= hi;
}

/* lpsdl_rawint's twin for a finite number: returns 1 when t[i] is one, else 0; *v is what was
 * read either way (0 when no number). */
static inline int lpsdl_rawnum(lua_State *L, int t, lua_Integer i, double *v) {
    int ok;
    lua_rawgeti(L, t, i);
    *v = (double)lua_tonumberx(L, -1, &ok);
    lua_pop(L, 1);
    return ok && isfinite(*v);
}

/* lpsdl.c: pushes fail (nil), `message` and `status` (a psdl_status_name, e.g. "io",
 * "invalid") -- the three values of a binding function that failed on its input; returns 3. */
int lpsdl_push_failure(lua_State *L, const char *message, const char *status);
struct psdl_error;
/* lpsdl.c: lpsdl_push_failure of err's message and status; returns 3. */
int lpsdl_push_error(lua_State *L, const struct psdl_error *err);

/* lpsdl.c: problems collected from a C check that must not be left by a longjmp
 * (psdl_validate_ex, psdl_check_overlaps: they hold scratch memory while they report). The
 * list lives in a userdata ("psdl.ProblemList", __gc frees the items), so that a raise while
 * converting it frees it too. */
struct psdl_problem;
typedef struct lpsdl_problems {
    struct psdl_problem *items;
    size_t n, cap;
    int nomem; /* the list could not grow: the callback stopped the check */
} lpsdl_problems;
/* Pushes a new empty list (a userdata) and returns it. */
lpsdl_problems *lpsdl_problems_push(lua_State *L);
/* The checks' callback (ud: an lpsdl_problems): copies the problem, never raises; returns 1
 * (stop) when out of memory, with nomem set. */
int lpsdl_problems_add(void *ud, const struct psdl_problem *pr);

/* lpsdl_terrain.c: NHTG, DBPF, QFS and heightmap functions (psdl_nhtg.h). */
void lpsdl_open_terrain(lua_State *L);

/* lpsdl_heightfield.c: the height grid userdata "psdl.Heightfield" (psdl_heightfield.h). */
struct psdl_raster;
struct psdl_nhtg;
struct psdl_heightfield;
typedef struct lpsdl_hf lpsdl_hf;
enum { LPSDL_HF_HEIGHTS = 0, LPSDL_HF_SAMPLES = 1, LPSDL_HF_MASK = 2 };
void lpsdl_open_heightfield(lua_State *L);
/* Push a new, empty field (type: a psdl_hf_type; view: LPSDL_HF_*); no memory yet. */
lpsdl_hf *lpsdl_hf_push(lua_State *L, uint32_t rows, uint32_t cols, int type, int view);
/* Allocate the samples (rows * cols) of the field on top of the stack, in a new block of Lua
 * memory; raises when too big. */
void *lpsdl_hf_alloc(lua_State *L, lpsdl_hf *h);
/* Hand a decoded raster / NHTG to the field, which frees it (its samples / heights). */
void lpsdl_hf_own_raster(lpsdl_hf *h, struct psdl_raster *r);
void lpsdl_hf_own_nhtg(lpsdl_hf *h, struct psdl_nhtg *t);
/* The field at idx, or NULL when it is not one. */
lpsdl_hf *lpsdl_hf_test(lua_State *L, int idx);
const struct psdl_heightfield *lpsdl_hf_field(const lpsdl_hf *h);
int lpsdl_hf_view(const lpsdl_hf *h);

/* lpsdl_render.c: the map canvas (psdl_raster.h) used by psdl.render. */
void lpsdl_open_render(lua_State *L);

/* lpsdl_geom.c: geometry kernels and deduplicating pools (psdl_geom.h). */
void lpsdl_open_geom(lua_State *L);

/* lpsdl_package.c: visibility caster and zip container of `psdl package`. */
void lpsdl_open_package(lua_State *L);

/* lpsdl_companion.c: .bai, .cpvs, .inst, .pathset, PKG3 and .tex codecs (psdl_companion.h). */
void lpsdl_open_companion(lua_State *L);

/* lpsdl.c: a file float as a Lua number and back, bit for bit (NaN payloads kept); *ok = 0
 * when a finite number is beyond the float range. */
lua_Number lpsdl_from_float(float f);
float lpsdl_to_float(lua_Number n, int *ok);

/* lpsdl.c: documents built in C (the room store's assembly, lpsdl_store.c). */
struct psdl_doc;
/* Pushes a psdl.DocBox userdata owning a new empty document (its memory from the Lua
 * allocator; freed when the box is collected) and returns the document. */
struct psdl_doc *lpsdl_doc_push(lua_State *L);
/* The document of the box at idx (raises when idx holds no box, or a released one). */
struct psdl_doc *lpsdl_doc_check(lua_State *L, int idx);
/* core.validate on the document of the box at idx: pushes problems, errors, warnings and,
 * with want_bytes, the encoded bytes; returns the count pushed; releases the box. flags as
 * psdl_validate_ex. */
int lpsdl_doc_validate(lua_State *L, int idx, int want_bytes, unsigned flags);

/* lpsdl_geom.c: the entries of the Pool at idx (raises when it is none, closed, or not of
 * dimension dim); *count entries of dim floats each. The pointer is valid until the next
 * Lua allocation (a finalizer may add to the pool). */
const float *lpsdl_pool_floats(lua_State *L, int idx, unsigned dim, size_t *count);

/* lpsdl_perims.c: the perimeter set of Builder:finish (psdl_perims.h), core.perimeters(). */
struct psdl_perims;
void lpsdl_open_perims(lua_State *L);
/* Pushes a psdl.Perimeters userdata owning a new empty set and returns the set (raises when
 * out of memory). */
struct psdl_perims *lpsdl_perims_push(lua_State *L);
/* The set of the psdl.Perimeters at idx (raises naming the argument when it is none or closed). */
struct psdl_perims *lpsdl_perims_check(lua_State *L, int idx);

/* lpsdl_store.c: the room store of psdl.builder (psdl_store.h), core.store(). */
void lpsdl_open_store(lua_State *L);
/* The store of the psdl.Store at idx (raises when it is none, or closed). Any Lua call or
 * allocation may close it: fetch it again after one. */
struct psdl_store;
struct psdl_store *lpsdl_store(lua_State *L, int idx);

/* lpsdl_geom.c: the pool of the psdl.Pool at idx (raises when it is none, closed, or not of
 * dimension dim). Any Lua call or allocation may close it: fetch it again after one. */
struct psdl_pool;
struct psdl_pool *lpsdl_pool(lua_State *L, int idx, unsigned dim);

/* lpsdl_rows.c: the building rows of psdl.city.blocks (psdl_geom_rows.c,
 * psdl_row_buildings.h): core.row_room, row_fits, row_spec, row_buildings. */
void lpsdl_open_rows(lua_State *L);

/* lpsdl_blocks.c: kernels of psdl.city.blocks: the network's boundary loops (psdl_faces.h),
 * the apron's edge (psdl_apron.h), chords across regions with holes (psdl_region.h) and the
 * chords that split a block into rooms (psdl_split.h). */
void lpsdl_open_blocks(lua_State *L);

/* lpsdl_heap.c: control.heap_reserve, the heap of a short-lived process (psdl_heap.h): sets
 * its functions into the table at the top of the stack (the psdl.control table). */
void lpsdl_open_heap(lua_State *L);
/* Points and perimeters as the kernels take them (lpsdl_geom.c), for the bindings whose
 * arguments 1 and 2 are points (a flat x, y, z array or a 3-D vertex Pool: *npts points, x, y,
 * z doubles) and perimeters `{{v, ...}, ...}` (1-based vertices <= *npts: 0-based start/verts
 * arrays, *nrooms + 1 offsets). The stack is first set to `top` arguments; the arrays live in
 * scratch userdata pushed above them. Raises naming the argument on a bad entry. */
typedef struct lpsdl_perims {
    const double *pts;
    size_t npts;
    uint32_t *start, *verts;
    size_t nrooms;
} lpsdl_perims;
void lpsdl_points_perimeters(lua_State *L, int top, lpsdl_perims *out);
/* The perimeters at idx alone (out->pts NULL, out->npts = npts), in scratch userdata pushed
 * on the stack; raises as lpsdl_points_perimeters does. */
void lpsdl_perimeters(lua_State *L, int idx, size_t npts, lpsdl_perims *out);

/* Points (x, y, z doubles) from a flat array or a 3-D vertex Pool at idx (*n points), in a
 * scratch userdata pushed on the stack; raises naming `what` (lpsdl_geom.c). */
double *lpsdl_points(lua_State *L, int idx, size_t *n, const char *what);

/* Height mismatches (psdl_geom.h psdl_height_mismatch) d[0 .. n-1] pushed as one flat list
 * {block, edge, road, dy, ...}: 1-based rooms and edges, dy in metres (lpsdl_geom.c). */
struct psdl_height_mismatch;
int lpsdl_push_mismatches(lua_State *L, const struct psdl_height_mismatch *d, size_t n);

/* lpsdl_sandbox.c: makes the psdl.control table (the write switch, memory guard and tick of
 * psdl.sandbox, the heap's functions, default_interrupt) and puts it in package.loaded
 * ["psdl.control"], out of the psdl.core table (at the top of the stack, left there): a
 * sandboxed script that reaches psdl.core cannot reach these switches. */
void lpsdl_open_control(lua_State *L);
/* Non-zero while control.deny_writes(true) is in force: core.write_file must refuse. */
int lpsdl_writes_denied(void);
/* Non-zero once the memory limit of control.memory_limit was hit (until it is set again):
 * core.write_file must refuse, so a run stopped for memory writes nothing. */
int lpsdl_memory_exceeded(lua_State *L);

#endif
