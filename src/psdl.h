/*
 * psdl.h -- Midtown Madness 2 PSDL (city geometry) codec and validator. C99, no Lua.
 *
 * Reference (read this first)
 * ===========================
 *
 * Format: docs/psdl-format.md (sections cited as §n). A PSDL file is, front to back:
 * header ("PSD0", target size 2), vertex pool, height pool, texture slots, room count,
 * one u32 (first_road_room), room records, per-room flag and prop-rule bytes, bounds,
 * road ("path") records, EOF (§1.2, §1.8).
 *
 * Document model
 * --------------
 * psdl_decode() turns a byte buffer into a psdl_doc. Every array is indexed the way the
 * file indexes it, so ids need no translation inside C:
 *   - vertices[0 .. nvertices-1], heights[0 .. nheights-1]   (0-based pool indices)
 *   - textures[0 .. ntextures-1]: textures[0] is slot 0 ("no texture", never stored);
 *     textures[v] is the name a texture value v selects (§2.3). ntextures == file's T.
 *   - rooms[0 .. nrooms-1]: rooms[0] is the reserved room 0 (no record in the file, but it
 *     has a flag byte and a prop-rule byte); rooms[id] is game room id (§1.1).
 *   - roads[0 .. nroads-1]: road records (§1.7), room ids signed as stored.
 * Each room keeps its raw attribute stream (words[], host byte order) and a decoded view of
 * it (attrs[]); the encoder writes words[], so a decoded document re-encodes byte for byte.
 * A document built in memory fills attrs[] and calls psdl_room_pack() to produce words[].
 *
 * Ownership
 * ---------
 * A psdl_doc owns one arena; everything reachable from it lives there. psdl_doc_free()
 * releases it all with one call. psdl_doc_alloc() hands out arena memory to code that
 * builds a document (the Lua binding does).
 *
 * Error model
 * -----------
 * Functions that can fail on data return a psdl_status and fill an optional psdl_error
 * (code, byte offset, room id, attribute index, formatted message). No global state, no
 * abort() on bad input, no read outside the buffer, and no allocation larger than the
 * remaining input could justify: every count is checked against the bytes left before
 * anything is allocated. Programmer errors (NULL where a pointer is required) are assert()s.
 *
 * Validation
 * ----------
 * psdl_validate() checks a document against the rules of §3 and reports every problem it
 * finds through a callback, each with a severity, a stable rule name and a path in the
 * document model's 1-based Lua convention ("rooms[12].attributes[3].vertices[2]").
 */
#ifndef PSDL_H
#define PSDL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PSDL_VERSION "0.1.0"

/* ---------------------------------------------------------------- status and errors */

/** Result of a call. Names are stable strings (psdl_status_name). */
typedef enum psdl_status {
    PSDL_OK = 0,
    PSDL_E_TRUNCATED,     /* "truncated": needed N bytes at an offset, fewer remain */
    PSDL_E_BAD_MAGIC,     /* "bad_magic": not "PSD0"/"PSD1" */
    PSDL_E_BAD_COUNT,     /* "bad_count": a count exceeds the remaining bytes or a limit */
    PSDL_E_BAD_INDEX,     /* "bad_index": an index out of range */
    PSDL_E_BAD_ATTRIBUTE, /* "bad_attribute": malformed attribute stream */
    PSDL_E_TRAILING,      /* "trailing_bytes": bytes after the last road record */
    PSDL_E_INVALID,       /* "invalid": an in-memory document cannot be encoded */
    PSDL_E_NOMEM,         /* "nomem": allocation failed */
    PSDL_E_IO,            /* "io": file-system error (used by the bindings) */
    PSDL_E_BAD_STRING,    /* "bad_string": texture name without its terminating NUL */
    PSDL_E_COUNT_         /* sentinel */
} psdl_status;

/** Filled by failing calls. room = game room id or -1; attribute = 0-based index in the
 *  room's attribute list or -1; offset = byte offset in the input (decode) or 0. */
