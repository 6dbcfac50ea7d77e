/* psdl_heap.h -- the C heap of a short-lived psdl process (scripts/psdl).
 *
 * A fresh `psdl build` of a London-scale city grows its heap to about 100 MB within a
 * second, and touching each new 4 KiB page costs a page fault: about 24,000 faults, a third
 * of the process's CPU time on top of the build (bench/README.md, "Fresh `psdl build`
 * process"). psdl_heap_reserve grows the heap once, asks the kernel for transparent huge
 * pages over it (2 MiB: a few dozen faults) and keeps it, so that the build's allocations
 * come out of memory that faults in large pages. No Lua here. */
#ifndef PSDL_HEAP_H
#define PSDL_HEAP_H

#include <stddef.h>

/* Largest reserve psdl_heap_reserve accepts (512 MiB). */
#define PSDL_HEAP_MAX_RESERVE ((size_t)512 << 20)

/* Prepare the process heap for a build that will grow it to about `bytes`: where the C
 * library is glibc on Linux, allocations under 32 MiB are served from the main heap
 * (M_MMAP_THRESHOLD, glibc's own ceiling for it; larger ones are mapped and unmapped), the
 * heap is grown by `bytes` (in 16 MiB steps) once and that range advised for transparent huge pages (madvise MADV_HUGEPAGE;
 * whether the kernel gives them is its setting: /sys/kernel/mm/transparent_hugepage), and
 * free memory up to twice `bytes` stays in the heap instead of being returned after each
 * collection (M_TRIM_THRESHOLD). Only address space is taken: pages are used as they are
 * touched. Call it once, early, before the heap holds much.
 *
 * Returns 1 when the range was advised; 0 when it was not: `bytes` below 16 MiB or
 * over PSDL_HEAP_MAX_RESERVE, an address-space or data limit in force (`ulimit -v` / `-d`:
 * the reserve is left to the work), the allocation refused, or not glibc/Linux. Never
 * fails otherwise; safe to call again (later calls change nothing and return 0). */
int psdl_heap_reserve(size_t bytes);

/* Keep the C heap's memory for reuse in a process that builds more than once: where the C
 * library is glibc on Linux, allocations under 32 MiB come from the main heap
 * (M_MMAP_THRESHOLD) and up to 64 MiB of free memory stays at its top (M_TRIM_THRESHOLD),
 * the values glibc's dynamic thresholds reach by themselves once a block of 32 MiB has been
 * mapped and freed. Without this, each large buffer of a build (the assembled document, the
 * validator's tables, the encoded bytes) is mapped and unmapped, or the heap trimmed, on
 * every call until glibc's thresholds have grown past it, and every page is faulted in
 * again: the second build of a London-scale city paid about 6,000 faults (bench/README.md,
 * "Finish and validate (branch finish4)"). Memory is still allocated and freed as before;
 * only what the C library returns to the system changes.
 *
 * Returns 1 when both thresholds were set by this call; 0 when not glibc/Linux, the call
 * was refused, or already done (by psdl_heap_keep or psdl_heap_reserve, whose thresholds
 * are kept). No allocation; safe to call any number of times. */
int psdl_heap_keep(void);

#endif
