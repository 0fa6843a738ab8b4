// What made a result, recorded in every summary.json ("provenance") so that
// a reader can tell a bug from another build, library or machine: the same
// scenario and seed give the same events and transfers anywhere, but the
// same curves only on the same LibTorch, BLAS (and its kernel set), thread
// counts and kind of CPU (docs/performance.md).
//
//   gossipsim   {version, commit, dirty}: the build (dirty: changes to
//               tracked files that no commit holds)
//   host        {cpu, cores, kernel}: the CPU model, the cores this process
//               may use, the Linux release
//   kernels     "torch" or "none"; with torch also libtorch (its version),
//               blas {name, version, core, threads, library}, intra_op_threads,
//               workers and fusion (filled in by kernels/, which alone knows
//               LibTorch)
#pragma once

#include <nlohmann/json.hpp>

namespace gossipsim {

// The build and the host.
nlohmann::json build_provenance();

// The keys two results must share for their curves to be comparable bit for
// bit: everything but the commit's dirty flag and the kernel release.
nlohmann::json comparable_provenance(const nlohmann::json& provenance);

}  // namespace gossipsim
