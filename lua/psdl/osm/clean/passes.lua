--- The table of the clean-up's passes and constants, filled in by the stage files
-- (`psdl.osm.clean.merge`, `.roundabouts`, `.dual`, ...) and returned as `psdl.osm.clean`.
-- @module psdl.osm.clean.passes

return {}
