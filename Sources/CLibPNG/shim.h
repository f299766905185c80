#ifndef COUNTERSIGN_CLIBPNG_SHIM_H
#define COUNTERSIGN_CLIBPNG_SHIM_H
#include <png.h>
#endif
