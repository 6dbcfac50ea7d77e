/* psdl_heap.c -- a heap reserve in transparent huge pages for short-lived processes
 * (psdl_heap.h). */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include "psdl_heap.h"

#include <stdint.h>
#include <stdlib.h>

#if defined(__linux__) && defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#endif

#if defined(__linux__) && defined(__GLIBC__) && defined(MADV_HUGEPAGE) && defined(M_MMAP_THRESHOLD) && \
    defined(M_TRIM_THRESHOLD)
#define HUGE_PAGE ((uintptr_t)2 << 20)
/* glibc's own ceiling of the dynamic mmap threshold on 64-bit systems: after the reserve,
 * a single allocation this large or larger is mapped (and returned when freed) */
#define MAP_ABOVE (32 << 20)
/* the reserve is taken in pieces below that threshold */
#define PIECE ((size_t)16 << 20)

/* free memory kept at the heap's top by psdl_heap_keep: glibc's own ceiling for its dynamic
 * trim threshold (twice the mmap threshold's ceiling) */
#define KEEP_FREE ((size_t)64 << 20)

/* Set once the thresholds are in place (by the reserve or by psdl_heap_keep). */
static int thresholds_set = 0;

int psdl_heap_keep(void) {
    if (thresholds_set) return 0;
    thresholds_set = 1;
    if (!mallopt(M_MMAP_THRESHOLD, MAP_ABOVE)) return 0;
    if (!mallopt(M_TRIM_THRESHOLD, (int)KEEP_FREE)) return 0;
    return 1;
}

static int limited(int resource) {
    struct rlimit rl;
    return getrlimit(resource, &rl) != 0 || rl.rlim_cur != RLIM_INFINITY;
}

int psdl_heap_reserve(size_t bytes) {
    static int done = 0;
    if (done || bytes < PIECE || bytes > PSDL_HEAP_MAX_RESERVE) return 0;
    if (limited(RLIMIT_AS) || limited(RLIMIT_DATA)) return 0;
    done = 1;
    thresholds_set = 1;
    /* the pieces of the reserve come from the heap (below the mmap threshold) and stay
     * there when freed (a trim threshold above the reserve) */
    if (!mallopt(M_MMAP_THRESHOLD, MAP_ABOVE)) return 0;
    if (!mallopt(M_TRIM_THRESHOLD, (int)(2 * bytes))) return 0;
    char *piece[PSDL_HEAP_MAX_RESERVE / PIECE];
    size_t n = 0, want = bytes / PIECE;
    while (n < want && (piece[n] = malloc(PIECE)) != NULL) n++;
    /* pieces taken one after the other from the heap's top lie end to end (a chunk header
     * apart): each such run is advised as one range */
    int advised = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && (uintptr_t)piece[j + 1] >= (uintptr_t)piece[j] + PIECE &&
               (uintptr_t)piece[j + 1] - ((uintptr_t)piece[j] + PIECE) <= 64)
            j++;
        uintptr_t a = ((uintptr_t)piece[i] + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
        uintptr_t b = ((uintptr_t)piece[j] + PIECE) & ~(HUGE_PAGE - 1);
        if (b > a && madvise((void *)a, (size_t)(b - a), MADV_HUGEPAGE) == 0) advised = 1;
        i = j + 1;
    }
    while (n > 0) free(piece[--n]); /* back into the heap's top, which later allocations use */
    return advised;
}
#else
int psdl_heap_reserve(size_t bytes) {
    (void)bytes;
    return 0;
}

int psdl_heap_keep(void) { return 0; }
#endif
