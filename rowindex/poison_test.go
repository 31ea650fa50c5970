package rowindex

// Every row index this package's tests open overwrites the page and range
// buffers it gives back to the pools: a value, cached page or dictionary
// that still pointed into one would read 0xA5 bytes, and the lookups would
// no longer equal the full scan (as a v2 page's levels, cached with the
// page, once did).
func init() { poisonFreedBuffers = true }
