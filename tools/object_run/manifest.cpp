#include "manifest.h"

#include <lanejit/error.h>

#include <fstream>
#include <sstream>

namespace lanejit::object_run {
namespace {

int64_t number(std::istringstream &words, const std::string &what, const std::string &where) {
  int64_t value = 0;
  if (!(words >> value))
    throw Error(Error::Kind::Parse, where + ": expected " + what);
  return value;
}

std::string word(std::istringstream &words, const std::string &what, const std::string &where) {
  std::string value;
  if (!(words >> value))
    throw Error(Error::Kind::Parse, where + ": expected " + what);
  return value;
}

void requireComplete(const Call &c, const std::string &where) {
  if (c.object.empty())
    throw Error(Error::Kind::Parse, where + ": call '" + c.label + "' has no `object` line");
  if (c.rows < 0 || c.cols < 0)
    throw Error(Error::Kind::Parse, where + ": call '" + c.label + "' has no `shape` line");
  if (c.threads < 1 || c.threads > 256 || c.block_rows < 1)
    throw Error(Error::Kind::Parse,
                where + ": call '" + c.label + "': threads must be 1-256 and block at least 1");
  for (const OutputSpec &o : c.outputs)
    if (o.alias >= static_cast<int>(c.inputs.size()))
      throw Error(Error::Kind::Parse, where + ": call '" + c.label + "': output " + o.path +
                                          " aliases input " + std::to_string(o.alias) +
                                          ", which it does not have");
}

} // namespace

std::vector<Call> readManifest(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw Error(Error::Kind::Parse, path + ": cannot open the manifest");
  std::vector<Call> calls;
  bool open = false;
  std::string line;
  for (int number_of_line = 1; std::getline(in, line); ++number_of_line) {
    std::string where = path + ":" + std::to_string(number_of_line);
    if (size_t hash = line.find('#'); hash != std::string::npos)
      line.resize(hash);
    std::istringstream words(line);
    std::string key;
    if (!(words >> key))
      continue;
    if (key == "call") {
      if (open)
        throw Error(Error::Kind::Parse, where + ": `call` before the previous call's `end`");
      open = true;
      calls.emplace_back();
      calls.back().line = number_of_line;
      calls.back().label = word(words, "a label", where);
      continue;
    }
    if (!open)
      throw Error(Error::Kind::Parse, where + ": '" + key + "' outside a call");
    Call &c = calls.back();
    if (key == "end") {
      requireComplete(c, where);
      open = false;
    } else if (key == "object") {
      c.object = word(words, "an object path", where);
      c.entry = word(words, "an entry symbol", where);
    } else if (key == "shape") {
      c.rows = number(words, "rows", where);
      c.cols = number(words, "cols", where);
    } else if (key == "workspace") {
      c.workspace_floats = number(words, "a float count", where);
    } else if (key == "threads") {
      c.threads = static_cast<int>(number(words, "a thread count", where));
    } else if (key == "block") {
      c.block_rows = number(words, "rows per entry call", where);
    } else if (key == "in") {
      InputSpec s;
      s.path = word(words, "an input file", where);
      s.stride = number(words, "a row stride", where);
      c.inputs.push_back(s);
    } else if (key == "out") {
      OutputSpec s;
      s.path = word(words, "an output file", where);
      s.stride = number(words, "a row stride", where);
      std::string how = word(words, "`init FILE` or `alias INPUT`", where);
      if (how == "init")
        s.init = word(words, "the file of the output's first contents", where);
      else if (how == "alias")
        s.alias = static_cast<int>(number(words, "an input index", where));
      else
        throw Error(Error::Kind::Parse, where + ": expected `init FILE` or `alias INPUT`, not '" +
                                            how + "'");
      c.outputs.push_back(s);
    } else {
      throw Error(Error::Kind::Parse, where + ": unknown key '" + key + "'");
    }
    std::string extra;
    if (words >> extra)
      throw Error(Error::Kind::Parse, where + ": unexpected '" + extra + "'");
  }
  if (open)
    throw Error(Error::Kind::Parse, path + ": the last call has no `end`");
  return calls;
}

} // namespace lanejit::object_run
