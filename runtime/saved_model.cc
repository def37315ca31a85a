#include "runtime/saved_model.h"

#include <sys/stat.h>

#include <algorithm>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/graph_io.h"
#include "graph/meta_graph_io.h"
#include "graph/status_macros.h"
#include "graph/tensor_shape.h"

namespace graphrun {
namespace {

bool IsFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string TagSet(const std::vector<std::string>& tags) {
  std::set<std::string> sorted(tags.begin(), tags.end());
  return absl::StrCat("{", absl::StrJoin(sorted, ", "), "}");
}

// "x:0" -> "x"; "^init" -> "init".
std::string NodeOf(std::string tensor) {
  if (!tensor.empty() && tensor[0] == '^') tensor.erase(0, 1);
  const size_t colon = tensor.rfind(':');
  if (colon != std::string::npos &&
      tensor.find_first_not_of("0123456789", colon + 1) == std::string::npos) {
    tensor.resize(colon);
  }
  return tensor;
}

// Each asset's tensor and the path of its file under DIR/assets.
absl::StatusOr<std::vector<std::pair<std::string, Tensor>>> AssetFeeds(const MetaGraphDef& meta,
                                                                      const std::string& dir) {
  std::vector<AssetFileDef> assets(meta.asset_file_def().begin(), meta.asset_file_def().end());
  if (assets.empty()) {
    // TF1 builders list them in a collection of Any-wrapped AssetFileDefs.
    auto it = meta.collection_def().find("saved_model_assets");
    if (it != meta.collection_def().end()) {
      for (const auto& any : it->second.any_list().value()) {
        AssetFileDef asset;
        if (!asset.ParseFromString(any.value())) {
          return absl::InvalidArgumentError(absl::StrCat(
              "SavedModel ", dir, ": an entry of collection saved_model_assets is not an "
              "AssetFileDef"));
        }
        assets.push_back(std::move(asset));
      }
    }
  }
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const AssetFileDef& asset : assets) {
    const std::string path = absl::StrCat(dir, "/assets/", asset.filename());
    if (!IsFile(path)) {
      return absl::NotFoundError(absl::StrCat("SavedModel ", dir, ": asset file ", path,
                                              " (fed to ", asset.tensor_info().name(),
                                              ") does not exist"));
    }
    bool seen = false;
    for (const auto& f : feeds) seen |= f.first == asset.tensor_info().name();
    if (!seen) feeds.emplace_back(asset.tensor_info().name(), Tensor::Scalar<std::string>(path));
  }
  return feeds;
}

// The init op's node name, or "" when the SavedModel has none.
absl::StatusOr<std::string> InitOpName(const MetaGraphDef& meta, const std::string& dir) {
  auto sig = meta.signature_def().find(kInitOpSignatureKey);
  if (sig != meta.signature_def().end()) {
    auto out = sig->second.outputs().find(kInitOpSignatureKey);
    if (out != sig->second.outputs().end()) return NodeOf(out->second.name());
  }
  for (const char* collection : {"saved_model_main_op", "legacy_init_op"}) {
    auto it = meta.collection_def().find(collection);
    if (it == meta.collection_def().end()) continue;
    const auto& nodes = it->second.node_list().value();
    if (nodes.size() != 1) {
      return absl::FailedPreconditionError(absl::StrCat(
          "SavedModel ", dir, ": expected exactly one main op in collection ", collection,
          ", found ", nodes.size()));
    }
    return NodeOf(nodes[0]);
  }
  return std::string();
}

bool ShapeAdmits(const TensorShapeProto& want, const TensorShape& got) {
  if (want.unknown_rank()) return true;
  if (want.dim_size() != got.dims()) return false;
  for (int d = 0; d < want.dim_size(); ++d) {
    if (want.dim(d).size() >= 0 && want.dim(d).size() != got.dim_size(d)) return false;
  }
  return true;
}

std::string ShapeString(const TensorShapeProto& shape) {
  if (shape.unknown_rank()) return "<unknown rank>";
  std::vector<std::string> dims;
  for (const auto& d : shape.dim()) dims.push_back(d.size() < 0 ? "?" : absl::StrCat(d.size()));
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

absl::Status DenseOnly(const TensorInfo& info, const std::string& what) {
  if (info.encoding_case() == TensorInfo::kName) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat(
      what, " is a ", info.encoding_case() == TensorInfo::kCooSparse ? "sparse" : "composite",
      " tensor; only dense signature tensors are supported"));
}

template <typename Map>
std::string Keys(const Map& map) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : map) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  return absl::StrJoin(keys, ", ");
}

}  // namespace

