"""Program cases (conformance_cases.program) for the optimizer updates: the
Apply* (ref variables), ResourceApply* (resource variables) and their
Sparse* forms, each a small graph that makes a variable and its slots,
applies the update a few times with different gradients and reads the
variable and every slot back; and the updates TensorFlow refuses when run
(a gradient or hyperparameter of the wrong shape fed through a tensor of
unknown static shape, an index out of range, an uninitialized variable, a
slot of another shape). A resource variable of another dtype than the
update's is left out: TensorFlow's kernel aborts on it (a CHECK).."""
import numpy as np
import tensorflow as tf

from cases_state import opaque, ref_var, res_var
from conformance_cases import f32, f64, i32, i64, program

raw = tf.raw_ops


def _pos(n, lo=0.1):
    return lo + 0.05 * np.arange(n)


def _signed(n, a=0.5):
    return np.linspace(-a, a, n)


# Each family: its slots (with how each starts, a function of the element
# count), its hyperparameters before the gradient and after it (a value, or
# a function of the step for the bias corrections), the gradient's name and
# its boolean attr besides use_locking (with its default), if any.
FAMILIES = {
    "GradientDescent": dict(slots=[], lead=[("alpha", 0.1)], grad="delta"),
    "Momentum": dict(slots=[("accum", _signed)], lead=[("lr", 0.1)],
                     trail=[("momentum", 0.9)], flag=("use_nesterov", False)),
    "KerasMomentum": dict(slots=[("accum", _signed)], lead=[("lr", 0.1)],
                          trail=[("momentum", 0.9)], flag=("use_nesterov", False)),
    "Adam": dict(slots=[("m", lambda n: _signed(n, 0.2)), ("v", _pos)],
                 lead=[("beta1_power", lambda t: 0.9 ** (t + 1)),
                       ("beta2_power", lambda t: 0.999 ** (t + 1)),
                       ("lr", 0.01), ("beta1", 0.9), ("beta2", 0.999), ("epsilon", 1e-7)],
                 flag=("use_nesterov", False)),
    "AdamWithAmsgrad": dict(
        slots=[("m", lambda n: _signed(n, 0.2)), ("v", _pos),
               ("vhat", lambda n: np.where(np.arange(n) % 2 == 0, 2.0, 0.01))],
        lead=[("beta1_power", lambda t: 0.9 ** (t + 1)),
              ("beta2_power", lambda t: 0.999 ** (t + 1)),
              ("lr", 0.01), ("beta1", 0.9), ("beta2", 0.999), ("epsilon", 1e-7)]),
    "AdaMax": dict(slots=[("m", lambda n: _signed(n, 0.2)), ("v", lambda n: _pos(n, 0.2))],
                   lead=[("beta1_power", lambda t: 0.9 ** (t + 1)), ("lr", 0.01),
                         ("beta1", 0.9), ("beta2", 0.999), ("epsilon", 1e-7)]),
    "Adagrad": dict(slots=[("accum", _pos)], lead=[("lr", 0.1)],
                    flag=("update_slots", True)),
    "AdagradV2": dict(slots=[("accum", _pos)], lead=[("lr", 0.1), ("epsilon", 1e-6)],
                      flag=("update_slots", True)),
    "Adadelta": dict(slots=[("accum", _pos), ("accum_update", lambda n: _pos(n, 0.01))],
                     lead=[("lr", 1.0), ("rho", 0.95), ("epsilon", 1e-6)]),
    "RMSProp": dict(slots=[("ms", _pos), ("mom", lambda n: _signed(n, 0.05))],
                    lead=[("lr", 0.01), ("rho", 0.9), ("momentum", 0.5), ("epsilon", 1e-7)]),
    "CenteredRMSProp": dict(
        slots=[("mg", lambda n: _signed(n, 0.3)), ("ms", lambda n: _pos(n, 1.0)),
               ("mom", lambda n: _signed(n, 0.05))],
        lead=[("lr", 0.01), ("rho", 0.9), ("momentum", 0.5), ("epsilon", 1e-7)]),
}

DENSE_SHAPE = (2, 3)
SPARSE_SHAPE = (5, 3)
SPARSE_INDICES = [0, 3, 0, 4]  # row 0 twice


def _op_name(family, resource, sparse):
    return ("Resource" if resource else "") + ("Sparse" if sparse else "") + "Apply" + family


def _const(value, dtype):
    return tf.constant(np.asarray(value, dtype))


def _value(v, step):
    return v(step) if callable(v) else v


def _make_var(value, resource, name):
    return res_var(value, name) if resource else ref_var(value, name)


def _unknown_shape_var(value, resource, name):
    """A variable whose static shape is unknown, and its initializer."""
    dtype = tf.as_dtype(value.dtype)
    if resource:
        scope = tf.compat.v1.get_default_graph().get_name_scope()
        h = raw.VarHandleOp(dtype=dtype, shape=tf.TensorShape(None),
                            shared_name=f"{scope}/{name}", name=name)
        return h, raw.AssignVariableOp(resource=h, value=tf.constant(value), name=name + "_init")
    v = raw.VariableV2(shape=tf.TensorShape(None), dtype=dtype, name=name)
    return v, raw.Assign(ref=v, value=tf.constant(value), validate_shape=False,
                         name=name + "_init")


