// Fuzz target for the output writers (core/files.hpp write_file_atomic, core/staged_directory.hpp StagedDirectory):
// each input builds a small tree in a sandbox (regular files, directories, symlinks to files, directories, /dev/null,
// /dev/full, nowhere or themselves, names up to 300 bytes, a 64 KiB tmpfs filled to a chosen level so that a write
// runs out of space) and writes one output into it, as --json FILE or --report DIR would. The expected outcome is
// success, an InputError (an unusable path) or a SystemError (a failed write: a full disk); after it, whatever the
// outcome:
//   - no temporary file or staging directory is left (no name with ".tmp." in it);
//   - every symlink is still the same symlink, and /dev/null and /dev/full are still devices;
//   - a failed write changed no regular file and made none;
//   - a successful one wrote the content to the path (through its symlinks) and changed no other regular file.
// A broken rule traps (a crash with the input). Needs root for the tmpfs (without it, /dev/full stands for a full disk).
#include <fuzzer/FuzzedDataProvider.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/files.hpp"
#include "core/staged_directory.hpp"
#include "fuzz/fuzz_common.hpp"

namespace fs = std::filesystem;

namespace {

fs::path sandbox;  // on the disk the tests use
fs::path small;    // a 64 KiB tmpfs ("" where it cannot be mounted)

void cleanup() {
  std::error_code ec;
  if (!small.empty()) ::umount2(small.c_str(), MNT_DETACH);
  fs::remove_all(sandbox, ec);
  if (!small.empty()) fs::remove_all(small, ec);
}

void empty_directory(const fs::path& dir) {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) fs::remove_all(e.path(), ec);
}

// What a tree holds, without following symlinks: per path its kind, a symlink's target, a regular file's content.
struct Entry {
  char kind = '?';  // 'f' file, 'd' directory, 'l' symlink, 'o' other
  std::string text;
};
using Tree = std::map<std::string, Entry>;

std::string content_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void snapshot(const fs::path& dir, Tree& out) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    const fs::file_status st = fs::symlink_status(p, ec);
    Entry e;
    if (fs::is_symlink(st)) {
      e.kind = 'l';
      e.text = fs::read_symlink(p, ec).string();
    } else if (fs::is_directory(st)) {
      e.kind = 'd';
    } else if (fs::is_regular_file(st)) {
      e.kind = 'f';
      e.text = content_of(p);
    } else {
      e.kind = 'o';
    }
    out[p.string()] = e;
  }
}

bool is_device(const char* path) {
  struct stat st {};
  return ::lstat(path, &st) == 0 && S_ISCHR(st.st_mode);
}

std::string case_text;  // what the current input did, printed with a broken rule

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz_outputs: broken rule: %s\n%s", what, case_text.c_str());
    __builtin_trap();
  }
}

std::string describe(const Tree& tree) {
  std::string out;
  for (const auto& [p, e] : tree)
    out += "  " + p.substr(sandbox.string().size()) + " " + e.kind + (e.kind == 'l' ? " -> " + e.text : e.kind == 'f' ? " (" + std::to_string(e.text.size()) + " bytes)" : "") + "\n";
  return out;
}

