// bench/cases.h — which programs at which shapes a bench run measures.
#pragma once

#include <lanejit/buffer.h>
#include <lanejit/ir.h>

#include <string>
#include <vector>

namespace lanejit::bench {

struct CaseSpec {
  std::string id; // "rope-17x66", "rope-bf16-1024x4098": file and directory names in the bundle
  std::string op; // the library operator it is (peers run), or "" (lanejit only)
  Program program;
  Shape shape;
};

// The element type of a case's buffers, "f32", "bf16" or "f16": a library
// case holds every input in one type (withStorage), its first input's; its
// outputs too, except a quantizing operator's (rmsnorm_q8: q i8, scale f32;
// rmsnorm_q8_0: q i8, scale f16).
std::string caseType(const CaseSpec &spec);

// The seed's cases: the six library operators at the small and the large
// seed shape (RoPE 17x66 and 1024x4098, the others 17x65 and 1024x4097).
std::vector<CaseSpec> seedCases();
// The main job's cases (`lanejit bench` without a case): the seed's, the six
// operators at the large shape in bf16, RMSNorm -> int8 per row (rmsnorm_q8)
// at 1024x4097 and the decode shape 1x4096, and per block of 32
// (rmsnorm_q8_0) at 1024x4096.
std::vector<CaseSpec> defaultCases();
// `lanejit bench --cases decode`: decode-time shapes, few long rows (RMSNorm
// 1x1048576 and 1x4096, LayerNorm 4x262144, SwiGLU and GELU + residual
// 8x65536, RoPE 32x128) — where splitting one row's work decides the speed.
std::vector<CaseSpec> decodeCases();
// `lanejit bench --cases narrow`: narrow rows, where one row fills at most
// a packet or two (issue 15): masked softmax 4096x8 and 4096x64, RMSNorm
// 65536x8, 4096x64 and one call of 1x8, LayerNorm, SwiGLU and GELU +
// residual 65536x8 — where rows across lanes decides the speed.
std::vector<CaseSpec> narrowCases();
// `lanejit bench --cases bf16`: the six operators at the large seed shape
// in f32, bf16 and f16 (lanejit's own f32 time is what the 16-bit cases
// halve), and the decode shapes in bf16.
std::vector<CaseSpec> halfCases();

// `lanejit bench --cases int8`: RMSNorm then int8 quantization in one
// kernel, per row (rmsnorm_q8: q i8[R,C], scale f32[R,1]) at 1024x4097 and
// per block of 32 (rmsnorm_q8_0, ggml's Q8_0: q i8[R,C], scale f16[R,C/32])
// at 1024x4096, both also at the decode shape 1x4096, each with f32 and
// with bf16 inputs.
std::vector<CaseSpec> int8Cases();

// "rope:17x66" -> the library operator at that shape (any entry of
// library::byName, rmsnorm_q8 and rmsnorm_q8_0 too); "rope:17x66:bf16" with
// its buffers in bf16 (or f16, f32). Throws Error(Kind::Bind) naming the
// problem.
CaseSpec libraryCase(const std::string &spec);
// A program from a text file at "RxC"; op is set when the program is
// structurally a library operator, so peers run on it too.
CaseSpec programCase(const std::string &path, const std::string &shape);

Shape parseShape(const std::string &text); // "17x66"

// Throws Error naming the case when its shape does not bind (e.g. RoPE with
// an odd C); cheap, so a run can check every case before it starts.
void validateCase(const CaseSpec &spec);

} // namespace lanejit::bench
