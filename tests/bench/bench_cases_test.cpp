// Naming cases on the command line: OP:RxC, a program file at RxC, the
// default list.
#include "cases.h"

#include <lanejit/error.h>
#include <lanejit/library.h>
#include <lanejit/text.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace lanejit::bench {
namespace {

TEST(BenchCases, TheSeedCasesAreTheSixOperatorsAtTheSeedShapes) {
  std::vector<CaseSpec> cases = seedCases();
  ASSERT_EQ(cases.size(), 12u);
  EXPECT_EQ(cases[0].id, "rope-17x66");
  EXPECT_EQ(cases[1].id, "rope-1024x4098");
  EXPECT_EQ(cases[2].id, "layernorm-17x65");
  EXPECT_EQ(cases[3].id, "layernorm-1024x4097");
  for (const CaseSpec &c : cases)
    EXPECT_FALSE(c.op.empty()) << c.id;
}

TEST(BenchCases, DefaultsAreTheSeedCasesThenBf16ThenInt8) {
  // The main job prints the bf16 and the int8 rows beside the seed's.
  std::vector<CaseSpec> cases = defaultCases();
  std::vector<CaseSpec> seed = seedCases();
  ASSERT_EQ(cases.size(), seed.size() + 6 + 3);
  for (size_t i = 0; i < seed.size(); ++i)
    EXPECT_EQ(cases[i].id, seed[i].id);
  EXPECT_EQ(cases[12].id, "rope-bf16-1024x4098");
  EXPECT_EQ(cases[17].id, "masked_softmax-bf16-1024x4097");
  for (size_t i = 12; i < 18; ++i)
    EXPECT_EQ(caseType(cases[i]), "bf16") << cases[i].id;
  EXPECT_EQ(cases[18].id, "rmsnorm_q8-1024x4097");
  EXPECT_EQ(cases[19].id, "rmsnorm_q8-1x4096");
  EXPECT_EQ(cases[20].id, "rmsnorm_q8_0-1024x4096"); // Q8_0: whole blocks of 32
  for (const CaseSpec &c : cases)
    EXPECT_NO_THROW(validateCase(c)) << c.id;
}

TEST(BenchCases, Int8SetIsPerRowAndQ8_0LargeAndDecodeInF32AndBf16) {
  std::vector<CaseSpec> cases = int8Cases();
  ASSERT_EQ(cases.size(), 8u);
  EXPECT_EQ(cases[0].id, "rmsnorm_q8-1024x4097");
  EXPECT_EQ(cases[1].id, "rmsnorm_q8-bf16-1024x4097");
  EXPECT_EQ(cases[2].id, "rmsnorm_q8-1x4096");
  EXPECT_EQ(cases[3].id, "rmsnorm_q8-bf16-1x4096");
  // Q8_0 at 1024x4096: its C must be whole blocks of 32.
  EXPECT_EQ(cases[4].id, "rmsnorm_q8_0-1024x4096");
  EXPECT_EQ(cases[5].id, "rmsnorm_q8_0-bf16-1024x4096");
  EXPECT_EQ(cases[6].id, "rmsnorm_q8_0-1x4096");
  EXPECT_EQ(cases[7].id, "rmsnorm_q8_0-bf16-1x4096");
  for (const CaseSpec &c : cases) {
    EXPECT_EQ(c.op, c.id.starts_with("rmsnorm_q8_0") ? "rmsnorm_q8_0" : "rmsnorm_q8") << c.id;
    ASSERT_EQ(c.program.outputs.size(), 2u) << c.id; // the bench takes several outputs
    EXPECT_NO_THROW(validateCase(c)) << c.id;
  }
}

TEST(BenchCases, AQuantizingCaseKeepsItsOutputTypesInEveryInputType) {
  // Before: rmsnorm_q8 with bf16 inputs; withStorage alone would make the
  // f32 scale bf16 too.
  CaseSpec c = libraryCase("rmsnorm_q8:1024x4097:bf16");
  EXPECT_EQ(c.id, "rmsnorm_q8-bf16-1024x4097");
  EXPECT_EQ(c.op, "rmsnorm_q8");
  EXPECT_EQ(caseType(c), "bf16");
  for (const Param &p : c.program.inputs)
    EXPECT_EQ(p.type, DType::BF16) << p.name;
  ASSERT_EQ(c.program.outputs.size(), 2u);
  EXPECT_EQ(c.program.outputs[0].name, "q");
  EXPECT_EQ(c.program.outputs[0].type, DType::I8);
  EXPECT_EQ(c.program.outputs[1].name, "scale");
  EXPECT_EQ(c.program.outputs[1].type, DType::F32);
  CaseSpec f32 = libraryCase("rmsnorm_q8:1x4096");
  EXPECT_EQ(f32.id, "rmsnorm_q8-1x4096");
  EXPECT_EQ(caseType(f32), "f32");
  EXPECT_EQ(f32.program.outputs[0].type, DType::I8);
  // Q8_0: the f16 scale stays f16 with bf16 inputs, and f32 inputs keep it.
  for (const char *spec : {"rmsnorm_q8_0:1024x4096:bf16", "rmsnorm_q8_0:1x4096"}) {
    CaseSpec q = libraryCase(spec);
    EXPECT_EQ(q.op, "rmsnorm_q8_0") << spec;
    ASSERT_EQ(q.program.outputs.size(), 2u) << spec;
    EXPECT_EQ(q.program.outputs[0].type, DType::I8) << spec;
    EXPECT_EQ(q.program.outputs[1].name, "scale") << spec;
    EXPECT_EQ(q.program.outputs[1].type, DType::F16) << spec;
    EXPECT_NO_THROW(validateCase(q)) << spec;
  }
  EXPECT_EQ(caseType(libraryCase("rmsnorm_q8_0:1024x4096:bf16")), "bf16");
}

TEST(BenchCases, AQ8_0CaseNeedsWholeBlocksOf32) {
  // 4097 columns leave a partial block: the case is refused before a run.
  EXPECT_THROW(validateCase(libraryCase("rmsnorm_q8_0:1024x4097")), Error);
  EXPECT_NO_THROW(validateCase(libraryCase("rmsnorm_q8_0:3x32")));
}

TEST(BenchCases, DecodeSetIsFewLongRows) {
  std::vector<CaseSpec> cases = decodeCases();
  ASSERT_EQ(cases.size(), 6u);
  EXPECT_EQ(cases[0].id, "rmsnorm-1x1048576");
  for (const CaseSpec &c : cases) {
    EXPECT_LE(c.shape.rows, 32) << c.id;
    EXPECT_FALSE(c.op.empty()) << c.id;
  }
}

TEST(BenchCases, NarrowSetIsNarrowRows) {
  std::vector<CaseSpec> cases = narrowCases();
  ASSERT_EQ(cases.size(), 8u);
  EXPECT_EQ(cases[0].id, "masked_softmax-4096x8");
  EXPECT_EQ(cases.back().id, "rmsnorm-1x8");
  for (const CaseSpec &c : cases) {
    EXPECT_LE(c.shape.cols, 64) << c.id;
    EXPECT_FALSE(c.op.empty()) << c.id;
  }
}

TEST(BenchCases, LibraryCaseParsesOpAndShape) {
  CaseSpec c = libraryCase("swiglu:3x33");
  EXPECT_EQ(c.id, "swiglu-3x33");
  EXPECT_EQ(c.op, "swiglu");
  EXPECT_EQ(c.shape.rows, 3);
  EXPECT_EQ(c.shape.cols, 33);
}

TEST(BenchCases, ATypedLibraryCaseHoldsEveryBufferInItsType) {
  CaseSpec c = libraryCase("rmsnorm:1024x4097:bf16");
  EXPECT_EQ(c.id, "rmsnorm-bf16-1024x4097");
  EXPECT_EQ(c.op, "rmsnorm"); // the peers still know it
  EXPECT_EQ(caseType(c), "bf16");
  for (const Param &p : c.program.inputs)
    EXPECT_EQ(p.type, DType::BF16) << p.name;
  EXPECT_EQ(c.program.outputs[0].type, DType::BF16);
  EXPECT_EQ(libraryCase("rope:3x8:f16").id, "rope-f16-3x8");
  EXPECT_EQ(libraryCase("rope:3x8:f32").id, "rope-3x8");
  EXPECT_EQ(caseType(libraryCase("rope:3x8")), "f32");
  EXPECT_THROW(libraryCase("rope:3x8:f64"), Error);
}

TEST(BenchCases, Bf16SetIsTheLargeShapeInEveryTypeAndDecodeInBf16) {
  std::vector<CaseSpec> cases = halfCases();
  ASSERT_EQ(cases.size(), 6u * 3 + decodeCases().size());
  EXPECT_EQ(cases[0].id, "rope-1024x4098");
  EXPECT_EQ(cases[1].id, "rope-bf16-1024x4098");
  EXPECT_EQ(cases[2].id, "rope-f16-1024x4098");
  EXPECT_EQ(cases[18].id, "rmsnorm-bf16-1x1048576");
  for (size_t i = 18; i < cases.size(); ++i)
    EXPECT_EQ(caseType(cases[i]), "bf16") << cases[i].id;
}

TEST(BenchCases, BadSpecsAreErrors) {
  EXPECT_THROW(libraryCase("rope"), Error);
  EXPECT_THROW(libraryCase("rope:17"), Error);
  EXPECT_THROW(libraryCase("rope:0x66"), Error);
  EXPECT_THROW(libraryCase("rope:17x66x2"), Error);
  EXPECT_THROW(libraryCase("nosuchop:17x66"), Error);
}

TEST(BenchCases, AShapeThatDoesNotBindIsRejectedBeforeAnyRun) {
  EXPECT_NO_THROW(validateCase(libraryCase("rope:5x34")));
  try {
    validateCase(libraryCase("rope:5x33")); // C/2 is not an integer
    FAIL() << "rope at an odd C was accepted";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("rope-5x33"), std::string::npos) << e.what();
  }
}

TEST(BenchCases, AProgramFileThatIsALibraryOperatorGetsItsPeers) {
  std::filesystem::path path = std::filesystem::temp_directory_path() / "bench_cases_rms.lj";
  std::ofstream(path) << print(library::rmsNorm());
  CaseSpec c = programCase(path.string(), "5x40");
  EXPECT_EQ(c.op, "rmsnorm");
  EXPECT_EQ(c.shape.cols, 40);
  // A quantizing entry too.
  std::ofstream(path) << print(library::rmsNormQ8());
  EXPECT_EQ(programCase(path.string(), "5x40").op, "rmsnorm_q8");
  std::ofstream(path) << print(library::rmsNormQ8_0());
  EXPECT_EQ(programCase(path.string(), "5x64").op, "rmsnorm_q8_0");
  std::filesystem::remove(path);
}

} // namespace
} // namespace lanejit::bench
