/* bench_codec.c -- C core throughput: psdl_decode, psdl_encode and psdl_validate on one file.
 *
 *   psdl_bench [file.psdl] [min-seconds]
 *
 * Defaults: spec/fixtures/grid_n20.psdl (the London-scale fixture, 468,436 bytes) and 0.5 s
 * per measurement. Each operation runs in batches until at least min-seconds have passed; the
 * figure printed is the mean time per file. Design targets (docs/design.md, "Performance
 * targets"): decode and encode each >= 500 MB/s, i.e. under 1 ms for the 470 KB file.
 * MB = 10^6 bytes. PSDL_BENCH_CLOCK=cpu measures process CPU time instead of wall-clock
 * time. "validate" is psdl_validate (all rules), split into the format's rules
 * (PSDL_VALIDATE_NO_DRIVABLE) and psdl_check_drivable. Exit status: 0 when every call succeeded (targets missed only print
 * "MISSED"), 1 on a read or codec error. */
#define _POSIX_C_SOURCE 200809L
#include "psdl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TARGET_MBPS 500.0

/* Wall-clock time, or the process's CPU time when PSDL_BENCH_CLOCK=cpu (figures on a
 * machine shared with other jobs). */
static double now_s(void) {
    static int cpu = -1;
    if (cpu < 0) {
        const char *e = getenv("PSDL_BENCH_CLOCK");
        cpu = e && strcmp(e, "cpu") == 0;
    }
    struct timespec ts;
    clock_gettime(cpu ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static unsigned char *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 1u << 20;
            unsigned char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return NULL;
    }
    *size = n;
    return buf;
}

/* Keeps the optimiser from dropping work whose result is otherwise unused. */
static volatile size_t sink;

typedef struct bench_ctx {
    const unsigned char *data;
    size_t size;
    psdl_doc *doc;
    unsigned char *out;
    size_t cap;
    int failed;
} bench_ctx;

static void op_decode(bench_ctx *c) {
    psdl_doc *d = NULL;
    psdl_error err;
    if (psdl_decode(NULL, c->data, c->size, &d, &err) != PSDL_OK) {
        fprintf(stderr, "%s\n", err.message);
        c->failed = 1;
        return;
    }
    sink += d->nrooms;
    psdl_doc_free(d);
}

static void op_encode(bench_ctx *c) {
    size_t written = 0;
    psdl_error err;
    if (psdl_encode(c->doc, c->out, c->cap, &written, &err) != PSDL_OK) {
        fprintf(stderr, "%s\n", err.message);
        c->failed = 1;
        return;
    }
    sink += written + c->out[written / 2];
}

static void op_encoded_size(bench_ctx *c) { sink += psdl_encoded_size(c->doc); }

static void op_validate(bench_ctx *c) {
    psdl_validate_result res;
    psdl_validate(c->doc, NULL, NULL, &res);
    sink += res.errors + res.warnings;
}

static void op_validate_format(bench_ctx *c) {
    psdl_validate_result res;
    psdl_validate_ex(c->doc, PSDL_VALIDATE_NO_DRIVABLE, NULL, NULL, &res);
    sink += res.errors + res.warnings;
}

static void op_drivable(bench_ctx *c) {
    psdl_validate_result res = {0, 0};
    psdl_check_drivable(c->doc, NULL, NULL, &res);
    sink += res.errors + res.warnings;
}

/* Mean seconds per call of op over at least min_s seconds (after one warm-up call). */
static double time_op(void (*op)(bench_ctx *), bench_ctx *c, double min_s, long *iters_out) {
    op(c);
    long iters = 0, batch = 1;
    double t0 = now_s(), t;
    for (;;) {
        for (long i = 0; i < batch; i++) op(c);
        iters += batch;
        t = now_s() - t0;
        if (t >= min_s || c->failed) break;
        if (batch < (1L << 20)) batch *= 2;
    }
    *iters_out = iters;
    return t / (double)iters;
}

static void row(const char *name, double per_call, size_t size, long iters, int has_target) {
    double mbps = (double)size / per_call / 1e6;
    printf("%-14s %9.3f ms/file %9.1f MB/s  %7ld iters", name, per_call * 1e3, mbps, iters);
    if (has_target)
        printf("   target >= %.0f MB/s (< %.2f ms): %s", TARGET_MBPS, (double)size / (TARGET_MBPS * 1e6) * 1e3,
               mbps >= TARGET_MBPS ? "ok" : "MISSED");
    printf("\n");
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "spec/fixtures/grid_n20.psdl";
    double min_s = argc > 2 ? atof(argv[2]) : 0.5;
    if (min_s <= 0) min_s = 0.5;
    size_t size = 0;
    unsigned char *data = read_file(path, &size);
    if (!data) {
        perror(path);
        return 1;
    }
    bench_ctx c = {data, size, NULL, NULL, 0, 0};
    psdl_error err;
    if (psdl_decode(NULL, data, size, &c.doc, &err) != PSDL_OK) {
        fprintf(stderr, "%s: %s\n", path, err.message);
        free(data);
        return 1;
    }
    c.cap = psdl_encoded_size(c.doc);
    c.out = malloc(c.cap ? c.cap : 1);
    if (!c.out) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    size_t written = 0;
    if (psdl_encode(c.doc, c.out, c.cap, &written, &err) != PSDL_OK || written != size ||
        memcmp(c.out, data, size) != 0) {
        fprintf(stderr, "%s: re-encode is not byte-exact\n", path);
        return 1;
    }
    psdl_validate_result vr;
    psdl_validate(c.doc, NULL, NULL, &vr);

    printf("psdl_bench %s: %s, %zu bytes, %lu rooms, %lu vertices, %lu roads (%zu errors, %zu warnings)\n",
           PSDL_VERSION, path, size, (unsigned long)c.doc->nrooms - 1, (unsigned long)c.doc->nvertices,
           (unsigned long)c.doc->nroads, vr.errors, vr.warnings);
    long it;
    double t;
    t = time_op(op_decode, &c, min_s, &it);
    row("decode", t, size, it, 1);
    double t_dec = t;
    t = time_op(op_encode, &c, min_s, &it);
    row("encode", t, size, it, 1);
    double t_enc = t;
    t = time_op(op_encoded_size, &c, min_s / 5, &it);
    row("encoded_size", t, size, it, 0);
    t = time_op(op_validate, &c, min_s, &it);
    row("validate", t, size, it, 0);
    t = time_op(op_validate_format, &c, min_s, &it);
    row("  format rules", t, size, it, 0);
    t = time_op(op_drivable, &c, min_s, &it);
    row("  drivability", t, size, it, 0);
    printf("decode+encode  %9.3f ms/file\n", (t_dec + t_enc) * 1e3);

    psdl_doc_free(c.doc);
    free(c.out);
    free(data);
    return c.failed ? 1 : 0;
}
