/* psdl_store.h -- the room store of psdl.builder: rooms and their attribute records (one per
 * emitter call, psdl-format.md §2.4) with their vertex references, from the first emitter call
 * until the document is finished. Lua keeps handles (room numbers); the records live here, in
 * three growable arrays (rooms, records, references), so that a city of thousands of rooms
 * and tens of thousands of attributes costs a few flat arrays instead of a Lua table per
 * attribute and per reference list.
 *
 * A room's records form a singly linked list in the order they were added (rooms are filled in
 * any order: a block room gets its buildings after other rooms were made). Replacing a room's
 * records (T-junction repair, psdl_store_clear + psdl_store_push) leaves the old records and
 * references unused in the arrays; they are freed with the store.
 *
 * Pure C99, no Lua (the binding is src/lpsdl_store.c). Every function checks its arguments:
 * a room number or record index out of range gives an error code, never a crash. */
#ifndef PSDL_STORE_H
#define PSDL_STORE_H

#include <stddef.h>
#include <stdint.h>

/** Record types: the attribute types 0x0-0xC of psdl-format.md §2.4 (same numbers), plus the
 *  junction form of the tunnel attribute (0x9 with 10 words), which the builder keeps apart
 *  because its wall mask is computed from the final perimeter. */
typedef enum psdl_store_type {
    PSDL_STORE_ROAD = 0x0,
    PSDL_STORE_SIDEWALK_STRIP = 0x1,
    PSDL_STORE_WALKWAY = 0x2,
    PSDL_STORE_SLIVER = 0x3,
    PSDL_STORE_CROSSWALK = 0x4,
    PSDL_STORE_ROAD_FAN = 0x5,
    PSDL_STORE_FAN = 0x6,
    PSDL_STORE_FACADE_BOUND = 0x7,
    PSDL_STORE_DIVIDED_ROAD = 0x8,
    PSDL_STORE_TUNNEL = 0x9,
    PSDL_STORE_TEXTURE = 0xA,
    PSDL_STORE_FACADE = 0xB,
    PSDL_STORE_ROOF = 0xC,
    PSDL_STORE_JUNCTION_TUNNEL = 0xD,
    PSDL_STORE_NTYPES = 0xE
} psdl_store_type;

/** Number of numeric parameters of a record. */
#define PSDL_STORE_NPARAM 5

/** One attribute record as the builder's emitters describe it (not yet in file form: texture
 *  groups are the builder's group numbers, heights are height-pool references, 1-based).
 *  param[] by type (doubles, so that integers and metres both fit exactly):
 *    SIDEWALK_STRIP  (cap in `cap`: 0 none, 1 start, 2 end)
 *    DIVIDED_ROAD    divider type, cap_start (0/1), cap_end (0/1), divider value (m)
 *    SLIVER          top, density (height references)
 *    FACADE_BOUND    light, top (height reference)
 *    FACADE          bottom, top (height references), u, v repeats
 *    ROOF            height (height reference)
 *    TUNNEL          flags, height1, height2 (m)
 *    JUNCTION_TUNNEL flags, height1, height2 (m), ceiling_start, walls (a number the caller
 *                    gives meaning to)
 *    TEXTURE         value */
typedef struct psdl_store_rec {
    uint8_t type;    /* psdl_store_type */
    uint8_t cap;     /* sidewalk strips: 0 none, 1 start, 2 end */
    uint16_t aux;    /* kept for the caller (the Lua binding: which parameters are integers) */
    uint32_t group;  /* texture group number (1-based), 0 = none */
    uint32_t dgroup; /* divider texture group number (divided roads), 0 = none */
    uint32_t room;   /* the room the record was pushed to (set by psdl_store_push) */
    double param[PSDL_STORE_NPARAM];
    uint32_t ref0;  /* first reference in the store's reference array */
    uint32_t nrefs; /* vertex references (1-based, as in the document) */
    int32_t next;   /* the room's next record, -1 = last */
} psdl_store_rec;

typedef struct psdl_store psdl_store;

/** Error codes (0 = success). */
enum { PSDL_STORE_OK = 0, PSDL_STORE_NOMEM = -1, PSDL_STORE_RANGE = -2, PSDL_STORE_FULL = -3 };

/** Largest number of rooms, records and references a store holds (each index fits int32). */
#define PSDL_STORE_MAX 0x7FFFFFF0u

/** A new empty store, or NULL when out of memory. */
psdl_store *psdl_store_new(void);

/** Frees the store and every record (NULL is fine). */
void psdl_store_free(psdl_store *s);

/** Adds an empty room; returns its number (1-based), or a negative error code
 *  (PSDL_STORE_NOMEM, PSDL_STORE_FULL). */
long psdl_store_add_room(psdl_store *s);

/** Number of rooms. */
size_t psdl_store_rooms(const psdl_store *s);

/** Appends record rec (type, cap, aux, group, dgroup, param; room/ref0/next ignored) with the n vertex
 *  references refs to room `room` (1-based). Returns 0, PSDL_STORE_RANGE (no such room, a
 *  type out of range), PSDL_STORE_NOMEM or PSDL_STORE_FULL; the room is unchanged on error. */
