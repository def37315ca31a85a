// Runs the fuzz target over the committed corpus and over deterministic
// mutations of it (bit flips, truncations, splices), so every CI run checks
// that known-nasty inputs neither crash nor hang. The real coverage-guided
// fuzzing runs with clang: tools/fuzz.sh.
#include <dirent.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "graph/graph_io.h"
#include "gtest/gtest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace graphrun {
namespace {

std::vector<std::string> LoadCorpus() {
  std::vector<std::string> corpus;
  const std::string dir = "graph/fuzz/corpus";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return corpus;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    auto data = ReadFileToString(dir + "/" + name);
    if (data.ok()) corpus.push_back(*data);
  }
  closedir(d);
  return corpus;
}

int RunOne(const std::string& s) {
  return LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()),
                                s.size());
}

TEST(FuzzRegressionTest, CorpusAndMutations) {
  std::vector<std::string> corpus = LoadCorpus();
  ASSERT_GE(corpus.size(), 3u) << "corpus missing: graph/fuzz/corpus";
  std::mt19937_64 rng(1234);
  int runs = 0;
  for (const std::string& seed : corpus) {
    EXPECT_EQ(RunOne(seed), 0);
    for (int i = 0; i < 300; ++i) {
      std::string m = seed;
      switch (rng() % 4) {
        case 0:  // flip bits
          for (int k = 0; k < 1 + static_cast<int>(rng() % 4) && !m.empty(); ++k) {
            m[rng() % m.size()] ^= static_cast<char>(1 << (rng() % 8));
          }
          break;
        case 1:  // truncate
          m.resize(m.empty() ? 0 : rng() % m.size());
          break;
        case 2: {  // splice with another seed
          const std::string& other = corpus[rng() % corpus.size()];
          m = m.substr(0, m.empty() ? 0 : rng() % m.size()) +
              other.substr(other.empty() ? 0 : rng() % other.size());
          break;
        }
        default:  // overwrite a byte with an interesting value
          if (!m.empty()) {
            const char values[] = {'\0', '\x7f', '\x80', '\xff', ':', '^', '-'};
            m[rng() % m.size()] = values[rng() % sizeof(values)];
          }
      }
      EXPECT_EQ(RunOne(m), 0);
      ++runs;
    }
  }
  EXPECT_GT(runs, 0);
}

}  // namespace
}  // namespace graphrun
