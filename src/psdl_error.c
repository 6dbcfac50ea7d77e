/* psdl_error.c -- status names and formatted error messages. */
#include "psdl_internal.h"

#include <stdio.h>

static const char *const status_names[] = {
    "ok", "truncated", "bad_magic", "bad_count", "bad_index", "bad_attribute",
    "trailing_bytes", "invalid", "nomem", "io", "bad_string",
};

/* one name per status: the table and the enum must not drift apart */
typedef char status_names_complete[(sizeof status_names / sizeof status_names[0] == PSDL_E_COUNT_) ? 1 : -1];

const char *psdl_status_name(psdl_status status) {
    if ((unsigned)status >= (unsigned)PSDL_E_COUNT_) return "unknown";
    return status_names[status];
}

/* (psdl_internal.h) */
int psdl_problem_begin(psdl_check_run *c, psdl_problem *p, psdl_severity sev, const char *rule, long room, long other,
                       long attr, long road) {
    if (sev == PSDL_SEV_ERROR)
        c->res->errors++;
    else
        c->res->warnings++;
    if (!c->fn || c->stop) return 0;
    *p = (psdl_problem){.severity = sev, .rule = rule, .room = room, .attribute = attr, .road = road, .other_room = other};
    return 1;
}

/* (psdl_internal.h) */
void psdl_problem_vsend(psdl_check_run *c, psdl_problem *p, const char *path, const char *fmt, va_list ap) {
    snprintf(p->path, sizeof p->path, "%s", path);
    vsnprintf(p->message, sizeof p->message, fmt, ap);
    if (c->fn(c->ud, p)) c->stop = 1;
}

psdl_status psdl_fail(psdl_error *err, psdl_status code, size_t offset, int has_offset,
                      long room, long attribute, const char *fmt, ...) {
    if (!err) return code;
    err->code = code;
    err->offset = offset;
    err->room = room;
    err->attribute = attribute;
    char detail[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    int n = snprintf(err->message, sizeof err->message, "psdl: %s: %s", psdl_status_name(code), detail);
    size_t len = n < 0 ? 0 : (size_t)n;
    if (has_offset && len < sizeof err->message)
        len += (size_t)snprintf(err->message + len, sizeof err->message - len, " at offset 0x%zx", offset);
    if (room >= 0 && len < sizeof err->message) {
        if (attribute >= 0)
            snprintf(err->message + len, sizeof err->message - len, " (room %ld, attribute %ld)", room,
                     attribute + 1);
        else
            snprintf(err->message + len, sizeof err->message - len, " (room %ld)", room);
    }
    return code;
}
