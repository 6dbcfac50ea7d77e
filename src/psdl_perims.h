/* psdl_perims.h -- the perimeter set of Builder:finish: every room's perimeter (vertex
 * references, psdl-format.md §1.5) in document order, kept in C from the moment finish takes
 * it (the room's outline, or the boundary of its ground geometry) through T-junction repair
 * to the neighbour links. The document's assembly (lpsdl_store.c), the builder's warnings
 * and the Lua document (made only when a caller asks) read the set, so that a city of
 * thousands of rooms costs a few flat arrays instead of a Lua table per perimeter point.
 *
 * Perimeters are held in CSR form (start[], verts[]: room r's points are verts[start[r] ..
 * start[r + 1] - 1], 0-based vertex references). psdl_perims_link adds the linked form
 * (psdl_link: repeated corner vertices, a neighbour per point); changing a perimeter drops it.
 *
 * Pure C99, no Lua (the binding is src/lpsdl_perims.c). Every function checks its arguments:
 * a room out of range or a NULL set gives an error code, never a crash. */
#ifndef PSDL_PERIMS_H
#define PSDL_PERIMS_H

#include <stddef.h>
#include <stdint.h>

typedef struct psdl_perims psdl_perims;

/** Error codes (0 = success). */
enum {
    PSDL_PERIMS_OK = 0,
    PSDL_PERIMS_NOMEM = -1,   /* out of memory */
    PSDL_PERIMS_RANGE = -2,   /* no such room, a NULL argument, a vertex not below the point count */
    PSDL_PERIMS_FULL = -3,    /* more than PSDL_PERIMS_MAX points or rooms */
    PSDL_PERIMS_UNLINKED = -4 /* the links were asked for before psdl_perims_link */
};

/** Largest number of rooms and of perimeter points a set holds (offsets are 32-bit). */
#define PSDL_PERIMS_MAX 0x7FFFFFF0u

/** A new empty set, or NULL when out of memory. */
psdl_perims *psdl_perims_new(void);

/** Frees the set (NULL is fine). */
void psdl_perims_free(psdl_perims *p);

/** Number of rooms (0 for NULL). */
size_t psdl_perims_rooms(const psdl_perims *p);

/** Appends a room whose perimeter is verts[0 .. n-1] (0-based vertex references, copied).
 *  Returns 0, PSDL_PERIMS_RANGE (NULL set, or n > 0 with NULL verts), PSDL_PERIMS_FULL or
 *  PSDL_PERIMS_NOMEM; the set is unchanged on error. Drops the links. */
int psdl_perims_add(psdl_perims *p, const uint32_t *verts, size_t n);

/** Appends a room whose perimeter is the outline of the union of the triangles tris[0 ..
 *  3*ntris-1] (0-based indices into pts: npts points of x, y, z floats in metres), as
 *  psdl_boundary takes it over the points the triangles use (retail winding, holes
 *  keyholed). The room is added even when the outline is empty. Returns the outline's point
 *  count (>= 0), PSDL_PERIMS_RANGE (a triangle index >= npts, NULL arguments), PSDL_PERIMS_FULL
 *  or PSDL_PERIMS_NOMEM (nothing added on error). */
long psdl_perims_add_boundary(psdl_perims *p, const uint32_t *tris, size_t ntris, const float *pts, size_t npts);

/** Room `room`'s perimeter (0-based room): *n points, 0-based references; NULL (and *n = 0)
 *  when there is no such room. Valid until the set changes. */
const uint32_t *psdl_perims_get(const psdl_perims *p, size_t room, size_t *n);

/** Replaces room `room`'s perimeter by verts[0 .. n-1] (copied; verts may point into the set).
 *  Returns 0, PSDL_PERIMS_RANGE, PSDL_PERIMS_FULL or PSDL_PERIMS_NOMEM (unchanged on error).
 *  Drops the links. */
int psdl_perims_set(psdl_perims *p, size_t room, const uint32_t *verts, size_t n);

/** The perimeters in CSR form: *start (rooms + 1 offsets) and *verts. Returns the room
 *  count; *start is NULL for a NULL set. Valid until the set changes. */
size_t psdl_perims_csr(const psdl_perims *p, const uint32_t **start, const uint32_t **verts);

/** Links the perimeters (psdl_link, §1.5): every vertex must be < npts. Returns 0,
 *  PSDL_PERIMS_RANGE (a vertex >= npts, or a NULL set) or PSDL_PERIMS_NOMEM (no links then). */
int psdl_perims_link(psdl_perims *p, size_t npts);

/** The linked perimeters in CSR form (after psdl_perims_link): *start (rooms + 1 offsets),
 *  *verts (0-based references) and *nb (neighbouring room per point: 1-based position, 0 =
 *  none). Returns the room count; 0 with the three pointers NULL when the set is not linked
 *  (psdl_perims_linked tells). Valid until the set changes. */
size_t psdl_perims_linked_csr(const psdl_perims *p, const uint32_t **start, const uint32_t **verts, const uint32_t **nb);

/** Is the set linked (psdl_perims_link since the last change)? */
int psdl_perims_linked(const psdl_perims *p);

#endif