bool IsSavedModelDirectory(const std::string& dir) {
  return IsDirectory(dir) &&
         (IsFile(dir + "/saved_model.pb") || IsFile(dir + "/saved_model.pbtxt"));
}

absl::StatusOr<SavedModel> ReadSavedModelDir(const std::string& dir) {
  for (const char* name : {"saved_model.pb", "saved_model.pbtxt"}) {
    const std::string path = absl::StrCat(dir, "/", name);
    if (IsFile(path)) return ReadSavedModelFile(path);
  }
  if (IsFile(dir + "/saved_model.cpb")) {
    return absl::UnimplementedError(absl::StrCat(
        "SavedModel ", dir, " is in the chunked form (saved_model.cpb, for graphs over 2 GB), "
        "which graphrun does not read"));
  }
  return absl::NotFoundError(absl::StrCat(
      "Could not find SavedModel .pb or .pbtxt at supplied export directory path: ", dir));
}

absl::StatusOr<const MetaGraphDef*> FindMetaGraph(const SavedModel& saved,
                                                  const std::vector<std::string>& tags,
                                                  const std::string& dir) {
  const std::set<std::string> want(tags.begin(), tags.end());
  std::vector<std::string> have;
  for (const MetaGraphDef& meta : saved.meta_graphs()) {
    const auto& t = meta.meta_info_def().tags();
    if (std::set<std::string>(t.begin(), t.end()) == want) return &meta;
    have.push_back(TagSet(std::vector<std::string>(t.begin(), t.end())));
  }
  return absl::NotFoundError(absl::StrCat(
      "Could not find meta graph def matching supplied tags: ", TagSet(tags), " in SavedModel ",
      dir, "; its tag sets: ", have.empty() ? "(none)" : absl::StrJoin(have, "; ")));
}

std::map<std::string, const SignatureDef*> CallableSignatures(const MetaGraphDef& meta) {
  std::map<std::string, const SignatureDef*> out;
  for (const auto& [key, sig] : meta.signature_def()) {
    if (key != kInitOpSignatureKey) out[key] = &sig;
  }
  return out;
}

absl::StatusOr<const SignatureDef*> FindSignature(const MetaGraphDef& meta,
                                                  const std::string& key) {
  const auto sigs = CallableSignatures(meta);
  auto it = sigs.find(key);
  if (it != sigs.end()) return it->second;
  return absl::NotFoundError(absl::StrCat("Could not find signature \"", key,
                                          "\". Please choose from: ",
                                          sigs.empty() ? "(none)" : Keys(sigs)));
}

