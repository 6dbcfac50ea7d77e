/* test_heap.c -- the heap reserve of short-lived processes (src/psdl_heap.h): refused sizes,
 * the limits that turn it off, the huge-page advice on the heap (read back from
 * /proc/self/smaps where it applies) and a heap that still works after it; the kept heap
 * (psdl_heap_keep): a large block freed and allocated again is not faulted in again. Run under
 * ASan/UBSan by scripts/test (build-asan/psdl_ctest_heap), where the sanitizer's allocator
 * replaces glibc's and only the refusals and the working heap are checked. */
#define _DEFAULT_SOURCE
#include "psdl_heap.h"

#include "check.h"

#include <stdint.h>
#include <string.h>
#if defined(__linux__)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

/* Whether a mapping of this process that contains `p` is advised for huge pages ("hg" in
 * its VmFlags); -1 when /proc/self/smaps cannot be read. */
static int advised_at(const void *p) {
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) return -1;
    char line[512];
    int inside = 0, found = 0;
    uintptr_t a = (uintptr_t)p;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
            inside = a >= lo && a < hi;
        } else if (inside && strncmp(line, "VmFlags:", 8) == 0) {
            found = strstr(line, " hg") != NULL;
            inside = 0;
        }
    }
    fclose(f);
    return found;
}

static void test_refused(void) {
    set_ctx("refused sizes");
    CHECK(psdl_heap_reserve(0) == 0);
    CHECK(psdl_heap_reserve(((size_t)16 << 20) - 1) == 0);
    CHECK(psdl_heap_reserve(PSDL_HEAP_MAX_RESERVE + 1) == 0);
    CHECK(psdl_heap_reserve((size_t)-1) == 0);
}

#if defined(__linux__)
/* In a child with a (large, finite) data limit: nothing is done. */
static void test_limited(void) {
    set_ctx("ulimit -d in force");
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit rl;
        if (getrlimit(RLIMIT_DATA, &rl) != 0) _exit(3);
        rl.rlim_cur = (rlim_t)1 << 40;
        if (rl.rlim_max != RLIM_INFINITY && rl.rlim_cur > rl.rlim_max) rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_DATA, &rl) != 0) _exit(4);
        _exit(psdl_heap_reserve((size_t)64 << 20) == 0 ? 0 : 1);
    }
    CHECK(pid > 0);
    int status = -1;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
}
#endif

#if defined(__linux__)
/* psdl_heap_keep in a fresh child: set once; a 4 MiB block freed and allocated again comes
 * back from the heap without page faults (glibc would map it anew, or trim it, before its
 * dynamic thresholds grew past it). Exit status: a bit per failed check. */
static int keep_child(void) {
    int bad = 0;
    int r = psdl_heap_keep();
    if (!(r == 0 || r == 1)) bad |= 1;
    if (psdl_heap_keep() != 0) bad |= 2; /* once only */
    size_t size = (size_t)4 << 20;
    char *p = malloc(size);
    if (!p) return 4;
    memset(p, 1, size);
    free(p);
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    char *q = malloc(size);
    if (!q) return 8;
    memset(q, 2, size);
    getrusage(RUSAGE_SELF, &ru1);
    long faults = ru1.ru_minflt - ru0.ru_minflt;
#if defined(__GLIBC__)
    if (!UNDER_ASAN) {
        if (r != 1) bad |= 16;
        if (faults > 64) bad |= 32; /* 1,024 pages when mapped anew */
    }
#endif
    if (q[0] != 2 || q[size - 1] != 2) bad |= 64;
    free(q);
    return bad;
}

static void test_keep(void) {
    set_ctx("kept heap (fresh process)");
    pid_t pid = fork();
    if (pid == 0) _exit(keep_child());
    CHECK(pid > 0);
    int status = -1;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d (bits: 1 result, 2 twice, 16 not set, "
           "32 faulted again)", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}
#endif

/* The reserve, then a heap that works: blocks of many sizes written and read back. */
static void test_reserve(void) {
    set_ctx("reserve 64 MiB");
    int r = psdl_heap_reserve((size_t)64 << 20);
    CHECK(r == 0 || r == 1);
#if defined(__linux__) && defined(__GLIBC__)
    if (!UNDER_ASAN) {
        CHECKF(r == 1, "glibc on Linux: the reserve is advised (got %d)", r);
        /* the next allocations come out of the advised range */
        char *p = malloc((size_t)8 << 20);
        CHECK(p != NULL);
        int adv = advised_at(p + ((size_t)4 << 20));
        CHECKF(adv != 0, "smaps: the block after the reserve lies in a huge-page range (%d)", adv);
        free(p);
    }
#endif
    CHECK(psdl_heap_reserve((size_t)64 << 20) == 0); /* once only */
    CHECK(psdl_heap_keep() == 0);                     /* the reserve's thresholds stay */
    set_ctx("heap after the reserve");
    enum { N = 3000 };
    static unsigned char *blocks[N];
    static size_t sizes[N];
    uint32_t seed = 12345;
    for (int i = 0; i < N; i++) {
        seed = seed * 1103515245u + 12345u;
        sizes[i] = 1 + (seed >> 8) % (i % 100 == 0 ? (1u << 20) : 4096u);
        blocks[i] = malloc(sizes[i]);
        if (!blocks[i]) break;
        memset(blocks[i], (int)(i & 0xff), sizes[i]);
    }
    int intact = 1;
    for (int i = 0; i < N; i++) {
        if (!blocks[i]) { intact = 0; break; }
        if (blocks[i][0] != (unsigned char)(i & 0xff) || blocks[i][sizes[i] - 1] != (unsigned char)(i & 0xff))
            intact = 0;
        if (i % 2) { free(blocks[i]); blocks[i] = NULL; }
    }
    CHECKF(intact, "every block allocated and intact");
    for (int i = 0; i < N; i++) free(blocks[i]);
}

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    test_refused();
#if defined(__linux__)
    test_limited();
    test_keep();
#endif
    test_reserve();
    printf("c: %lu passed, %lu failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
