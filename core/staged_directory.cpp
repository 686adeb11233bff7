// An output directory that appears whole or not at all (see staged_directory.hpp).
#include "core/staged_directory.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/error.hpp"
#include "core/files.hpp"

namespace scaletwin {

namespace fs = std::filesystem;

namespace {

InputError unusable(const std::string& option, const std::string& dir, const std::string& why) {
  return InputError("", option, fmt::format("a directory to write into (\"{}\": {})", dir, why));
}

// "out/" and "out" name the same directory; the staging name is derived from its last component.
fs::path without_trailing_separator(const std::string& dir) {
  fs::path p = fs::path(dir).lexically_normal();
  if (!p.has_filename() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();
  return p;
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
  // An existing directory (or one that appeared meanwhile): each file replaces its old version with one rename.
  for (const std::string& name : names_)
    if (std::rename((staging_ / name).c_str(), (dir_ / name).c_str()) != 0)
      throw SystemError(fmt::format("{} {}: cannot put {} in place: {}", option_, dir_.string(), name,
                                    std::strerror(errno)));
  ::rmdir(staging_.c_str());
  published_ = true;
}

}  // namespace scaletwin
