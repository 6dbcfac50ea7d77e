/* psdl_arena.c -- chunked bump allocator owning all memory of one document. */
#include "psdl_internal.h"

#include <stdlib.h>

#define ARENA_CHUNK (64u * 1024u)

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t size, used; /* bytes of data[] */
    size_t total;      /* allocation size, for the allocator's osize */
    union { double d; void *p; uint64_t u; } data[]; /* 8-byte aligned storage */
} arena_chunk;

struct psdl_arena {
    psdl_alloc alloc;
    arena_chunk *head;
};

static void *default_realloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    (void)ud;
    (void)osize;
    if (nsize == 0) {
        free(ptr);
        return NULL;
    }
    return realloc(ptr, nsize);
}

psdl_alloc psdl_alloc_of(const psdl_options *opt) {
    psdl_alloc al = {default_realloc, NULL};
    if (opt && opt->alloc.realloc) al = opt->alloc;
    return al;
}

psdl_arena *psdl_arena_new(const psdl_alloc *alloc) {
    psdl_alloc al = {default_realloc, NULL};
    if (alloc && alloc->realloc) al = *alloc;
    psdl_arena *a = al.realloc(al.ud, NULL, 0, sizeof *a);
    if (!a) return NULL;
    a->alloc = al;
    a->head = NULL;
    return a;
}

void *psdl_arena_alloc(psdl_arena *a, size_t size) {
    if (size == 0) return NULL;
    size_t need = (size + 7u) & ~(size_t)7u;
    if (need < size) return NULL; /* overflow */
    arena_chunk *c = a->head;
    if (!c || c->size - c->used < need) {
        size_t cap = need > ARENA_CHUNK ? need : ARENA_CHUNK;
        if (cap > (size_t)-1 - sizeof(arena_chunk)) return NULL;
        size_t total = sizeof(arena_chunk) + cap;
        arena_chunk *n = a->alloc.realloc(a->alloc.ud, NULL, 0, total);
        if (!n) return NULL;
        n->size = cap;
        n->used = 0;
        n->total = total;
        if (c && need > ARENA_CHUNK) {
            /* a big block: keep the current chunk on top for small allocations */
            n->next = c->next;
            c->next = n;
            c = n;
        } else {
            n->next = c;
            a->head = n;
            c = n;
        }
    }
    void *p = (char *)(void *)c->data + c->used;
    c->used += need;
    memset(p, 0, size);
    return p;
}

/* Makes the arena's next chunk at least `bytes` long (capped at 64 MiB), so that a caller who
 * knows roughly how much a document will need (the decoder: a multiple of the file size)
 * gets it in one block. Why it matters: with 64 KB chunks a decoded London-scale city is
 * about twenty blocks, which the C library hands back to the system when they are freed
 * (the top of its heap is trimmed past 128 KB) and faults in again on the next decode; on
 * a virtual machine those page faults cost more than the decoding (grid_n20.psdl: 9.4 ms a
 * decode against 0.4 ms with the heap kept, bench/README.md). One block past the C
 * library's mmap threshold raises its trim threshold when freed (glibc's dynamic
 * threshold), after which the same block is reused from the heap without faults. Only a
 * hint: a failed reservation changes nothing; what the current chunk has left is not used. */
void psdl_arena_reserve(psdl_arena *a, size_t bytes) {
    if (!a || bytes <= ARENA_CHUNK) return;
    if (a->head && a->head->size - a->head->used >= bytes) return;
    if (bytes > ((size_t)64u << 20)) bytes = (size_t)64u << 20;
    size_t total = sizeof(arena_chunk) + bytes;
    arena_chunk *n = a->alloc.realloc(a->alloc.ud, NULL, 0, total);
    if (!n) return;
    n->size = bytes;
    n->used = 0;
    n->total = total;
    n->next = a->head;
    a->head = n;
}

void psdl_arena_free(psdl_arena *a) {
    if (!a) return;
    arena_chunk *c = a->head;
    while (c) {
        arena_chunk *next = c->next;
        a->alloc.realloc(a->alloc.ud, c, c->total, 0);
        c = next;
    }
    psdl_alloc al = a->alloc;
    al.realloc(al.ud, a, sizeof *a, 0);
}
