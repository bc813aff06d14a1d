// lanejit/error.h — the one exception type lanejit throws on bad input.
//
// Every user-facing failure (malformed text, ill-formed program, wrong shape,
// null or overlapping buffer, LLVM failure) becomes an lanejit::Error whose
// message says what is wrong and where. lanejit never aborts on user input.
#pragma once

#include <stdexcept>
#include <string>

namespace lanejit {

class Error : public std::runtime_error {
public:
  enum class Kind { Parse, Verify, Bind, Compile, Io };

  Error(Kind kind, const std::string &message) : std::runtime_error(message), kind_(kind) {}

  Kind kind() const { return kind_; }

private:
  Kind kind_;
};

} // namespace lanejit