int psdl_store_push(psdl_store *s, size_t room, const psdl_store_rec *rec, const uint32_t *refs, size_t n);

/** Appends to room `room` (1-based) the records of a flat word list, all in texture group
 *  `group` and without parameters: words[0 .. n-1] is `type, cap, count, ref_1 .. ref_count,
 *  type, cap, count, ...` (the form of store:push_flat and core.junction_store's records).
 *  Types, caps and references are the caller's to check (psdl_store_push refuses a type out
 *  of range); a count running past the end is PSDL_STORE_RANGE. Returns 0,
 *  PSDL_STORE_RANGE, PSDL_STORE_NOMEM or PSDL_STORE_FULL; on error the store is as before the
 *  call (the records pushed before the failing one are dropped again, psdl_store_truncate). */
int psdl_store_push_words(psdl_store *s, size_t room, uint32_t group, const uint32_t *words, size_t n);

/** Number of records of room `room` (0 when there is no such room). */
size_t psdl_store_count(const psdl_store *s, size_t room);

/** The first record of room `room`, or NULL (no such room, or no records); the next one is
 *  psdl_store_next. Pointers stay valid until the next push. */
const psdl_store_rec *psdl_store_first(const psdl_store *s, size_t room);
const psdl_store_rec *psdl_store_next(const psdl_store *s, const psdl_store_rec *rec);

/** The references of a record (rec->nrefs of them). */
const uint32_t *psdl_store_refs(const psdl_store *s, const psdl_store_rec *rec);

/** Drops every record of room `room` (to replace them by pushing again); the records stay in
 *  the arrays and the room's list goes into the store's clear log, so that psdl_store_truncate
 *  to an earlier mark gives them back. Returns 0, PSDL_STORE_RANGE or PSDL_STORE_NOMEM (the
 *  log could not grow; the room is unchanged). */
int psdl_store_clear(psdl_store *s, size_t room);

/** A texture group's first use (psdl_store_group_uses): the group number and the room. */
typedef struct psdl_store_use {
    uint32_t group, room;
} psdl_store_use;

/** The texture groups used by the rooms listed in order[0..n-1] (room numbers, 1-based), in
 *  order of first use over those rooms in that order and each room's records in push order,
 *  each group once with the room of its first use: the `group` fields in *groups (counted in
 *  *ngroups), the `dgroup` fields (divider groups) in *dividers (*ndividers). Both lists are
 *  malloc'd (the caller frees them; NULL when empty). A room listed twice counts at its first
 *  place. Group numbers may be any value 1..UINT32_MAX (kept in a hash table, not an array
 *  sized by the largest).
 *  One pass over the records in the order they are stored, not a walk of each room's record
 *  list: a room's records are scattered over the array (a block room gets its buildings
 *  after other rooms were made), and following the lists waits on memory at every record
 *  (a 14,395-room city with 555,523 records: 0.12 s cold, against a few milliseconds).
 *  Returns 0, PSDL_STORE_RANGE (NULL arguments, a room number out of range; nothing
 *  allocated) or PSDL_STORE_NOMEM (nothing allocated). */
int psdl_store_group_uses(const psdl_store *s, const uint32_t *order, size_t n, psdl_store_use **groups,
                          size_t *ngroups, psdl_store_use **dividers, size_t *ndividers);

/** A point in a store's history: its room, record and reference counts, and the length of its
 *  clear log (psdl_store_mark). */
typedef struct psdl_store_mark_t {
    size_t rooms, recs, refs, cleared;
} psdl_store_mark_t;

/** Records the store's current counts in *m. */
void psdl_store_mark(const psdl_store *s, psdl_store_mark_t *m);

/** Returns the store to mark *m (taken earlier by psdl_store_mark): the rooms added since are
 *  dropped, and so are the records pushed since (also those pushed to older rooms) with their
 *  references; a room cleared since (psdl_store_clear) gets its records from before the clear
 *  back (those below the mark). psdl.builder undoes a call that failed part-way with it, and
 *  a `finish` that failed after T-junction repair replaced rooms' records. Allocates nothing.
 *  Returns 0, or PSDL_STORE_RANGE with nothing changed when a count is above the store's or a
 *  kept record uses a dropped reference (a mark not of this store's history). */
int psdl_store_truncate(psdl_store *s, const psdl_store_mark_t *m);

/** Is a record ground geometry whose triangles make a room's floor (road, divided road,
 *  sidewalk strip without a cap, walkway, crosswalk, road fan, fan)? */
int psdl_store_is_surface(const psdl_store_rec *rec);

/** The surface triangles (3 vertex references each, as psdl_surface_triangles) of room
 *  `room`'s ground geometry, written to *out (malloc'd, freed by the caller) and counted in
 *  *nout (references, a multiple of 3). Returns 0, PSDL_STORE_RANGE or PSDL_STORE_NOMEM
 *  (*out NULL). */
int psdl_store_triangles(const psdl_store *s, size_t room, uint32_t **out, size_t *nout);

#endif
