"""Conformance cases (strings2): ReduceJoin, the v1 StringSplit and the
hash-bucket ops."""
import numpy as np
import tensorflow as tf

from conformance_cases import case, f32, f64, i32, i64, rand


def strs(values, shape=None):
    a = np.array([v.encode() if isinstance(v, str) else v for v in values], object)
    return a.reshape(shape) if shape is not None else a


# --- ReduceJoin ---
M = strs(["a", "b", "c", "d", "e", "f"], [2, 3])
T3 = strs([f"x{i}" for i in range(24)], [2, 3, 4])
for axes in ([0], [1], [-1], [-2], [0, 1], [1, 0]):
    case("ReduceJoin", ("inputs", M), ("reduction_indices", np.array(axes, i32)))
case("ReduceJoin", ("inputs", M), ("reduction_indices", np.array(1, i32)), separator=", ")
case("ReduceJoin", ("inputs", M), ("reduction_indices", np.array([0], i32)), keep_dims=True,
     separator="|")
case("ReduceJoin", ("inputs", M), ("reduction_indices", np.array([1, 0], i32)), keep_dims=True)
case("ReduceJoin", ("inputs", M), ("reduction_indices", np.zeros([0], i32)), separator="-")
case("ReduceJoin", ("inputs", M), ("reduction_indices", np.zeros([0], i32)), keep_dims=True)
for axes in ([2, 0], [0, 2], [-1, 1], [1], [0, 1, 2], [2, 1, 0]):
    case("ReduceJoin", ("inputs", T3), ("reduction_indices", np.array(axes, i32)), separator=" ")
case("ReduceJoin", ("inputs", T3), ("reduction_indices", np.array([1, -3], i32)),
     keep_dims=True, separator="+")
case("ReduceJoin", ("inputs", strs(["héllo", "wörld", "", "日本"], [2, 2])),
     ("reduction_indices", np.array([1], i32)), separator="·")
case("ReduceJoin", ("inputs", np.array(b"solo", object)), ("reduction_indices", np.zeros([0], i32)))
case("ReduceJoin", ("inputs", np.zeros([2, 0], object)), ("reduction_indices", np.array([1], i32)),
     separator=",")
case("ReduceJoin", ("inputs", np.zeros([2, 0], object)), ("reduction_indices", np.array([0], i32)))
case("ReduceJoin", ("inputs", np.zeros([0, 3], object)), ("reduction_indices", np.array([0], i32)),
     keep_dims=True)
case("ReduceJoin", ("inputs", M), ("reduction_indices", np.array([2], i32)))       # out of range
case("ReduceJoin", ("inputs", M), ("reduction_indices", np.array([-3], i32)))      # out of range
case("ReduceJoin", ("inputs", M), ("reduction_indices", np.array([0, -2], i32)))   # duplicate

# --- StringSplit (v1) ---
SPL = strs(["a b  c", "", "  ", "x,y;z", " lead", "trail ,", "one"])
case("StringSplit", ("input", SPL), ("delimiter", np.array(b" ", object)))
case("StringSplit", ("input", SPL), ("delimiter", np.array(b" ", object)), skip_empty=False)
case("StringSplit", ("input", SPL), ("delimiter", np.array(b" ,;", object)))
case("StringSplit", ("input", SPL), ("delimiter", np.array(b" ,;", object)), skip_empty=False)
case("StringSplit", ("input", SPL), ("delimiter", np.array(b"", object)))
case("StringSplit", ("input", SPL), ("delimiter", np.array(b"", object)), skip_empty=False)
UNI = strs(["héllo wörld", "日本 語", "", "a"])
case("StringSplit", ("input", UNI), ("delimiter", np.array(b" ", object)))
case("StringSplit", ("input", UNI), ("delimiter", np.array(b"", object)))
case("StringSplit", ("input", strs(["", "", ""])), ("delimiter", np.array(b",", object)),
     skip_empty=False)
case("StringSplit", ("input", np.zeros([0], object)), ("delimiter", np.array(b",", object)))
case("StringSplit", ("input", strs(["a,b"], [1, 1])), ("delimiter", np.array(b",", object)))
case("StringSplit", ("input", strs(["a,b"])), ("delimiter", strs([","])))

# --- Hash buckets ---
WORDS = strs(["", "a", "hello", "héllo wörld", "日本語のテキスト", "abcdefgh", "abcdefghi",
              "The quick brown fox jumps over the lazy dog", "x" * 17, "y" * 33, "z" * 65,
              "0123456789" * 13])
WORDS2D = WORDS.reshape([3, 4])
for n in (1, 2, 10, 1000003, 2**31 - 1, 2**62 + 1, 2**63 - 1):
    case("StringToHashBucketFast", ("input", WORDS), num_buckets=n)
    case("StringToHashBucket", ("string_tensor", WORDS), num_buckets=n)
    case("StringToHashBucketStrong", ("input", WORDS), num_buckets=n, key=[1, 2])
case("StringToHashBucketFast", ("input", WORDS2D), num_buckets=100)
case("StringToHashBucket", ("string_tensor", WORDS2D), num_buckets=100)
case("StringToHashBucketFast", ("input", np.array(b"scalar", object)), num_buckets=7)
case("StringToHashBucket", ("string_tensor", np.array(b"scalar", object)), num_buckets=7)
case("StringToHashBucketFast", ("input", np.zeros([0, 2], object)), num_buckets=5)
case("StringToHashBucket", ("string_tensor", np.zeros([0], object)), num_buckets=5)
case("StringToHashBucketStrong", ("input", WORDS2D), num_buckets=1000,
     key=[-1, 0x123456789ABCDEF])
case("StringToHashBucketStrong", ("input", WORDS), num_buckets=2**40, key=[0, 0])
case("StringToHashBucketStrong", ("input", np.zeros([0], object)), num_buckets=3, key=[5, 6])
case("StringToHashBucketStrong", ("input", WORDS), num_buckets=10, key=[1])        # bad key
case("StringToHashBucketStrong", ("input", WORDS), num_buckets=10, key=[1, 2, 3])  # bad key
