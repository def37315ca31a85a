#!/usr/bin/env bash
# `graphrun run DIR` and `graphrun inspect DIR` on SavedModels TensorFlow
# wrote (fixtures/saved_models/make_saved_models.py and
# make_text_saved_models.py): Keras 3 exports of an MLP and of a CNN with
# BatchNormalization, a tf.Module with two
# signatures (one loops), a TF1 simple_save with ref variables, a Keras
# StringLookup over a vocabulary asset, a Keras TextVectorization and a TF1
# Builder graph with tables read from text-file assets (string inputs from
# NumPy 'U' and 'S' arrays).
# Every signature's outputs, fed by input key and written as
# DIR/<output key>.npy, are what TensorFlow's loaded signature returned
# (the table models' exactly); a missing asset file and a pickled .npy fail
# naming the file;
# tensor names work as keys; bad directories, tags, signatures, keys and
# dtypes fail (exit 1) naming them and listing what is there. A signature
# that takes an optimizer step trains under `graphrun train DIR --signature
# train` to TensorFlow's losses, and the graph's own save function writes a
# checkpoint with TensorFlow's final values under TensorFlow's keys.
set -uo pipefail
GRAPHRUN="$1"
ALLCLOSE="$2"
F="$(dirname "$3")"
CKPT_TO_NPY="$4"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"

source "$(dirname "$0")/check_lib.sh"

# MODEL SIGNATURE "INPUT..." "OUTPUT..." [TOL]: run, compare every output.
signature() {
  local m="$1" sig="$2" ins="$3" outs="$4" tol="${5:-1e-5}" out="$tmp/$1_$2" feeds=()
  for k in $ins; do feeds+=(--feed "$k=$F/${m}_$k.npy"); done
  "$GRAPHRUN" run "$F/$m" --signature "$sig" "${feeds[@]}" --out "$out" --quiet 2>/dev/null
  check "$m $sig: exit 0" test $? -eq 0
  for o in $outs; do
    check "$m $sig: $o is TensorFlow's" "$ALLCLOSE" "$out/$o.npy" "$F/${m}_${sig}__$o.npy" "$tol"
  done
  check "$m $sig: only the signature's outputs" test "$(ls "$out" | wc -l)" -eq "$(wc -w <<<"$outs")"
}

signature keras_mlp serving_default x output_0
signature keras_mlp serve x output_0
signature keras_cnn serving_default x output_0
signature module serving_default "x n" "h norm"
signature module affine x y
signature tf1_mlp serving_default x "logits probs"
signature keras_lookup serving_default tokens output_0 0
signature tf1_table serving_default words "back ids weights" 0
signature keras_text serving_default text output_0 0
# TextVectorization's other modes: RaggedBincount (multi_hot, count,
# tf_idf), StringNGrams (bigrams), UnicodeDecode/UnicodeEncode (characters).
for mode in multi_hot count tf_idf ngrams chars; do
  signature "keras_text_$mode" serving_default text output_0 0
done

# Tensor names stand for keys; --fetch picks outputs.
out="$tmp/names"
"$GRAPHRUN" run "$F/tf1_mlp" --feed "x:0=$F/tf1_mlp_x.npy" --fetch probs --out "$out" --quiet \
  2>/dev/null
check "tensor-name feed: exit 0" test $? -eq 0
check "--fetch probs only" test "$(ls "$out")" = "probs.npy"
check "--fetch probs is TensorFlow's" "$ALLCLOSE" "$out/probs.npy" \
  "$F/tf1_mlp_serving_default__probs.npy" 1e-5

# Training through a signature: 6 steps, each a batch by input key.
out="$tmp/trained"
"$GRAPHRUN" train "$F/trainer" --signature train --steps 6 --feed_steps "x=$F/trainer_x.npy" \
  --feed_steps "y=$F/trainer_y.npy" --out "$out" --save "$out/model.ckpt" --quiet 2>/dev/null
check "train signature: exit 0" test $? -eq 0
check "train signature: losses are TensorFlow's" "$ALLCLOSE" "$out/loss.npy" \
  "$F/trainer_train__loss.npy" 1e-5
n=0
for want in "$F/trainer_final__"*.npy; do
  key="$(basename "$want" .npy)"
  key="${key#trainer_final__}"
  key="${key//__//}"
  check "train signature: saved $key" "$CKPT_TO_NPY" "$out/model.ckpt" "$key" "$tmp/got.npy"
  check "train signature: $key is TensorFlow's" "$ALLCLOSE" "$tmp/got.npy" "$want" 1e-5
  n=$((n + 1))
done
check "train signature: every variable compared" test "$n" -eq 5

# inspect lists the signatures as saved_model_cli show --all does.
report="$("$GRAPHRUN" inspect "$F/module" 2>/dev/null)"
check "inspect: exit 0" test $? -eq 0
check "inspect: tag set" grep -q "MetaGraphDef with tag-set: 'serve'" <<<"$report"
check "inspect: signature" grep -q "signature_def\['affine'\]:" <<<"$report"
check "inspect: input" grep -q "inputs\['n'\] tensor_info:" <<<"$report"
check "inspect: dtype" grep -q "dtype: DT_INT32" <<<"$report"
check "inspect: shape" grep -q "shape: (-1, 4)" <<<"$report"
check "inspect: tensor name" grep -q "name: serving_default_x:0" <<<"$report"
check "inspect: the graph validates" grep -q "^Validation: OK" <<<"$report"

# Bad input: exit 1, naming what is wrong and what there is.
expect_error() {  # NAME PATTERN ARGS...
  local name="$1" pattern="$2"
  shift 2
  local err
  err="$("$GRAPHRUN" run "$@" --quiet 2>&1 >/dev/null)"
  check "$name: exit 1" test $? -eq 1
  check "$name: says '$pattern'" grep -qF "$pattern" <<<"$err"
}
expect_error "not a SavedModel" "Could not find SavedModel .pb or .pbtxt" "$F/module/variables"
expect_error "unknown tag set" "its tag sets: {serve}" "$F/module" --tag train
expect_error "unknown signature" 'Please choose from: affine, serving_default' "$F/module" \
  --signature nope
expect_error "unknown input key" '"z" is not a valid input key of signature' "$F/module" \
  --signature affine --feed "z=$F/module_x.npy"
expect_error "input missing" "needs input 'n' (int32 [])" "$F/module" --feed "x=$F/module_x.npy"
expect_error "dtype" "input 'x' of signature 'affine' is float; the value fed is int32" \
  "$F/module" --signature affine --feed "x=$F/module_n.npy"
expect_error "unknown output" 'is neither an output key of signature' "$F/module" --signature affine \
  --feed "x=$F/module_x.npy" --fetch nope:0

# A vocabulary asset deleted from a copy of the model: the error names it.
rm -rf "$tmp/no_vocab"
cp -r "$F/keras_lookup" "$tmp/no_vocab"
chmod -R u+w "$tmp/no_vocab"
rm "$tmp/no_vocab/assets/vocab.txt"
expect_error "missing asset" "$tmp/no_vocab/assets/vocab.txt" "$tmp/no_vocab" \
  --feed "tokens=$F/keras_lookup_tokens.npy"

# np.save of an object array (pickled) is refused, naming the file.
{
  printf '\x93NUMPY\x01\x00\x76\x00'
  printf '%-117s\n' "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }"
  printf 'pickled'
} >"$tmp/object.npy"
expect_error "pickled .npy" "$tmp/object.npy: object arrays (dtype 'O') hold pickled Python" \
  "$F/tf1_table" --feed "words=$tmp/object.npy"

finish
