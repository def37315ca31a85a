// Replays fuzz_corpus/ (seeds built from TensorFlow-written checkpoints) and
// seeded mutations of it through the bundle fuzzer's entry point, so that
// corrupt checkpoints neither crash nor hang under gcc. The coverage-guided
// fuzzing runs with clang (bundle_fuzzer).
#include <cstdint>
#include <string>
#include <vector>

#include "graph/fuzz/fuzz_replay.h"
#include "gtest/gtest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace graphrun {
namespace {

TEST(BundleFuzzRegressionTest, CorpusAndMutations) {
  std::vector<std::string> corpus = LoadFuzzCorpus("graph/checkpoint/fuzz_corpus");
  ASSERT_GE(corpus.size(), 2u) << "corpus missing: graph/checkpoint/fuzz_corpus";
  int failures = 0;
  const int runs = ReplayWithMutations(corpus, 500, 4321, LLVMFuzzerTestOneInput, &failures);
  EXPECT_EQ(failures, 0);
  EXPECT_GT(runs, 900);
}

}  // namespace
}  // namespace graphrun
