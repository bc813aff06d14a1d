// Compiles the library's LayerNorm through the installed lanejit, runs it,
// and checks it against the FP64 reference. Prints "ok" on success.
#include <lanejit/error.h>
#include <lanejit/kernel.h>
#include <lanejit/library.h>
#include <lanejit/reference.h>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  using namespace lanejit;
  const int64_t R = 17, C = 65;
  std::vector<float> x(R * C), gamma(C, 1.5f), beta(C, 0.25f), y(R * C);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = std::sin(0.37f * static_cast<float>(i));
  Program program = library::layerNorm();
  Kernel k = compile(program);
  std::vector<BufferRef> in{BufferRef::matrix(x.data(), R, C), BufferRef::vector(gamma.data(), C),
                            BufferRef::vector(beta.data(), C)};
  std::vector<BufferRef> out{BufferRef::matrix(y.data(), R, C)};
  k.run(in, out);
  ReferenceOutput ref = evaluateReference(program, in, {R, C})[0];
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < C; ++c)
      if (std::abs(y[r * C + c] - ref.at(r, c)) > 5e-5 + 5e-5 * std::abs(ref.at(r, c))) {
        std::printf("mismatch at %lld,%lld\n", static_cast<long long>(r),
                    static_cast<long long>(c));
        return 1;
      }
  try {
    std::vector<BufferRef> bad{BufferRef::matrix(y.data(), R, C - 1)};
    k.run(in, bad);
    return 1;
  } catch (const Error &) { // errors cross the shared library's boundary
  }
  std::printf("ok\n");
  return 0;
}
