// `graphrun inspect DIR` on a TensorFlow SavedModel directory: per tag set,
// each signature's inputs and outputs (key, dtype, shape, tensor name) and
// method, as `saved_model_cli show --all` prints them. The graph of each
// tag set is then inspected like a GraphDef (ops this build cannot run).
#ifndef GRAPHRUN_TOOLS_SAVED_MODEL_COMMAND_H_
#define GRAPHRUN_TOOLS_SAVED_MODEL_COMMAND_H_

#include <string>

#include "absl/status/statusor.h"

namespace graphrun {

absl::StatusOr<std::string> DescribeSavedModel(const std::string& dir);

}  // namespace graphrun

#endif  // GRAPHRUN_TOOLS_SAVED_MODEL_COMMAND_H_
