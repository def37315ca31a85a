#include "graph/checkpoint/checkpoint_state.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "graph/checkpoint/file_io.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

// Collects the parser's messages instead of letting protobuf log them.
class ErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (first_.empty()) first_ = absl::StrCat("line ", line + 1, ": ", message);
  }
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

}  // namespace

std::string CheckpointStatePath(const std::string& dir) {
  return dir.empty() ? "checkpoint" : absl::StrCat(dir, dir.back() == '/' ? "" : "/", "checkpoint");
}

absl::StatusOr<CheckpointState> ReadCheckpointState(const std::string& dir) {
  const std::string path = CheckpointStatePath(dir);
  GR_ASSIGN_OR_RETURN(std::string text, checkpoint_io::ReadFile(path));
  CheckpointState state;
  google::protobuf::TextFormat::Parser parser;
  ErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, &state)) {
    return absl::DataLossError(
        absl::StrCat("cannot parse checkpoint state ", path, ": ", errors.first()));
  }
  if (state.model_checkpoint_path().empty()) {
    return absl::DataLossError(
        absl::StrCat("checkpoint state ", path, " has no model_checkpoint_path"));
  }
  return state;
}

absl::Status WriteCheckpointState(const std::string& dir, const CheckpointState& state) {
  const std::string path = CheckpointStatePath(dir);
  if (state.model_checkpoint_path().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("checkpoint state for ", path, " needs a model_checkpoint_path"));
  }
  std::string text;
  if (!google::protobuf::TextFormat::PrintToString(state, &text)) {
    return absl::InternalError(absl::StrCat("cannot print checkpoint state for ", path));
  }
  return checkpoint_io::WriteFileAtomically(path, text);
}

absl::StatusOr<std::string> LatestCheckpoint(const std::string& dir) {
  GR_ASSIGN_OR_RETURN(CheckpointState state, ReadCheckpointState(dir));
  const std::string& p = state.model_checkpoint_path();
  if (p[0] == '/' || dir.empty()) return p;
  return absl::StrCat(dir, dir.back() == '/' ? "" : "/", p);
}

}  // namespace graphrun
