// How freed tensor memory is kept, for the whole process.
#pragma once

namespace gossipsim {

// glibc's malloc returns blocks above its mmap threshold to the kernel when
// they are freed, and trims the top of its heaps. A training step allocates
// and frees megabytes of activations, so every step then faults them in
// again: a plain LibTorch loop ran at 61 node-iterations/s that way and at
// 111 with freed memory kept (cnn, batch 32, this machine). Keeping it costs
// no more than the peak the process reached anyway. Called by
// make_torch_factory; idempotent; does nothing on other C libraries.
void keep_freed_memory();

}  // namespace gossipsim
