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

#endif