typedef struct psdl_error {
    psdl_status code;
    size_t offset;
    long room;
    long attribute;
    char message[256];
} psdl_error;

/** Stable name of a status ("ok", "truncated", ...); "unknown" for out-of-range values. */
const char *psdl_status_name(psdl_status status);

/* ---------------------------------------------------------------- options */

/** Allocator with lua_Alloc's shape: nsize == 0 frees and returns NULL. */
typedef struct psdl_alloc {
    void *(*realloc)(void *ud, void *ptr, size_t osize, size_t nsize);
    void *ud;
} psdl_alloc;

/** Resource limits for decoding; 0 means "no limit beyond what the input can hold". */
typedef struct psdl_limits {
    size_t max_vertices;
    size_t max_rooms;
    size_t max_attr_words; /* per room */
} psdl_limits;

/** Zero-initialised options are valid: malloc/free and no extra limits. */
typedef struct psdl_options {
    psdl_alloc alloc;
    psdl_limits limits;
} psdl_options;

/* ---------------------------------------------------------------- document */

typedef struct psdl_vec3 {
    float x, y, z; /* metres, Y up (§4.1) */
} psdl_vec3;

/** One texture slot (§1.3). name == NULL for an empty slot (length byte 0); otherwise
 *  name_len bytes (without the terminating NUL the file stores) plus a NUL.
 *  PSD1: one material byte follows every non-empty name (§1.9; empty slots carry none --
 *  our reading, since the byte belongs to a name). */
typedef struct psdl_texture {
    const char *name;
    uint8_t name_len;
    uint8_t material; /* PSD1 only: the byte after the name */
} psdl_texture;

/** Attribute types, header bits 3..6 (§2.1). */
typedef enum psdl_attr_type {
    PSDL_ATTR_ROAD = 0x0,            /* road strip with sidewalks, 4 vertices per section */
    PSDL_ATTR_SIDEWALK_STRIP = 0x1,  /* 2 per pair (curb, outer), optional end cap */
    PSDL_ATTR_WALKWAY = 0x2,         /* rectangle strip, 2 per pair (left, right) */
    PSDL_ATTR_SLIVER = 0x3,          /* param top, density (heights); 2 vertices */
    PSDL_ATTR_CROSSWALK = 0x4,       /* 4 vertices */
    PSDL_ATTR_ROAD_FAN = 0x5,        /* hub + rim, triangles = n - 2 */
    PSDL_ATTR_FAN = 0x6,             /* hub + rim */
    PSDL_ATTR_FACADE_BOUND = 0x7,    /* param light, top (height); 2 vertices */
    PSDL_ATTR_DIVIDED_ROAD = 0x8,    /* params (see below); 6 vertices per section */
    PSDL_ATTR_TUNNEL = 0x9,          /* refs hold the data words (3: strip, 10: junction) */
    PSDL_ATTR_TEXTURE = 0xA,         /* param[0] = texture value (1-based slot) */
    PSDL_ATTR_FACADE = 0xB,          /* params bottom, top (heights), u, v repeats; 2 vertices */
    PSDL_ATTR_ROOF = 0xC,            /* param[0] = height; hub + rim vertices */
    PSDL_ATTR_UNKNOWN = 0xF          /* types 13..15 or unparsable tail: refs = raw words */
} psdl_attr_type;

/** How an attribute's length is stored (§2.1): inline in the subtype, or subtype 0 plus a
 *  count word. AUTO (documents built in memory) picks inline when 1 <= n <= 7. */
typedef enum psdl_form { PSDL_FORM_AUTO = 0, PSDL_FORM_INLINE = 1, PSDL_FORM_COUNTED = 2 } psdl_form;

/** Sidewalk-strip end caps (§2.4 0x1): 2 pairs whose first is (0,0) or (1,1). */
typedef enum psdl_cap { PSDL_CAP_NONE = 0, PSDL_CAP_START = 1, PSDL_CAP_END = 2 } psdl_cap;

