/*
 * psdl_faces.h -- the boundary loops of a road network: step 1 of psdl.city.blocks
 * (city-layout.md §1.2, §2.3; docs/architecture.md "blocks"). C99, no Lua.
 *
 * The rooms' outlines (perimeters of vertex indices, already split at T-junctions) are given;
 * an edge used by exactly one outline is a boundary edge, directed as in its room. Loose chain
 * ends are joined to the nearest loose starts within PSDL_FACES_GAP metres (nearest pairs
 * first), then the edges are chained into loops taking, at each vertex, the sharpest turn to
 * the left (math; the side away from the rooms), and a loop visiting a vertex twice is split
 * there into simple loops. psdl.city.blocks then classifies the loops (faces, outlines) by
 * their winding. The arithmetic and every order (edges, candidates, pairs, pinches) follow
 * the Lua it replaced (blocks/faces.lua) step for step: the same loops in the same order.
 */
#ifndef PSDL_FACES_H
#define PSDL_FACES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Largest gap (m) between a chain's loose end and a loose start that is closed. */
#define PSDL_FACES_GAP 12.0

/** A closed gap: its length (m) and the end and start vertex it joins. */
typedef struct psdl_faces_gap {
    double d;
    uint32_t a, c;
} psdl_faces_gap;

/** A chain left out (it never closed): its length in edges and its first vertex. */
typedef struct psdl_faces_open {
    size_t len;
    uint32_t a;
} psdl_faces_open;

/** The loops (malloc'd; psdl_faces_free). */
typedef struct psdl_faces {
    size_t nloops;
    size_t *start;           /**< nloops + 1 offsets into verts */
    uint32_t *verts;         /**< the loops' vertices, each loop in its order */
    size_t ngaps;
    psdl_faces_gap *gaps;    /**< in the order they were closed */
    size_t nopen;
    psdl_faces_open *open;   /**< in tracing order */
} psdl_faces;

enum { PSDL_FACES_OK = 0, PSDL_FACES_NOMEM = -1, PSDL_FACES_INVALID = -2 };

/**
 * The boundary loops of the outlines.
 * @param pts    npts points, x, y, z each (metres; the plan is x, z)
 * @param start  nrooms + 1 offsets into verts
 * @param verts  the outlines' vertices (indices below npts)
 * @return PSDL_FACES_OK (then psdl_faces_free *out), PSDL_FACES_NOMEM, or PSDL_FACES_INVALID
 *   (a vertex index not below npts, or offsets that do not increase); *out is empty on error
 */
int psdl_faces_loops(psdl_faces *out, const double *pts, size_t npts, const uint32_t *start, const uint32_t *verts,
                     size_t nrooms);

/** Frees what psdl_faces_loops allocated (a zeroed or freed struct is fine). */
void psdl_faces_free(psdl_faces *f);

#ifdef __cplusplus
}
#endif

#endif
