/* lpsdl_sandbox.c -- what psdl.sandbox (lua/psdl/sandbox.lua) needs from C, in the
 * psdl.control table (lpsdl_open_control), never in psdl.core's: a sandboxed city script
 * must not reach these switches even if a library module handed it psdl.core by mistake.
 *
 *  - a switch that makes core.write_file refuse, so no library function can write a file
 *    while a sandboxed city script (or library code it called) runs;
 *  - a memory guard: the Lua state's allocator is wrapped so that an allocation past a
 *    limit fails (Lua raises "not enough memory"), and the bytes in use and their peak are
 *    counted (the `--verbose` peak memory of psdl osm, the --max-memory of psdl build);
 *  - a tick: a processor-time interval timer (setitimer ITIMER_PROF, every TICK_USEC) whose
 *    signal handler only sets a one-shot hook on the thread the script runs in (lua_sethook
 *    may be called from a signal handler; lua.c stops a script on Ctrl-C that way). The hook
 *    calls the sandbox's check (time limit, script line, poll) once and removes itself, so
 *    the script runs without the count hook that made the VM trap on every instruction.
 *
 * Only the Lua heap is counted: the C core's own buffers (a decode arena, a geometry pool)
 * are bounded by the core itself (psdl.h limits). */
#define _DEFAULT_SOURCE /* setitimer, sigaction */
#include "lpsdl.h"

#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#if defined(_POSIX_VERSION)
#include <signal.h>
#include <sys/time.h>
#define PSDL_HAVE_TICK 1
#endif
#endif

static int writes_denied = 0;

int lpsdl_writes_denied(void) { return writes_denied; }

/* control.deny_writes(flag) -> previous flag: while true, core.write_file fails with an io
 * error "writing files is not allowed here" (see psdl.sandbox). */
static int l_deny_writes(lua_State *L) {
    int previous = writes_denied;
    writes_denied = lua_toboolean(L, 1);
    lua_pushboolean(L, previous);
    return 1;
}

/* Bytes allowed past the limit after it was first hit (see guard_alloc). */
#define HEADROOM ((size_t)64 << 20)

typedef struct {
    lua_Alloc f;       /* the allocator wrapped */
    void *ud;
    size_t used;       /* bytes in use (Lua heap) */
    size_t peak;       /* largest `used` since installation or the last reset */
    size_t limit;      /* 0: none */
    int exceeded;      /* an allocation was refused since the last reset */
} mem_guard;

static void *guard_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    mem_guard *g = ud;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        g->used = g->used >= old ? g->used - old : 0;
        return g->f(g->ud, ptr, osize, 0);
    }
    if (g->limit && nsize > old && g->used - old + nsize > g->limit) {
        if (!g->exceeded) {
            /* the first refusal: Lua raises "not enough memory"; the code that catches it
             * (the sandbox, the command) gets HEADROOM more to report it and clean up, so
             * the error itself cannot leave the limit stuck on a full heap */
            g->exceeded = 1;
            g->limit += HEADROOM;
        }
        return NULL;
    }
    void *p = g->f(g->ud, ptr, osize, nsize);
    if (p) {
        g->used = g->used - old + nsize;
        if (g->used > g->peak) g->peak = g->used;
    }
    return p;
}

/* __gc of the sentinel below: put the wrapped allocator back. lua_close finalizes objects
 * in the reverse order of their creation, so this runs before the finalizer that unloads
 * this C library (package's CLIBS table, created earlier): no free goes through code that
 * is gone. */
static int guard_gc(lua_State *L) {
    void *ud;
    lua_Alloc f = lua_getallocf(L, &ud);
    if (f == guard_alloc) {
        mem_guard *g = ud;
        lua_setallocf(L, g->f, g->ud);
        free(g);
    }
    return 0;
}

static mem_guard *guard_of(lua_State *L, int install) {
    void *ud;
    lua_Alloc f = lua_getallocf(L, &ud);
    if (f == guard_alloc) return ud;
    if (!install) return NULL;
    /* allocated outside the Lua heap: it must outlive every block it counts, until
     * the sentinel's finalizer (guard_gc) removes it */
    mem_guard *g = malloc(sizeof *g);
    if (!g) return NULL;
    g->f = f;
    g->ud = ud;
    g->used = (size_t)lua_gc(L, LUA_GCCOUNT, 0) * 1024u + (size_t)lua_gc(L, LUA_GCCOUNTB, 0);
    g->peak = g->used;
    g->limit = 0;
    g->exceeded = 0;
    lua_setallocf(L, guard_alloc, g);
    /* a sentinel in the registry that removes the guard when the state closes */
    lua_newuserdatauv(L, 1, 0);
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, guard_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, "psdl.memory_guard");
    return g;
}

