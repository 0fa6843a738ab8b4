// libFuzzer target: see fuzz_entries.h and scripts/fuzz.
#include "tests/fuzz/fuzz_entries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gossipsim::fuzz::sweep_entry(data, size);
  return 0;
}
