// Loading a TensorFlow SavedModel directory as TensorFlow's C++
// LoadSavedModel does, and calling its signatures: the MetaGraphDef whose
// tag set equals the one asked for; its graph in a Session; one run of the
// graph's own restore op with "<dir>/variables/variables" fed to its saver's
// filename tensor (when the directory has variables); one run of its init
// op (signature __saved_model_init_op, else collection saved_model_main_op,
// else legacy_init_op), asset files fed to their tensors in both runs; then
// each signature call feeds its inputs' tensor names and fetches its
// outputs'. Keras 3 `model.export`, `tf.saved_model.save` and TF1
// `simple_save`/`SavedModelBuilder` directories all load this way: the
// object graph is not needed.
//
//   GR_ASSIGN_OR_RETURN(std::unique_ptr<SavedModelBundle> model,
//                       LoadSavedModel(SessionOptions(), "/models/mlp", {"serve"}));
//   std::vector<std::pair<std::string, Tensor>> out;
//   GR_RETURN_IF_ERROR(model->Run("serving_default", {{"x", batch}}, {}, &out));
//   // out: ("output_0", probabilities), outputs in sorted key order
//
// Errors name the directory, tag set, signature or key, and list what is
// there (tag sets, signature keys, input keys). Thread-safe after loading
// as Session::Run is.
#ifndef GRAPHRUN_RUNTIME_SAVED_MODEL_H_
#define GRAPHRUN_RUNTIME_SAVED_MODEL_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/protos/meta_graph.pb.h"
#include "graph/protos/saved_model.pb.h"
#include "graph/tensor.h"
#include "runtime/session.h"

namespace graphrun {

inline constexpr char kSavedModelServeTag[] = "serve";
inline constexpr char kDefaultSignatureKey[] = "serving_default";
inline constexpr char kInitOpSignatureKey[] = "__saved_model_init_op";

// True if `dir` is a directory holding saved_model.pb or saved_model.pbtxt.
bool IsSavedModelDirectory(const std::string& dir);

// DIR/saved_model.pb, else DIR/saved_model.pbtxt. NotFound naming DIR when
// neither exists; Unimplemented for the chunked form (saved_model.cpb).
absl::StatusOr<SavedModel> ReadSavedModelDir(const std::string& dir);

// The MetaGraphDef whose tags, as a set, equal `tags`. NotFound listing the
// tag sets the SavedModel has.
absl::StatusOr<const MetaGraphDef*> FindMetaGraph(const SavedModel& saved,
                                                  const std::vector<std::string>& tags,
                                                  const std::string& dir);

// The signatures a caller can run (every signature_def but the init op's).
std::map<std::string, const SignatureDef*> CallableSignatures(const MetaGraphDef& meta);

// Signature `key`. NotFound listing the callable keys.
absl::StatusOr<const SignatureDef*> FindSignature(const MetaGraphDef& meta, const std::string& key);

// Runs the restore op and the init op of `meta` in `session` (whose graph
// is meta.graph_def()), as the loader does after creating the session;
// without `restore_variables`, only the init op (the caller restored or
// initialized the variables otherwise).
absl::Status RestoreAndInitialize(Session* session, const MetaGraphDef& meta,
                                  const std::string& dir, bool restore_variables = true);

// A signature call in tensor names: each input key's tensor fed, the
// output keys' tensors fetched. Inputs are checked against the signature:
// an unknown key is InvalidArgument listing the valid keys; a dtype, or a
// shape the TensorInfo's does not admit, is InvalidArgument naming the key;
// a sparse or composite input or output is Unimplemented. `output_keys`
// empty: every output, in sorted key order. A missing input is
// InvalidArgument naming it (unless the signature has a default for it).
struct SignatureCall {
  std::vector<std::pair<std::string, Tensor>> feeds;  // tensor name -> value
  std::vector<std::string> fetches;                   // tensor names
  std::vector<std::string> output_keys;               // in fetch order
};
absl::StatusOr<SignatureCall> MakeSignatureCall(
    const SignatureDef& signature, const std::string& key,
    const std::vector<std::pair<std::string, Tensor>>& inputs,
    const std::vector<std::string>& output_keys);

// A loaded SavedModel: its session (variables restored, tables and assets
// initialized) and the MetaGraphDef it came from.
class SavedModelBundle {
 public:
  SavedModelBundle(std::string dir, MetaGraphDef meta, std::unique_ptr<Session> session)
      : dir_(std::move(dir)), meta_(std::move(meta)), session_(std::move(session)) {}

  const std::string& dir() const { return dir_; }
  const MetaGraphDef& meta_graph() const { return meta_; }
  Session* session() const { return session_.get(); }
  std::map<std::string, const SignatureDef*> signatures() const {
    return CallableSignatures(meta_);
  }

  // Calls signature `key` with `inputs` by input key; `outputs` gets (output
  // key, value) for `output_keys` (every output, sorted, when empty).
  absl::Status Run(const std::string& key,
                   const std::vector<std::pair<std::string, Tensor>>& inputs,
                   const std::vector<std::string>& output_keys,
                   std::vector<std::pair<std::string, Tensor>>* outputs) const;

 private:
  std::string dir_;
  MetaGraphDef meta_;
  std::unique_ptr<Session> session_;
};

// Reads, creates the session, restores and initializes (TensorFlow's
// LoadSavedModel).
absl::StatusOr<std::unique_ptr<SavedModelBundle>> LoadSavedModel(
    const SessionOptions& options, const std::string& dir,
    const std::vector<std::string>& tags = {kSavedModelServeTag});

}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_SAVED_MODEL_H_
