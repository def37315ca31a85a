// Reading TensorFlow's MetaGraphDef (.meta files, as Saver.export_meta_graph
// writes them) and finding in it what a trainer needs: the graph, the saver's
// tensor names, the train ops, the variables and the signatures.
//
// Sits beside graph_io.h, before import: the GraphDef a TrainingMetaGraph
// holds goes to ImportGraphDef (graph/import.h) like any other. Parse errors
// are InvalidArgument naming the input; a collection of the wrong kind or a
// VariableDef that does not parse is InvalidArgument naming the collection.
// Stateless; thread-safe.
//
//   GR_ASSIGN_OR_RETURN(MetaGraphDef meta, ReadMetaGraphFile("model.meta"));
//   GR_ASSIGN_OR_RETURN(TrainingMetaGraph train, ExtractTrainingMetaGraph(meta));
//   // Restore: feed the prefix to train.saver_def.filename_tensor_name() and
//   // run train.saver_def.restore_op_name(); then step with train.train_op_names.
#ifndef GRAPHRUN_GRAPH_META_GRAPH_IO_H_
#define GRAPHRUN_GRAPH_META_GRAPH_IO_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph_io.h"
#include "graph/protos/graph.pb.h"
#include "graph/protos/meta_graph.pb.h"
#include "graph/protos/saved_model.pb.h"
#include "graph/protos/saver.pb.h"
#include "graph/protos/variable.pb.h"

namespace graphrun {

// Collection names TensorFlow's Python (tf.compat.v1.GraphKeys) writes.
inline constexpr char kTrainOpCollection[] = "train_op";
inline constexpr char kVariablesCollection[] = "variables";
inline constexpr char kTrainableVariablesCollection[] = "trainable_variables";

// Parses a MetaGraphDef from binary or text bytes; `what` names the input in
// errors. kAuto guesses from the bytes.
absl::StatusOr<MetaGraphDef> ParseMetaGraphDef(absl::string_view data, GraphFormat format,
                                               absl::string_view what = "meta graph");

// Reads a .meta file. kAuto takes text for .txt/.pbtxt (".meta.txt"),
// binary for .meta/.pb, else guesses from the bytes. Errors name `path`:
// NotFound for a missing file, InvalidArgument for bytes that do not parse.
absl::StatusOr<MetaGraphDef> ReadMetaGraphFile(const std::string& path,
                                               GraphFormat format = GraphFormat::kAuto);

// Reads a SavedModel's saved_model.pb (binary) or saved_model.pbtxt (text).
// TensorFlow 2's object graph (MetaGraphDef field 7) is kept only in binary
// form; a text file that holds one does not parse.
absl::StatusOr<SavedModel> ReadSavedModelFile(const std::string& path,
                                              GraphFormat format = GraphFormat::kAuto);

// One entry of the "variables" or "trainable_variables" collection.
struct MetaGraphVariable {
  std::string variable_name;       // "dense/kernel:0"
  std::string initializer_name;    // "dense/kernel/Assign"
  std::string snapshot_name;       // "dense/kernel/read:0" or ".../Read/ReadVariableOp:0"
  std::string initial_value_name;  // "dense/kernel/Initializer/zeros:0"; may be empty
  bool is_resource = false;        // VarHandleOp rather than VariableV2
  // The VariableDef says so, or the variable is in "trainable_variables".
  bool trainable = false;
};

// What a trainer needs from a MetaGraphDef, copied out of it.
struct TrainingMetaGraph {
  GraphDef graph_def;
  // Empty (has_saver_def false) when the graph was exported without a Saver.
  bool has_saver_def = false;
  SaverDef saver_def;
  // Collection "train_op" (a node_list), in order; empty if absent.
  std::vector<std::string> train_op_names;
  // Collection "variables", in order, with `trainable` filled in.
  std::vector<MetaGraphVariable> variables;
  // Collection "trainable_variables", in order.
  std::vector<MetaGraphVariable> trainable_variables;
  // By signature key; empty for a plain .meta file.
  std::map<std::string, SignatureDef> signature_defs;
};

// Copies the graph and the saver's names out of `meta` and decodes the
// train-op and variable collections. A missing collection is empty; a
// collection of the wrong kind (say "variables" as a node_list) or an entry
// that is not a VariableDef is InvalidArgument naming the collection and the
// entry's index.
absl::StatusOr<TrainingMetaGraph> ExtractTrainingMetaGraph(const MetaGraphDef& meta);

// Decodes a bytes_list collection of serialized VariableDefs. NotFound if
// `meta` has no collection `name`.
absl::StatusOr<std::vector<MetaGraphVariable>> ReadVariableCollection(const MetaGraphDef& meta,
                                                                      absl::string_view name);

}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_META_GRAPH_IO_H_
