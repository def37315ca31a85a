"""Program cases (conformance_cases.program) for the container ops: lookup
tables (HashTableV2, MutableHashTableV2 and the LookupTable* ops),
TensorArrays (TensorArray*V3), TensorLists (TensorList*) and stacks
(Stack*V2). TensorArrays and stacks live for one step only, so their cases
do everything in the one run that fetches (runs == [])."""
import numpy as np
import tensorflow as tf

from cases_state import opaque
from conformance_cases import f32, i32, i64, program

raw = tf.raw_ops


def c(value, dtype=None):
    return tf.constant(value, dtype=dtype)


def sort_by(keys, *others):
    """keys ascending (unique, small integers) and others in keys' order,
    computed in the graph: an export's order is unspecified."""
    neg = raw.Neg(x=raw.Cast(x=keys, DstT=tf.float32))
    n = raw.Cast(x=raw.Size(input=keys, out_type=tf.int32), DstT=tf.int32)
    _, perm = raw.TopKV2(input=neg, k=n, sorted=True)
    axis = c(0, tf.int32)
    return [raw.GatherV2(params=t, indices=perm, axis=axis) for t in (keys,) + others]


# ---------------------------------------------------------------- tables
def _tables():
    def hash_table(key_dtype, value_dtype, name="table"):
        return raw.HashTableV2(key_dtype=key_dtype, value_dtype=value_dtype, shared_name="",
                               use_node_name_sharing=False, name=name)

    def mutable_table(key_dtype, value_dtype, name="table"):
        return raw.MutableHashTableV2(key_dtype=key_dtype, value_dtype=value_dtype,
                                      shared_name="", use_node_name_sharing=False, name=name)

    init_ops = ("HashTableV2", "InitializeTableV2", "LookupTableFindV2", "LookupTableSizeV2")

    def str_to_int():
        t = hash_table(tf.string, tf.int64)
        init = raw.InitializeTableV2(table_handle=t, keys=c([b"a", b"b", b"c"]),
                                     values=c(np.array([10, 20, 30], i64)), name="init")
        find = raw.LookupTableFindV2(table_handle=t, keys=c([b"b", b"z", b"a", b"c", b""]),
                                     default_value=c(np.int64(-1)), name="find")
        return [[init]], [find, raw.LookupTableSizeV2(table_handle=t, name="size")]

    def int_to_str():
        t = hash_table(tf.int64, tf.string)
        init = raw.InitializeTableV2(table_handle=t, keys=c(np.array([3, -1, 7, 0], i64)),
                                     values=c([b"three", b"minus one", b"seven", b"zero"]),
                                     name="init")
        find = raw.LookupTableFindV2(table_handle=t,
                                     keys=c(np.array([[7, 8], [-1, 0], [5, 3]], i64)),
                                     default_value=c(b"?"), name="find")
        return [[init]], [find, raw.LookupTableSizeV2(table_handle=t, name="size")]

    def int_to_float():
        t = hash_table(tf.int64, tf.float32)
        init = raw.InitializeTableV2(table_handle=t, keys=c(np.arange(5, dtype=i64) * 2),
                                     values=c(np.arange(5, dtype=f32) / 4), name="init")
        find = raw.LookupTableFindV2(table_handle=t, keys=c(np.arange(10, dtype=i64)),
                                     default_value=c(np.float32(-0.5)), name="find")
        return [[init]], [find]

    def size_before_init():
        t = hash_table(tf.string, tf.int64)
        return [], [raw.LookupTableSizeV2(table_handle=t, name="size")]

    def find_before_init():
        t = hash_table(tf.string, tf.int64)
        find = raw.LookupTableFindV2(table_handle=t, keys=c([b"a"]),
                                     default_value=c(np.int64(0)), name="find")
        return [], [find]

    def init_twice_same():
        t = hash_table(tf.int64, tf.int64)
        keys, values = np.array([1, 2], i64), np.array([5, 6], i64)
        a = raw.InitializeTableV2(table_handle=t, keys=c(keys), values=c(values), name="init")
        b = raw.InitializeTableV2(table_handle=t, keys=c(keys), values=c(values), name="again")
        find = raw.LookupTableFindV2(table_handle=t, keys=c(np.array([2, 1, 0], i64)),
                                     default_value=c(np.int64(0)), name="find")
        return [[a], [b]], [find]

    def init_twice_different():
        t = hash_table(tf.int64, tf.int64)
        a = raw.InitializeTableV2(table_handle=t, keys=c(np.array([1, 2], i64)),
                                  values=c(np.array([5, 6], i64)), name="init")
        b = raw.InitializeTableV2(table_handle=t, keys=c(np.array([1, 2], i64)),
                                  values=c(np.array([5, 7], i64)), name="again")
        return [[a], [b]], [raw.LookupTableSizeV2(table_handle=t, name="size")]

    def init_size_mismatch():
        t = hash_table(tf.string, tf.int64)
        init = raw.InitializeTableV2(table_handle=t, keys=opaque(np.array([b"a", b"b", b"c"])),
                                     values=opaque(np.array([1, 2], i64)), name="init")
        return [[init]], [raw.LookupTableSizeV2(table_handle=t, name="size")]

    def init_duplicate_keys():
        t = hash_table(tf.int64, tf.int64)
        init = raw.InitializeTableV2(table_handle=t, keys=c(np.array([1, 2, 1], i64)),
                                     values=c(np.array([5, 6, 7], i64)), name="init")
        return [[init]], [raw.LookupTableSizeV2(table_handle=t, name="size")]

    def find_bad_default():
        t = hash_table(tf.int64, tf.float32)
        init = raw.InitializeTableV2(table_handle=t, keys=c(np.array([1], i64)),
                                     values=c(np.array([1.5], f32)), name="init")
        find = raw.LookupTableFindV2(table_handle=t, keys=c(np.array([1, 2], i64)),
                                     default_value=opaque(np.array([-3, 9, 4], f32)),
                                     name="find")
        return [[init]], [find]

    def find_full_size_default():
        # a default per key: a HashTable takes its first element for every
        # missing key, a MutableHashTable the key's own
        t = hash_table(tf.int64, tf.float32)
        init = raw.InitializeTableV2(table_handle=t, keys=c(np.array([1], i64)),
                                     values=c(np.array([1.5], f32)), name="init")
        find = raw.LookupTableFindV2(table_handle=t, keys=c(np.array([[2, 1], [3, 4]], i64)),
                                     default_value=c(np.array([[-3, 9], [4, 7]], f32)),
                                     name="find")
        m = mutable_table(tf.int64, tf.float32, name="mutable")
        ins = raw.LookupTableInsertV2(table_handle=m, keys=c(np.array([1], i64)),
                                      values=c(np.array([1.5], f32)), name="insert")
        mfind = raw.LookupTableFindV2(table_handle=m, keys=c(np.array([[2, 1], [3, 4]], i64)),
                                      default_value=c(np.array([[-3, 9], [4, 7]], f32)),
                                      name="mutable_find")
        return [[init], [ins]], [find, mfind]

    for build in (str_to_int, int_to_str, int_to_float, init_twice_same):
        for op in init_ops:
            program(op, build)
    program("LookupTableSizeV2", size_before_init)
    program("LookupTableFindV2", find_before_init)
    program("HashTableV2", find_before_init)
    program("InitializeTableV2", init_twice_different)
    program("HashTableV2", init_twice_different)
    program("InitializeTableV2", init_size_mismatch)
    program("InitializeTableV2", init_duplicate_keys)
    program("LookupTableFindV2", find_bad_default)
    program("LookupTableFindV2", find_full_size_default)

    mutable_ops = ("MutableHashTableV2", "LookupTableInsertV2", "LookupTableRemoveV2",
                   "LookupTableFindV2", "LookupTableSizeV2")

    def mutable_str_to_int():
        t = mutable_table(tf.string, tf.int64)
        ins = raw.LookupTableInsertV2(table_handle=t, keys=c([b"x", b"y", b"z", b"w"]),
                                      values=c(np.array([1, 2, 3, 4], i64)), name="insert")
        over = raw.LookupTableInsertV2(table_handle=t, keys=c([b"y", b"v"]),
                                       values=c(np.array([20, 5], i64)), name="overwrite")
        rem = raw.LookupTableRemoveV2(table_handle=t, keys=c([b"z", b"nope"]), name="remove")
        find = raw.LookupTableFindV2(table_handle=t,
                                     keys=c([b"w", b"x", b"y", b"z", b"v", b"nope"]),
                                     default_value=c(np.int64(-7)), name="find")
        return [[ins], [over], [rem]], [find, raw.LookupTableSizeV2(table_handle=t, name="size")]

    def mutable_int_to_str():
        t = mutable_table(tf.int64, tf.string)
        ins = raw.LookupTableInsertV2(table_handle=t, keys=c(np.array([[4, 5], [6, 7]], i64)),
                                      values=c([[b"four", b"five"], [b"six", b"seven"]]),
                                      name="insert")
        rem = raw.LookupTableRemoveV2(table_handle=t, keys=c(np.array([[5], [9]], i64)),
                                      name="remove")
        find = raw.LookupTableFindV2(table_handle=t, keys=c(np.array([7, 5, 4, 6, 0], i64)),
                                     default_value=c(b"none"), name="find")
        return [[ins], [rem]], [find, raw.LookupTableSizeV2(table_handle=t, name="size")]

    def mutable_empty():
        t = mutable_table(tf.int64, tf.float32)
        find = raw.LookupTableFindV2(table_handle=t, keys=c(np.array([1, 2], i64)),
                                     default_value=c(np.float32(2.5)), name="find")
        return [], [find, raw.LookupTableSizeV2(table_handle=t, name="size")]

    def mutable_insert_mismatch():
        t = mutable_table(tf.int64, tf.float32)
        ins = raw.LookupTableInsertV2(table_handle=t, keys=opaque(np.array([1, 2, 3], i64)),
                                      values=opaque(np.array([1, 2], f32)), name="insert")
        return [[ins]], [raw.LookupTableSizeV2(table_handle=t, name="size")]

    def insert_into_hash_table():
        t = hash_table(tf.int64, tf.int64)
        init = raw.InitializeTableV2(table_handle=t, keys=c(np.array([1], i64)),
                                     values=c(np.array([2], i64)), name="init")
        ins = raw.LookupTableInsertV2(table_handle=t, keys=c(np.array([3], i64)),
                                      values=c(np.array([4], i64)), name="insert")
        return [[init], [ins]], [raw.LookupTableSizeV2(table_handle=t, name="size")]

    def remove_from_hash_table():
        t = hash_table(tf.int64, tf.int64)
        init = raw.InitializeTableV2(table_handle=t, keys=c(np.array([1], i64)),
                                     values=c(np.array([2], i64)), name="init")
        rem = raw.LookupTableRemoveV2(table_handle=t, keys=c(np.array([1], i64)), name="remove")
        return [[init], [rem]], [raw.LookupTableSizeV2(table_handle=t, name="size")]

    for build in (mutable_str_to_int, mutable_int_to_str):
        for op in mutable_ops:
            program(op, build)
    program("MutableHashTableV2", mutable_empty)
    program("LookupTableSizeV2", mutable_empty)
    program("LookupTableInsertV2", mutable_insert_mismatch)
    program("MutableHashTableV2", mutable_insert_mismatch)
    program("LookupTableInsertV2", insert_into_hash_table)
    program("LookupTableRemoveV2", remove_from_hash_table)

    def export_mutable():
        t = mutable_table(tf.int64, tf.float32)
        ins = raw.LookupTableInsertV2(table_handle=t, keys=c(np.array([9, 3, 5, 1, 7], i64)),
                                      values=c(np.array([0.9, 0.3, 0.5, 0.1, 0.7], f32)),
                                      name="insert")
        rem = raw.LookupTableRemoveV2(table_handle=t, keys=c(np.array([5], i64)), name="remove")
        keys, values = raw.LookupTableExportV2(table_handle=t, Tkeys=tf.int64, Tvalues=tf.float32,
                                               name="export")
        return [[ins], [rem]], sort_by(keys, values)

    def export_hash_table():
        t = hash_table(tf.int64, tf.string)
        init = raw.InitializeTableV2(table_handle=t, keys=c(np.array([30, 10, 20], i64)),
                                     values=c([b"c", b"a", b"b"]), name="init")
        keys, values = raw.LookupTableExportV2(table_handle=t, Tkeys=tf.int64, Tvalues=tf.string,
                                               name="export")
        return [[init]], sort_by(keys, values)

    def export_str_keys():
        # string keys: sorted by their (unique) values instead
        t = mutable_table(tf.string, tf.int64)
        ins = raw.LookupTableInsertV2(table_handle=t, keys=c([b"q", b"r", b"s"]),
                                      values=c(np.array([2, 0, 1], i64)), name="insert")
        keys, values = raw.LookupTableExportV2(table_handle=t, Tkeys=tf.string, Tvalues=tf.int64,
                                               name="export")
        v, k = sort_by(values, keys)
        return [[ins]], [k, v]

    def export_size_only():
        t = mutable_table(tf.string, tf.float32)
        ins = raw.LookupTableInsertV2(table_handle=t, keys=c([b"a", b"b", b"a"]),
                                      values=c(np.array([1, 2, 3], f32)), name="insert")
        keys, values = raw.LookupTableExportV2(table_handle=t, Tkeys=tf.string, Tvalues=tf.float32,
                                               name="export")
        return [[ins]], [raw.Size(input=keys, out_type=tf.int32, name="nkeys"),
                         raw.Size(input=values, out_type=tf.int32, name="nvalues")]

    def import_mutable():
        t = mutable_table(tf.int64, tf.float32)
        ins = raw.LookupTableInsertV2(table_handle=t, keys=c(np.array([1, 2, 3], i64)),
                                      values=c(np.array([1, 2, 3], f32)), name="insert")
        imp = raw.LookupTableImportV2(table_handle=t, keys=c(np.array([3, 4], i64)),
                                      values=c(np.array([30, 40], f32)), name="import")
        find = raw.LookupTableFindV2(table_handle=t, keys=c(np.array([1, 2, 3, 4], i64)),
                                     default_value=c(np.float32(0)), name="find")
        return [[ins], [imp]], [find, raw.LookupTableSizeV2(table_handle=t, name="size")]

    def import_hash_table():
        t = hash_table(tf.string, tf.int64)
        imp = raw.LookupTableImportV2(table_handle=t, keys=c([b"k", b"l"]),
                                      values=c(np.array([11, 12], i64)), name="import")
        find = raw.LookupTableFindV2(table_handle=t, keys=c([b"l", b"m", b"k"]),
                                     default_value=c(np.int64(0)), name="find")
        return [[imp]], [find, raw.LookupTableSizeV2(table_handle=t, name="size")]

    def import_mismatch():
        t = mutable_table(tf.int64, tf.int64)
        imp = raw.LookupTableImportV2(table_handle=t, keys=opaque(np.array([1, 2], i64)),
                                      values=opaque(np.array([1, 2, 3], i64)), name="import")
        return [[imp]], [raw.LookupTableSizeV2(table_handle=t, name="size")]

    def export_uninitialized():
        # TensorFlow's code here is ABORTED.
        t = hash_table(tf.int64, tf.string)
        keys, values = raw.LookupTableExportV2(table_handle=t, Tkeys=tf.int64, Tvalues=tf.string,
                                               name="export")
        return [], [keys, values]

    for build in (export_mutable, export_hash_table, export_str_keys, export_size_only,
                  export_uninitialized):
        program("LookupTableExportV2", build)
    for build in (import_mutable, import_hash_table, import_mismatch):
        program("LookupTableImportV2", build)


