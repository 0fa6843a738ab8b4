// The BLAS under LibTorch's linear algebra, as this process loaded it.
//
// Debian's LibTorch links libblas.so.3, which the alternatives system points
// at whichever BLAS is installed: the netlib reference (libblas3), OpenBLAS
// (libopenblas0-pthread, -openmp) or BLIS (libblis4-*). The one picked
// changes speed by an order of magnitude (docs/performance.md) and the last
// bits of every result, so every result records it (blas_info, in the
// provenance of summary.json). No LibTorch here.
//
// Threads: gossipsim runs its kernels on its own pool of workers, each
// with one intra-op thread; a BLAS that starts threads of its own per call
// (OpenBLAS's pthread build uses every core by default) would contend with
// them. use_one_blas_thread() sets the BLAS to one thread, through the
// library's own call, since the environment (OPENBLAS_NUM_THREADS) is read
// when the library loads, before main.
#pragma once

#include <string>

namespace gossipsim {

struct BlasInfo {
  std::string name;     // "openblas", "blis", "reference" (netlib), "mkl", or "unknown"
  std::string library;  // the file loaded, symbolic links resolved
  std::string version;  // e.g. "0.3.21", "3.11.0"; empty when the library does not say
  std::string core;     // OpenBLAS's kernel set (its core type, e.g. "Haswell"); empty for others
  std::string config;   // the library's own description, where it has one
  int threads = 1;      // threads the library uses per call now
};

BlasInfo blas_info();

// Sets the BLAS to one thread per call (OpenBLAS, BLIS); idempotent.
void use_one_blas_thread();

// The version of an installed Debian package ("" when it is not), from
// dpkg's own status file.
std::string debian_package_version(const std::string& package);

}  // namespace gossipsim
