// Replays placer_inputs_fuzzer over its corpus (device specs, cluster
// files, cost profiles, rendezvous keys) and deterministic mutations.
#include <cstdint>
#include <string>
#include <vector>

#include "graph/fuzz/fuzz_replay.h"
#include "gtest/gtest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace graphrun {
namespace {

TEST(PlacerFuzzRegressionTest, CorpusAndMutations) {
  std::vector<std::string> corpus = LoadFuzzCorpus("placer/fuzz/corpus");
  ASSERT_GE(corpus.size(), 6u) << "corpus missing: placer/fuzz/corpus";
  int failures = 0;
  const int runs = ReplayWithMutations(corpus, 2000, 99, LLVMFuzzerTestOneInput, &failures);
  EXPECT_EQ(failures, 0);
  EXPECT_GT(runs, 12000);
}

}  // namespace
}  // namespace graphrun
