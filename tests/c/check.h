/* check.h -- the small check framework shared by the C test programs (tests/c/test_*.c).
 * Every CHECK counts; a program ends with `c: N passed, N failed` (printed by its main from
 * g_passed and g_failed), the line scripts/test sums. Include once per test program. */
#ifndef PSDL_TEST_CHECK_H
#define PSDL_TEST_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define CHECK_UNUSED __attribute__((unused))
#else
#define CHECK_UNUSED
#endif

static unsigned long g_passed, g_failed;
static char g_ctx[160] = "";
static unsigned long g_printed;

CHECK_UNUSED static void set_ctx(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static void set_ctx(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_ctx, sizeof g_ctx, fmt, ap);
    va_end(ap);
}

static int check_impl(int ok, const char *file, int line, const char *expr, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
static int check_impl(int ok, const char *file, int line, const char *expr, const char *fmt, ...) {
    if (ok) {
        g_passed++;
        return 1;
    }
    g_failed++;
    if (g_printed++ < 300) {
        const char *base = strrchr(file, '/');
        printf("FAIL %s:%d [%s] %s", base ? base + 1 : file, line, g_ctx, expr);
        if (fmt && *fmt) {
            va_list ap;
            va_start(ap, fmt);
            printf(" -- ");
            vprintf(fmt, ap);
            va_end(ap);
        }
        printf("\n");
    } else if (g_printed == 301) {
        printf("(further failures not printed)\n");
    }
    return 0;
}

#define CHECK(c) check_impl((c) ? 1 : 0, __FILE__, __LINE__, #c, "%s", "")
#define CHECKF(c, ...) check_impl((c) ? 1 : 0, __FILE__, __LINE__, #c, __VA_ARGS__)
CHECK_UNUSED static int check_eq_impl(long long a, long long b, const char *file, int line, const char *expr) {
    return check_impl(a == b, file, line, expr, "%lld != %lld (0x%llx, 0x%llx)", a, b, (unsigned long long)a,
                      (unsigned long long)b);
}
CHECK_UNUSED static int check_str_impl(const char *a, const char *b, const char *file, int line, const char *expr) {
    return check_impl(a && b && strcmp(a, b) == 0, file, line, expr, "\"%s\" != \"%s\"", a ? a : "(null)",
                      b ? b : "(null)");
}
/* value checks are expressions: they return 1 when the check passed */
#define CHECK_EQ(a, b) check_eq_impl((long long)(a), (long long)(b), __FILE__, __LINE__, #a " == " #b)

/* The whole file at path in a malloc'd buffer (*size bytes), or NULL. */
CHECK_UNUSED static unsigned char *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return NULL;
    }
    long n = ftell(f);
    rewind(f);
    unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
    if (!buf || (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)) {
        free(buf);
        fclose(f);
        return NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return buf;
}

#endif
