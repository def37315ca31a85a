"""Program cases for the ops that read or write files: SaveV2, RestoreV2,
MergeV2Checkpoints (a checkpoint written, merged and read back in the
case's own directory) and InitializeTableFromTextFileV2 (vocab.tsv beside
this file). Paths travel as tokens (make_conformance.PATH_TOKENS): "@TMP@"
is a scratch directory of the test, "@DIR@" this directory."""
import os
import tempfile

import numpy as np
import tensorflow as tf

from conformance_cases import f32, f64, i32, i64, program

raw = tf.raw_ops
TMP = tempfile.mkdtemp(prefix="conformance_")
HERE = os.path.dirname(os.path.abspath(__file__))


def prefix(name):
    """A checkpoint prefix of the case's own in the scratch directory (a
    writer creates the prefix's directory only when its parent exists)."""
    scope = tf.compat.v1.get_default_graph().get_name_scope().replace("/", "_")
    return tf.constant(os.path.join(TMP, f"{scope}_{name}"))


def strings(*values):
    return tf.constant(np.array(values, dtype=object))


VALUES = [np.arange(6, dtype=f32).reshape(2, 3) / 4, np.array([1, -2, 3], i64),
          np.array(b"text", object), np.array([[True, False]]), np.zeros([0, 2], f64),
          np.array([1.5, -2.25], np.float16)]
NAMES = ["a/kernel", "b/step", "c", "d/mask", "e/empty", "f/half"]


def save_restore(order):
    def build():
        p = prefix("ckpt")
        save = raw.SaveV2(prefix=p, tensor_names=strings(*NAMES), shape_and_slices=strings(*[""] * 6),
                          tensors=[tf.constant(v) for v in VALUES], name="save")
        names = [NAMES[k] for k in order]
        restored = raw.RestoreV2(prefix=p, tensor_names=strings(*names),
                                 shape_and_slices=strings(*[""] * len(order)),
                                 dtypes=[tf.as_dtype(VALUES[k].dtype) for k in order], name="restore")
        return [[save]], list(restored)
    return build


for order in ([0, 1, 2, 3, 4, 5], [5, 2, 0]):
    program("SaveV2", save_restore(order))
    program("RestoreV2", save_restore(order))


def restore_missing(name, dtype):
    def build():
        p = prefix("ckpt")
        save = raw.SaveV2(prefix=p, tensor_names=strings("x"), shape_and_slices=strings(""),
                          tensors=[tf.constant([1.0, 2.0])], name="save")
        restored = raw.RestoreV2(prefix=p, tensor_names=strings(name), shape_and_slices=strings(""),
                                 dtypes=[dtype], name="restore")
        return [[save]], list(restored)
    return build


program("RestoreV2", restore_missing("y", tf.float32))  # no such key
program("RestoreV2", restore_missing("x", tf.int32))  # wrong dtype


def restore_no_checkpoint():
    restored = raw.RestoreV2(prefix=prefix("never_written"), tensor_names=strings("x"),
                             shape_and_slices=strings(""), dtypes=[tf.float32], name="restore")
    return [], list(restored)


program("RestoreV2", restore_no_checkpoint)


def merge(delete_old_dirs):
    def build():
        a, b, dest = prefix("part_a/ckpt"), prefix("part_b/ckpt"), prefix("merged")
        save_a = raw.SaveV2(prefix=a, tensor_names=strings("w", "z"), shape_and_slices=strings("", ""),
                            tensors=[tf.constant([1.0, 2.0]), tf.constant(7, tf.int64)])
        save_b = raw.SaveV2(prefix=b, tensor_names=strings("v"), shape_and_slices=strings(""),
                            tensors=[tf.constant(np.array([b"x", b"yz"], object))])
        merged = raw.MergeV2Checkpoints(checkpoint_prefixes=tf.stack([a, b]), destination_prefix=dest,
                                        delete_old_dirs=delete_old_dirs, name="merge")
        restored = raw.RestoreV2(prefix=dest, tensor_names=strings("v", "w", "z"),
                                 shape_and_slices=strings("", "", ""),
                                 dtypes=[tf.string, tf.float32, tf.int64], name="restore")
        return [[save_a, save_b], [merged]], list(restored)
    return build


for delete in (True, False):
    program("MergeV2Checkpoints", merge(delete))


def merge_missing():
    merged = raw.MergeV2Checkpoints(checkpoint_prefixes=tf.stack([prefix("nothing")]),
                                    destination_prefix=prefix("merged"), name="merge")
    return [[merged]], [tf.constant(0)]


program("MergeV2Checkpoints", merge_missing)


def text_file_table(key_index, value_index, key_dtype, value_dtype, keys, default, **attrs):
    def build():
        scope = tf.compat.v1.get_default_graph().get_name_scope()
        table = raw.HashTableV2(key_dtype=key_dtype, value_dtype=value_dtype,
                                shared_name=scope + "/table", name="table")
        init = raw.InitializeTableFromTextFileV2(
            table_handle=table, filename=tf.constant(os.path.join(HERE, "vocab.tsv")),
            key_index=key_index, value_index=value_index, name="init", **attrs)
        found = raw.LookupTableFindV2(table_handle=table, keys=tf.constant(keys),
                                      default_value=tf.constant(default, value_dtype), name="find")
        size = raw.LookupTableSizeV2(table_handle=table, name="size")
        return [[init]], [found, size]
    return build


# key_index/value_index: -2 the whole line, -1 the line number, k the k-th field.
program("InitializeTableFromTextFileV2",
        text_file_table(-2, -1, tf.string, tf.int64,
                        np.array([b"banana\t-2", b"apple", b"cherry pie\t40", b""], object), -9))
program("InitializeTableFromTextFileV2",
        text_file_table(0, 1, tf.string, tf.int64,
                        np.array([b"apple", b"cherry pie", b"kiwi"], object), 0))
program("InitializeTableFromTextFileV2",
        text_file_table(0, -1, tf.string, tf.int64,
                        np.array([b"banana", b"cherry pie"], object), -1, vocab_size=2))
program("InitializeTableFromTextFileV2",
        text_file_table(-1, 0, tf.int64, tf.string, np.array([0, 1, 3, 9], i64), "?"))
program("InitializeTableFromTextFileV2",
        text_file_table(0, 1, tf.string, tf.int64,
                        np.array([b"apple"], object), 0, delimiter=" "))  # fields missing
program("InitializeTableFromTextFileV2",
        text_file_table(0, 1, tf.string, tf.int64,
                        np.array([b"apple"], object), 0, vocab_size=9))  # file too short
