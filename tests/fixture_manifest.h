// Test fixtures exported by TensorFlow: a MANIFEST of models (one line
// each: `name feeds=a:0,b:0 fetches=c:0 tol=1e-5 [form=...] [weights=1]
// [pbtxt=0]`), a graph per model (`name.pb`, and `name.pbtxt` in text form)
// and one .npy per feed and fetch. RunFixture runs a model in a Session and
// checks every fetch against TensorFlow's answer.
//
// Models with `weights=1` (tests/fixtures/models, written by
// make_model_fixtures.py) are committed without their large float Consts'
// values: `name.weights` lists those nodes, one `<node> <scale>` a line, and
// LoadFixtureGraph fills them with FixtureWeightValues, the values
// fixture_weights.py gave TensorFlow. Test-only; thread-compatible.
#ifndef GRAPHRUN_TESTS_FIXTURE_MANIFEST_H_
#define GRAPHRUN_TESTS_FIXTURE_MANIFEST_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/protos/graph.pb.h"
#include "runtime/session.h"

namespace graphrun {
namespace testing {

struct FixtureModel {
  std::string dir;   // with a trailing '/'
  std::string name;  // file prefix
  std::vector<std::string> feeds, fetches;
  double tol = 1e-5;
  std::string form;  // "lowered", "functional", "v1" or ""
  bool has_weights = false;  // `weights=1`: name.weights lists Consts to fill
  bool has_text = true;      // `pbtxt=0`: no name.pbtxt is committed
  std::vector<std::string> missing;  // `missing=` (PENDING): ops graphrun lacks
};

// The models of `dir`/`list` (MANIFEST, or PENDING for models graphrun cannot
// run yet); empty if there is none.
std::vector<FixtureModel> ReadFixtureManifest(const std::string& dir,
                                              const std::string& list = "MANIFEST");

// Which of a model's graph files to read.
enum class FixtureGraphFile {
  kBinary,  // name.pb
  kText,    // name.pbtxt; a model without one: name.pb printed as text
};

// The `count` values of the refilled Const `node_name` with scale `scale`,
// bit for bit those of fixture_weights.py: with h the FNV-1a 64 hash of the
// name and z_i = splitmix64(h + (i + 1) * 0x9E3779B97F4A7C15),
// value_i = scale * (float(z_i >> 40) * 2^-23 - 1).
std::vector<float> FixtureWeightValues(absl::string_view node_name, float scale,
                                       int64_t count);

// Fills, in `graph`, every Const that the sidecar file `weights_path` lists
// (float32 nodes whose values were stripped) with FixtureWeightValues.
// NotFound when the file or a listed node is missing, InvalidArgument when a
// line does not parse or a node is not a float Const without values.
absl::Status FillFixtureWeights(const std::string& weights_path, GraphDef* graph);

// The graph of `model` read from `file`, its weights filled (weights=1).
absl::StatusOr<GraphDef> LoadFixtureGraph(const FixtureModel& model,
                                          FixtureGraphFile file = FixtureGraphFile::kBinary);

// `dir` + model + "." + tensor ('/' -> "__", ':' -> '_') + ".npy".
std::string FixtureNpyPath(const FixtureModel& model, const std::string& tensor);

// Runs `model` (its graph from `file`, see LoadFixtureGraph) twice in a
// Session made with `options` (the second run uses the cached plan) and
// adds a gtest failure for every fetch that differs from TensorFlow's beyond
// the model's tolerance. Returns the first error from loading the graph or
// creating or running the session.
// `edit`, if set, rewrites the graph first (e.g. pins its nodes).
absl::Status RunFixture(const FixtureModel& model, const SessionOptions& options,
                        RunMetadata* metadata = nullptr,
                        const std::function<void(GraphDef*)>& edit = nullptr,
                        FixtureGraphFile file = FixtureGraphFile::kBinary);

// As RunFixture, in a session `make` creates over the (edited) graph.
using SessionFactory =
    std::function<absl::StatusOr<std::unique_ptr<Session>>(const GraphDef& graph)>;
absl::Status RunFixtureIn(const FixtureModel& model, const SessionFactory& make,
                          RunMetadata* metadata = nullptr,
                          const std::function<void(GraphDef*)>& edit = nullptr,
                          FixtureGraphFile file = FixtureGraphFile::kBinary);

// Pins each node (but those colocated with another, and those that make or
// carry TensorLists, TensorArrays or other resources, which cannot cross
// workers) to "/job:worker/task:K": K drawn from `seed` for
// PinToRandomTasks, node index mod `tasks` for PinToTasksAlternately.
std::function<void(GraphDef*)> PinToRandomTasks(int tasks, uint32_t seed);
std::function<void(GraphDef*)> PinToTasksAlternately(int tasks);

// Pins the nodes alternately to /device:CPU:0 and CPU:1 (nodes that ask to
// be colocated with another follow it), so a graph is cut in two.
void PinAlternately(GraphDef* graph);

}  // namespace testing
}  // namespace graphrun

#endif  // GRAPHRUN_TESTS_FIXTURE_MANIFEST_H_
