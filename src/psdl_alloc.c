/* psdl_alloc.c -- a faster allocator for a Lua state: mimalloc in one reserved range, in front
 * of the state's previous allocator (psdl_alloc.h). */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include "psdl_alloc.h"

#include <stdint.h>
#include <string.h>

#if defined(PSDL_HAVE_MIMALLOC) && defined(__unix__)
#include <mimalloc.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#define FAST 1
#else
#define FAST 0
#endif

const char *psdl_alloc_reason(int code) {
    switch (code) {
    case PSDL_ALLOC_OK: return "ok";
    case PSDL_ALLOC_UNAVAILABLE: return "built without a fast allocator (mimalloc)";
    case PSDL_ALLOC_LIMITED: return "an address-space limit is in force or the range could not be mapped";
    case PSDL_ALLOC_THREAD: return "another thread owns the fast allocator";
    case PSDL_ALLOC_FULL: return "too many distinct allocators wrapped";
    case PSDL_ALLOC_BADARG: return "no previous allocator given";
    default: return "unknown";
    }
}

#if FAST

/* mimalloc segments (and so its arenas) are aligned to 32 MiB */
#define ALIGN ((uintptr_t)32 << 20)

typedef struct {
    psdl_alloc_fn f; /* the previous allocator */
    void *ud;
} slot;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static slot slots[PSDL_ALLOC_SLOTS];
static size_t nslots;
static uintptr_t lo, hi;        /* the range: [lo, hi) */
static mi_heap_t *heap;         /* allocates only in the range */
static pthread_t owner;         /* the thread that made `heap` */
static int owner_alive;         /* cleared when that thread ends (mimalloc then deletes `heap`) */
static pthread_key_t exit_key;  /* its destructor clears owner_alive */
static size_t n_fast, n_passed; /* counted on the owner thread only */

static int in_range(const void *p) { return (uintptr_t)p - lo < hi - lo; }

static int on_owner(void) { return owner_alive && pthread_equal(pthread_self(), owner); }

static void owner_exit(void *v) {
    (void)v;
    owner_alive = 0;
}

/* A new block of `n` bytes: from the range on the owner thread, else (or when the range is
 * full) from the previous allocator `s` (`tag`: Lua's type tag for a new block). */
static void *fresh(const slot *s, size_t tag, size_t n) {
    if (on_owner()) {
        void *p = mi_heap_malloc(heap, n);
        if (p && in_range(p)) {
            n_fast++;
            return p;
        }
        if (p) mi_free(p); /* outside the range: never taken as ours */
        n_passed++;
    }
    return s->f(s->ud, NULL, tag, n);
}

static void *fast_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    const slot *s = ud;
    if (ptr == NULL) return nsize ? fresh(s, osize, nsize) : NULL;
    if (!in_range(ptr)) return s->f(s->ud, ptr, osize, nsize); /* the previous allocator's block */
    if (nsize == 0) {
        mi_free(ptr);
        return NULL;
    }
    /* as mimalloc's own realloc: keep the block while the new size fits and uses at least half
     * of it; else move it (into the range when possible) */
    size_t usable = mi_usable_size(ptr);
    if (nsize <= usable && nsize >= usable / 2) return ptr;
    void *q = fresh(s, 0, nsize);
    if (!q) return NULL;
    memcpy(q, ptr, osize < nsize ? osize : nsize);
    mi_free(ptr);
    return q;
}

/* Map the range and make the heap in it, on the calling thread. Returns a psdl_alloc_wrap code. */
static int open_range(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur != RLIM_INFINITY) return PSDL_ALLOC_LIMITED;
    size_t size = PSDL_ALLOC_ARENA;
    char *m = mmap(NULL, size + ALIGN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return PSDL_ALLOC_LIMITED;
    uintptr_t a = ((uintptr_t)m + ALIGN - 1) & ~(ALIGN - 1);
    /* give back the slack before and after the aligned range */
    if (a > (uintptr_t)m) munmap(m, a - (uintptr_t)m);
    if ((uintptr_t)m + size + ALIGN > a + size) munmap((void *)(a + size), (uintptr_t)m + size + ALIGN - (a + size));
#if defined(MADV_HUGEPAGE)
    /* fewer page faults as the heap grows (the kernel's transparent huge page setting decides) */
    madvise((void *)a, size, MADV_HUGEPAGE);
#endif
    mi_arena_id_t id;
    if (!mi_manage_os_memory_ex((void *)a, size, true, false, true, -1, true, &id)) {
        munmap((void *)a, size);
        return PSDL_ALLOC_LIMITED;
    }
    heap = mi_heap_new_in_arena(id);
    if (!heap) return PSDL_ALLOC_LIMITED; /* the arena stays mimalloc's (it cannot be taken back) */
    if (pthread_key_create(&exit_key, owner_exit) != 0 || pthread_setspecific(exit_key, &exit_key) != 0) {
        heap = NULL; /* an empty heap is left behind; nothing was allocated in it */
        return PSDL_ALLOC_LIMITED;
    }
    owner = pthread_self();
    owner_alive = 1;
    lo = a;
    hi = a + size;
    return PSDL_ALLOC_OK;
}

const char *psdl_alloc_name(void) { return "mimalloc"; }

int psdl_alloc_wrap(psdl_alloc_fn old, void *old_ud, psdl_alloc_fn *fn, void **ud) {
    if (!old) return PSDL_ALLOC_BADARG;
    if (old == fast_alloc) { /* already wrapped */
        *fn = old;
        *ud = old_ud;
        return PSDL_ALLOC_OK;
    }
    int rc = PSDL_ALLOC_OK;
    pthread_mutex_lock(&lock);
    if (hi == 0) rc = open_range();
    else if (!on_owner()) rc = PSDL_ALLOC_THREAD;
    size_t i = 0;
    if (rc == PSDL_ALLOC_OK) {
        while (i < nslots && !(slots[i].f == old && slots[i].ud == old_ud)) i++;
        if (i == nslots) {
            if (nslots == PSDL_ALLOC_SLOTS) rc = PSDL_ALLOC_FULL;
            else {
                slots[i].f = old;
                slots[i].ud = old_ud;
                nslots++;
            }
        }
    }
    pthread_mutex_unlock(&lock);
    if (rc != PSDL_ALLOC_OK) return rc;
    *fn = fast_alloc;
    *ud = &slots[i];
    return PSDL_ALLOC_OK;
}

int psdl_alloc_owns(const void *p) { return hi != 0 && p != NULL && in_range(p); }

void psdl_alloc_counts(size_t *fast, size_t *passed) {
    if (fast) *fast = n_fast;
    if (passed) *passed = n_passed;
}

#else /* without mimalloc */

const char *psdl_alloc_name(void) { return NULL; }

int psdl_alloc_wrap(psdl_alloc_fn old, void *old_ud, psdl_alloc_fn *fn, void **ud) {
    (void)old_ud;
    (void)fn;
    (void)ud;
    return old ? PSDL_ALLOC_UNAVAILABLE : PSDL_ALLOC_BADARG;
}

int psdl_alloc_owns(const void *p) {
    (void)p;
    return 0;
}

void psdl_alloc_counts(size_t *fast, size_t *passed) {
    if (fast) *fast = 0;
    if (passed) *passed = 0;
}

#endif
