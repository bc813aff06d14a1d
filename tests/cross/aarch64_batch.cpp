#include "cross/aarch64_batch.h"

#include "npy.h"
#include "support/command_line.h"

#include <lanejit/error.h>

#include <cstring>
#include <fstream>
#include <iomanip>
#include <sstream>

#include <unistd.h>

#ifndef LANEJIT_AARCH64_RUNNER
#error "tests/CMakeLists.txt defines LANEJIT_AARCH64_RUNNER (empty when not built)"
#endif

namespace lanejit::test {
namespace {

npy::Dtype dtypeOf(DType t) {
  switch (t) {
  case DType::F32:
    return npy::Dtype::F32;
  case DType::BF16:
    return npy::Dtype::BF16;
  case DType::F16:
    return npy::Dtype::F16;
  case DType::I8:
    return npy::Dtype::I8;
  default:
    throw Error(Error::Kind::Io, "aarch64 batch: no .npy dtype for a buffer of this type");
  }
}

// A buffer as a [rows, stride] array: its payload, then zeros to the end
// of the last row (a C-order file of whole rows, as numpy would hold it).
npy::Array arrayOf(const check::GuardedBuffer &b) {
  npy::Array a;
  a.dtype = dtypeOf(b.type());
  int64_t stride = std::max(b.rowStride(), b.cols());
  a.shape = {std::max<int64_t>(b.rows(), 1), std::max<int64_t>(stride, 1)};
  std::string bytes(static_cast<size_t>(a.size() * bytesOf(b.type())), '\0');
  std::memcpy(bytes.data(), b.raw(), static_cast<size_t>(b.bytes()));
  switch (a.dtype) {
  case npy::Dtype::F32:
    a.data.resize(static_cast<size_t>(a.size()));
    break;
  case npy::Dtype::I8:
    a.int8.resize(static_cast<size_t>(a.size()));
    break;
  default:
    a.bits.resize(static_cast<size_t>(a.size()));
  }
  std::memcpy(a.raw(), bytes.data(), bytes.size());
  return a;
}

bool executable(const std::string &path) {
  return !path.empty() && ::access(path.c_str(), X_OK) == 0;
}

std::string shellQuoted(const std::string &s) {
  return "'" + s + "'";
}

} // namespace

CrossTools crossTools() {
  CrossTools t;
  t.runner = LANEJIT_AARCH64_RUNNER;
#ifdef LANEJIT_QEMU_AARCH64
  t.qemu = LANEJIT_QEMU_AARCH64;
#endif
#ifdef LANEJIT_AARCH64_SYSROOT
  t.sysroot = LANEJIT_AARCH64_SYSROOT;
#endif
#ifdef LANEJIT_AARCH64_CC
  t.cc = LANEJIT_AARCH64_CC;
#endif
  return t;
}

std::string CrossTools::missing() const {
  if (!executable(qemu))
    return "qemu-aarch64 not found (Debian's qemu-user; scripts/install-deps installs it)";
  if (!executable(runner))
    return "the cross-built aarch64 runner is missing (g++-aarch64-linux-gnu; "
           "scripts/install-deps, then reconfigure)";
  if (!executable(cc))
    return "aarch64-linux-gnu-gcc not found (g++-aarch64-linux-gnu; scripts/install-deps)";
  if (!std::filesystem::is_directory(sysroot))
    return "the aarch64 sysroot " + sysroot + " is missing (g++-aarch64-linux-gnu)";
  return "";
}

std::string CrossTools::qemuCommand() const {
  return shellQuoted(qemu) + " -L " + shellQuoted(sysroot);
}

std::string Aarch64Batch::file(size_t call, const std::string &what) const {
  return (dir_ / ("c" + std::to_string(call) + "_" + what + ".npy")).string();
}

std::string Aarch64Batch::objectFile(const Kernel &arm) {
  const std::string &object = arm.object();
  auto key = std::make_pair(check::hashBytes(object.data(), object.size()), arm.entrySymbol());
  auto [at, added] = objects_.emplace(key, "");
  if (added) {
    at->second = (dir_ / ("k" + std::to_string(objects_.size()) + ".o")).string();
    std::ofstream out(at->second, std::ios::binary);
    out.write(object.data(), static_cast<std::streamsize>(object.size()));
    if (!out)
      throw Error(Error::Kind::Io, "cannot write " + at->second);
  }
  return at->second;
}

void Aarch64Batch::add(const std::string &label, const Kernel &arm, const check::Case &c,
                       int threads, const std::vector<int> &aliases) {
  size_t call = calls_++;
  std::ostringstream m;
  std::string name = label;
  for (char &ch : name)
    if (ch == ' ' || ch == '#')
      ch = '_';
  m << "call " << name << "\n";
  m << "object " << objectFile(arm) << " " << arm.entrySymbol() << "\n";
  m << "shape " << c.shape.rows << " " << c.shape.cols << "\n";
  m << "workspace " << arm.workspaceFloats(c.shape.cols) << "\n";
  m << "threads " << threads << "\nblock " << arm.options().block_rows << "\n";
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    std::string path = file(call, "in" + std::to_string(i));
    npy::write(path, arrayOf(c.inputs[i]));
    m << "in " << path << " " << c.inputs[i].rowStride() << "\n";
  }
  payloadBytes_.emplace_back();
  for (size_t o = 0; o < c.outputs.size(); ++o) {
    int alias = o < aliases.size() ? aliases[o] : -1;
    const check::GuardedBuffer &b = alias >= 0 ? c.inputs[static_cast<size_t>(alias)]
                                               : c.outputs[o];
    payloadBytes_.back().push_back(b.bytes());
    std::string result = file(call, "out" + std::to_string(o));
    m << "out " << result << " " << b.rowStride() << " ";
    if (alias >= 0) {
      m << "alias " << alias << "\n";
    } else {
      std::string init = file(call, "init" + std::to_string(o));
      npy::write(init, arrayOf(b));
      m << "init " << init << "\n";
    }
  }
  m << "end\n";
  manifest_ += m.str();
}