/** A decoded attribute. refs are 0-based vertex indices except for TUNNEL (data words)
 *  and UNKNOWN (every raw word from the header on). param[] by type:
 *    SLIVER        top, density            (height-pool indices)
 *    FACADE_BOUND  light (raw word; game uses light & 63), top (height index)
 *    DIVIDED_ROAD  divider type (bits 0..5), caps (bit 0 start, bit 1 end),
 *                  divider texture value D (1-based, <= 255), value (8.8 fixed point)
 *    TEXTURE       value (1..2047; 0 = no texture), data word as stored
 *    FACADE        bottom, top (height indices), u repeat, v repeat (unsigned)
 *    ROOF          height (height index)
 *  Fixed-size types (SLIVER, CROSSWALK, FACADE_BOUND, FACADE) keep the subtype they were
 *  stored with (standard 4/4/4/6); subtype 0 means a count word ("count") precedes the payload.
 */
typedef struct psdl_attr {
    uint8_t type;        /* psdl_attr_type */
    uint8_t subtype;     /* header bits 0..2 as stored (or wanted for fixed types/texture) */
    uint8_t last;        /* header bit 7 (LAST) */
    uint8_t header_high; /* header bits 8..15 (0 in every valid file) */
    uint8_t form;        /* psdl_form */
    uint8_t cap;         /* psdl_cap (sidewalk strips) */
    uint16_t count;      /* the count word as stored (counted form) */
    uint32_t param[4];
    uint32_t nrefs;
    uint16_t *refs;
} psdl_attr;

typedef struct psdl_perimeter_point {
    uint16_t vertex;    /* vertex-pool index */
    uint16_t neighbour; /* game room id across edge i -> i+1; 0 = none (§1.5) */
} psdl_perimeter_point;

typedef struct psdl_room {
    uint32_t nperimeter;
    psdl_perimeter_point *perimeter;
    uint32_t nwords; /* attribute stream length in 16-bit words (§1.4) */
    uint16_t *words; /* attribute stream, host byte order */
    uint32_t nattrs;
    psdl_attr *attrs;
    uint8_t flags;     /* room flag byte (§1.6) */
    uint8_t prop_rule; /* prop-rule byte (§1.6) */
} psdl_room;

/** Road ("path") record (§1.7). */
typedef struct psdl_road {
    uint32_t flags;
    uint8_t nleft, nright;
    float *lane_values; /* nleft + nright values, left side first */
    uint8_t stop_light[2];
    uint16_t start_crossroads[4]; /* vertex indices */
    uint16_t end_crossroads[4];
    uint8_t nrooms;
    int16_t *rooms; /* game room ids, signed as stored */
} psdl_road;

typedef struct psdl_doc {
    char magic[4];        /* "PSD0" (MM2) or "PSD1" (Midnight Club) */
    uint32_t target_size; /* 2 */
    uint32_t nvertices;
    psdl_vec3 *vertices;
    uint32_t nheights;
    float *heights;
    uint32_t ntextures; /* slots including slot 0 (the file's T, >= 1) */
    psdl_texture *textures;
    uint32_t nrooms; /* rooms including room 0 (the file's R, >= 1) */
    uint32_t first_road_room; /* the u32 after the room count (§1.2, §6 item 1) */
    psdl_room *rooms;
    int has_tail;            /* PSD0: always 1. PSD1: bounds and roads present */
    psdl_vec3 bounds_min, bounds_max, sphere_center;
    float sphere_radius;
    uint32_t nroads;
    psdl_road *roads;
    void *arena_; /* private */
} psdl_doc;

/** Decode size bytes at data into *out (freed with psdl_doc_free). opt may be NULL.
 *  Errors: truncated, bad_magic, bad_count, bad_attribute, trailing_bytes, nomem. */
