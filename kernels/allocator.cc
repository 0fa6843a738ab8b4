#include "kernels/allocator.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace gossipsim {

void keep_freed_memory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // the largest glibc accepts; bigger blocks are still mapped
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

}  // namespace gossipsim
