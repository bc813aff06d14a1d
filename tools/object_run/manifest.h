// The manifest lanejit-object-run reads: many kernel calls in one file, so
// one process (one qemu start in the tests) runs hundreds of them.
//
//   # comments and blank lines are ignored
//   call rmsnorm-w8-t2          # a label for messages
//   object rmsnorm.o lanejit_rmsnorm_entry   # object file, entry symbol
//   shape 17 66                 # rows, cols (the bound C)
//   workspace 128               # floats: Kernel::workspaceFloats(C)
//   threads 2                   # optional (1); the pool splits the rows
//   block 32                    # optional (32): rows per entry call
//   in x.npy 69                 # inputs in declaration order: file, row stride
//   in gamma.npy 66
//   out y.npy 69 init y0.npy    # outputs: result file, row stride, and the
//   out y.npy 69 alias 0        #   buffer's first contents or `alias K`:
//   end                         #   input K's own buffer (in place)
//
// Strides are in elements of the buffer's type. A buffer is its file's
// elements in C order, of its dtype's size (f32, f16, bf16 as '<V2' or
// uint16, int8): a row tensor a [rows, stride] array, a column vector or
// scalar a 1-D or 0-D one. A result is written with its file's shape and
// dtype (an aliased output: its input's).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lanejit::object_run {

struct OutputSpec {
  std::string path;      // where the result is written (.npy)
  int64_t stride = 0;
  std::string init;      // the buffer's contents before the call, or empty
  int alias = -1;        // else the input whose buffer this output is
};

struct InputSpec {
  std::string path;
  int64_t stride = 0;
};

struct Call {
  std::string label;
  int line = 0; // of `call`, for messages
  std::string object, entry;
  int64_t rows = -1, cols = -1, workspace_floats = 0;
  int threads = 1;
  int64_t block_rows = 32;
  std::vector<InputSpec> inputs;
  std::vector<OutputSpec> outputs;
};

// Parses the manifest at `path`; throws lanejit::Error(Kind::Parse) naming
// the file and line of the first problem.
std::vector<Call> readManifest(const std::string &path);

} // namespace lanejit::object_run
