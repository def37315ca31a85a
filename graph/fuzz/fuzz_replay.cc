#include "graph/fuzz/fuzz_replay.h"

#include <dirent.h>

#include <random>

#include "graph/graph_io.h"

namespace graphrun {

std::vector<std::string> LoadFuzzCorpus(const std::string& dir) {
  std::vector<std::string> corpus;
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

int ReplayWithMutations(const std::vector<std::string>& corpus, int mutations_per_seed,
                        uint64_t seed,
                        const std::function<int(const uint8_t*, size_t)>& target,
                        int* failures) {
  std::mt19937_64 rng(seed);
  int runs = 0;
  auto run = [&](const std::string& s) {
    if (target(reinterpret_cast<const uint8_t*>(s.data()), s.size()) != 0) ++*failures;
    ++runs;
  };
  for (const std::string& base : corpus) {
    run(base);
    for (int i = 0; i < mutations_per_seed; ++i) {
      std::string m = base;
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
            const char values[] = {'\0', '\x7f', '\x80', '\xff', ':', '^', '-', '/', '*', '"'};
            m[rng() % m.size()] = values[rng() % sizeof(values)];
          }
      }
      run(m);
    }
  }
  return runs;
}

}  // namespace graphrun
