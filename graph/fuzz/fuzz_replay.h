// Replays a fuzz target over a committed corpus and deterministic mutations
// of it (bit flips, truncations, splices, interesting bytes), so every CI
// run checks that known-nasty inputs neither crash nor hang. The
// coverage-guided fuzzing itself runs with clang: tools/fuzz.sh.
#ifndef GRAPHRUN_GRAPH_FUZZ_FUZZ_REPLAY_H_
#define GRAPHRUN_GRAPH_FUZZ_FUZZ_REPLAY_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace graphrun {

// Every regular file in `dir` (relative to the test's working directory).
std::vector<std::string> LoadFuzzCorpus(const std::string& dir);

// Runs `target` on each seed and on `mutations_per_seed` mutations of it;
// returns how many inputs ran. `target` returns non-zero to report a bad
// input (libFuzzer's convention is to return 0).
int ReplayWithMutations(const std::vector<std::string>& corpus, int mutations_per_seed,
                        uint64_t seed,
                        const std::function<int(const uint8_t*, size_t)>& target,
                        int* failures);

}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_FUZZ_FUZZ_REPLAY_H_