::testing::AssertionResult Aarch64Batch::run(const CrossTools &tools) const {
  std::string manifest = (dir_ / "manifest.txt").string();
  {
    std::ofstream out(manifest);
    out << manifest_;
  }
  std::string log = (dir_ / "runner.log").string();
  std::string command = tools.qemuCommand() + " " + shellQuoted(tools.runner) + " " +
                        shellQuoted(manifest) + " >" + shellQuoted(log) + " 2>&1";
  int code = shell(command);
  if (code != 0)
    return ::testing::AssertionFailure()
           << command << " exited with " << code << ":\n" << slurp(log).substr(0, 4000);
  return ::testing::AssertionSuccess();
}

std::string Aarch64Batch::outputBytes(size_t call, size_t output) const {
  npy::Array a = npy::read(file(call, "out" + std::to_string(output)), npy::Accept::Any);
  size_t bytes = static_cast<size_t>(payloadBytes_.at(call).at(output));
  return std::string(static_cast<const char *>(a.raw()), bytes);
}

::testing::AssertionResult sameBits(const check::GuardedBuffer &host, const std::string &arm,
                                    const std::string &what) {
  size_t bytes = static_cast<size_t>(host.bytes());
  if (arm.size() != bytes)
    return ::testing::AssertionFailure() << what << ": the aarch64 run left " << arm.size()
                                         << " bytes, the host's buffer has " << bytes;
  if (std::memcmp(arm.data(), host.raw(), bytes) == 0)
    return ::testing::AssertionSuccess();
  int64_t size = bytesOf(host.type());
  int64_t differ = 0, first = -1;
  for (int64_t i = 0; i * size < static_cast<int64_t>(bytes); ++i)
    if (std::memcmp(arm.data() + i * size, static_cast<const char *>(host.raw()) + i * size,
                    static_cast<size_t>(size)) != 0) {
      ++differ;
      if (first < 0)
        first = i;
    }
  int64_t stride = std::max<int64_t>(host.rowStride(), 1);
  auto bitsAt = [&](const char *p) {
    uint32_t u = 0;
    std::memcpy(&u, p + first * size, static_cast<size_t>(size));
    std::ostringstream s;
    s << "0x" << std::hex << std::setw(static_cast<int>(2 * size)) << std::setfill('0') << u;
    return s.str();
  };
  // The arm value widened through a copy of the host buffer holding it.
  check::GuardedBuffer armCopy = host;
  std::memcpy(armCopy.raw(), arm.data(), bytes);
  int64_t r = first / stride, c = first % stride;
  return ::testing::AssertionFailure()
         << what << ": " << differ << " elements differ; first [" << r << "," << c
         << "]: x86 " << host.get(r, c) << " (" << bitsAt(static_cast<const char *>(host.raw()))
         << "), aarch64 " << armCopy.get(r, c) << " (" << bitsAt(arm.data()) << ")";
}

} // namespace lanejit::test