psdl_status psdl_decode(const psdl_options *opt, const void *data, size_t size,
                        psdl_doc **out, psdl_error *err);

/** An empty document ("PSD0", target 2, slot 0, room 0 with flags 0 and prop rule 0xCD,
 *  no roads) to fill in memory. NULL when out of memory. */
psdl_doc *psdl_doc_new(const psdl_options *opt);

/** Arena memory owned by doc (zeroed, 8-byte aligned); NULL when out of memory or when
 *  size is 0. Freed with the document. */
void *psdl_doc_alloc(psdl_doc *doc, size_t size);

/** Frees the document and all its memory. NULL-safe. */
void psdl_doc_free(psdl_doc *doc);

/** Bytes psdl_encode will write, or 0 if a count does not fit the format. */
size_t psdl_encoded_size(const psdl_doc *doc);

/** Write the document into dst (cap bytes). Allocates nothing. Errors: invalid (a count
 *  field too large for its width, cap too small). */
psdl_status psdl_encode(const psdl_doc *doc, void *dst, size_t cap, size_t *written,
                        psdl_error *err);

/* ---------------------------------------------------------------- attributes */

/** Number of words psdl_attr_pack writes for a (header and count word included). */
size_t psdl_attr_size(const psdl_attr *a);

/** Pack one attribute into words (header first); returns the word count, or 0 with err
 *  filled when it cannot be encoded: texture value > 2047, divider texture > 255, divider
 *  type > 63, counts > 65535, wrong vertex count for the type (§2.2-2.4). */
size_t psdl_attr_pack(const psdl_attr *a, uint16_t *dst, psdl_error *err);

/** Rebuild room->words from room->attrs (arena memory of doc). Errors as psdl_attr_pack,
 *  with err->attribute set. */
psdl_status psdl_room_pack(psdl_doc *doc, psdl_room *room, psdl_error *err);

/** Stable type name: "road", "sidewalk_strip", "walkway", "sliver", "crosswalk",
 *  "road_fan", "fan", "facade_bound", "divided_road", "tunnel", "texture", "facade",
 *  "roof", "unknown". */
const char *psdl_attr_type_name(int type);

/* ---------------------------------------------------------------- validation */

typedef enum psdl_severity { PSDL_SEV_ERROR = 0, PSDL_SEV_WARNING = 1 } psdl_severity;

typedef struct psdl_problem {
    psdl_severity severity;
    const char *rule; /* stable rule name, e.g. "vertex_index", "missing_last" */
    long room;        /* game room id or -1 */
    long attribute;   /* 0-based attribute index or -1 */
    long road;        /* 0-based road record index or -1 */
    long other_room;  /* the second room of a problem between two rooms (overlap, hole) or -1 */
    int has_position; /* x, z hold where the problem is */
    double x, z;      /* metres, plan position (§4.1): the spot for drivability rules, the room's
                         centroid for room rules, the vertex for vertex rules */
    char path[96];    /* 1-based document path, e.g. "rooms[3].attributes[2].vertices[1]" */
    char message[200];
} psdl_problem;

/** Return non-zero to stop validation early. */
typedef int (*psdl_problem_fn)(void *ud, const psdl_problem *problem);

/** Counts returned by psdl_validate. */
typedef struct psdl_validate_result {
    size_t errors, warnings;
} psdl_validate_result;

/** Check doc against §3 and report each problem through fn (may be NULL to only count).
 *  Errors are what would crash the game or make it misread; warnings what loads but is
 *  wrong or risky. Runs psdl_check_drivable() too, which holds scratch memory while it
 *  reports: fn must return normally (no longjmp); collect problems and convert them after
 *  the call when the conversion can raise. */
void psdl_validate(const psdl_doc *doc, psdl_problem_fn fn, void *ud,
                   psdl_validate_result *result);

/** Flags of psdl_validate_ex. */
#define PSDL_VALIDATE_NO_DRIVABLE 1u /* the format's rules only: skip psdl_check_drivable */

