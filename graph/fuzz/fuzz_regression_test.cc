// Runs the fuzz target over the committed corpus and over deterministic
// mutations of it (bit flips, truncations, splices), so every CI run checks
// that known-nasty inputs neither crash nor hang. The real coverage-guided
// fuzzing runs with clang: tools/fuzz.sh.
#include <cstdint>
#include <string>
#include <vector>

#include "graph/fuzz/fuzz_replay.h"
#include "gtest/gtest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace graphrun {
namespace {

TEST(FuzzRegressionTest, CorpusAndMutations) {
  std::vector<std::string> corpus = LoadFuzzCorpus("graph/fuzz/corpus");
  ASSERT_GE(corpus.size(), 3u) << "corpus missing: graph/fuzz/corpus";
  int failures = 0;
  const int runs = ReplayWithMutations(corpus, 300, 1234, LLVMFuzzerTestOneInput, &failures);
  EXPECT_EQ(failures, 0);
  EXPECT_GT(runs, 900);
}

}  // namespace
}  // namespace graphrun
