"""Records the conformance cases of the cuDNN RNN ops, which TensorFlow runs
on GPUs only: the expected values come from Keras' CPU layers (SimpleRNN,
LSTM, GRU with reset_after, the formulation cuDNN computes), stacked and run
in both directions as cuDNN does, with their weights packed into cuDNN's
canonical params buffer.

Run with TensorFlow installed (never in CI):
    python tests/conformance/make_cudnn_rnn_cases.py
Writes tests/conformance/CudnnRNN.pb, CudnnRNNV2.pb and CudnnRNNV3.pb in the format of
make_conformance.py and their MANIFEST lines (which make_conformance.py
keeps).
"""
import os

import numpy as np
import tensorflow as tf
import keras

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.RandomState(23)
GATES = {"rnn_tanh": 1, "rnn_relu": 1, "lstm": 4, "gru": 3}


def rand(*shape):
    return RNG.uniform(-0.8, 0.8, size=shape).astype(np.float32)


def keras_layer(mode, units, backward, dtype):
    common = dict(return_sequences=True, return_state=True, go_backwards=backward,
                  dtype=np.dtype(dtype).name)
    if mode == "lstm":
        return keras.layers.LSTM(units, **common)
    if mode == "gru":
        return keras.layers.GRU(units, reset_after=True, **common)
    return keras.layers.SimpleRNN(units, activation=mode[4:], **common)


def direction(mode, x, h, c, w, r, bw, br):
    """One layer in one direction of one sequence x [time, in]: Keras' layer
    with the weights of cuDNN's W [gates, units, in], R, bW, bR."""
    units = h.shape[-1]
    layer = keras_layer(mode, units, backward=False, dtype=x.dtype)
    layer.build((1, x.shape[0], x.shape[1]))
    if mode == "gru":
        order = [1, 0, 2]  # Keras' z, r, h from cuDNN's r, z, n
        kernel = np.concatenate([w[g].T for g in order], axis=1)
        rec = np.concatenate([r[g].T for g in order], axis=1)
        bias = np.stack([np.concatenate([bw[g] for g in order]),
                         np.concatenate([br[g] for g in order])])
    else:
        kernel = np.concatenate([m.T for m in w], axis=1)
        rec = np.concatenate([m.T for m in r], axis=1)
        bias = np.concatenate(list(bw + br))
    layer.set_weights([kernel, rec, bias])
    state = [h[None], c[None]] if mode == "lstm" else [h[None]]
    outs = layer(x[None], initial_state=state)
    seq = np.asarray(outs[0])[0]
    return seq, np.asarray(outs[1])[0], (np.asarray(outs[2])[0] if mode == "lstm" else None)


def reference(mode, dirs, x, h0, c0, weights, biases, lengths):
    """cuDNN's forward pass on x [time, batch, in] from Keras' layers."""
    time, batch, _ = x.shape
    layers = h0.shape[0] // dirs
    units = h0.shape[2]
    hn, cn = np.zeros_like(h0), np.zeros_like(c0)
    inp = x
    for l in range(layers):
        out = np.zeros([time, batch, dirs * units], x.dtype)
        for d in range(dirs):
            k = l * dirs + d
            w, r = weights[k]
            bw, br = biases[k]
            for b in range(batch):
                n = lengths[b]
                seq = inp[:n, b]
                if d == 1:
                    seq = seq[::-1]
                if n == 0:
                    hn[k, b], cn[k, b] = h0[k, b], c0[k, b]
                    continue
                y, hb, cb = direction(mode, seq, h0[k, b], c0[k, b], w, r, bw, br)
                out[:n, b, d * units:(d + 1) * units] = y[::-1] if d == 1 else y
                hn[k, b] = hb
                if cb is not None:
                    cn[k, b] = cb
        inp = out
    return inp, hn, cn


