// Runs the wire fuzz target over the committed corpus (RecvTensor responses
// as graphrun and protobuf write them, data plane headers) and
// deterministic mutations of it, so every CI run checks that nasty network
// input neither crashes nor hangs. Coverage-guided fuzzing
// runs with clang: tools/fuzz.sh 60 wire.
#include <cstdint>
#include <string>
#include <vector>

#include "graph/fuzz/fuzz_replay.h"
#include "gtest/gtest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace graphrun {
namespace {

TEST(WireFuzzRegressionTest, CorpusAndMutations) {
  std::vector<std::string> corpus = LoadFuzzCorpus("distributed/fuzz/corpus");
  ASSERT_GE(corpus.size(), 3u) << "corpus missing: distributed/fuzz/corpus";
  int failures = 0;
  const int runs = ReplayWithMutations(corpus, 500, 4321, LLVMFuzzerTestOneInput, &failures);
  EXPECT_EQ(failures, 0);
  EXPECT_GT(runs, 1500);
}

}  // namespace
}  // namespace graphrun
