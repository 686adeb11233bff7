// Fuzz target for endless and oversized inputs (issue 54, F1): each input picks what an input path names — a regular
// file just under, at or over the reader's cap (a sparse file for the 64 MiB cap itself), one that grows while it is
// read, a FIFO with a writer that never stops, /dev/zero, /dev/urandom, a directory, a /proc file whose size says 0,
// a symlink to any of them — and reads it with read_input_file (every reader's way in) or load_json_file. The expected
// outcome: the whole content of a regular file within the cap, else an InputError naming the path, at once (a
// non-regular file is never read) and in bounded memory (libFuzzer's -rss_limit_mb); a hang is a finding
// (-timeout). The cap is the reader's (kMaxInputFileBytes) or a small one the input picks.
#include <fcntl.h>
#include <fuzzer/FuzzedDataProvider.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "core/files.hpp"
#include "core/json_reader.hpp"
#include "fuzz/fuzz_common.hpp"

namespace fs = std::filesystem;

namespace {

fs::path sandbox;

void cleanup() {
  std::error_code ec;
  fs::remove_all(sandbox, ec);
}

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz_streams: broken rule: %s\n", what);
    __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char pattern[] = "/tmp/scaletwin-fuzz-streams.XXXXXX";
  if (::mkdtemp(pattern) == nullptr) std::abort();
  sandbox = pattern;
  std::atexit(cleanup);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace scaletwin;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(sandbox, ec)) fs::remove_all(e.path(), ec);
  FuzzedDataProvider in(data, size);
  const int64_t cap = in.ConsumeBool() ? kMaxInputFileBytes : in.ConsumeIntegralInRange<int64_t>(0, 1 << 16);
  const std::string chunk = in.ConsumeRandomLengthString(256);
  const fs::path file = sandbox / "input";
  std::string expected;       // a regular file's content, where it is within the cap
  bool regular = false;       // the path names a regular file the reader may read
  bool known = false;         // `expected` is its whole content
  bool over = false;          // it is larger than the cap
  std::atomic<bool> stop{false};
  std::thread writer;
  std::string path = file.string();
  switch (in.ConsumeIntegralInRange(0, 8)) {
    case 0: {  // a regular file near the cap: just under, at or just over it
      const int64_t bytes = std::max<int64_t>(0, cap + in.ConsumeIntegralInRange<int64_t>(-2, 2));
      over = bytes > cap;
      if (bytes > (1 << 20)) {  // sparse: zeros cost nothing to make
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        check(fd >= 0 && ::ftruncate(fd, bytes) == 0, "the sandbox takes a sparse file");
        ::close(fd);
        if (bytes <= cap) expected.assign(static_cast<size_t>(bytes), '\0');
        known = true;
      } else {
        std::string content;
        while (static_cast<int64_t>(content.size()) < bytes) content += chunk.empty() ? std::string("x") : chunk;
        content.resize(static_cast<size_t>(bytes));
        std::ofstream(path, std::ios::binary) << content;
        if (bytes <= cap) expected = content;
        known = true;
      }
      regular = true;
      break;
    }
    case 1: {  // a file that grows while it is read, past any cap unless the reader stops
      std::ofstream(path, std::ios::binary) << chunk;
      writer = std::thread([&, path] {
        std::ofstream out(path, std::ios::binary | std::ios::app);
        const std::string block(1 << 16, 'g');
        for (int64_t written = 0; !stop && written < cap + (int64_t{2} << 20); written += block.size()) out << block << std::flush;
      });
      regular = true;
      break;
    }
    case 2: {  // a FIFO whose writer never stops
      check(::mkfifo(path.c_str(), 0644) == 0, "the sandbox takes a FIFO");
      writer = std::thread([&, path] {
        const int fd = ::open(path.c_str(), O_RDWR);  // RDWR: opening does not wait for a reader
        if (fd < 0) return;
        ::fcntl(fd, F_SETFL, O_NONBLOCK);
        const std::string block(4096, 'f');
        while (!stop) {
          if (::write(fd, block.data(), block.size()) < 0) ::usleep(1000);
        }
        ::close(fd);
      });
      break;
    }
    case 3: path = "/dev/zero"; break;
    case 4: path = "/dev/urandom"; break;
    case 5: path = sandbox.string(); break;
    case 6:  // st_size 0, a few hundred bytes of content
      path = "/proc/self/status";
      regular = true;
      break;
    case 7: {  // a symlink to a sparse file far over the cap
      const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      check(fd >= 0 && ::ftruncate(fd, kMaxInputFileBytes + in.ConsumeIntegralInRange<int64_t>(1, int64_t{1} << 40)) == 0,
            "the sandbox takes a sparse file");
      ::close(fd);
      fs::create_symlink(file, sandbox / "link", ec);
      over = true;
      path = (sandbox / "link").string();
      regular = true;
      break;
    }
    default: {  // a symlink to a device
      fs::create_symlink(in.ConsumeBool() ? "/dev/zero" : "/dev/urandom", file, ec);
      break;
    }
  }
  const bool as_json = in.ConsumeBool() && cap == kMaxInputFileBytes;  // load_json_file has the reader's cap
  std::string got;
  bool refused = false;
  try {
    if (as_json) (void)load_json_file(path);
    else got = read_input_file(path, "input file", cap);
  } catch (const InputError& e) {
    refused = true;
    check(std::string(e.what()).find(path) != std::string::npos, "the refusal names the path");
  }
  stop = true;
  if (writer.joinable()) writer.join();
  check(regular || refused, "a device, FIFO or directory is refused");
  if (!as_json && over) check(refused, "a file over the cap is refused");
  if (!as_json && known && !over) check(got == expected, "a regular file within the cap is read whole");
  if (!refused) check(static_cast<int64_t>(got.size()) <= cap, "nothing over the cap is returned");
  return 0;
}