# ---------------------------------------------------------------- TensorArray
def _tensor_arrays():
    def ta(size, dtype=tf.float32, **attrs):
        return raw.TensorArrayV3(size=c(size, tf.int32), dtype=dtype, name="ta", **attrs)

    def write_all(h, flow, values, start=0):
        for k, v in enumerate(values):
            flow = raw.TensorArrayWriteV3(handle=h, index=c(start + k, tf.int32), value=c(v),
                                          flow_in=flow, name=f"write{start + k}")
        return flow

    def write_read_gather():
        h, flow = ta(3, clear_after_read=False)
        vals = np.arange(12, dtype=f32).reshape(3, 2, 2)
        flow = write_all(h, flow, list(vals))
        read = raw.TensorArrayReadV3(handle=h, index=c(1, tf.int32), flow_in=flow,
                                     dtype=tf.float32, name="read")
        gather = raw.TensorArrayGatherV3(handle=h, indices=c([2, 0, 2], tf.int32), flow_in=flow,
                                         dtype=tf.float32, name="gather")
        size = raw.TensorArraySizeV3(handle=h, flow_in=flow, name="size")
        with tf.control_dependencies([read, gather, size]):
            close = raw.TensorArrayCloseV3(handle=h, name="close")
        with tf.control_dependencies([close]):
            done = raw.Identity(input=size, name="done")
        return [], [read, gather, size, done]

    def negative_size():
        h, flow = raw.TensorArrayV3(size=opaque(np.int32(-1)), dtype=tf.float32, name="ta")
        return [], [raw.TensorArraySizeV3(handle=h, flow_in=flow, name="size")]

    def write_read_ints():
        h, flow = ta(2, tf.int32)
        flow = write_all(h, flow, [np.array([1, 2, 3], i32), np.array([4, 5, 6], i32)])
        r1 = raw.TensorArrayReadV3(handle=h, index=c(1, tf.int32), flow_in=flow,
                                   dtype=tf.int32, name="read1")
        r0 = raw.TensorArrayReadV3(handle=h, index=c(0, tf.int32), flow_in=flow,
                                   dtype=tf.int32, name="read0")
        return [], [r1, r0, raw.TensorArraySizeV3(handle=h, flow_in=flow, name="size")]

    def dynamic_size():
        h, flow = ta(0, dynamic_size=True, clear_after_read=False)
        flow = write_all(h, flow, [np.array([k, -k], f32) for k in range(4)])
        flow = raw.TensorArrayWriteV3(handle=h, index=c(6, tf.int32),
                                      value=c(np.array([6, -6], f32)), flow_in=flow, name="write6")
        size = raw.TensorArraySizeV3(handle=h, flow_in=flow, name="size")
        gather = raw.TensorArrayGatherV3(handle=h, indices=c([3, 1], tf.int32), flow_in=flow,
                                         dtype=tf.float32, name="gather")
        read = raw.TensorArrayReadV3(handle=h, index=c(6, tf.int32), flow_in=flow,
                                     dtype=tf.float32, name="read")
        return [], [size, gather, read]

    def write_out_of_bounds():
        h, flow = ta(3)
        flow = raw.TensorArrayWriteV3(handle=h, index=c(3, tf.int32), value=c(np.ones(2, f32)),
                                      flow_in=flow, name="write")
        return [], [raw.TensorArraySizeV3(handle=h, flow_in=flow, name="size")]

    def write_negative():
        h, flow = ta(3, dynamic_size=True)
        flow = raw.TensorArrayWriteV3(handle=h, index=c(-1, tf.int32), value=c(np.ones(2, f32)),
                                      flow_in=flow, name="write")
        return [], [raw.TensorArraySizeV3(handle=h, flow_in=flow, name="size")]

    def write_twice():
        h, flow = ta(2)
        flow = write_all(h, flow, [np.ones(2, f32)])
        flow = raw.TensorArrayWriteV3(handle=h, index=c(0, tf.int32), value=c(np.zeros(2, f32)),
                                      flow_in=flow, name="again")
        return [], [raw.TensorArraySizeV3(handle=h, flow_in=flow, name="size")]

    def write_shape_mismatch():
        h, flow = ta(2, element_shape=tf.TensorShape([2]))
        flow = raw.TensorArrayWriteV3(handle=h, index=c(0, tf.int32),
                                      value=opaque(np.ones(3, f32)), flow_in=flow, name="write")
        return [], [raw.TensorArraySizeV3(handle=h, flow_in=flow, name="size")]

    def read_unwritten():
        h, flow = ta(3)
        flow = write_all(h, flow, [np.ones(2, f32)])
        read = raw.TensorArrayReadV3(handle=h, index=c(2, tf.int32), flow_in=flow,
                                     dtype=tf.float32, name="read")
        return [], [read]

    def read_unwritten_known_shape():
        h, flow = ta(3, element_shape=tf.TensorShape([2]))
        flow = write_all(h, flow, [np.ones(2, f32)])
        read = raw.TensorArrayReadV3(handle=h, index=c(2, tf.int32), flow_in=flow,
                                     dtype=tf.float32, name="read")
        return [], [read]

    def read_out_of_bounds():
        h, flow = ta(2)
        flow = write_all(h, flow, [np.ones(2, f32), np.zeros(2, f32)])
        read = raw.TensorArrayReadV3(handle=h, index=c(2, tf.int32), flow_in=flow,
                                     dtype=tf.float32, name="read")
        return [], [read]

    def read_twice_cleared():
        h, flow = ta(2)  # clear_after_read
        flow = write_all(h, flow, [np.ones(2, f32), np.zeros(2, f32)])
        first = raw.TensorArrayReadV3(handle=h, index=c(0, tf.int32), flow_in=flow,
                                      dtype=tf.float32, name="first")
        with tf.control_dependencies([first]):
            second = raw.TensorArrayReadV3(handle=h, index=c(0, tf.int32), flow_in=flow,
                                           dtype=tf.float32, name="second")
        return [], [first, second]

    def read_twice_same_step():
        # two identical reads, no order between them: one of them fails
        h, flow = ta(2)  # clear_after_read
        flow = write_all(h, flow, [np.ones(2, f32), np.zeros(2, f32)])
        first = raw.TensorArrayReadV3(handle=h, index=c(1, tf.int32), flow_in=flow,
                                      dtype=tf.float32, name="first")
        second = raw.TensorArrayReadV3(handle=h, index=c(1, tf.int32), flow_in=flow,
                                       dtype=tf.float32, name="second")
        return [], [first, second]

    def write_waited_by_control():
        # the write's flow is not read: a control edge orders it before the read
        h, flow0 = ta(2, clear_after_read=False)
        w = raw.TensorArrayWriteV3(handle=h, index=c(0, tf.int32),
                                   value=c(np.array([3, 4], f32)), flow_in=flow0, name="write")
        with tf.control_dependencies([w]):
            read = raw.TensorArrayReadV3(handle=h, index=c(0, tf.int32), flow_in=flow0,
                                         dtype=tf.float32, name="read")
        return [], [read]

    def read_after_close():
        h, flow = ta(2)
        flow = write_all(h, flow, [np.ones(2, f32), np.zeros(2, f32)])
        with tf.control_dependencies([flow]):
            close = raw.TensorArrayCloseV3(handle=h, name="close")
        with tf.control_dependencies([close]):
            read = raw.TensorArrayReadV3(handle=h, index=c(0, tf.int32), flow_in=flow,
                                         dtype=tf.float32, name="read")
        return [], [read]

    def gather_out_of_bounds():
        h, flow = ta(2)
        flow = write_all(h, flow, [np.ones(2, f32), np.zeros(2, f32)])
        gather = raw.TensorArrayGatherV3(handle=h, indices=c([0, 5], tf.int32), flow_in=flow,
                                         dtype=tf.float32, name="gather")
        return [], [gather]

    def gather_shape_mismatch():
        h, flow = ta(2)
        flow = write_all(h, flow, [np.ones(2, f32), np.zeros(3, f32)])
        gather = raw.TensorArrayGatherV3(handle=h, indices=c([0, 1], tf.int32), flow_in=flow,
                                         dtype=tf.float32, name="gather")
        return [], [gather]

    def scatter_gather():
        h, flow = ta(4, tf.int32)
        flow = raw.TensorArrayScatterV3(handle=h, indices=c([2, 0, 3, 1], tf.int32),
                                        value=c(np.arange(8, dtype=i32).reshape(4, 2)),
                                        flow_in=flow, name="scatter")
        gather = raw.TensorArrayGatherV3(handle=h, indices=c([0, 1, 2, 3], tf.int32),
                                         flow_in=flow, dtype=tf.int32, name="gather")
        return [], [gather, raw.TensorArraySizeV3(handle=h, flow_in=flow, name="size")]

    def scatter_dynamic():
        h, flow = ta(1, dynamic_size=True, clear_after_read=False)
        flow = raw.TensorArrayScatterV3(handle=h, indices=c([4, 1], tf.int32),
                                        value=c(np.array([[1.5], [-2.5]], f32)),
                                        flow_in=flow, name="scatter")
        size = raw.TensorArraySizeV3(handle=h, flow_in=flow, name="size")
        read = raw.TensorArrayReadV3(handle=h, index=c(4, tf.int32), flow_in=flow,
                                     dtype=tf.float32, name="read")
        return [], [size, read]

    def scatter_out_of_bounds():
        h, flow = ta(2)
        flow = raw.TensorArrayScatterV3(handle=h, indices=c([0, 2], tf.int32),
                                        value=c(np.ones([2, 3], f32)), flow_in=flow,
                                        name="scatter")
        return [], [raw.TensorArraySizeV3(handle=h, flow_in=flow, name="size")]

    def scatter_count_mismatch():
        h, flow = ta(3)
        flow = raw.TensorArrayScatterV3(handle=h, indices=opaque(np.array([0, 1, 2], i32)),
                                        value=opaque(np.ones([2, 3], f32)), flow_in=flow,
                                        name="scatter")
        return [], [raw.TensorArraySizeV3(handle=h, flow_in=flow, name="size")]

    def split_concat():
        h, flow = ta(3)
        flow = raw.TensorArraySplitV3(handle=h, value=c(np.arange(12, dtype=f32).reshape(6, 2)),
                                      lengths=c(np.array([1, 3, 2], i64)), flow_in=flow,
                                      name="split")
        value, lengths = raw.TensorArrayConcatV3(handle=h, flow_in=flow, dtype=tf.float32,
                                                 name="concat")
        return [], [value, lengths]

    def split_read():
        h, flow = ta(3, tf.int32, clear_after_read=False)
        flow = raw.TensorArraySplitV3(handle=h, value=c(np.arange(5, dtype=i32) * 3),
                                      lengths=c(np.array([2, 0, 3], i64)), flow_in=flow,
                                      name="split")
        r0 = raw.TensorArrayReadV3(handle=h, index=c(0, tf.int32), flow_in=flow,
                                   dtype=tf.int32, name="read0")
        r1 = raw.TensorArrayReadV3(handle=h, index=c(1, tf.int32), flow_in=flow,
                                   dtype=tf.int32, name="read1")
        r2 = raw.TensorArrayReadV3(handle=h, index=c(2, tf.int32), flow_in=flow,
                                   dtype=tf.int32, name="read2")
        return [], [r0, r1, r2, raw.TensorArraySizeV3(handle=h, flow_in=flow, name="size")]

    def split_dynamic():
        h, flow = ta(0, dynamic_size=True)
        flow = raw.TensorArraySplitV3(handle=h, value=c(np.arange(4, dtype=f32)),
                                      lengths=c(np.array([1, 1, 2], i64)), flow_in=flow,
                                      name="split")
        return [], [raw.TensorArraySizeV3(handle=h, flow_in=flow, name="size")]

    def split_bad_lengths():
        h, flow = ta(2)
        flow = raw.TensorArraySplitV3(handle=h, value=c(np.arange(5, dtype=f32)),
                                      lengths=opaque(np.array([2, 2], i64)), flow_in=flow,
                                      name="split")
        return [], [raw.TensorArraySizeV3(handle=h, flow_in=flow, name="size")]

    def split_too_many():
        h, flow = ta(2)
        flow = raw.TensorArraySplitV3(handle=h, value=c(np.arange(6, dtype=f32)),
                                      lengths=c(np.array([2, 2, 2], i64)), flow_in=flow,
                                      name="split")
        return [], [raw.TensorArraySizeV3(handle=h, flow_in=flow, name="size")]

    def concat_written():
        h, flow = ta(3)
        flow = write_all(h, flow, [np.ones([2, 3], f32), np.full([1, 3], 2, f32),
                                   np.full([3, 3], 3, f32)])
        value, lengths = raw.TensorArrayConcatV3(handle=h, flow_in=flow, dtype=tf.float32,
                                                 name="concat")
        return [], [value, lengths]

    def concat_mismatch():
        h, flow = ta(2)
        flow = write_all(h, flow, [np.ones([2, 3], f32), np.ones([2, 4], f32)])
        value, _ = raw.TensorArrayConcatV3(handle=h, flow_in=flow, dtype=tf.float32,
                                           name="concat")
        return [], [value]

    def concat_scalars():
        h, flow = ta(2)
        flow = write_all(h, flow, [np.float32(1), np.float32(2)])
        value, _ = raw.TensorArrayConcatV3(handle=h, flow_in=flow, dtype=tf.float32,
                                           name="concat")
        return [], [value]

    # (No case reads the size after a close: TensorFlow's graph optimizer folds
    # the size of a fixed-size array to a constant, so its answer depends on
    # the optimizer, not the kernel.)

    for op, builds in {
        "TensorArrayV3": (write_read_gather, dynamic_size, write_out_of_bounds, negative_size),
        "TensorArrayWriteV3": (write_read_gather, write_read_ints, dynamic_size,
                               write_out_of_bounds, write_negative, write_twice,
                               write_shape_mismatch, write_waited_by_control),
        "TensorArrayReadV3": (write_read_ints, write_read_gather, read_unwritten,
                              read_unwritten_known_shape, read_out_of_bounds, read_twice_cleared,
                              read_after_close, read_twice_same_step),
        "TensorArrayGatherV3": (write_read_gather, dynamic_size, scatter_gather,
                                gather_out_of_bounds, gather_shape_mismatch),
        "TensorArrayScatterV3": (scatter_gather, scatter_dynamic, scatter_out_of_bounds,
                                 scatter_count_mismatch),
        "TensorArrayConcatV3": (split_concat, concat_written, concat_mismatch, concat_scalars),
        "TensorArraySplitV3": (split_concat, split_read, split_dynamic, split_bad_lengths,
                               split_too_many),
        "TensorArraySizeV3": (write_read_gather, dynamic_size, split_read,
                              negative_size),
        "TensorArrayCloseV3": (write_read_gather, read_after_close),
    }.items():
        for build in builds:
            program(op, build)


