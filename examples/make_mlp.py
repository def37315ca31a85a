#!/usr/bin/env python3
"""Writes examples/mlp.pbtxt: a 4-8-3 MLP classifier as a text GraphDef.

Weights are fixed pseudo-random numbers so the graph (and its outputs) are
reproducible. Uses only the standard library.
"""
import random

rng = random.Random(7)


def const(name, dims, values):
    shape = "".join(f" dim {{ size: {d} }}" for d in dims)
    vals = " ".join(f"float_val: {v:.6f}" for v in values)
    return f'''node {{
  name: "{name}"
  op: "Const"
  attr {{ key: "dtype" value {{ type: DT_FLOAT }} }}
  attr {{ key: "value" value {{ tensor {{ dtype: DT_FLOAT tensor_shape {{{shape} }} {vals} }} }} }}
}}
'''


def op(name, op_type, inputs, extra=""):
    ins = "".join(f'  input: "{i}"\n' for i in inputs)
    return f'''node {{
  name: "{name}"
  op: "{op_type}"
{ins}  attr {{ key: "T" value {{ type: DT_FLOAT }} }}
{extra}}}
'''


def rand(n):
    return [round(rng.uniform(-1, 1), 4) for _ in range(n)]


parts = ['''# A 4-8-3 MLP: softmax(relu(x W1 + b1) W2 + b2). Made by make_mlp.py.
node {
  name: "x"
  op: "Placeholder"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: -1 } dim { size: 4 } } } }
}
''']
parts.append(const("dense1/kernel", [4, 8], rand(32)))
parts.append(const("dense1/bias", [8], rand(8)))
parts.append(op("dense1/MatMul", "MatMul", ["x", "dense1/kernel"],
                '  attr { key: "transpose_a" value { b: false } }\n'
                '  attr { key: "transpose_b" value { b: false } }\n'))
parts.append(op("dense1/BiasAdd", "BiasAdd", ["dense1/MatMul", "dense1/bias"]))
parts.append(op("dense1/Relu", "Relu", ["dense1/BiasAdd"]))
parts.append(const("dense2/kernel", [8, 3], rand(24)))
parts.append(const("dense2/bias", [3], rand(3)))
parts.append(op("dense2/MatMul", "MatMul", ["dense1/Relu", "dense2/kernel"]))
parts.append(op("dense2/BiasAdd", "BiasAdd", ["dense2/MatMul", "dense2/bias"]))
parts.append(op("probs", "Softmax", ["dense2/BiasAdd"]))
parts.append("versions { producer: 1882 }\n")

with open(__file__.replace("make_mlp.py", "mlp.pbtxt"), "w") as f:
    f.write("".join(parts))