def make_case(mode, dirs, time, batch, inp, units, layers, lengths=None, dtype=np.float32):
    g = GATES[mode]
    x = rand(time, batch, inp)
    h0 = rand(layers * dirs, batch, units)
    c0 = rand(layers * dirs, batch, units)
    weights, biases = [], []
    for l in range(layers):
        width = inp if l == 0 else dirs * units
        for _ in range(dirs):
            weights.append((rand(g, units, width), rand(g, units, units)))
            biases.append((rand(g, units), rand(g, units)))
    params = np.concatenate([m.ravel() for wr in weights for m in wr] +
                            [v.ravel() for bb in biases for v in bb])
    lens = lengths if lengths is not None else [time] * batch
    x, h0, c0 = x.astype(dtype), h0.astype(dtype), c0.astype(dtype)
    weights = [tuple(m.astype(dtype) for m in wr) for wr in weights]
    biases = [tuple(v.astype(dtype) for v in bb) for bb in biases]
    params = params.astype(dtype)
    y, hn, cn = reference(mode, dirs, x, h0, c0, weights, biases, lens)
    feeds = [("input", x), ("input_h", h0), ("input_c", c0), ("params", params)]
    wants = [y, hn] + ([cn] if mode == "lstm" else [])
    feeds = [(a, v.astype(dtype)) for a, v in feeds]
    return feeds, wants, dict(rnn_mode=mode, direction="bidirectional" if dirs == 2 else "unidirectional")


def write(op, cases):
    g = tf.Graph()
    with g.as_default():
        for i, (feeds, wants, attrs) in enumerate(cases):
            with tf.name_scope(f"c{i}"):
                kwargs = dict(attrs)
                for arg, value in feeds:
                    kwargs[arg] = tf.compat.v1.placeholder(tf.as_dtype(value.dtype), shape=None, name=arg)
                    tf.constant(value, name=f"feed_{arg}")
                getattr(tf.raw_ops, op)(name="op", **kwargs)
                if isinstance(wants, str):  # the error cuDNN's kernel gives
                    tf.constant(wants, name="error")
                    continue
                for k, want in enumerate(wants):
                    tf.constant(want.astype(feeds[0][1].dtype), name=f"want{k}")
    path = os.path.join(HERE, f"{op}.pb")
    with open(path + ".tmp", "wb") as f:
        f.write(g.as_graph_def().SerializeToString(deterministic=True))
    os.replace(path + ".tmp", path)


def main():
    v1 = []
    for mode in ("lstm", "gru", "rnn_tanh", "rnn_relu"):
        v1.append(make_case(mode, 1, time=5, batch=2, inp=3, units=4, layers=1))
        v1.append(make_case(mode, 2, time=4, batch=3, inp=5, units=3, layers=2))
    v1.append(make_case("gru", 1, time=6, batch=1, inp=4, units=8, layers=3, dtype=np.float64))
    feeds, wants, attrs = make_case("lstm", 1, time=3, batch=2, inp=3, units=4, layers=1)
    feeds[3] = ("params", feeds[3][1][:-1])  # one element short
    v1.append((feeds, "INVALID_ARGUMENT: params size does not match the layers", attrs))
    write("CudnnRNN", v1)

    v3 = []
    for mode in ("lstm", "gru"):
        for dirs in (1, 2):
            feeds, wants, attrs = make_case(mode, dirs, time=5, batch=3, inp=3, units=4, layers=2,
                                            lengths=[5, 2, 0])
            feeds.append(("sequence_lengths", np.array([5, 2, 0], np.int32)))
            v3.append((feeds, wants, attrs))
    # Batch-major input and output.
    feeds, wants, attrs = make_case("lstm", 2, time=4, batch=2, inp=3, units=2, layers=1)
    feeds = [(a, np.swapaxes(v, 0, 1) if a == "input" else v) for a, v in feeds]
    feeds.append(("sequence_lengths", np.array([4, 4], np.int32)))
    v3.append((feeds, [np.swapaxes(wants[0], 0, 1)] + wants[1:], dict(attrs, time_major=False)))
    write("CudnnRNNV3", v3)

    # Drawn after the others, so that their inputs stay as they were.
    v2 = [make_case("lstm", 2, time=3, batch=2, inp=4, units=3, layers=2),
          make_case("gru", 1, time=4, batch=3, inp=2, units=5, layers=1),
          make_case("rnn_tanh", 1, time=2, batch=1, inp=3, units=2, layers=1, dtype=np.float64)]
    write("CudnnRNNV2", v2)
    manifest = os.path.join(HERE, "MANIFEST")
    with open(manifest) as f:
        lines = [l for l in f if l.split()[0] not in ("CudnnRNN", "CudnnRNNV2", "CudnnRNNV3")]
    lines += [f"CudnnRNN {len(v1)}\n", f"CudnnRNNV2 {len(v2)}\n", f"CudnnRNNV3 {len(v3)}\n"]
    with open(manifest + ".tmp", "w") as f:
        f.write(lines[0] + "".join(sorted(lines[1:])))
    os.replace(manifest + ".tmp", manifest)


if __name__ == "__main__":
    main()
