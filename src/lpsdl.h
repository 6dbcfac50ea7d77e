/* lpsdl.h -- shared declarations of the binding files (src/lpsdl*.c), the only files that
 * include lua.h. lpsdl.c creates the module table `psdl.core`; each further binding file
 * registers its functions into that table (on top of the stack) from its opener, which
 * luaopen_psdl_core calls. */
#ifndef LPSDL_H
#define LPSDL_H

#include "lauxlib.h"
#include "lua.h"

/* lpsdl_terrain.c: NHTG, DBPF, QFS and heightmap functions (psdl_nhtg.h). */
void lpsdl_open_terrain(lua_State *L);

/* lpsdl_render.c: the map canvas (psdl_raster.h) used by psdl.render. */
void lpsdl_open_render(lua_State *L);

/* lpsdl_geom.c: geometry kernels and deduplicating pools (psdl_geom.h). */
void lpsdl_open_geom(lua_State *L);

/* lpsdl_package.c: visibility caster and zip container of `psdl package`. */
void lpsdl_open_package(lua_State *L);

/* lpsdl_companion.c: .bai, .cpvs, .inst, .pathset, PKG3 and .tex codecs (psdl_companion.h). */
void lpsdl_open_companion(lua_State *L);

/* lpsdl.c: a file float as a Lua number and back, bit for bit (NaN payloads kept); *ok = 0
 * when a finite number is beyond the float range. */
lua_Number lpsdl_from_float(float f);
float lpsdl_to_float(lua_Number n, int *ok);

/* lpsdl_sandbox.c: the write switch and memory guard of psdl.sandbox. */
void lpsdl_open_sandbox(lua_State *L);
/* Non-zero while core.deny_writes(true) is in force: core.write_file must refuse. */
int lpsdl_writes_denied(void);
/* Non-zero once the memory limit of core.memory_limit was hit (until it is set again):
 * core.write_file must refuse, so a run stopped for memory writes nothing. */
int lpsdl_memory_exceeded(lua_State *L);

#endif
