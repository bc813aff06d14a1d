#include "support/random_row_program.h"

#include <lanejit/error.h>
#include <lanejit/text.h>

#include <random>
#include <sstream>
#include <vector>

namespace lanejit::test {
namespace {

class Generator {
public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  RandomRowProgram make() {
    storage_ = pick({"f32", "f32", "f32", "bf16", "f16"});
    half_ = chance(35);
    bool u = chance(60), g = chance(50), s = chance(30);
    head_ << "program random_" << rng_() % 1000000 << " {\n";
    head_ << "  in x: " << storage_ << "[R, C]\n";
    full_.push_back(node("load x[0:C]"));
    if (u) {
      head_ << "  in u: " << storage_ << "[R, C]\n";
      full_.push_back(node("load u[0:C]"));
    }
    if (g) {
      head_ << "  in g: " << storage_ << "[C]\n"; // one column vector for every row
      full_.push_back(node("load g[0:C]"));
    }
    if (s) {
      head_ << "  in s: f32\n";
      uniform_.push_back(node("load s"));
    }
    uniform_.push_back(constant());
    if (half_) {
      half_values_.push_back(node("load x[0:C/2]"));
      half_values_.push_back(node("load x[C/2:C]"));
    }
    int steps = 4 + static_cast<int>(below(11));
    for (int i = 0; i < steps; ++i)
      step();
    // The newest value of each kind is written, so most nodes are live.
    head_ << "  out y: " << storage_ << "[R, C]\n";
    body_ << "  y[0:C] = " << full_.back() << "\n";
    if (half_) {
      head_ << "  out h: f32[R, C/2]\n";
      body_ << "  h[0:C/2] = " << half_values_.back() << "\n";
    }
    if (reduced_) {
      head_ << "  out z: f32[R, 2]\n";
      body_ << "  z[0:1] = " << uniform_.back() << "\n";
      body_ << "  z[1:2] = " << uniform_[uniform_.size() / 2] << "\n";
    }
    RandomRowProgram r;
    r.text = head_.str() + body_.str() + "}\n";
    r.even_cols = half_;
    try {
      r.program = parse(r.text, "random_row_program");
    } catch (const Error &e) {
      throw Error(e.kind(), std::string(e.what()) + "\n" + r.text);
    }
    return r;
  }

private:
  uint64_t below(uint64_t n) { return rng_() % n; }
  bool chance(int percent) { return below(100) < static_cast<uint64_t>(percent); }
  template <size_t N> const char *pick(const char *const (&options)[N]) {
    return options[below(N)];
  }
  const std::string &any(const std::vector<std::string> &values) {
    return values[below(values.size())];
  }
  // Recent values more often: chains, not a flat fan-out of the loads.
  const std::string &recent(const std::vector<std::string> &values) {
    size_t n = values.size();
    return chance(60) ? values[n - 1 - below(std::min<size_t>(n, 2))] : any(values);
  }

  std::string node(const std::string &operation) {
    std::string name = "%v" + std::to_string(next_++);
    body_ << "  " << name << " = " << operation << "\n";
    return name;
  }
  std::string constant() {
    return node(std::string("const f32 ") +
                pick({"0.5", "2", "-1.25", "0.001", "3", "-0.75", "1e-05"}));
  }

  // One new value: a full-row or half-row vector, or a row-uniform one.
  void step() {
    bool onHalf = half_ && chance(35);
    std::vector<std::string> &vectors = onHalf ? half_values_ : full_;
    switch (below(10)) {
    case 0:
    case 1:
    case 2: { // unary math, guarded against NaN domains most of the time
      const char *op = pick({"exp", "log", "tanh", "sigmoid", "erf", "rsqrt", "sqrt", "abs",
                             "neg", "exp", "tanh", "erf"});
      std::string a = recent(vectors);
      std::string op_s = op;
      if ((op_s == "log" || op_s == "sqrt" || op_s == "rsqrt") && chance(80))
        a = node("abs " + a);
      if (op_s == "exp" && chance(70)) // keeps chains of exp finite mostly
        a = node("min " + a + ", " + constantOf("4"));
      vectors.push_back(node(op_s + " " + a));
      break;
    }
    case 3:
    case 4:
    case 5: { // binary, vector-vector or broadcast of a row-uniform value
      const char *op = pick({"add", "sub", "mul", "div", "min", "max", "add", "mul"});
      std::string a = recent(vectors), b = chance(35) ? any(uniform_) : any(vectors);
      if (chance(30))
        std::swap(a, b);
      vectors.push_back(node(std::string(op) + " " + a + ", " + b));
      break;
    }
    case 6: { // fma
      std::string c = chance(50) ? any(uniform_) : any(vectors);
      vectors.push_back(node("fma " + recent(vectors) + ", " + any(vectors) + ", " + c));
      break;
    }
    case 7: { // compare and select
      const char *cmp = pick({"gt", "lt", "ge", "le", "eq", "ne"});
      std::string cond = node(std::string(cmp) + " " + recent(vectors) + ", " +
                              (chance(50) ? any(uniform_) : any(vectors)));
      vectors.push_back(node("select " + cond + ", " + any(vectors) + ", " + any(vectors)));
      break;
    }
    case 8: { // a row reduction, used again by the row
      const char *op = pick({"reduce.sum", "reduce.max", "reduce.min", "reduce.mean"});
      uniform_.push_back(node(std::string(op) + " " + recent(vectors)));
      reduced_ = true;
      if (chance(70)) // broadcast back: x - max, x / sum
        vectors.push_back(node(std::string(pick({"sub", "div", "mul", "add"})) + " " +
                               recent(vectors) + ", " + uniform_.back()));
      break;
    }
    default: { // row-uniform arithmetic, or a half-row slice of a full vector
      if (half_ && chance(50)) {
        half_values_.push_back(
            node("slice " + recent(full_) + (chance(50) ? "[0:C/2]" : "[C/2:C]")));
      } else if (uniform_.size() > 1 && chance(60)) {
        const char *op = pick({"add", "mul", "div", "max", "sub"});
        uniform_.push_back(node(std::string(op) + " " + any(uniform_) + ", " + any(uniform_)));
      } else {
        uniform_.push_back(constant());
      }
    }
    }
  }

  std::string constantOf(const char *value) { return node(std::string("const f32 ") + value); }

  std::mt19937_64 rng_;
  std::ostringstream head_, body_;
  std::string storage_;
  bool half_ = false, reduced_ = false;
  int next_ = 0;
  std::vector<std::string> full_, half_values_, uniform_;
};

} // namespace

RandomRowProgram randomRowProgram(uint64_t seed) {
  return Generator(seed).make();
}

} // namespace lanejit::test
