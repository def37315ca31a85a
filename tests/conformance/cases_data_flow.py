"""Program cases (conformance_cases.program) for queues (FIFOQueueV2 and the
Queue*V2 ops) and conditional accumulators (ResourceConditionalAccumulator
and the ResourceAccumulator* ops): the state lives across the runs of one
session, as SyncReplicasOptimizer's token queue and accumulators do. Only
requests that TensorFlow can meet without waiting are recorded (a dequeue
from an empty open queue would wait for ever); the waiting ones are
checked by //tests:data_flow_test."""
import tensorflow as tf

from conformance_cases import program

raw = tf.raw_ops


def c(value, dtype=None):
    return tf.constant(value, dtype=dtype)


def after(deps, make):
    with tf.control_dependencies(deps):
        return make()


# ---------------------------------------------------------------- queues
def _queues():
    def queue(types, shapes=(), capacity=-1, name="q"):
        return raw.FIFOQueueV2(component_types=types, shapes=list(shapes), capacity=capacity,
                               name=name)

    def enqueue(q, values, name="enq"):
        return raw.QueueEnqueueV2(handle=q, components=values, name=name)

    def enqueue_many(q, values, name="enq_many"):
        return raw.QueueEnqueueManyV2(handle=q, components=values, name=name)

    def dequeue(q, types, name="deq"):
        return raw.QueueDequeueV2(handle=q, component_types=types, name=name)

    def in_order():
        # Two tuples of (float vector, int32 scalar), out in the order they went in.
        q = queue([tf.float32, tf.int32])
        first = enqueue(q, [c([1.5, 2.5]), c(7)], "enq0")
        second = enqueue(q, [c([3.0, -4.0, 5.0]), c(8)], "enq1")
        a = dequeue(q, [tf.float32, tf.int32], "deq0")
        b = after(a, lambda: dequeue(q, [tf.float32, tf.int32], "deq1"))
        return [[first], [second]], list(a) + list(b)

    def many():
        q = queue([tf.float32, tf.int32], shapes=[[2], []])
        put = enqueue_many(q, [c([[1, 2], [3, 4], [5, 6]], tf.float32), c([10, 20, 30])])
        n = c(2)
        got = raw.QueueDequeueManyV2(handle=q, n=n, component_types=[tf.float32, tf.int32],
                                     name="deq_many")
        return [[put]], list(got)

    def size_and_closed():
        q = queue([tf.int32], shapes=[[]])
        put = enqueue_many(q, [c([1, 2, 3])])
        one = dequeue(q, [tf.int32])
        size = after(one, lambda: raw.QueueSizeV2(handle=q, name="size"))
        closed = raw.QueueIsClosedV2(handle=q, name="closed")
        return [[put]], [one[0], size, closed]

    def up_to_after_close():
        q = queue([tf.float32], shapes=[[]])
        put = enqueue_many(q, [c([1.0, 2.0, 3.0])])
        close = raw.QueueCloseV2(handle=q, name="close")
        got = raw.QueueDequeueUpToV2(handle=q, n=c(5), component_types=[tf.float32], name="up_to")
        closed = after(got, lambda: raw.QueueIsClosedV2(handle=q, name="closed"))
        return [[put], [close]], [got[0], closed]

    def many_after_close_too_few():
        q = queue([tf.float32], shapes=[[]])
        put = enqueue_many(q, [c([1.0])])
        close = raw.QueueCloseV2(handle=q, name="close")
        got = raw.QueueDequeueManyV2(handle=q, n=c(2), component_types=[tf.float32], name="many")
        return [[put], [close]], [got[0]]

    def dequeue_closed_empty():
        q = queue([tf.float32])
        close = raw.QueueCloseV2(handle=q, name="close")
        return [[close]], list(dequeue(q, [tf.float32]))

    def enqueue_after_close():
        q = queue([tf.float32])
        close = raw.QueueCloseV2(handle=q, name="close")
        put = enqueue(q, [c(1.0)])
        return [[close], [put]], [raw.QueueSizeV2(handle=q, name="size")]

    def type_mismatch():
        q = queue([tf.float32])
        return [[enqueue(q, [c(1, tf.int32)])]], [raw.QueueSizeV2(handle=q, name="size")]

    def shape_mismatch():
        q = queue([tf.float32], shapes=[[2]])
        return [[enqueue(q, [c([1.0, 2.0, 3.0])])]], [raw.QueueSizeV2(handle=q, name="size")]

    def many_needs_shapes():
        q = queue([tf.float32])
        put = enqueue(q, [c(1.0)])
        got = raw.QueueDequeueManyV2(handle=q, n=c(1), component_types=[tf.float32], name="many")
        return [[put]], [got[0]]

    def bounded():
        # Capacity 2: the third element goes in once one has come out.
        q = queue([tf.int32], shapes=[[]], capacity=2)
        put = enqueue_many(q, [c([1, 2])])
        one = dequeue(q, [tf.int32], "deq0")
        more = after(one, lambda: enqueue(q, [c(3)], "enq3"))
        rest = after([more], lambda: raw.QueueDequeueManyV2(
            handle=q, n=c(2), component_types=[tf.int32], name="rest"))
        return [[put]], [one[0], rest[0]]

    def strings():
        q = queue([tf.string], shapes=[[]])
        put = enqueue_many(q, [c([b"a", b"bc\x00", b""])])
        got = raw.QueueDequeueManyV2(handle=q, n=c(3), component_types=[tf.string], name="many")
        return [[put]], [got[0]]

    for op, builds in {
        "FIFOQueueV2": (in_order, many, bounded, strings),
        "QueueEnqueueV2": (in_order, enqueue_after_close, type_mismatch, shape_mismatch),
        "QueueEnqueueManyV2": (many, size_and_closed, strings),
        "QueueDequeueV2": (in_order, dequeue_closed_empty),
        "QueueDequeueManyV2": (many, many_after_close_too_few, many_needs_shapes, bounded),
        "QueueDequeueUpToV2": (up_to_after_close,),
        "QueueCloseV2": (up_to_after_close, dequeue_closed_empty, enqueue_after_close),
        "QueueSizeV2": (size_and_closed, enqueue_after_close),
        "QueueIsClosedV2": (size_and_closed, up_to_after_close),
    }.items():
        for build in builds:
            program(op, build)