/* control.memory_limit(bytes | nil) -> true: wrap the allocator (once) and set the limit on
 * the Lua heap in bytes (nil or 0: none); resets the peak and the exceeded flag. A limit
 * below the bytes already in use is raised to them. */
static int l_memory_limit(lua_State *L) {
    lua_Integer limit = luaL_optinteger(L, 1, 0);
    luaL_argcheck(L, limit >= 0, 1, "a byte count >= 0 expected");
    mem_guard *g = guard_of(L, 1);
    if (!g) return luaL_error(L, "not enough memory for the memory guard");
    g->limit = (size_t)limit;
    if (g->limit && g->limit < g->used) g->limit = g->used;
    g->peak = g->used;
    g->exceeded = 0;
    lua_pushboolean(L, 1);
    return 1;
}

/* control.memory_stats() -> {used =, peak =, limit =, exceeded =} (bytes; nil before
 * control.memory_limit was first called). */
static int l_memory_stats(lua_State *L) {
    mem_guard *g = guard_of(L, 0);
    if (!g) return 0;
    size_t used = g->used, peak = g->peak, limit = g->limit;
    int exceeded = g->exceeded;
    lua_createtable(L, 0, 4);
    lua_pushinteger(L, (lua_Integer)used);
    lua_setfield(L, -2, "used");
    lua_pushinteger(L, (lua_Integer)peak);
    lua_setfield(L, -2, "peak");
    lua_pushinteger(L, (lua_Integer)limit);
    lua_setfield(L, -2, "limit");
    lua_pushboolean(L, exceeded);
    lua_setfield(L, -2, "exceeded");
    return 1;
}

int lpsdl_memory_exceeded(lua_State *L) {
    mem_guard *g = guard_of(L, 0);
    return g && g->exceeded;
}

/* control.memory_exceeded() -> boolean: whether the limit was hit since it was set (allocates
 * nothing, so it can be asked on a full heap). */
static int l_memory_exceeded(lua_State *L) {
    mem_guard *g = guard_of(L, 0);
    lua_pushboolean(L, g && g->exceeded);
    return 1;
}

/* Whether the chunk source `src` (`srclen` bytes) is a key of the table at index 1; pushes
 * the key's value (the path) when it is. */
static int chunk_path(lua_State *L, const char *src, size_t srclen) {
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        size_t klen;
        if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TSTRING) {
            const char *k = lua_tolstring(L, -2, &klen);
            if (klen == srclen && memcmp(k, src, klen) == 0) {
                lua_remove(L, -2); /* the key */
                return 1;
            }
        }
        lua_pop(L, 1);
    }
    return 0;
}

/* control.script_line(chunks, level [, thread]) -> "path:line" | nil: the innermost frame of
 * `thread` (default: the running one), from stack level `level` outwards (0: script_line
 * itself, 1: its caller), that runs a line of one of `chunks` (a table chunk source ->
 * path, as psdl.sandbox keeps for the script and its modules: `["@city.lua"] =
 * "city.lua"`), as `path .. ":" .. line`; nil when no such frame is on the stack. The
 * sandbox's limit hook asks this every few thousand instructions: the walk makes no Lua
 * value per frame (debug.getinfo made a table each, and it walked the whole stack of a
 * build that runs outside the script's lines). Raises for a `chunks` that is not a table,
 * a negative level or a third argument that is not a thread. */
static int l_script_line(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_Integer level = luaL_checkinteger(L, 2);
    luaL_argcheck(L, level >= 0 && level < INT_MAX, 2, "a stack level >= 0 expected");
    lua_State *co = L;
    if (!lua_isnoneornil(L, 3)) {
        co = lua_tothread(L, 3);
        luaL_argexpected(L, co != NULL, 3, "thread");
    }
    lua_settop(L, 1);
    lua_Debug ar;
    for (int lv = (int)level; lv < INT_MAX && lua_getstack(co, lv, &ar); lv++) {
        if (!lua_getinfo(co, "Sl", &ar)) break;
        if (ar.currentline <= 0 || !ar.source || ar.source[0] != '@') continue; /* C, or not a file */
        if (chunk_path(L, ar.source, ar.srclen)) {
            lua_pushfstring(L, ":%d", ar.currentline);
            lua_concat(L, 2);
            return 1;
        }
    }
    lua_pushnil(L);
    return 1;
}