/** psdl_validate with flags (PSDL_VALIDATE_NO_DRIVABLE: for pieces of a city built or
 *  edited on their own, such as unit-test fragments or the synthetic codec fixtures). */
void psdl_validate_ex(const psdl_doc *doc, unsigned flags, psdl_problem_fn fn, void *ud,
                      psdl_validate_result *result);

/** The drivability rules (docs/validate.md "Drivability"), in src/psdl_drivable.c: numbers
 *  (nonfinite, empty_city), perimeter shape (perimeter_crossing, perimeter_spike,
 *  perimeter_kink), room_overlap (non-warp rooms overlapping by more than 0.5 m²), hole (ground
 *  enclosed by non-warp rooms in no perimeter: ERROR above 1 m², WARN above 0.01 m²),
 *  edge_gap (an enclosed gap wider than 2 cm), floor_outside (more than 1 % of a floor
 *  attribute's plan area more than 5 cm outside its room: WARN; above 25 %: ERROR),
 *  unreachable (rooms no neighbour-link chain from the largest road room reaches: ERROR
 *  for road and intersection rooms). Each problem has its room ids and a position in metres.
 *  Adds to result's counts (which it does not reset). Scratch memory comes from malloc and
 *  is freed before returning; out of memory gives one "drivable_nomem" error. fn must
 *  return normally. Time: near-linear in rooms and perimeter points (spatial grids). */
void psdl_check_drivable(const psdl_doc *doc, psdl_problem_fn fn, void *ud,
                         psdl_validate_result *result);

/** The room_overlap rule of psdl_check_drivable on rooms that are no document yet (a
 *  builder's road and intersection rooms before the blocks are placed around them). Rooms in
 *  CSR form: room i (0-based) has the perimeter verts[start[i] .. start[i + 1] - 1], 0-based
 *  indices into pts (x, y, z doubles, npts points; the plan is x, z); warp[i] non-zero marks
 *  a warp room, which is skipped as in the document rule (warp may be NULL: none). Each pair
 *  of rooms overlapping in plan by more than 0.5 m² is reported through fn as a
 *  "room_overlap" error whose room and other_room are the 1-based positions in the list
 *  (room < other_room) and whose position is the overlap's centroid. A room with a vertex
 *  >= npts or not finite, or with fewer than 3 distinct points, takes no part. Adds to
 *  result's counts. Returns 0, or -1 when out of memory (what was found so far is
 *  reported). fn must return normally. Time: near-linear (a uniform grid of room boxes). */
int psdl_check_overlaps(const double *pts, size_t npts, const uint32_t *start, const uint32_t *verts, size_t nrooms,
                        const unsigned char *warp, psdl_problem_fn fn, void *ud, psdl_validate_result *result);

/** One rule of psdl_validate, for listings (`psdl validate --rules`). */
typedef struct psdl_rule_info {
    const char *name;     /* stable rule name */
    const char *severity; /* "error", "warning" or "error/warning" (by threshold) */
    const char *summary;  /* one line: what it finds */
} psdl_rule_info;

/** Every rule psdl_validate can report, in a fixed order; *count receives how many. */
const psdl_rule_info *psdl_rules(size_t *count);

/* ---------------------------------------------------------------- files */

/** Replace the file at path with size bytes, atomically: a temporary file in the same
 *  folder is written, synced, given the old file's permissions (or the umask's for a new
 *  file) and renamed over the target, so a failure leaves an existing file untouched and
 *  no temporary file behind. The temporary file is unnamed while it is written (Linux
 *  O_TMPFILE, then linked as "<path>.tmp-<pid>-XXXXXX" just before the rename) or, where
 *  that is not available, named so from the start; a write killed with kill -9 can leave
 *  such a name behind, and the next write of the same path removes every one whose process
 *  is gone, so killed writes never accumulate files. A symbolic link is followed (the file it names is replaced);
 *  a device or pipe (e.g. /dev/stdout) is written directly. Errors: io, with the path and
 *  the system's reason in the message; when the folder exists but refuses the temporary
 *  file (/proc, a read-only mount) the message says so and names that file too ("<path>:
 *  left untouched: the temporary file beside it cannot be created (...): <path>.tmp-...").
 *  POSIX only. */
