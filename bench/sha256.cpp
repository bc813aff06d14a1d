// SHA-256 through OpenSSL's EVP interface (sha256.h).
#include "sha256.h"

#include "io/sha256.h"

#include <lanejit/error.h>

#include <openssl/evp.h>

#include <cstdio>
#include <memory>
#include <vector>

namespace lanejit::bench {
namespace {

struct DigestDeleter {
  void operator()(EVP_MD_CTX *context) const { EVP_MD_CTX_free(context); }
};
using Digest = std::unique_ptr<EVP_MD_CTX, DigestDeleter>;

Digest newDigest() {
  Digest context(EVP_MD_CTX_new());
  if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1)
    throw Error(Error::Kind::Io, "SHA-256: OpenSSL could not start a digest");
  return context;
}

std::string finish(EVP_MD_CTX *context) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(context, digest, &length) != 1)
    throw Error(Error::Kind::Io, "SHA-256: OpenSSL could not finish a digest");
  return io::lowerHex(digest, length);
}

} // namespace

std::string sha256Hex(const void *data, size_t bytes) {
  Digest context = newDigest();
  if (EVP_DigestUpdate(context.get(), data, bytes) != 1)
    throw Error(Error::Kind::Io, "SHA-256: OpenSSL digest update failed");
  return finish(context.get());
}

std::string sha256File(const std::string &path) {
  std::unique_ptr<FILE, int (*)(FILE *)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file)
    throw Error(Error::Kind::Io, path + ": cannot open for hashing");
  Digest context = newDigest();
  std::vector<char> chunk(1 << 20);
  size_t got;
  while ((got = std::fread(chunk.data(), 1, chunk.size(), file.get())) > 0)
    if (EVP_DigestUpdate(context.get(), chunk.data(), got) != 1)
      throw Error(Error::Kind::Io, path + ": SHA-256 update failed");
  if (std::ferror(file.get()))
    throw Error(Error::Kind::Io, path + ": read error while hashing");
  return finish(context.get());
}

} // namespace lanejit::bench
