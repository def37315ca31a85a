"""Program cases (conformance_cases.program) for the variable ops: ref
variables (VariableV2 and the Assign family) and resource variables
(VarHandleOp and the *VariableOp family, ResourceGather, ResourceScatter*),
each a small graph that makes a variable, changes it and reads it back."""
import numpy as np
import tensorflow as tf

from conformance_cases import f32, f64, i32, i64, program

raw = tf.raw_ops


def opaque(value):
    """value as a tensor of unknown shape: checked when run, not when built."""
    return raw.PlaceholderWithDefault(input=tf.constant(value), shape=tf.TensorShape(None))


def ref_var(value, name="v"):
    """A VariableV2 of value's dtype and shape, and its initializing Assign."""
    v = raw.VariableV2(shape=value.shape, dtype=tf.as_dtype(value.dtype), name=name)
    return v, raw.Assign(ref=v, value=tf.constant(value), name=name + "_init")


def res_var(value, name="h"):
    """A VarHandleOp of value's dtype and shape, and its initializing assign."""
    scope = tf.compat.v1.get_default_graph().get_name_scope()
    h = raw.VarHandleOp(dtype=tf.as_dtype(value.dtype), shape=value.shape,
                        shared_name=f"{scope}/{name}", name=name)
    return h, raw.AssignVariableOp(resource=h, value=tf.constant(value), name=name + "_init")


def _ref_assign_family():
    for dtype in (f32, f64, i32, i64):
        def build(dtype=dtype):
            v, init = ref_var(np.array([[1, 2, 3], [4, 5, 6]], dtype))
            add = raw.AssignAdd(ref=v, value=tf.constant(np.full([2, 3], 10, dtype)), name="add")
            sub = raw.AssignSub(ref=v, value=tf.constant(np.ones([2, 3], dtype)), name="sub")
            return [[init], [add], [sub]], [raw.Identity(input=v, name="read")]
        program("VariableV2", build)
        program("AssignAdd", build)
        program("AssignSub", build)

    def assign_new_shape():
        v, init = ref_var(np.zeros([2], f32))
        grow = raw.Assign(ref=v, value=tf.constant(np.arange(6, dtype=f32).reshape(2, 3)),
                          validate_shape=False, name="grow")
        return [[init], [grow]], [raw.Identity(input=v, name="read")]
    program("Assign", assign_new_shape)

    def assign_validate():
        v, init = ref_var(np.zeros([2], f32))
        bad = raw.Assign(ref=v, value=opaque(np.zeros([3], f32)), name="bad")
        return [[init], [bad]], [raw.Identity(input=v, name="read")]
    program("Assign", assign_validate)

    def uninitialized_read():
        v, _ = ref_var(np.zeros([2], f32))
        return [], [raw.Identity(input=v, name="read")]
    program("VariableV2", uninitialized_read)

    def is_initialized():
        v, init = ref_var(np.zeros([2], f32))
        before = raw.IsVariableInitialized(ref=v, name="before")
        return [[before], [init]], [raw.IsVariableInitialized(ref=v, name="after")]
    program("IsVariableInitialized", is_initialized)

    def is_initialized_before():
        v, _ = ref_var(np.zeros([2], f32))
        return [], [raw.IsVariableInitialized(ref=v, name="before")]
    program("IsVariableInitialized", is_initialized_before)


