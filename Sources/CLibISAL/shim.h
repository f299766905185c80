#include <stddef.h>
#include <isa-l/igzip_lib.h>

/* The level-1 buffer size ISA-L recommends (a macro expression Swift does not import). */
static inline size_t countersign_isal_level1_buffer_size(void) { return ISAL_DEF_LVL1_DEFAULT; }
