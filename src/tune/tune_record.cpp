#include "tune/tune_record.h"

#include "backend/backend.h"
#include "io/sha256.h"
#include "cache/cache_bound.h"
#include "cache/persistent_cache.h"

#include <lanejit/error.h>
#include <lanejit/text.h>

#include <atomic>
#include <bit>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <unistd.h>

namespace lanejit::tuning {
namespace {

namespace fs = std::filesystem;

constexpr const char *kMagic = "lanejit-tune-record 1";

// R's class: the power of two at or above it (a record measured at 4096
// rows serves 2049-4096).
uint64_t rowClass(int64_t rows) {
  return std::bit_ceil(static_cast<uint64_t>(std::max<int64_t>(rows, 1)));
}

bool number(const std::string &text, double &out) {
  char *end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return !text.empty() && *end == '\0';
}

bool integer(const std::string &text, int64_t &out) {
  char *end = nullptr;
  out = std::strtoll(text.c_str(), &end, 10);
  return !text.empty() && *end == '\0';
}

} // namespace

std::string tuneRecordPath(const Program &program, const CompileOptions &options, TuneShape shape) {
  std::string dir = persistent::directory();
  if (dir.empty())
    return {};
  std::string key = std::string(kMagic) + "\n" + print(program) + "\n" + options.key() +
                    "\ncols=" + std::to_string(shape.cols) +
                    "\nrow_class=" + std::to_string(rowClass(shape.rows));
  return (fs::path(dir) / (io::sha256Hex(key.data(), key.size()) + ".tune")).string();
}

std::string formatTuneRecord(const TuneRecordFile &r) {
  std::ostringstream out;
  out.precision(17);
  out << kMagic << "\nprogram=" << r.program << "\nbuild=" << r.build << "\ncpu=" << r.cpu
      << "\nfeatures=" << r.features << "\nshape=" << r.shape.str() << "\nthreads=" << r.threads
      << "\nlanes=" << r.choice.lanes
      << "\nmapping=" << (r.choice.rows_across_lanes ? "rows-across-lanes" : "packet-local")
      << "\nspecialize_columns=" << (r.choice.specialize_columns ? 1 : 0)
      << "\nmedian_ns=" << r.median_ns << "\nuntuned_ns=" << r.untuned_ns << "\n";
  return out.str();
}

std::optional<TuneRecordFile> parseTuneRecord(const std::string &text) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kMagic)
    return std::nullopt;
  std::map<std::string, std::string> fields;
  while (std::getline(in, line)) {
    size_t eq = line.find('=');
    if (eq == std::string::npos || !fields.emplace(line.substr(0, eq), line.substr(eq + 1)).second)
      return std::nullopt;
  }
  for (const char *name : {"program", "build", "cpu", "features", "shape", "threads", "lanes",
                           "mapping", "specialize_columns", "median_ns", "untuned_ns"})
    if (!fields.count(name))
      return std::nullopt;
  TuneRecordFile r;
  r.program = fields["program"];
  r.build = fields["build"];
  r.cpu = fields["cpu"];
  r.features = fields["features"];
  int64_t threads = 0, lanes = 0;
  std::string mapping = fields["mapping"], spec = fields["specialize_columns"];
  if (!integer(fields["threads"], threads) || !integer(fields["lanes"], lanes) ||
      !number(fields["median_ns"], r.median_ns) || !number(fields["untuned_ns"], r.untuned_ns) ||
      (lanes != 4 && lanes != 8 && lanes != 16) || threads < 1 ||
      (mapping != "rows-across-lanes" && mapping != "packet-local") || (spec != "0" && spec != "1"))
    return std::nullopt;
  try {
    r.shape = TuneShape::parse(fields["shape"]);
  } catch (const Error &) {
    return std::nullopt;
  }
  r.threads = static_cast<int>(threads);
  r.choice = {static_cast<int>(lanes), mapping == "rows-across-lanes", spec == "1"};
  return r;
}

bool writeTuneRecord(const std::string &path, const TuneRecordFile &record) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec)
    return false;
  // A name no other process or thread uses, renamed over the record: a
  // reader sees the old file or the new one, never a part.
  static std::atomic<uint64_t> serial{0};
  std::string temporary =
      path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(serial++);
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << formatTuneRecord(record);
    if (!out.flush()) {
      fs::remove(temporary, ec);
      return false;
    }
  }
  fs::rename(temporary, path, ec);
  if (ec) {
    fs::remove(temporary, ec);
    return false;
  }
  persistent::noteStored(fs::path(path).parent_path().string(), path);
  return true;
}

TuneIdentity tuneIdentity(const CompileOptions &options) {
  backend::Target target =
      backend::resolveTarget(options.target_triple, options.target_cpu, options.target_features);
  return {persistent::buildIdentity(), target.codegen.cpu, target.codegen.features};
}

} // namespace lanejit::tuning
