// `graphrun run DIR` and `graphrun inspect DIR` on a TensorFlow SavedModel
// directory (runtime/saved_model.h): the plan of a signature call, and the
// listing `saved_model_cli show --all` prints.
#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "graph/status_macros.h"
#include "runtime/saved_model.h"
#include "tools/run_command.h"
#include "tools/saved_model_command.h"

namespace graphrun {
namespace {

std::vector<std::string> SplitTags(const std::string& tags) {
  std::vector<std::string> out = absl::StrSplit(tags, ',', absl::SkipWhitespace());
  for (std::string& t : out) t.erase(std::remove(t.begin(), t.end(), ' '), t.end());
  return out;
}

// The input or output key whose tensor is `name` ("x:0" or "x"), or "".
template <typename Map>
std::string KeyOfTensor(const Map& infos, const std::string& name) {
  for (const auto& [key, info] : infos) {
    if (info.name() == name || info.name() == name + ":0") return key;
  }
  return "";
}

std::string ShapeText(const TensorShapeProto& shape) {
  if (shape.unknown_rank()) return "unknown_rank";
  std::vector<std::string> dims;
  for (const auto& d : shape.dim()) dims.push_back(absl::StrCat(d.size()));
  if (dims.size() == 1) return absl::StrCat("(", dims[0], ")");
  return absl::StrCat("(", absl::StrJoin(dims, ", "), ")");
}

void AppendInfos(std::string* out, const char* what,
                 const google::protobuf::Map<std::string, TensorInfo>& infos) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : infos) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  absl::StrAppend(out, "  The given SavedModel SignatureDef contains the following ", what,
                  "(s):\n");
  for (const std::string& k : keys) {
    const TensorInfo& info = infos.at(k);
    absl::StrAppend(out, "    ", what == std::string("input") ? "inputs" : "outputs", "['", k,
                    "'] tensor_info:\n", "        dtype: DT_",
                    absl::AsciiStrToUpper(DataTypeString(info.dtype())), "\n",
                    "        shape: ", ShapeText(info.tensor_shape()), "\n", "        name: ",
                    info.encoding_case() == TensorInfo::kName ? info.name() : "(not dense)",
                    "\n");
  }
}

}  // namespace

absl::StatusOr<RunPlan> PlanSavedModelRun(const RunCommandArgs& args) {
  const std::string dir = args.graph;
  GR_ASSIGN_OR_RETURN(SavedModel saved, ReadSavedModelDir(dir));
  GR_ASSIGN_OR_RETURN(const MetaGraphDef* found,
                      FindMetaGraph(saved, SplitTags(args.tags), dir));
  auto meta = std::make_shared<MetaGraphDef>(*found);
  GR_ASSIGN_OR_RETURN(const SignatureDef* sig, FindSignature(*meta, args.signature));

  std::vector<std::pair<std::string, Tensor>> inputs;
  for (const std::string& flag : args.feeds) {
    GR_ASSIGN_OR_RETURN(auto feed, ReadFeedFlag(flag));
    if (sig->inputs().count(feed.first) == 0) {
      const std::string key = KeyOfTensor(sig->inputs(), feed.first);
      if (!key.empty()) feed.first = key;  // a tensor name: its key
    }
    inputs.push_back(std::move(feed));
  }
  // --fetch: output keys, or tensor names (the output they are, or any
  // tensor of the graph).
  std::vector<std::string> keys, raw;
  for (const std::string& f : args.fetches) {
    if (sig->outputs().count(f)) {
      keys.push_back(f);
    } else if (const std::string key = KeyOfTensor(sig->outputs(), f); !key.empty()) {
      keys.push_back(key);
    } else {
      const std::string node = f.substr(0, f.rfind(':'));
      bool exists = false;
      for (const NodeDef& n : meta->graph_def().node()) exists |= n.name() == node;
      if (!exists) {
        std::vector<std::string> outs;
        for (const auto& [k, v] : sig->outputs()) outs.push_back(k);
        std::sort(outs.begin(), outs.end());
        return absl::InvalidArgumentError(absl::StrCat(
            "--fetch \"", f, "\" is neither an output key of signature '", args.signature,
            "' (", absl::StrJoin(outs, ", "), ") nor a tensor of the graph"));
      }
      raw.push_back(f);
    }
  }
  RunPlan plan;
  if (keys.empty() && raw.empty()) {
    GR_ASSIGN_OR_RETURN(SignatureCall call, MakeSignatureCall(*sig, args.signature, inputs, {}));
    plan.feeds = std::move(call.feeds);
    plan.fetches = call.fetches;
    plan.labels = call.output_keys;
  } else {
    GR_ASSIGN_OR_RETURN(SignatureCall call,
                        MakeSignatureCall(*sig, args.signature, inputs, keys));
    plan.feeds = std::move(call.feeds);
    plan.fetches = call.fetches;
    plan.labels = call.output_keys;
    for (const std::string& r : raw) {
      plan.fetches.push_back(r);
      plan.labels.push_back(r);
    }
  }
  for (size_t i = 0; i < plan.labels.size(); ++i) {
    plan.out_files.push_back(i < plan.labels.size() - raw.size()
                                 ? absl::StrCat(plan.labels[i], ".npy")
                                 : FetchFileName(plan.labels[i]));
  }
  plan.graph = meta->graph_def();
  plan.prepare = [meta, dir](Session* session) {
    return RestoreAndInitialize(session, *meta, dir);
  };
  return plan;
}

absl::StatusOr<std::string> DescribeSavedModel(const std::string& dir) {
  GR_ASSIGN_OR_RETURN(SavedModel saved, ReadSavedModelDir(dir));
  std::string out = absl::StrCat("SavedModel: ", dir, "\n");
  for (const MetaGraphDef& meta : saved.meta_graphs()) {
    std::vector<std::string> tags(meta.meta_info_def().tags().begin(),
                                  meta.meta_info_def().tags().end());
    std::vector<std::string> quoted;
    for (const std::string& t : tags) quoted.push_back(absl::StrCat("'", t, "'"));
    absl::StrAppend(&out, "\nMetaGraphDef with tag-set: ", absl::StrJoin(quoted, ", "),
                    " contains the following SignatureDefs:\n");
    std::vector<std::string> keys;
    for (const auto& [k, v] : meta.signature_def()) keys.push_back(k);
    std::sort(keys.begin(), keys.end());
    for (const std::string& k : keys) {
      const SignatureDef& sig = meta.signature_def().at(k);
      absl::StrAppend(&out, "\nsignature_def['", k, "']:\n");
      AppendInfos(&out, "input", sig.inputs());
      AppendInfos(&out, "output", sig.outputs());
      absl::StrAppend(&out, "  Method name is: ", sig.method_name(), "\n");
    }
    absl::StrAppend(&out, "\nVariables restored from ", dir, "/variables/variables",
                    meta.saver_def().restore_op_name().empty()
                        ? ": none (no saver)"
                        : absl::StrCat(" by '", meta.saver_def().restore_op_name(), "'"),
                    "\n");
  }
  return out;
}

}  // namespace graphrun