/* ------------------------------------------------------------------ the tick */

#if PSDL_HAVE_TICK

#define TICK_USEC 10000                       /* processor time between two checks */
#define TICK_FN "psdl.sandbox.tick_fn"         /* registry: the check (a function) */
#define TICK_THREAD "psdl.sandbox.tick_thread" /* registry: the thread hooked on a tick */

static lua_State *volatile tick_target; /* the thread to hook (kept alive by TICK_THREAD) */
static volatile sig_atomic_t tick_on;   /* the timer runs and the check is set */
static struct sigaction tick_saved;     /* the SIGPROF action before the timer started */

/* The one-shot hook: back to no hook (the resting state while a script runs), then the
 * check, whose error (a stop) propagates from the hooked code as from any hook. */
static void tick_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    lua_sethook(L, NULL, 0, 0);
    if (!tick_on) return;
    if (lua_getfield(L, LUA_REGISTRYINDEX, TICK_FN) != LUA_TFUNCTION) {
        lua_pop(L, 1);
        return;
    }
    lua_call(L, 0, 0);
}

static void tick_signal(int sig) {
    (void)sig;
    lua_State *L = tick_target;
    if (tick_on && L) lua_sethook(L, tick_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

static int tick_arm(int on) {
    struct itimerval it;
    memset(&it, 0, sizeof it);
    if (on) {
        it.it_interval.tv_usec = TICK_USEC;
        it.it_value.tv_usec = TICK_USEC;
    }
    return setitimer(ITIMER_PROF, &it, NULL) == 0;
}

/* Sets the registry's value at key to the value at idx (nil clears it). */
static void reg_set(lua_State *L, const char *key, int idx) {
    lua_pushvalue(L, idx);
    lua_setfield(L, LUA_REGISTRYINDEX, key);
}

/* control.tick(fn | nil [, thread]) -> previous fn | nil, previous thread | nil
 * Start the tick with check fn, calling it from a one-shot hook on `thread` (default: the
 * running one) about every 10 ms of processor time; nil stops it (the timer disarmed and the
 * previous SIGPROF action back). A call while the tick runs swaps the check and thread
 * (nested sandboxes: give back what it returned to restore the outer one). Returns nothing
 * at all where there is no interval timer (the sandbox then uses a count hook). Raises when
 * the timer cannot be set. */
static int l_tick(lua_State *L) {
    int has_fn = !lua_isnoneornil(L, 1);
    if (has_fn) luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_State *th = L;
    if (!lua_isnoneornil(L, 2)) {
        th = lua_tothread(L, 2);
        luaL_argexpected(L, th != NULL, 2, "thread");
    }
    lua_settop(L, 2);
    if (!tick_on) {
        lua_pushnil(L);
        lua_pushnil(L);
    } else {
        lua_getfield(L, LUA_REGISTRYINDEX, TICK_FN);
        lua_getfield(L, LUA_REGISTRYINDEX, TICK_THREAD);
    }
    if (!has_fn) {
        if (tick_on) {
            tick_on = 0;
            tick_arm(0); /* a signal already generated is handled before this returns */
            sigaction(SIGPROF, &tick_saved, NULL);
        }
        tick_target = NULL;
        lua_pushnil(L);
        reg_set(L, TICK_FN, -1);
        reg_set(L, TICK_THREAD, -1);
        lua_pop(L, 1);
        return 2;
    }
    /* the target first: the old thread stays alive on the stack (returned), the new one is
     * an argument (or the running thread), so neither can be collected while pointed to */
    tick_target = th;
    if (lua_isnil(L, 2)) lua_pushthread(L);
    else lua_pushvalue(L, 2);
    reg_set(L, TICK_THREAD, -1);
    lua_pop(L, 1);
    reg_set(L, TICK_FN, 1);
    if (!tick_on) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = tick_signal;
        sa.sa_flags = SA_RESTART; /* file reads and socket calls of the script carry on */
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGPROF, &sa, &tick_saved) != 0) return luaL_error(L, "cannot set the SIGPROF action");
        tick_on = 1;
        if (!tick_arm(1)) {
            tick_on = 0;
            sigaction(SIGPROF, &tick_saved, NULL);
            return luaL_error(L, "cannot start the processor-time timer");
        }
    }
    return 2;
}

