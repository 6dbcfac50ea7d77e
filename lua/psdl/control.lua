--- The process's switches, kept out of `psdl.core` so that a sandboxed city script cannot
-- reach them (docs/city.md "Sandbox"): `require "psdl.control"` from host code (the `psdl`
-- command, `psdl.sandbox`, `psdl osm`'s `--max-memory`, `psdl.builder`); the sandbox's
-- `require` never gives it, nor `psdl.core`.
--
-- The table is made by the C module when `psdl.core` is opened (src/lpsdl_sandbox.c,
-- `lpsdl_open_control`) and holds:
--
-- * the sandbox's machinery: `deny_writes(flag)` (the write switch: while true,
--   `core.write_file` refuses), `memory_limit(bytes)`, `memory_stats()`, `memory_exceeded()`
--   (the guard around Lua's allocator), `tick(fn, thread)`, `tick_thread(thread)` (the
--   processor-time timer of `--timeout`), `script_line(chunks, level, thread)`;
-- * the heap: `heap_reserve(mb)`, `heap_keep()`, `heap_allocator()`,
--   `heap_allocator_counts()` (docs/heap.md);
-- * `default_interrupt()`: Ctrl-C ends the process (the `psdl` command);
-- * `wall_limit(seconds, message)`: a wall-clock backstop (the `psdl` command's `--timeout`).
--
-- Each function is documented in the C file that defines it (src/lpsdl_sandbox.c,
-- src/lpsdl_heap.c).
-- @module psdl.control

require "psdl.core" -- opening psdl.core puts the table in package.loaded["psdl.control"]
return assert(package.loaded["psdl.control"], "psdl.core did not make psdl.control (an older build?)")