std::string name_of(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange(0, 7)) {
    case 0: return std::string(in.ConsumeIntegralInRange<size_t>(200, 300), 'n');  // near and past NAME_MAX
    case 1: return "..";
    case 2: return ".";
    case 3: return "report.json";  // the names a report directory's files have
    case 4: return "report.txt";
    default: return std::string(1, static_cast<char>('a' + in.ConsumeIntegralInRange(0, 5)));
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char pattern[] = "/tmp/scaletwin-fuzz-outputs.XXXXXX";
  if (::mkdtemp(pattern) == nullptr) std::abort();
  sandbox = pattern;
  small = sandbox.string() + "-small";
  fs::create_directory(small);
  if (::mount("tmpfs", small.c_str(), "tmpfs", 0, "size=64k") != 0) {
    std::fprintf(stderr, "fuzz_outputs: no 64 KiB tmpfs (not root?): /dev/full stands for a full disk\n");
    fs::remove(small);
    small.clear();
  }
  std::atexit(cleanup);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace scaletwin;
  empty_directory(sandbox);
  if (!small.empty()) empty_directory(small);
  FuzzedDataProvider in(data, size);
  std::vector<fs::path> dirs = {sandbox};
  if (!small.empty()) dirs.push_back(small);
  std::vector<fs::path> made;
  std::error_code ec;
  const int steps = in.ConsumeIntegralInRange(0, 8);
  for (int i = 0; i < steps; ++i) {
    const fs::path base = dirs[in.ConsumeIntegralInRange<size_t>(0, dirs.size() - 1)];
    const fs::path p = base / name_of(in);
    switch (in.ConsumeIntegralInRange(0, 4)) {
      case 0: {
        std::ofstream(p, std::ios::binary) << in.ConsumeRandomLengthString(4096);
        break;
      }
      case 1:
        if (fs::create_directory(p, ec)) dirs.push_back(p);
        break;
      case 2: {
        static const char* fixed[] = {"/dev/null", "/dev/full", "missing/x", "..", "."};
        fs::path to;
        const int k = in.ConsumeIntegralInRange(0, 6);
        if (k < 5) to = fixed[k];
        else if (k == 5 && !made.empty()) to = made[in.ConsumeIntegralInRange<size_t>(0, made.size() - 1)];
        else to = p.filename();  // itself: a loop
        fs::create_symlink(to, p, ec);
        break;
      }
      case 3:  // fill the small file system, leaving little or no room
        if (!small.empty())
          std::ofstream(small / ("fill" + std::to_string(i)), std::ios::binary)
              << std::string(in.ConsumeIntegralInRange<size_t>(0, 70000), 'f');
        break;
      default:
        fs::permissions(base, fs::perms::owner_read | fs::perms::owner_exec, ec);  // root writes anyway
        break;
    }
    made.push_back(p);
  }
  // The output path: an entry made above (or a fresh name in a directory), perhaps with a trailing part.
  fs::path out = made.empty() || in.ConsumeBool() ? dirs[in.ConsumeIntegralInRange<size_t>(0, dirs.size() - 1)] / name_of(in)
                                                  : made[in.ConsumeIntegralInRange<size_t>(0, made.size() - 1)];
  std::string path = out.string();
  switch (in.ConsumeIntegralInRange(0, 3)) {
    case 0: path += "/"; break;
    case 1: path += "/" + name_of(in); break;
    default: break;
  }
  const bool directory = in.ConsumeBool();
  const std::string content = in.ConsumeRandomLengthString(100000);
  const std::vector<std::string> names = {"report.json", "report.txt"};

  Tree before;
  snapshot(sandbox, before);
  if (!small.empty()) snapshot(small, before);
  bool ok = true;
  try {
    if (directory) {
      StagedDirectory dir(path, "--report");
      for (const std::string& n : names) dir.write(n, content);
      if (in.ConsumeBool()) dir.publish();  // else: a command that fails after its writes
      else ok = false;
    } else {
      write_file_atomic(path, content);
    }
  } catch (const InputError& e) {
    check(*e.what() != '\0', "an error says something");
    ok = false;
  } catch (const SystemError& e) {
    check(*e.what() != '\0', "an error says something");
    ok = false;
  }
  fs::permissions(sandbox, fs::perms::all, ec);
  Tree after;
  snapshot(sandbox, after);
  if (!small.empty()) snapshot(small, after);
  case_text = std::string(directory ? "StagedDirectory(\"" : "write_file_atomic(\"") + path + "\") " +
              (ok ? "succeeded" : "failed") + "\nbefore:\n" + describe(before) + "after:\n" + describe(after);

  check(is_device("/dev/null") && is_device("/dev/full"), "/dev/null and /dev/full stay devices");
  for (const auto& [p, e] : after) check(p.find(".tmp.") == std::string::npos, "no temporary file or staging directory left");
  for (const auto& [p, e] : before)
    if (e.kind == 'l') {
      const auto it = after.find(p);
      check(it != after.end() && it->second.kind == 'l' && it->second.text == e.text, "a symlink stays the same symlink");
    }
  // The files the output may have changed: the path's target (through its symlinks), or DIR's report files.
  std::vector<std::string> written;
  if (ok && directory) {
    const fs::path dir = fs::canonical(fs::path(path).lexically_normal(), ec);
    check(!ec, "a published directory exists");
    for (const std::string& n : names) {
      struct stat st {};
      if (::stat((dir / n).c_str(), &st) == 0 && S_ISREG(st.st_mode))  // not through a symlink to /dev/full
        check(content_of(dir / n) == content, "a published file holds what was written");
      written.push_back(fs::weakly_canonical(dir / n, ec).string());
    }
  } else if (ok) {
    const fs::path target = fs::weakly_canonical(path, ec);
    struct stat st {};
    if (::stat(target.c_str(), &st) == 0 && S_ISREG(st.st_mode))
      check(content_of(target) == content, "a written file holds what was written");
    written.push_back(target.string());
  }
  for (const auto& [p, e] : before) {
    if (e.kind != 'f') continue;
    const std::string real = fs::weakly_canonical(p, ec).string();
    if (std::find(written.begin(), written.end(), real) != written.end()) continue;
    const auto it = after.find(p);
    check(it != after.end() && it->second.kind == 'f' && it->second.text == e.text, "no other file is changed");
  }
  if (!ok)
    for (const auto& [p, e] : after)
      check(e.kind != 'f' || before.count(p) != 0, "a failed output makes no file");
  return 0;
}
