// An output directory that appears whole or not at all (see staged_directory.hpp).
#include "core/staged_directory.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

#include "core/error.hpp"
#include "core/files.hpp"

namespace scaletwin {

namespace fs = std::filesystem;

namespace {

InputError unusable(const std::string& option, const std::string& dir, const std::string& why) {
  return InputError("", option, fmt::format("a directory to write into (\"{}\": {})", dir, why));
}

// "out/" and "out" name the same directory; the staging name is derived from its last component. Nothing else is
// normalised: "link/.." is the parent of where the symlink points (or an error), not the directory holding the link.
fs::path without_trailing_separator(const std::string& dir) {
  std::string d = dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  return fs::path(d);
}

}  // namespace

StagedDirectory::StagedDirectory(const std::string& dir, std::string option) : option_(std::move(option)) {
  if (dir.empty()) throw unusable(option_, dir, "the name is empty");
  const fs::path given = without_trailing_separator(dir);
  std::error_code ec;
  const fs::file_status status = fs::status(given, ec);  // a symlink to a directory is that directory
  if (fs::exists(status) && !fs::is_directory(status)) throw unusable(option_, dir, "it exists and is not a directory");
  existed_ = fs::is_directory(status);
  if (existed_) {
    dir_ = fs::canonical(given, ec);
    if (ec) dir_ = given;
    staging_ = dir_ / fmt::format(".staged.tmp.{}", getpid());
  } else {
    dir_ = given;
    const fs::path parent = given.has_parent_path() ? given.parent_path() : fs::path(".");
    fs::create_directories(parent, ec);
    if (ec) throw unusable(option_, dir, fmt::format("cannot create its parent {}: {}", parent.string(), ec.message()));
    staging_ = parent / fmt::format(".{}.tmp.{}", given.filename().string().substr(0, 200), getpid());
  }
  // Checked now (a directory that cannot be written fails before the work), made again at the first write: a signal
  // during the work leaves nothing behind.
  if (::mkdir(staging_.c_str(), 0777) != 0)
    throw unusable(option_, dir, fmt::format("cannot create a directory in {}: {}",
                                             existed_ ? dir_.string() : staging_.parent_path().string(),
                                             std::strerror(errno)));
  ::rmdir(staging_.c_str());
}

void StagedDirectory::stage() {
  if (staged_) return;
  hold_signals_for_outputs();
  if (::mkdir(staging_.c_str(), 0777) != 0)
    throw SystemError(fmt::format("{} {}: cannot create {}: {}", option_, dir_.string(), staging_.string(),
                                  std::strerror(errno)));
  staged_ = true;
}

StagedDirectory::~StagedDirectory() {
  if (published_ || !staged_) return;
  std::error_code ec;
  fs::remove_all(staging_, ec);  // only what this object created; DIR itself is untouched
}

void StagedDirectory::write(const std::string& name, const std::string& content) {
  stage();
  ST_ASSERT(!published_ && fs::path(name).filename() == name, "a plain file name, written before publish()");
  try {
    write_file_atomic((staging_ / name).string(), content);
  } catch (const SystemError& e) {
    throw SystemError(fmt::format("{} {}: writing {} failed ({})", option_, dir_.string(), name, e.what()));
  }
  names_.push_back(name);
}

void StagedDirectory::publish() {
  ST_ASSERT(!published_, "publish() once");
  stage();
  // A new directory appears whole with one rename (an empty directory made meanwhile is replaced as well).
  if (!existed_ && std::rename(staging_.c_str(), dir_.c_str()) == 0) {
    published_ = true;
    return;
  }
  // An existing directory (or one that appeared meanwhile): each file replaces its old version with one rename; one
  // that is a symlink is written through (its target gets the content and the link stays, as --json FILE does).
  // Everything that can fail comes first — a name taken by a directory, the writes through symlinks (to temporary
  // files beside their targets, or into a device) — so that a failure leaves every file as it was; then the renames.
  std::vector<PreparedOutput> through;
  std::vector<std::string> renamed;
  try {
    for (const std::string& name : names_) {
      const fs::path dest = dir_ / name;
      std::error_code ec;
      const fs::file_status status = fs::symlink_status(dest, ec);
      if (fs::is_symlink(status))
        through.push_back(prepare_output(dest.string(), read_input_file((staging_ / name).string(), "staged report file",
                                                                        std::numeric_limits<int64_t>::max())));
      else if (fs::is_directory(status))
        throw unusable(option_, dir_.string(), name + " in it is a directory");
      else
        renamed.push_back(name);
    }
  } catch (...) {
    for (const PreparedOutput& p : through) abandon_output(p);
    throw;
  }
  for (const PreparedOutput& p : through) commit_output(p);
  for (const std::string& name : renamed)
    if (std::rename((staging_ / name).c_str(), (dir_ / name).c_str()) != 0)
      throw SystemError(fmt::format("{} {}: cannot put {} in place: {}", option_, dir_.string(), name,
                                    std::strerror(errno)));
  std::error_code ec;
  for (const std::string& name : names_) fs::remove(staging_ / name, ec);  // those written through
  ::rmdir(staging_.c_str());
  published_ = true;
}

}  // namespace scaletwin