psdl_status psdl_write_file(const char *path, const void *data, size_t size, psdl_error *err);

/** Bytes read by psdl_read_stream: data[0 .. size-1] in a block of capacity bytes from the
 *  allocator the call was given (data NULL and both sizes 0 when nothing was allocated). */
typedef struct psdl_bytes {
    char *data;
    size_t size, capacity;
} psdl_bytes;

/** Everything left in the stream f, read into one block from opt's allocator (malloc when
 *  opt is NULL or its allocator unset). A regular file is read in one block of its size
 *  (fstat) without growing; a pipe or device in doubling blocks until its end. path names
 *  the file in messages only. Errors: io ("psdl: io: <path>: <reason>", e.g. a folder:
 *  "Is a directory"), nomem (*out is then empty). POSIX only. */
psdl_status psdl_read_stream(FILE *f, const char *path, const psdl_options *opt, psdl_bytes *out, psdl_error *err);

/** Frees the block of b (allocated with opt's allocator) and empties b. NULL-safe. */
void psdl_bytes_free(const psdl_options *opt, psdl_bytes *b);

/** The canonical absolute name of an existing file or folder (every symbolic link, "." and
 *  ".." resolved) into out[0 .. out_size-1], NUL-terminated. Errors: io (no such file, a
 *  loop of links, permission, or the name does not fit out_size). POSIX only. */
psdl_status psdl_real_path(const char *path, char *out, size_t out_size, psdl_error *err);

/** Whether psdl_write_file could write path, checked before anything is made: the path is
 *  not a folder, and its folder exists and takes new files (write and search permission),
 *  or the path is a device or pipe. Writes nothing. Errors: io, naming the path and what
 *  is wrong ("a folder, not a file", "the folder ... does not exist", "cannot write in
 *  the folder ..."). POSIX only. */
psdl_status psdl_check_output(const char *path, psdl_error *err);

/* ---------------------------------------------------------------- format constants */

#define PSDL_MAX_TEXTURE_VALUE 2047   /* 3-bit subtype + 8-bit data (§2.3) */
#define PSDL_RENDERED_TEXTURE_VALUE 511 /* higher values reported not to render properly (§3.2) */
#define PSDL_STOCK_TEXTURE_VALUE 767  /* higher values: stock MM2 reported not to load (§3.2) */
#define PSDL_MAX_DIVIDER_TEXTURE 255  /* one-byte divider texture (§2.4 0x8) */
#define PSDL_MAX_PERIMETER 255        /* one-byte count at runtime (§3.2) */
#define PSDL_MAX_LANE_VALUES 255      /* one-byte lane count per side of a road record (§1.7) */
#define PSDL_MAX_PROP_RULE 255        /* the room's prop-rule byte (§1.6) */
#define PSDL_SAFE_VERTEX_BUDGET 65024 /* V + 512 generated vertices <= 65536 (§3.2) */
#define PSDL_CURB_RISE 0.15f          /* metres (§2.4 0x0) */
/* The largest |x|, |y| or |z| of a position the builder takes and the validator leaves
 * without a warning (metres, 2^16): positions are 32-bit floats (§1.2), whose steps are 4 mm
 * just below it and grow beyond (64 m at 1e9 m); the game's cities lie within a few
 * kilometres of the origin. lua/psdl/check.lua's MAX_COORDINATE and psdl.city's agree. */
#define PSDL_MAX_COORDINATE 65536.0

#ifdef __cplusplus
}
#endif
#endif /* PSDL_H */
