// Runs the shape-function fuzz target (shape_fuzzer.cc) over its committed
// corpus, which holds a seed per op and every input the fuzzer found a bug
// with, and over deterministic mutations of it. The target aborts on an
// import error that does not name its node; under gcc this checks crashes
// and that contract, under tools/fuzz.sh UBSan checks the arithmetic too.
#include <cstdint>
#include <string>
#include <vector>

#include "graph/fuzz/fuzz_replay.h"
#include "gtest/gtest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace graphrun {
namespace {

TEST(ShapeFuzzRegressionTest, CorpusAndMutations) {
  std::vector<std::string> corpus = LoadFuzzCorpus("graph/fuzz/shape_corpus");
  ASSERT_GE(corpus.size(), 21u) << "corpus missing: graph/fuzz/shape_corpus";
  int failures = 0;
  const int runs =
      ReplayWithMutations(corpus, 200, 4321, LLVMFuzzerTestOneInput, &failures);
  EXPECT_EQ(failures, 0);
  EXPECT_GT(runs, 4000);
}

}  // namespace
}  // namespace graphrun
