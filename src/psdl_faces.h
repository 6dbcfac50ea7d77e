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

/** Kinds of a ring edge (psdl.city.blocks: "street", "portal", "deck"), and of a room's
 *  outline in psdl_faces_network: an ordinary room, a tunnel room (its edges are portals), a
 *  bridge deck or other warp room (its edges are decks). */
enum { PSDL_FACES_STREET = 0, PSDL_FACES_PORTAL = 1, PSDL_FACES_DECK = 2 };

/** No face holds the outline (psdl_faces_net.host): a hole of the apron. */
#define PSDL_FACES_NONE ((size_t)-1)

/** The faces of a network (malloc'd; psdl_faces_net_free). Rings are the loops of at least 3
 *  points whose |S| (twice the signed plan area) exceeds 1 m², each reversed: a loop with
 *  S > 0 is a face in retail winding (S < 0), one with S < 0 an outline of the network, wound
 *  S > 0 (a hole of the region it lies in). Faces come first (rings 0 .. nfaces - 1), then
 *  the outlines, each group in loop order. */
typedef struct psdl_faces_net {
    psdl_faces loops;        /**< the boundary loops, their gaps and open chains */
    size_t nrings, nfaces;
    size_t *start;           /**< nrings + 1 offsets into verts and kinds */
    uint32_t *verts;         /**< the rings' vertices */
    unsigned char *kinds;    /**< kind of ring edge k -> k + 1 (PSDL_FACES_STREET, ...) */
    double *area;            /**< per ring: |S| / 2 (m²) */
    size_t *host;            /**< per outline (ring nfaces + k): the smallest face (by area,
                                  then order) of larger area holding its loop's first point
                                  (crossing number on the face ring), or PSDL_FACES_NONE */
} psdl_faces_net;

/**
 * Step 1 of psdl.city.blocks in one call (blocks/faces.lua, `M.faces`): the ordinary rooms'
 * outlines split at T-junctions (psdl_tjunctions with `eps`: each vertex inserted after the
 * edge's first point, in the order found), their boundary loops (psdl_faces_loops), the
 * loops classified by winding, an edge kind per ring edge (PSDL_FACES_PORTAL when a tunnel
 * room has the edge, else PSDL_FACES_DECK when another warp room has it), and every outline
 * given the face it lies in. The arithmetic (S summed from the last point, the crossing
 * number on the reversed ring) and the orders are the Lua's, step for step.
 * @param pts    npts points, x, y, z each (metres; the plan is x, z)
 * @param start  nrooms + 1 offsets into verts: every room's outline (rooms of fewer than 3
 *               points are left out)
 * @param warp   per room: 0 ordinary, PSDL_FACES_PORTAL (tunnel), PSDL_FACES_DECK (other warp)
 * @return PSDL_FACES_OK (then psdl_faces_net_free *out), PSDL_FACES_NOMEM, or
 *   PSDL_FACES_INVALID (a vertex not below npts, offsets that do not increase, a warp code
 *   above 2, or points whose plan extent is not finite); *out is empty on error
 */
int psdl_faces_network(psdl_faces_net *out, const double *pts, size_t npts, const uint32_t *start,
                       const uint32_t *verts, size_t nrooms, const unsigned char *warp, double eps);

/** Frees what psdl_faces_network allocated (a zeroed or freed struct is fine). */
void psdl_faces_net_free(psdl_faces_net *n);

#ifdef __cplusplus
}
#endif

#endif