def _resource_family():
    for dtype in (f32, f64, i32, i64):
        def build(dtype=dtype):
            h, init = res_var(np.array([[1, 2], [3, 4], [5, 6]], dtype))
            add = raw.AssignAddVariableOp(resource=h, value=tf.constant(np.full([3, 2], 7, dtype)),
                                          name="add")
            sub = raw.AssignSubVariableOp(resource=h, value=tf.constant(np.ones([3, 2], dtype)),
                                          name="sub")
            read = raw.ReadVariableOp(resource=h, dtype=tf.as_dtype(dtype), name="read")
            return [[init], [add], [sub]], [read]
        for op in ("VarHandleOp", "AssignVariableOp", "AssignAddVariableOp",
                   "AssignSubVariableOp", "ReadVariableOp"):
            program(op, build)

    def read_uninitialized():
        h, _ = res_var(np.zeros([2], f32))
        return [], [raw.ReadVariableOp(resource=h, dtype=tf.float32, name="read")]
    program("ReadVariableOp", read_uninitialized)

    def add_shape_mismatch():
        h, init = res_var(np.zeros([2], f32))
        bad = raw.AssignAddVariableOp(resource=h, value=opaque(np.zeros([3], f32)), name="bad")
        return [[init], [bad]], [raw.ReadVariableOp(resource=h, dtype=tf.float32, name="read")]
    program("AssignAddVariableOp", add_shape_mismatch)

    def is_initialized():
        h, init = res_var(np.zeros([2], f32))
        before = raw.VarIsInitializedOp(resource=h, name="before")
        return [], [before]
    program("VarIsInitializedOp", is_initialized)

    def is_initialized_after():
        h, init = res_var(np.zeros([2], f32))
        return [[init]], [raw.VarIsInitializedOp(resource=h, name="after")]
    program("VarIsInitializedOp", is_initialized_after)

    for out_type in (tf.int32, tf.int64):
        def shape(out_type=out_type):
            h, init = res_var(np.zeros([4, 0, 3], f32))
            return [[init]], [raw.VariableShape(input=h, out_type=out_type, name="shape")]
        program("VariableShape", shape)

    for dtype, index in ((f32, i32), (f64, i64), (i32, i32)):
        def gather(dtype=dtype, index=index):
            h, init = res_var(np.arange(12, dtype=dtype).reshape(4, 3))
            g = raw.ResourceGather(resource=h, indices=tf.constant(np.array([[3, 0], [1, 1]], index)),
                                   dtype=tf.as_dtype(dtype), name="gather")
            return [[init]], [g]
        program("ResourceGather", gather)

        def scatter(dtype=dtype, index=index):
            h, init = res_var(np.arange(12, dtype=dtype).reshape(4, 3))
            upd = tf.constant(np.arange(6, dtype=dtype).reshape(2, 3) + 100)
            idx = tf.constant(np.array([2, 0], index))
            add = raw.ResourceScatterAdd(resource=h, indices=idx, updates=upd, name="add")
            put = raw.ResourceScatterUpdate(resource=h, indices=tf.constant(np.array([1], index)),
                                            updates=tf.constant(np.full([1, 3], -1, dtype)),
                                            name="put")
            read = raw.ReadVariableOp(resource=h, dtype=tf.as_dtype(dtype), name="read")
            return [[init], [add], [put]], [read]
        program("ResourceScatterAdd", scatter)
        program("ResourceScatterUpdate", scatter)

    def gather_out_of_range():
        h, init = res_var(np.zeros([4, 3], f32))
        g = raw.ResourceGather(resource=h, indices=tf.constant(np.array([4], i32)),
                               dtype=tf.float32, name="gather")
        return [[init]], [g]
    program("ResourceGather", gather_out_of_range)

    def destroy():
        h, init = res_var(np.zeros([2], f32))
        gone = raw.DestroyResourceOp(resource=h, ignore_lookup_error=False, name="destroy")
        return [[init], [gone]], [raw.VarIsInitializedOp(resource=h, name="after")]
    program("DestroyResourceOp", destroy)

    def disable_copy_on_read():
        h, init = res_var(np.ones([2], f32))
        off = raw.DisableCopyOnRead(resource=h, name="off")
        return [[init], [off]], [raw.ReadVariableOp(resource=h, dtype=tf.float32, name="read")]
    program("DisableCopyOnRead", disable_copy_on_read)


_ref_assign_family()
_resource_family()
