// Atomic result folders. Results are written into a temporary sibling folder
// (<final>.tmp-<pid>) and renamed into place by commit(); a run that fails or
// is interrupted leaves no folder under the final name that looks complete.
// An existing final folder is replaced only at commit().
#pragma once

#include <filesystem>
#include <string>

namespace gossipsim {

class OutputDir {
 public:
  explicit OutputDir(std::filesystem::path final_path);
  ~OutputDir();  // removes the temporary folder unless committed
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;

  const std::filesystem::path& staging() const { return staging_; }
  std::filesystem::path file(const std::string& name) const { return staging_ / name; }
  void commit();

 private:
  std::filesystem::path final_, staging_;
  bool committed_ = false;
};

// Writes `text` to `path` through a temporary file and a rename.
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

}  // namespace gossipsim
