#include "kernels/blas.h"

#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>

namespace gossipsim {

namespace {

// The object that provides sgemm_ to the process (the one LibTorch's
// matrix products call), symbolic links resolved. LAPACK (liblapack.so.3)
// may come from another package than the BLAS and export BLAS symbols too,
// so the library is found by the symbol, and asked about itself only.
std::string loaded_blas() {
  Dl_info info{};
  void* gemm = ::dlsym(RTLD_DEFAULT, "sgemm_");
  if (!gemm || !::dladdr(gemm, &info) || !info.dli_fname) return "";
  std::error_code ec;
  const auto real = std::filesystem::canonical(info.dli_fname, ec);
  return ec ? std::string(info.dli_fname) : real.string();
}

// A symbol of that library or of the libraries it loads (OpenBLAS's
// libblas.so.3 exports BLAS from libopenblas.so.0), never of another one
// that exports the same name.
template <class F>
F own_symbol(void* handle, const char* name) {
  return handle ? reinterpret_cast<F>(::dlsym(handle, name)) : nullptr;
}

}  // namespace

std::string debian_package_version(const std::string& package) {
  std::ifstream in("/var/lib/dpkg/status");
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Package: ", 0) == 0)
      inside = line.substr(9) == package;
    else if (inside && line.rfind("Version: ", 0) == 0)
      return line.substr(9);
  }
  return "";
}

BlasInfo blas_info() {
  BlasInfo b;
  b.library = loaded_blas();
  const std::string file = std::filesystem::path(b.library).filename().string();
  void* handle = b.library.empty() ? nullptr : ::dlopen(b.library.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (auto config = own_symbol<const char* (*)()>(handle, "openblas_get_config")) {
    b.name = "openblas";
    b.config = config();
    std::smatch m;
    if (std::regex_search(b.config, m, std::regex(R"(OpenBLAS (\d+(\.\d+)*))"))) b.version = m[1];
    if (auto core = own_symbol<const char* (*)()>(handle, "openblas_get_corename")) b.core = core();
    if (auto threads = own_symbol<int (*)()>(handle, "openblas_get_num_threads")) b.threads = threads();
  } else if (auto version = own_symbol<const char* (*)()>(handle, "bli_info_get_version_str")) {
    b.name = "blis";
    b.version = version();
    if (auto threads = own_symbol<long (*)()>(handle, "bli_thread_get_num_threads"))
      b.threads = static_cast<int>(threads());
    if (b.threads < 1) b.threads = 1;
  } else if (b.library.find("/blis") != std::string::npos) {
    // Debian's BLIS exports only the BLAS interface from libblas.so.3: its
    // version is its package's; it runs single-threaded unless BLIS_NUM_THREADS says otherwise.
    b.name = "blis";
    const std::string dir = std::filesystem::path(b.library).parent_path().filename().string();  // blis-pthread
    b.version = debian_package_version("libblis4" + dir.substr(std::min(dir.size(), std::string("blis").size())));
    const char* threads = std::getenv("BLIS_NUM_THREADS");
    b.threads = threads && std::atoi(threads) > 0 ? std::atoi(threads) : 1;
  } else if (file.find("mkl") != std::string::npos) {
    b.name = "mkl";
  } else if (b.library.find("/blas/libblas.so") != std::string::npos) {
    b.name = "reference";  // netlib's, single-threaded
    std::smatch m;
    if (std::regex_search(file, m, std::regex(R"(libblas\.so\.(\d+(\.\d+)*))"))) b.version = m[1];
  } else {
    b.name = b.library.empty() ? "none" : "unknown";
  }
  if (handle) ::dlclose(handle);
  return b;
}

void use_one_blas_thread() {
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string library = loaded_blas();
    void* handle = library.empty() ? nullptr : ::dlopen(library.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (auto set = own_symbol<void (*)(int)>(handle, "openblas_set_num_threads")) set(1);
    if (auto set = own_symbol<void (*)(long)>(handle, "bli_thread_set_num_threads")) set(1);
    if (handle) ::dlclose(handle);
  });
}

}  // namespace gossipsim