def _read(var, resource, dtype, name):
    if resource:
        return raw.ReadVariableOp(resource=var, dtype=tf.as_dtype(dtype), name=name)
    return raw.Identity(input=var, name=name)


def _grad(step, shape, dtype):
    rs = np.random.RandomState(100 + step)
    return rs.uniform(-1.0, 1.0, size=shape).astype(dtype)


def builder(family, resource, sparse, dtype, steps=3, use_locking=False, flag=None,
            index=i32, error=None, indices=None, shape=None):
    """The build function of one case: var and slots made and initialized,
    then `steps` updates (each its own op, with its own gradient), then
    var and the slots read back. `error` names a way to make the last
    update one TensorFlow refuses."""
    spec = FAMILIES[family]
    op = _op_name(family, resource, sparse)
    if shape is None:
        shape = SPARSE_SHAPE if sparse else DENSE_SHAPE
    rows = list(SPARSE_INDICES if indices is None else indices)

    def build():
        n = int(np.prod(shape))
        base = (np.linspace(-1.0, 1.0, n) + 0.25).reshape(shape).astype(dtype)
        if error == "uninitialized":
            var = (raw.VarHandleOp(dtype=tf.as_dtype(dtype), shape=shape,
                                   shared_name=tf.compat.v1.get_default_graph()
                                   .get_name_scope() + "/var", name="var") if resource
                   else raw.VariableV2(shape=shape, dtype=tf.as_dtype(dtype), name="var"))
            inits = []
        else:
            var, init = _make_var(base, resource, "var")
            inits = [init]
        slots = []
        for k, (slot, start) in enumerate(spec["slots"]):
            value = start(n).reshape(shape).astype(dtype)
            if error == "slot_shape" and k == 0:  # TF checks only some slots
                s, init = _unknown_shape_var(np.concatenate([value, value]), resource, slot)
            else:
                s, init = _make_var(value, resource, slot)
            slots.append((slot, s))
            inits.append(init)
        attrs = {"use_locking": use_locking}
        if "flag" in spec:
            name, default = spec["flag"]
            attrs[name] = default if flag is None else flag
        grad_name = spec.get("grad", "grad")
        runs = [inits]
        for t in range(steps):
            last = t == steps - 1
            kwargs = dict(attrs, var=var)
            kwargs.update({slot: s for slot, s in slots})
            for k, (h, v) in enumerate(spec["lead"] + spec.get("trail", [])):
                value = np.asarray(_value(v, t), dtype)
                if last and error == "hyper_shape" and k == 0:
                    kwargs[h] = opaque(np.full([1], value, dtype))
                else:
                    kwargs[h] = _const(value, dtype)
            gshape = ((len(rows),) + tuple(shape[1:])) if sparse else tuple(shape)
            g = _grad(t, gshape, dtype)
            if last and error == "grad_shape":
                if sparse:  # one row fewer than there are indices
                    g = g[:-1]
                else:
                    g = g.reshape(tuple(reversed(g.shape)))
                kwargs[grad_name] = opaque(g)
            else:
                kwargs[grad_name] = tf.constant(g)
            if sparse:
                idx = list(rows)
                if last and error == "index_range":
                    idx[-1] = shape[0]
                if last and error == "index_negative":
                    idx[1] = -1
                kwargs["indices"] = tf.constant(np.array(idx, index).reshape([len(idx)]))
            runs.append([getattr(raw, op)(name=f"apply{t}", **kwargs)])
        fetch = [_read(var, resource, dtype, "read_var")]
        fetch += [_read(s, resource, dtype, f"read_{slot}") for slot, s in slots]
        return runs, fetch

    return build


def _forms(family):
    """The (resource, sparse) forms TensorFlow has of a family."""
    resource_only = family in ("KerasMomentum", "AdamWithAmsgrad")
    has_sparse = family in ("Momentum", "KerasMomentum", "Adagrad", "AdagradV2", "RMSProp",
                            "CenteredRMSProp")
    forms = [(r, s) for s in ((False, True) if has_sparse else (False,))
             for r in (False, True)]
    return [(r, s) for r, s in forms if r or not resource_only]


def _add_cases():
    for family in FAMILIES:
        spec = FAMILIES[family]
        for resource, sparse in _forms(family):
            op = _op_name(family, resource, sparse)
            add = lambda **kw: program(op, builder(family, resource, sparse, **kw))  # noqa: E731
            add(dtype=f32, use_locking=False, index=i32)
            add(dtype=f64, use_locking=True, index=i64, steps=4)
            if "flag" in spec:
                alt = not spec["flag"][1]
                add(dtype=f32, use_locking=True, flag=alt, index=i64)
                add(dtype=f64, use_locking=False, flag=alt, index=i32, steps=2)
            if sparse:
                add(dtype=f32, steps=2, indices=[], index=i64)  # no rows to update
                add(dtype=f64, steps=2, indices=[4, 4, 4], index=i32)
            else:
                add(dtype=f64, steps=2, shape=())  # a scalar variable
            # Refused when run.
            add(dtype=f32, error="grad_shape")
            add(dtype=f64, error="hyper_shape", index=i64)
            add(dtype=f32, error="uninitialized")
            if spec["slots"]:
                add(dtype=f64, error="slot_shape")
            if sparse:
                add(dtype=f32, error="index_range", index=i64)
                add(dtype=f64, error="index_negative", index=i32)


_add_cases()
