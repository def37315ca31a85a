"""What the conformance cases are made of: `case(op, (arg, value)..., **attrs)`
adds a case for `op` (a list value feeds a list input); `program(op, build)`
adds a case for an op that needs state around it (variables, tables,
lists, control flow): `build()` makes a small graph and returns the steps
to run and the tensors to record; `rand` draws
reproducible inputs; SPECIAL holds the float values every element-wise op
should meet (signed zeros, infinities, NaN)."""
import numpy as np

CASES = {}  # op -> [(inputs: [(arg, value or [values])], attrs)]


def case(op, *inputs, **attrs):
    CASES.setdefault(op, []).append((list(inputs), attrs))


def program(op, build):
    """A case made by build(), called in the case's name scope of a v1 graph,
    which returns (runs, fetches): lists of ops (or tensors) to run one after
    the other as targets, then the tensors whose values are recorded; or
    (runs, fetches, reference) where TensorFlow cannot run the fetches
    itself: the values of `reference`, an equivalent graph, are recorded."""
    CASES.setdefault(op, []).append((build, {}))


f32, f64, i32, i64 = np.float32, np.float64, np.int32, np.int64
RNG = np.random.RandomState(7)


def rand(shape, dtype=f32, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, size=shape).astype(dtype)


SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 3.0, np.inf, -np.inf, np.nan])
