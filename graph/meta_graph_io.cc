#include "graph/meta_graph_io.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

GraphFormat FormatForPath(const std::string& path, absl::string_view data) {
  for (absl::string_view ext : {".meta", ".pb"}) {
    if (absl::EndsWith(path, ext)) return GraphFormat::kBinary;
  }
  return DetectGraphFormat(path, data);
}

template <typename Message>
absl::StatusOr<Message> ReadMessageFile(const std::string& path, GraphFormat format) {
  GR_ASSIGN_OR_RETURN(std::string data, ReadFileToString(path));
  if (format == GraphFormat::kAuto) format = FormatForPath(path, data);
  Message message;
  GR_RETURN_IF_ERROR(ParseProto(data, format, path, &message));
  return message;
}

const char* KindName(CollectionDef::KindCase kind) {
  switch (kind) {
    case CollectionDef::kNodeList:
      return "a node_list";
    case CollectionDef::kBytesList:
      return "a bytes_list";
    case CollectionDef::kInt64List:
      return "an int64_list";
    case CollectionDef::kFloatList:
      return "a float_list";
    case CollectionDef::kAnyList:
      return "an any_list";
    case CollectionDef::KIND_NOT_SET:
      break;
  }
  return "empty";
}

// An empty collection (kind not set) reads as an empty list of any kind.
absl::Status CheckKind(absl::string_view name, const CollectionDef& collection,
                       CollectionDef::KindCase want) {
  if (collection.kind_case() == want || collection.kind_case() == CollectionDef::KIND_NOT_SET) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat("collection '", name, "' is ",
                                                 KindName(collection.kind_case()), ", expected ",
                                                 KindName(want)));
}

}  // namespace

absl::StatusOr<MetaGraphDef> ParseMetaGraphDef(absl::string_view data, GraphFormat format,
                                               absl::string_view what) {
  MetaGraphDef meta;
  GR_RETURN_IF_ERROR(ParseProto(data, format, what, &meta));
  return meta;
}

absl::StatusOr<MetaGraphDef> ReadMetaGraphFile(const std::string& path, GraphFormat format) {
  return ReadMessageFile<MetaGraphDef>(path, format);
}

absl::StatusOr<SavedModel> ReadSavedModelFile(const std::string& path, GraphFormat format) {
  return ReadMessageFile<SavedModel>(path, format);
}

absl::StatusOr<std::vector<MetaGraphVariable>> ReadVariableCollection(const MetaGraphDef& meta,
                                                                      absl::string_view name) {
  auto it = meta.collection_def().find(std::string(name));
  if (it == meta.collection_def().end()) {
    return absl::NotFoundError(absl::StrCat("no collection '", name, "'"));
  }
  const CollectionDef& collection = it->second;
  GR_RETURN_IF_ERROR(CheckKind(name, collection, CollectionDef::kBytesList));
  std::vector<MetaGraphVariable> variables;
  const auto& values = collection.bytes_list().value();
  variables.reserve(values.size());
  for (int i = 0; i < values.size(); ++i) {
    VariableDef def;
    if (!def.ParseFromString(values[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("collection '", name, "' entry ", i, " is not a serialized VariableDef"));
    }
    if (def.variable_name().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("collection '", name, "' entry ", i, ": VariableDef has no variable_name"));
    }
    MetaGraphVariable var;
    var.variable_name = def.variable_name();
    var.initializer_name = def.initializer_name();
    var.snapshot_name = def.snapshot_name();
    var.initial_value_name = def.initial_value_name();
    var.is_resource = def.is_resource();
    var.trainable = def.trainable();
    variables.push_back(std::move(var));
  }
  return variables;
}

absl::StatusOr<TrainingMetaGraph> ExtractTrainingMetaGraph(const MetaGraphDef& meta) {
  TrainingMetaGraph out;
  out.graph_def = meta.graph_def();
  out.has_saver_def = meta.has_saver_def();
  out.saver_def = meta.saver_def();
  out.signature_defs.insert(meta.signature_def().begin(), meta.signature_def().end());

  auto train = meta.collection_def().find(kTrainOpCollection);
  if (train != meta.collection_def().end()) {
    GR_RETURN_IF_ERROR(CheckKind(kTrainOpCollection, train->second, CollectionDef::kNodeList));
    const auto& names = train->second.node_list().value();
    out.train_op_names.assign(names.begin(), names.end());
  }

  for (auto [name, list] : {std::make_pair(kTrainableVariablesCollection, &out.trainable_variables),
                            std::make_pair(kVariablesCollection, &out.variables)}) {
    auto vars = ReadVariableCollection(meta, name);
    if (absl::IsNotFound(vars.status())) continue;
    if (!vars.ok()) return vars.status();
    *list = *std::move(vars);
  }
  absl::flat_hash_set<std::string> trainable;
  for (MetaGraphVariable& var : out.trainable_variables) {
    var.trainable = true;
    trainable.insert(var.variable_name);
  }
  for (MetaGraphVariable& var : out.variables) {
    if (trainable.contains(var.variable_name)) var.trainable = true;
  }
  return out;
}

}  // namespace graphrun