/* control.tick_thread(thread) -> previous thread | nil: hook `thread` on the next ticks (a
 * coroutine of the script while it is resumed); no-op without a running tick. Raises for
 * an argument that is not a thread. */
static int l_tick_thread(lua_State *L) {
    lua_State *th = lua_tothread(L, 1);
    luaL_argexpected(L, th != NULL, 1, "thread");
    lua_settop(L, 1);
    if (!tick_on) {
        lua_pushnil(L);
        return 1;
    }
    lua_getfield(L, LUA_REGISTRYINDEX, TICK_THREAD); /* (the old one, alive on the stack) */
    tick_target = th;
    reg_set(L, TICK_THREAD, 1); /* kept alive while it is the target */
    return 1;
}

#endif

/* control.default_interrupt() -> boolean: give SIGINT (Ctrl-C) back its default action,
 * ending the process at once with the status shells report as 130 (true when set). The
 * `psdl` command calls it: lua5.4 would otherwise turn Ctrl-C into an "interrupted!" error
 * raised inside whatever runs, which the city builder's repair loops and error wrappers then
 * report as a failed road or an internal error. Outputs are written atomically
 * (psdl_write_file), so nothing half-written stays. Not called by `require "psdl"`: a host
 * program keeps its own signal handling. */
static int l_default_interrupt(lua_State *L) {
    lua_pushboolean(L, signal(SIGINT, SIG_DFL) != SIG_ERR);
    return 1;
}

#if PSDL_HAVE_TICK
/* The wall-clock backstop (control.wall_limit): its message, written by the handler. */
static char wall_msg[512];
static size_t wall_len = 0;

static void wall_handler(int sig) {
    (void)sig;
    if (wall_len) {
        ssize_t r = write(2, wall_msg, wall_len); /* async-signal-safe, as _exit */
        (void)r;
    }
    _exit(2);
}
#endif

/* control.wall_limit(seconds[, message]) -> boolean: a wall-clock backstop for a run whose
 * processor-time limit cannot see it blocked (an open or read that waits for ever uses no
 * processor time): after `seconds` of real time (whole, rounded up; at most 10^6) the process
 * writes `message` (at most 511 bytes) to standard error and ends with exit status 2. Outputs
 * are written atomically, so nothing half-written stays. 0 (or less) disarms it. For the
 * `psdl` command only (a host keeps SIGALRM); false where the system has no alarm. */
static int l_wall_limit(lua_State *L) {
    lua_Number secs = luaL_checknumber(L, 1);
    size_t n = 0;
    const char *m = luaL_optlstring(L, 2, "", &n);
#if PSDL_HAVE_TICK
    if (!(secs > 0)) {
        alarm(0);
        signal(SIGALRM, SIG_DFL);
        lua_pushboolean(L, 1);
        return 1;
    }
    if (n > sizeof wall_msg - 1) n = sizeof wall_msg - 1;
    alarm(0);
    memcpy(wall_msg, m, n);
    wall_len = n;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = wall_handler;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGALRM, &sa, NULL) != 0) {
        lua_pushboolean(L, 0);
        return 1;
    }
    unsigned whole = secs >= 1e6 ? 1000000u : (unsigned)secs;
    if ((lua_Number)whole < secs) whole++;
    alarm(whole);
    lua_pushboolean(L, 1);
#else
    (void)secs;
    (void)m;
    lua_pushboolean(L, 0);
#endif
    return 1;
}

static const luaL_Reg funcs[] = {
    {"default_interrupt", l_default_interrupt},
    {"wall_limit", l_wall_limit},
    {"deny_writes", l_deny_writes},
    {"script_line", l_script_line},
    {"memory_exceeded", l_memory_exceeded},
    {"memory_limit", l_memory_limit},
    {"memory_stats", l_memory_stats},
#if PSDL_HAVE_TICK
    {"tick", l_tick},
    {"tick_thread", l_tick_thread},
#endif
    {NULL, NULL},
};

/* The psdl.control table: this file's functions and the heap's (lpsdl_heap.c), put in
 * package.loaded["psdl.control"] when psdl.core is opened (lua/psdl/control.lua documents
 * it and loads psdl.core first). The stack is left as it was. */
void lpsdl_open_control(lua_State *L) {
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_createtable(L, 0, 16);
    luaL_setfuncs(L, funcs, 0);
    lpsdl_open_heap(L);
    lua_pushliteral(L, "psdl.control");
    lua_setfield(L, -2, "_NAME");
    lua_setfield(L, -2, "psdl.control");
    lua_pop(L, 1);
}