# ---------------------------------------------------------- accumulators
def _accumulators():
    def accumulator(dtype=tf.float32, shape=(2,), reduction="MEAN", name="acc"):
        return raw.ResourceConditionalAccumulator(dtype=dtype, shape=list(shape), shared_name="",
                                                  reduction_type=reduction, name=name)

    def apply(h, step, grad, dtype=tf.float32, name="apply"):
        return raw.ResourceAccumulatorApplyGradient(handle=h, local_step=c(step, tf.int64),
                                                    gradient=c(grad, dtype), name=name)

    def take(h, n, dtype=tf.float32, name="take"):
        return raw.ResourceAccumulatorTakeGradient(handle=h, num_required=c(n), dtype=dtype,
                                                   name=name)

    def count(h, name="count"):
        return raw.ResourceAccumulatorNumAccumulated(handle=h, name=name)

    def mean_of_two():
        h = accumulator()
        a = apply(h, 0, [1.0, 2.0], name="a0")
        b = apply(h, 0, [3.0, 6.5], name="a1")
        t = take(h, 2)
        n = after([t], lambda: count(h, "after"))
        return [[a], [b]], [t, n]

    def sum_reduction():
        h = accumulator(tf.float64, reduction="SUM")
        a = apply(h, 0, [1.0, 2.0], tf.float64, "a0")
        b = apply(h, 0, [0.25, -1.0], tf.float64, "a1")
        return [[a], [b]], [take(h, 2, tf.float64)]

    def stale_dropped():
        # The take advances the global step to 1: a gradient of step 0 is dropped.
        h = accumulator()
        a = apply(h, 0, [1.0, 1.0], name="a0")
        t = take(h, 1, name="take0")
        stale = apply(h, 0, [100.0, 100.0], name="stale")
        fresh = apply(h, 1, [4.0, 8.0], name="fresh")
        n = count(h)
        return [[a], [t], [stale], [fresh]], [n, after([n], lambda: take(h, 1, name="take1"))]

    def set_global_step():
        h = accumulator()
        s = raw.ResourceAccumulatorSetGlobalStep(handle=h, new_global_step=c(5, tf.int64),
                                                 name="set")
        old = apply(h, 4, [1.0, 1.0], name="old")
        new = apply(h, 5, [2.0, 3.0], name="new")
        n = count(h)
        return [[s], [old], [new]], [n, after([n], lambda: take(h, 1))]

    def shape_mismatch():
        h = accumulator()
        return [[apply(h, 0, [1.0, 2.0, 3.0])]], [count(h)]

    def num_required_zero():
        h = accumulator()
        return [[apply(h, 0, [1.0, 2.0])]], [take(h, 0)]

    def half_mean():
        h = accumulator(tf.float16, shape=(3,))
        a = apply(h, 0, [1.0, 0.1, 65000.0], tf.float16, "a0")
        b = apply(h, 0, [2.0, 0.2, 60000.0], tf.float16, "a1")
        return [[a], [b]], [take(h, 2, tf.float16)]

    for op, builds in {
        "ResourceConditionalAccumulator": (mean_of_two, sum_reduction, half_mean),
        "ResourceAccumulatorApplyGradient": (mean_of_two, stale_dropped, shape_mismatch),
        "ResourceAccumulatorTakeGradient": (mean_of_two, sum_reduction, num_required_zero,
                                            half_mean),
        "ResourceAccumulatorNumAccumulated": (mean_of_two, stale_dropped),
        "ResourceAccumulatorSetGlobalStep": (set_global_step,),
    }.items():
        for build in builds:
            program(op, build)


_queues()
_accumulators()
