/* psdl_alloc.h -- a faster allocator for a Lua state (mimalloc), put in front of the state's
 * own allocator. No Lua here: the functions have the shape of Lua's lua_Alloc, and
 * src/lpsdl_heap.c installs them with lua_setallocf (control.heap_allocator, called by
 * scripts/psdl).
 *
 * Why: a city build makes and drops millions of small Lua tables; with glibc's malloc a
 * quarter of the process's time went into the C library (_int_malloc, unlink_chunk,
 * malloc_consolidate, bench/README.md "The Lua heap (branch alloc)").
 *
 * How ownership is told: the state already holds blocks from its first allocator when it
 * switches, and those must go back to that allocator. The fast allocator allocates only inside
 * one address range reserved for it (a mimalloc arena of PSDL_ALLOC_ARENA bytes, mapped once
 * per process, exclusive to one mimalloc heap); a block is the fast allocator's exactly when
 * its address lies in that range (checked on every allocation, so a block outside it is never
 * taken as ours). Blocks outside it, and every allocation once the range is full, go to the
 * previous allocator: nothing is lost, a full range only ends the speed-up.
 *
 * Threads: the mimalloc heap belongs to the thread that first switched a state (psdl_alloc_wrap).
 * Allocations made by any other thread through the wrapper go to the previous allocator; frees
 * of the range's blocks work from any thread. After the owning thread ends, every allocation
 * goes to the previous allocator.
 *
 * Built with mimalloc when CMake finds it (option PSDL_MIMALLOC, Debian libmimalloc-dev);
 * without it psdl_alloc_wrap reports PSDL_ALLOC_UNAVAILABLE and nothing changes. */
#ifndef PSDL_ALLOC_H
#define PSDL_ALLOC_H

#include <stddef.h>

/* The allocator's shape (Lua's lua_Alloc): `ptr` NULL allocates `nsize` bytes (`osize` is
 * then a type tag, ignored); `nsize` 0 frees `ptr` (`osize` bytes) and returns NULL; otherwise
 * resizes `ptr` from `osize` to `nsize` bytes, keeping the first min(osize, nsize) bytes, and
 * returns NULL (leaving `ptr` as it was) when it cannot. */
typedef void *(*psdl_alloc_fn)(void *ud, void *ptr, size_t osize, size_t nsize);

/* Address space reserved for the fast allocator, once per process (8 GiB; pages are used only
 * as they are touched). */
#define PSDL_ALLOC_ARENA ((size_t)8 << 30)

/* Results of psdl_alloc_wrap. */
enum {
    PSDL_ALLOC_OK = 0,
    PSDL_ALLOC_UNAVAILABLE, /* built without mimalloc */
    PSDL_ALLOC_LIMITED,     /* an address-space limit (ulimit -v) is in force, or the range could not be mapped */
    PSDL_ALLOC_THREAD,      /* another thread owns the fast allocator */
    PSDL_ALLOC_FULL,        /* too many distinct previous allocators (PSDL_ALLOC_SLOTS) */
    PSDL_ALLOC_BADARG       /* `old` is NULL */
};

/* Distinct previous allocators (function and user data) one process can wrap. */
#define PSDL_ALLOC_SLOTS 8

/* The name of the fast allocator built in ("mimalloc"), or NULL when there is none. */
const char *psdl_alloc_name(void);

/* Wrap the allocator `old` (user data `old_ud`): on PSDL_ALLOC_OK, *fn and *ud are the
 * allocator to install instead (lua_setallocf(L, *fn, *ud)). The first successful call maps
 * the range and makes the calling thread the owner. *fn / *ud stay valid for the whole
 * process (a state closed later still frees through them), so nothing is to be released.
 * `old` must be the allocator the caller's blocks came from and must itself stay valid. Wrapping
 * the wrapper (old == psdl_alloc_fn of a previous call) returns that same allocator. Never fails
 * otherwise; on an error *fn and *ud are left unchanged. */
int psdl_alloc_wrap(psdl_alloc_fn old, void *old_ud, psdl_alloc_fn *fn, void **ud);

/* Whether `p` is a block of the fast allocator (in its range); 0 for NULL and without it. */
int psdl_alloc_owns(const void *p);

/* A short English reason for a psdl_alloc_wrap result. */
const char *psdl_alloc_reason(int code);

/* Counts since the process started: allocations (new blocks and moves) served by the fast
 * allocator, and those passed to a previous allocator (another thread, a full range). */
void psdl_alloc_counts(size_t *fast, size_t *passed);

#endif
