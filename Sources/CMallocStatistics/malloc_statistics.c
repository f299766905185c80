#include "malloc_statistics.h"

// <malloc.h> first: it brings <features.h>, which defines __GLIBC__ (<stddef.h> alone does not, so
// testing __GLIBC__ before any libc header would always fail).
#if defined(__linux__)
#include <malloc.h>
#endif

cs_malloc_statistics cs_malloc_statistics_now(void) {
    cs_malloc_statistics statistics = {0};
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 info = mallinfo2();
    statistics.available = 1;
    statistics.arena_bytes = info.arena;
    statistics.in_use_bytes = info.uordblks;
    statistics.free_bytes = info.fordblks;
    statistics.mmapped_bytes = info.hblkhd;
    statistics.releasable_bytes = info.keepcost;
#endif
    return statistics;
}