# ---------------------------------------------------------------- TensorList
def _tensor_lists():
    def shape(dims):
        return c(np.array(dims, i32)) if dims is not None else c(np.int32(-1))

    def stack(h, dtype=tf.float32, dims=None, name="stack", num=-1):
        return raw.TensorListStack(input_handle=h, element_shape=shape(dims), element_dtype=dtype,
                                   num_elements=num, name=name)

    def push_pop():
        h = raw.EmptyTensorList(element_shape=shape([2]), max_num_elements=c(-1, tf.int32),
                                element_dtype=tf.float32, name="empty")
        for k in range(3):
            h = raw.TensorListPushBack(input_handle=h, tensor=c(np.array([k, k + 0.5], f32)),
                                       name=f"push{k}")
        full = stack(h, dims=[2], name="full")
        length = raw.TensorListLength(input_handle=h, name="length")
        rest, top = raw.TensorListPopBack(input_handle=h, element_shape=shape([2]),
                                          element_dtype=tf.float32, name="pop")
        return [], [full, length, top, stack(rest, dims=[2], name="rest"),
                    raw.TensorListLength(input_handle=rest, name="rest_length")]

    def push_ints_unknown_shape():
        h = raw.EmptyTensorList(element_shape=shape(None), max_num_elements=c(-1, tf.int32),
                                element_dtype=tf.int32, name="empty")
        h = raw.TensorListPushBack(input_handle=h, tensor=c(np.array([[1, 2]], i32)),
                                   name="push0")
        h = raw.TensorListPushBack(input_handle=h, tensor=c(np.array([[3, 4]], i32)),
                                   name="push1")
        es = raw.TensorListElementShape(input_handle=h, shape_type=tf.int32, name="element_shape")
        return [], [stack(h, tf.int32), raw.TensorListLength(input_handle=h, name="length"), es]

    def push_full():
        h = raw.EmptyTensorList(element_shape=shape(None), max_num_elements=c(2, tf.int32),
                                element_dtype=tf.float32, name="empty")
        for k in range(3):
            h = raw.TensorListPushBack(input_handle=h, tensor=c(np.float32(k)), name=f"push{k}")
        return [], [raw.TensorListLength(input_handle=h, name="length")]

    def push_shape_mismatch():
        h = raw.EmptyTensorList(element_shape=shape([2]), max_num_elements=c(-1, tf.int32),
                                element_dtype=tf.float32, name="empty")
        h = raw.TensorListPushBack(input_handle=h, tensor=opaque(np.ones(3, f32)), name="push")
        return [], [raw.TensorListLength(input_handle=h, name="length")]

    def pop_empty():
        h = raw.EmptyTensorList(element_shape=shape([2]), max_num_elements=c(-1, tf.int32),
                                element_dtype=tf.float32, name="empty")
        _, top = raw.TensorListPopBack(input_handle=h, element_shape=shape([2]),
                                       element_dtype=tf.float32, name="pop")
        return [], [top]

    def empty_bad_shape():
        h = raw.EmptyTensorList(element_shape=opaque(np.ones([2, 2], i32)),
                                max_num_elements=c(-1, tf.int32), element_dtype=tf.float32,
                                name="empty")
        return [], [raw.TensorListLength(input_handle=h, name="length")]

    def empty_stack():
        h = raw.EmptyTensorList(element_shape=shape([0, 3]), max_num_elements=c(-1, tf.int32),
                                element_dtype=tf.float32, name="empty")
        es = raw.TensorListElementShape(input_handle=h, shape_type=tf.int64, name="element_shape")
        return [], [stack(h, dims=[0, 3]), es]

    def from_tensor():
        t = c(np.arange(12, dtype=f32).reshape(3, 2, 2))
        h = raw.TensorListFromTensor(tensor=t, element_shape=shape([2, 2]), name="from")
        item = raw.TensorListGetItem(input_handle=h, index=c(1, tf.int32),
                                     element_shape=shape([2, 2]), element_dtype=tf.float32,
                                     name="get")
        gather = raw.TensorListGather(input_handle=h, indices=c([2, 0, 2], tf.int32),
                                      element_shape=shape([2, 2]), element_dtype=tf.float32,
                                      name="gather")
        es = raw.TensorListElementShape(input_handle=h, shape_type=tf.int32, name="element_shape")
        return [], [item, gather, es, raw.TensorListLength(input_handle=h, name="length"),
                    stack(h, dims=[2, 2])]

    def from_tensor_partial_shape():
        t = c(np.arange(6, dtype=i64).reshape(3, 2))
        h = raw.TensorListFromTensor(tensor=t, element_shape=shape([-1]), name="from")
        es = raw.TensorListElementShape(input_handle=h, shape_type=tf.int32, name="element_shape")
        return [], [stack(h, tf.int64, dims=[2]), es]

    def from_scalar():
        h = raw.TensorListFromTensor(tensor=opaque(np.float32(3)), element_shape=shape(None),
                                     name="from")
        return [], [raw.TensorListLength(input_handle=h, name="length")]

    def from_tensor_shape_mismatch():
        h = raw.TensorListFromTensor(tensor=opaque(np.ones([3, 2], f32)),
                                     element_shape=shape([3]), name="from")
        return [], [raw.TensorListLength(input_handle=h, name="length")]

    def get_out_of_range():
        h = raw.TensorListFromTensor(tensor=c(np.ones([3, 2], f32)), element_shape=shape([2]),
                                     name="from")
        item = raw.TensorListGetItem(input_handle=h, index=c(3, tf.int32),
                                     element_shape=shape([2]), element_dtype=tf.float32,
                                     name="get")
        return [], [item]

    def reserve_set():
        h = raw.TensorListReserve(element_shape=shape([2]), num_elements=c(4, tf.int32),
                                  element_dtype=tf.float32, name="reserve")
        h = raw.TensorListSetItem(input_handle=h, index=c(2, tf.int32),
                                  item=c(np.array([5, 6], f32)), name="set2")
        h = raw.TensorListSetItem(input_handle=h, index=c(0, tf.int32),
                                  item=c(np.array([1, 2], f32)), name="set0")
        unset = raw.TensorListGetItem(input_handle=h, index=c(1, tf.int32),
                                      element_shape=shape([2]), element_dtype=tf.float32,
                                      name="get_unset")
        item = raw.TensorListGetItem(input_handle=h, index=c(2, tf.int32),
                                     element_shape=shape([2]), element_dtype=tf.float32,
                                     name="get")
        return [], [stack(h, dims=[2]), unset, item,
                    raw.TensorListLength(input_handle=h, name="length")]

    def reserve_unknown_stack():
        h = raw.TensorListReserve(element_shape=shape(None), num_elements=c(2, tf.int32),
                                  element_dtype=tf.float32, name="reserve")
        h = raw.TensorListSetItem(input_handle=h, index=c(0, tf.int32),
                                  item=c(np.array([1, 2, 3], f32)), name="set0")
        return [], [stack(h, dims=None)]

    def reserve_unknown_stack_empty():
        h = raw.TensorListReserve(element_shape=shape(None), num_elements=c(2, tf.int32),
                                  element_dtype=tf.float32, name="reserve")
        return [], [stack(h, dims=None)]

    def reserve_negative():
        h = raw.TensorListReserve(element_shape=shape([2]), num_elements=opaque(np.int32(-1)),
                                  element_dtype=tf.float32, name="reserve")
        return [], [raw.TensorListLength(input_handle=h, name="length")]

    def set_out_of_range():
        h = raw.TensorListReserve(element_shape=shape([2]), num_elements=c(2, tf.int32),
                                  element_dtype=tf.float32, name="reserve")
        h = raw.TensorListSetItem(input_handle=h, index=c(2, tf.int32),
                                  item=c(np.array([1, 2], f32)), name="set")
        return [], [raw.TensorListLength(input_handle=h, name="length")]

    def set_shape_mismatch():
        h = raw.TensorListReserve(element_shape=shape([2]), num_elements=c(2, tf.int32),
                                  element_dtype=tf.float32, name="reserve")
        h = raw.TensorListSetItem(input_handle=h, index=c(0, tf.int32),
                                  item=opaque(np.ones(3, f32)), name="set")
        return [], [raw.TensorListLength(input_handle=h, name="length")]

    def resize():
        h = raw.TensorListFromTensor(tensor=c(np.arange(6, dtype=f32).reshape(3, 2)),
                                     element_shape=shape([2]), name="from")
        grown = raw.TensorListResize(input_handle=h, size=c(5, tf.int32), name="grow")
        shrunk = raw.TensorListResize(input_handle=h, size=c(1, tf.int32), name="shrink")
        return [], [stack(grown, dims=[2], name="grown"),
                    raw.TensorListLength(input_handle=grown, name="grown_length"),
                    stack(shrunk, dims=[2], name="shrunk")]

    def resize_negative():
        h = raw.TensorListFromTensor(tensor=c(np.ones([3, 2], f32)), element_shape=shape([2]),
                                     name="from")
        h = raw.TensorListResize(input_handle=h, size=opaque(np.int32(-2)), name="resize")
        return [], [raw.TensorListLength(input_handle=h, name="length")]

    def gather_out_of_range():
        h = raw.TensorListFromTensor(tensor=c(np.ones([3, 2], f32)), element_shape=shape([2]),
                                     name="from")
        g = raw.TensorListGather(input_handle=h, indices=c([0, 3], tf.int32),
                                 element_shape=shape([2]), element_dtype=tf.float32,
                                 name="gather")
        return [], [g]

    def gather_unset():
        h = raw.TensorListReserve(element_shape=shape([3]), num_elements=c(3, tf.int32),
                                  element_dtype=tf.int32, name="reserve")
        h = raw.TensorListSetItem(input_handle=h, index=c(1, tf.int32),
                                  item=c(np.array([7, 8, 9], i32)), name="set")
        g = raw.TensorListGather(input_handle=h, indices=c([1, 0], tf.int32),
                                 element_shape=shape([3]), element_dtype=tf.int32,
                                 name="gather")
        return [], [g]

    def scatter():
        t = c(np.arange(6, dtype=f32).reshape(3, 2))
        h = raw.TensorListScatter(tensor=t, indices=c([3, 0, 1], tf.int32),
                                  element_shape=shape([2]), name="scatter")
        return [], [stack(h, dims=[2]), raw.TensorListLength(input_handle=h, name="length")]

    def scatter_v2():
        t = c(np.arange(6, dtype=i32).reshape(2, 3))
        h = raw.TensorListScatterV2(tensor=t, indices=c([1, 3], tf.int32),
                                    element_shape=shape([3]), num_elements=c(5, tf.int32),
                                    name="scatter")
        return [], [stack(h, tf.int32, dims=[3]),
                    raw.TensorListLength(input_handle=h, name="length")]

    def scatter_v2_auto_size():
        t = c(np.arange(4, dtype=f32).reshape(2, 2))
        h = raw.TensorListScatterV2(tensor=t, indices=c([2, 0], tf.int32),
                                    element_shape=shape([2]), num_elements=c(-1, tf.int32),
                                    name="scatter")
        return [], [stack(h, dims=[2]), raw.TensorListLength(input_handle=h, name="length")]

    def scatter_negative():
        h = raw.TensorListScatter(tensor=c(np.ones([2, 2], f32)), indices=c([0, -1], tf.int32),
                                  element_shape=shape([2]), name="scatter")
        return [], [raw.TensorListLength(input_handle=h, name="length")]

    def scatter_count_mismatch():
        h = raw.TensorListScatter(tensor=opaque(np.ones([2, 2], f32)),
                                  indices=opaque(np.array([0, 1, 2], i32)),
                                  element_shape=shape([2]), name="scatter")
        return [], [raw.TensorListLength(input_handle=h, name="length")]

    def scatter_v2_too_small():
        h = raw.TensorListScatterV2(tensor=c(np.ones([2, 2], f32)), indices=c([0, 3], tf.int32),
                                    element_shape=shape([2]), num_elements=c(2, tf.int32),
                                    name="scatter")
        return [], [raw.TensorListLength(input_handle=h, name="length")]

    def split_concat():
        t = c(np.arange(12, dtype=f32).reshape(6, 2))
        h = raw.TensorListSplit(tensor=t, element_shape=shape([-1, 2]),
                                lengths=c(np.array([2, 0, 3, 1], i64)), name="split")
        v1, l1 = raw.TensorListConcat(input_handle=h, element_dtype=tf.float32,
                                      element_shape=tf.TensorShape([None, 2]), name="concat")
        v2, l2 = raw.TensorListConcatV2(input_handle=h, element_shape=shape([-1, 2]),
                                        leading_dims=c(np.zeros([0], i64)),
                                        element_dtype=tf.float32, name="concat_v2")
        item = raw.TensorListGetItem(input_handle=h, index=c(2, tf.int32),
                                     element_shape=shape([-1, 2]), element_dtype=tf.float32,
                                     name="get")
        return [], [v1, l1, v2, l2, item, raw.TensorListLength(input_handle=h, name="length")]

    def split_bad_lengths():
        h = raw.TensorListSplit(tensor=c(np.arange(5, dtype=f32)), element_shape=shape([-1]),
                                lengths=opaque(np.array([2, 2], i64)), name="split")
        return [], [raw.TensorListLength(input_handle=h, name="length")]

    def split_scalar():
        h = raw.TensorListSplit(tensor=opaque(np.float32(1)), element_shape=shape(None),
                                lengths=c(np.array([1], i64)), name="split")
        return [], [raw.TensorListLength(input_handle=h, name="length")]

    def concat_pushed():
        h = raw.EmptyTensorList(element_shape=shape(None), max_num_elements=c(-1, tf.int32),
                                element_dtype=tf.int32, name="empty")
        h = raw.TensorListPushBack(input_handle=h, tensor=c(np.array([[1, 2, 3]], i32)),
                                   name="push0")
        h = raw.TensorListPushBack(input_handle=h, tensor=c(np.array([[4, 5, 6], [7, 8, 9]], i32)),
                                   name="push1")
        v1, l1 = raw.TensorListConcat(input_handle=h, element_dtype=tf.int32, name="concat")
        v2, l2 = raw.TensorListConcatV2(input_handle=h, element_shape=shape(None),
                                        leading_dims=c(np.zeros([0], i64)),
                                        element_dtype=tf.int32, name="concat_v2")
        return [], [v1, l1, v2, l2]

    def concat_mismatch():
        h = raw.EmptyTensorList(element_shape=shape(None), max_num_elements=c(-1, tf.int32),
                                element_dtype=tf.float32, name="empty")
        h = raw.TensorListPushBack(input_handle=h, tensor=c(np.ones([1, 3], f32)), name="push0")
        h = raw.TensorListPushBack(input_handle=h, tensor=c(np.ones([2, 2], f32)), name="push1")
        v, _ = raw.TensorListConcat(input_handle=h, element_dtype=tf.float32, name="concat")
        return [], [v]

    def concat_v2_mismatch():
        h = raw.EmptyTensorList(element_shape=shape(None), max_num_elements=c(-1, tf.int32),
                                element_dtype=tf.float32, name="empty")
        h = raw.TensorListPushBack(input_handle=h, tensor=c(np.ones([1, 3], f32)), name="push0")
        h = raw.TensorListPushBack(input_handle=h, tensor=c(np.ones([2, 2], f32)), name="push1")
        v, _ = raw.TensorListConcatV2(input_handle=h, element_shape=shape(None),
                                      leading_dims=c(np.zeros([0], i64)),
                                      element_dtype=tf.float32, name="concat_v2")
        return [], [v]

    def concat_v2_reserved():
        # unset elements take their shape from element_shape and leading_dims
        h = raw.TensorListReserve(element_shape=shape([-1, 2]), num_elements=c(3, tf.int32),
                                  element_dtype=tf.float32, name="reserve")
        h = raw.TensorListSetItem(input_handle=h, index=c(1, tf.int32),
                                  item=c(np.ones([3, 2], f32)), name="set")
        v, lengths = raw.TensorListConcatV2(input_handle=h, element_shape=shape([-1, 2]),
                                            leading_dims=c(np.array([1, 3, 2], i64)),
                                            element_dtype=tf.float32, name="concat_v2")
        return [], [v, lengths]

    def stack_shape_mismatch():
        h = raw.TensorListFromTensor(tensor=c(np.ones([3, 2], f32)), element_shape=shape([2]),
                                     name="from")
        return [], [stack(h, dims=None, num=4)]

    def stack_bad_element_shape():
        h = raw.TensorListFromTensor(tensor=c(np.ones([3, 2], f32)), element_shape=shape(None),
                                     name="from")
        s = raw.TensorListStack(input_handle=h, element_shape=opaque(np.array([3], i32)),
                                element_dtype=tf.float32, num_elements=-1, name="stack")
        return [], [s]

    def get_item_bad_shape():
        h = raw.TensorListFromTensor(tensor=c(np.ones([3, 2], f32)), element_shape=shape(None),
                                     name="from")
        item = raw.TensorListGetItem(input_handle=h, index=c(0, tf.int32),
                                     element_shape=opaque(np.array([5], i32)),
                                     element_dtype=tf.float32, name="get")
        return [], [item]

    def length_of_reserved():
        h = raw.TensorListReserve(element_shape=shape(None), num_elements=c(7, tf.int32),
                                  element_dtype=tf.string, name="reserve")
        es = raw.TensorListElementShape(input_handle=h, shape_type=tf.int32, name="element_shape")
        return [], [raw.TensorListLength(input_handle=h, name="length"), es]

    def string_list():
        h = raw.TensorListFromTensor(tensor=c(np.array([b"ab", b"", b"cd"])),
                                     element_shape=shape([]), name="from")
        h = raw.TensorListPushBack(input_handle=h, tensor=c(b"ef"), name="push")
        h = raw.TensorListSetItem(input_handle=h, index=c(1, tf.int32), item=c(b"x"), name="set")
        return [], [stack(h, tf.string, dims=[]),
                    raw.TensorListGetItem(input_handle=h, index=c(3, tf.int32),
                                          element_shape=shape([]), element_dtype=tf.string,
                                          name="get")]

    for op, builds in {
        "EmptyTensorList": (push_pop, push_ints_unknown_shape, empty_stack, empty_bad_shape),
        "TensorListPushBack": (push_pop, push_ints_unknown_shape, string_list, push_full,
                               push_shape_mismatch),
        "TensorListPopBack": (push_pop, pop_empty),
        "TensorListStack": (push_pop, from_tensor, empty_stack, reserve_set,
                            reserve_unknown_stack, reserve_unknown_stack_empty,
                            stack_shape_mismatch, stack_bad_element_shape),
        "TensorListLength": (push_pop, length_of_reserved, scatter_v2),
        "TensorListElementShape": (from_tensor, from_tensor_partial_shape, empty_stack,
                                   push_ints_unknown_shape, length_of_reserved),
        "TensorListFromTensor": (from_tensor, from_tensor_partial_shape, string_list,
                                 from_scalar, from_tensor_shape_mismatch),
        "TensorListGetItem": (from_tensor, reserve_set, string_list, get_out_of_range,
                              get_item_bad_shape),
        "TensorListGather": (from_tensor, gather_unset, gather_out_of_range),
        "TensorListReserve": (reserve_set, length_of_reserved, reserve_unknown_stack,
                              reserve_negative),
        "TensorListSetItem": (reserve_set, string_list, set_out_of_range, set_shape_mismatch),
        "TensorListResize": (resize, resize_negative),
        "TensorListScatter": (scatter, scatter_negative, scatter_count_mismatch),
        "TensorListScatterV2": (scatter_v2, scatter_v2_auto_size, scatter_v2_too_small),
        "TensorListSplit": (split_concat, split_bad_lengths, split_scalar),
        "TensorListConcat": (split_concat, concat_pushed, concat_mismatch),
        "TensorListConcatV2": (split_concat, concat_pushed, concat_v2_reserved,
                               concat_v2_mismatch),
    }.items():
        for build in builds:
            program(op, build)


