#ifndef COUNTERSIGN_MALLOC_STATISTICS_H
#define COUNTERSIGN_MALLOC_STATISTICS_H
// What the C allocator holds, for /metrics: it tells a leak (bytes in use keep growing) apart from
// an allocator keeping freed memory (free bytes grow, e.g. when a new thread gets its own arena),
// which RSS alone cannot. glibc's mallinfo2(); elsewhere every field is 0 and `available` is 0.

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int available;            // 1 when the figures below come from the allocator
    size_t arena_bytes;       // obtained from the system through brk/mmap'd arenas (not large mmaps)
    size_t in_use_bytes;      // handed out and not yet freed, in those arenas
    size_t free_bytes;        // freed but kept by the allocator in those arenas
    size_t mmapped_bytes;     // large blocks served by their own mmap (returned on free)
    size_t releasable_bytes;  // free space at the top of the main heap that malloc_trim could return
} cs_malloc_statistics;

/// Takes each arena's lock briefly; cheap enough for a scrape, not for a hot path.
cs_malloc_statistics cs_malloc_statistics_now(void);

#ifdef __cplusplus
}
#endif

#endif