absl::Status RestoreAndInitialize(Session* session, const MetaGraphDef& meta,
                                  const std::string& dir, bool restore_variables) {
  GR_ASSIGN_OR_RETURN(auto assets, AssetFeeds(meta, dir));
  std::vector<Tensor> unused;
  const std::string prefix = dir + "/variables/variables";
  if (restore_variables && !meta.saver_def().restore_op_name().empty() &&
      IsFile(prefix + ".index")) {
    auto feeds = assets;
    feeds.emplace_back(meta.saver_def().filename_tensor_name(),
                       Tensor::Scalar<std::string>(prefix));
    absl::Status s =
        session->Run(feeds, {}, {NodeOf(meta.saver_def().restore_op_name())}, &unused);
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat("restoring the variables of SavedModel ", dir,
                                                 " from ", prefix, ": ", s.message()));
    }
  }
  GR_ASSIGN_OR_RETURN(std::string init, InitOpName(meta, dir));
  if (!init.empty()) {
    absl::Status s = session->Run(assets, {}, {init}, &unused);
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat("running the init op '", init,
                                                 "' of SavedModel ", dir, ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<SignatureCall> MakeSignatureCall(
    const SignatureDef& signature, const std::string& key,
    const std::vector<std::pair<std::string, Tensor>>& inputs,
    const std::vector<std::string>& output_keys) {
  SignatureCall call;
  std::set<std::string> fed;
  for (const auto& [name, value] : inputs) {
    auto it = signature.inputs().find(name);
    if (it == signature.inputs().end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "\"", name, "\" is not a valid input key of signature '", key,
          "'. Please choose from: ", Keys(signature.inputs())));
    }
    const TensorInfo& info = it->second;
    const std::string what = absl::StrCat("input '", name, "' of signature '", key, "'");
    GR_RETURN_IF_ERROR(DenseOnly(info, what));
    if (value.dtype() != info.dtype()) {
      return absl::InvalidArgumentError(absl::StrCat(what, " is ", DataTypeString(info.dtype()),
                                                     "; the value fed is ",
                                                     DataTypeString(value.dtype())));
    }
    if (!ShapeAdmits(info.tensor_shape(), value.shape())) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " has shape ", ShapeString(info.tensor_shape()), "; the value fed is ",
          value.shape().DebugString()));
    }
    fed.insert(name);
    call.feeds.emplace_back(info.name(), value);
  }
  for (const auto& [name, info] : signature.inputs()) {
    if (fed.count(name)) continue;
    auto d = signature.defaults().find(name);
    if (d == signature.defaults().end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "signature '", key, "' needs input '", name, "' (", DataTypeString(info.dtype()), " ",
          ShapeString(info.tensor_shape()), ")"));
    }
    GR_ASSIGN_OR_RETURN(Tensor value, Tensor::FromProto(d->second));
    GR_RETURN_IF_ERROR(DenseOnly(info, absl::StrCat("input '", name, "'")));
    call.feeds.emplace_back(info.name(), std::move(value));
  }
  std::vector<std::string> keys = output_keys;
  if (keys.empty()) {
    for (const auto& [name, info] : signature.outputs()) keys.push_back(name);
    std::sort(keys.begin(), keys.end());
  }
  for (const std::string& name : keys) {
    auto it = signature.outputs().find(name);
    if (it == signature.outputs().end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "\"", name, "\" is not an output key of signature '", key,
          "'. Please choose from: ", Keys(signature.outputs())));
    }
    GR_RETURN_IF_ERROR(
        DenseOnly(it->second, absl::StrCat("output '", name, "' of signature '", key, "'")));
    call.fetches.push_back(it->second.name());
    call.output_keys.push_back(name);
  }
  return call;
}

absl::Status SavedModelBundle::Run(const std::string& key,
                                   const std::vector<std::pair<std::string, Tensor>>& inputs,
                                   const std::vector<std::string>& output_keys,
                                   std::vector<std::pair<std::string, Tensor>>* outputs) const {
  GR_ASSIGN_OR_RETURN(const SignatureDef* sig, FindSignature(meta_, key));
  GR_ASSIGN_OR_RETURN(SignatureCall call, MakeSignatureCall(*sig, key, inputs, output_keys));
  std::vector<Tensor> values;
  GR_RETURN_IF_ERROR(session_->Run(call.feeds, call.fetches, {}, &values));
  outputs->clear();
  for (size_t i = 0; i < values.size(); ++i) {
    outputs->emplace_back(call.output_keys[i], std::move(values[i]));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<SavedModelBundle>> LoadSavedModel(
    const SessionOptions& options, const std::string& dir, const std::vector<std::string>& tags) {
  GR_ASSIGN_OR_RETURN(SavedModel saved, ReadSavedModelDir(dir));
  GR_ASSIGN_OR_RETURN(const MetaGraphDef* found, FindMetaGraph(saved, tags, dir));
  MetaGraphDef meta = *found;
  auto session = Session::Create(meta.graph_def(), options);
  if (!session.ok()) {
    return absl::Status(session.status().code(),
                        absl::StrCat("SavedModel ", dir, ": ", session.status().message()));
  }
  GR_RETURN_IF_ERROR(RestoreAndInitialize(session->get(), meta, dir));
  return std::make_unique<SavedModelBundle>(dir, std::move(meta), std::move(*session));
}

}  // namespace graphrun
