// Reading and writing GraphDefs in TensorFlow's binary and text formats.
//
// Parsing never crashes on bad bytes: truncated or corrupt binary input and
// text syntax errors (with line and column) are InvalidArgument. Writing
// goes to a temporary file renamed into place, so a failed write leaves no
// half-written file. Stateless; thread-safe.
#ifndef GRAPHRUN_GRAPH_GRAPH_IO_H_
#define GRAPHRUN_GRAPH_GRAPH_IO_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"
#include "graph/protos/graph.pb.h"

namespace graphrun {

enum class GraphFormat { kAuto, kBinary, kText };

// "text" / "pbtxt", "binary" / "pb", "auto".
absl::StatusOr<GraphFormat> ParseGraphFormat(absl::string_view name);

// Guesses from the file name (.pbtxt/.txt/.pbtext/.prototxt = text, .pb =
// binary), else from the bytes (printable text that looks like a text proto
// = text).
GraphFormat DetectGraphFormat(absl::string_view path, absl::string_view data);

// Parses a message from binary or text bytes. `what` names the input in
// errors (a file path, say).
absl::Status ParseProto(absl::string_view data, GraphFormat format,
                        absl::string_view what, google::protobuf::Message* out);

absl::StatusOr<GraphDef> ParseGraphDef(absl::string_view data,
                                       GraphFormat format,
                                       absl::string_view what = "graph");
absl::StatusOr<GraphDef> ReadGraphDefFile(const std::string& path,
                                          GraphFormat format = GraphFormat::kAuto);

absl::StatusOr<std::string> SerializeGraphDef(const GraphDef& graph,
                                              GraphFormat format);

// Binary form with map entries sorted by key, so equal messages give equal
// bytes (graphrun's outputs are reproducible).
std::string SerializeDeterministically(const google::protobuf::Message& message);

// Reads a whole file; NotFound / PermissionDenied / InvalidArgument.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);
// Writes `data` to `path` atomically (temp file in the same directory, then
// rename). On failure nothing is left at `path` or beside it.
absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view data);

absl::Status WriteGraphDefFile(const std::string& path, const GraphDef& graph,
                               GraphFormat format);

}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_GRAPH_IO_H_
