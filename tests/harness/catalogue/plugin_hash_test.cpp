// SHA-256 as records carry it for a plugin: the FIPS 180-4 test vectors (one block, two blocks,
// a padding that needs a block of its own, a million bytes) and a file's hash equal to its bytes'.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "harness/catalogue/plugin_hash.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

TEST(PluginHash, Sha256MatchesTheStandardsTestVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 56 bytes: the length no longer fits the first block, the padding takes a second one.
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(PluginHash, SizesAroundTheBlockEdgesDiffer) {
  // 55, 56, 63, 64 and 65 bytes take the three ways through the padding; each must hash apart.
  std::set<std::string> seen;
  for (std::size_t n : {55, 56, 63, 64, 65}) EXPECT_TRUE(seen.insert(sha256_hex(std::string(n, 'x'))).second) << n;
}

TEST(PluginHash, AFileHashesAsItsBytesAndAMissingOneIsNamed) {
  test::TempDir dir;
  std::ofstream(dir / "lib.so", std::ios::binary) << "abc";
  EXPECT_EQ(sha256_hex_of_file(dir / "lib.so"), sha256_hex("abc"));
  try {
    sha256_hex_of_file(dir / "missing.so");
    FAIL() << "no error for a missing file";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("missing.so"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kwb
