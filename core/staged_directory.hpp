// An output directory (--report DIR) that appears whole or not at all.
//
// Its files are written into a staging directory first: beside DIR when DIR does not exist yet (renamed into place
// by publish()), inside DIR when it does (each file renamed over its old version by publish()). Until publish(),
// DIR is untouched; a command that fails (a full disk, a bad input found late, an exception of any kind) leaves no
// staging directory and no file behind, since the destructor removes what was staged. An unusable DIR (a regular
// file, a missing permission, a read-only file system) is an InputError naming the option, at construction.
//
//   StagedDirectory out(a.report_dir, "--report");
//   out.write("report.json", json.dump(2) + "\n");
//   out.write("report.txt", table);
//   out.publish();
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace scaletwin {

class StagedDirectory {
 public:
  // `dir` as given on the command line; `option` names it in messages ("--report"). Missing parents are created.
  StagedDirectory(const std::string& dir, std::string option);
  ~StagedDirectory();
  StagedDirectory(const StagedDirectory&) = delete;
  StagedDirectory& operator=(const StagedDirectory&) = delete;

  // Stages the file `name` (a plain file name) with `content`; a failed write is a SystemError naming DIR and name.
  void write(const std::string& name, const std::string& content);
  // Puts the staged files in place. Called once, after the last write.
  void publish();

  const std::filesystem::path& path() const { return dir_; }

 private:
  void stage();  // makes the staging directory (at the first write) and holds signals from there on

  std::filesystem::path dir_;      // the directory the files end in
  std::filesystem::path staging_;  // where they are written until publish()
  std::string option_;
  bool existed_ = false;
  bool published_ = false;
  bool staged_ = false;
  std::vector<std::string> names_;
};

}  // namespace scaletwin