# ---------------------------------------------------------------- Stack
def _stacks():
    def new_stack(dtype=tf.float32, max_size=-1):
        return raw.StackV2(max_size=c(max_size, tf.int32), elem_type=dtype, stack_name="s",
                           name="stack")

    def push_chain(h, values, after=()):
        dep = list(after)
        for k, v in enumerate(values):
            with tf.control_dependencies(dep):
                dep = [raw.StackPushV2(handle=h, elem=c(v), name=f"push{k}")]
        return dep

    def pop_chain(h, n, dtype, after):
        dep, pops = after, []
        for k in range(n):
            with tf.control_dependencies(dep):
                p = raw.StackPopV2(handle=h, elem_type=dtype, name=f"pop{k}")
            pops.append(p)
            dep = [p]
        return pops

    def push_pop():
        h = new_stack()
        vals = [np.arange(3, dtype=f32) + 3 * k for k in range(3)]
        pushed = push_chain(h, vals)
        pops = pop_chain(h, 3, tf.float32, pushed)
        with tf.control_dependencies(pops):
            close = raw.StackCloseV2(handle=h, name="close")
        with tf.control_dependencies([close]):
            done = raw.Identity(input=pops[-1], name="done")
        return [], pushed + pops + [done]

    def push_pop_interleaved():
        h = new_stack(tf.int32, max_size=2)
        a = push_chain(h, [np.int32(1), np.int32(2)])
        p = pop_chain(h, 1, tf.int32, a)
        b = push_chain(h, [np.array([[3, 4]], i32)], after=p)
        q = pop_chain(h, 2, tf.int32, b)
        return [], p + q

    def string_stack():
        h = new_stack(tf.string)
        pushed = push_chain(h, [b"first", b"second"])
        return [], pop_chain(h, 2, tf.string, pushed)

    def pop_empty():
        h = new_stack()
        pushed = push_chain(h, [np.float32(1)])
        return [], pop_chain(h, 2, tf.float32, pushed)

    # Each stack has a pop: grappler turns the pushes of a stack without
    # pops into Identities.
    def overflow():
        h = new_stack(max_size=2)
        pushed = push_chain(h, [np.float32(k) for k in range(3)])
        return [], pop_chain(h, 1, tf.float32, pushed)

    def push_after_close():
        h = new_stack()
        first = push_chain(h, [np.float32(1)])
        with tf.control_dependencies(first):
            close = raw.StackCloseV2(handle=h, name="close")
        second = push_chain(h, [np.float32(2)], after=[close])
        return [], pop_chain(h, 1, tf.float32, second)

    def pop_after_close():
        h = new_stack()
        first = push_chain(h, [np.float32(1)])
        with tf.control_dependencies(first):
            close = raw.StackCloseV2(handle=h, name="close")
        return [], pop_chain(h, 1, tf.float32, [close])

    for op, builds in {
        "StackV2": (push_pop, push_pop_interleaved, string_stack, overflow),
        "StackPushV2": (push_pop, push_pop_interleaved, overflow, push_after_close),
        "StackPopV2": (push_pop, string_stack, pop_empty),
        "StackCloseV2": (push_pop, push_after_close, pop_after_close),
    }.items():
        for build in builds:
            program(op, build)


_tables()
_tensor_arrays()
_tensor_lists()
_stacks()
