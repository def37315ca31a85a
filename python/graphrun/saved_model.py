"""graphrun.load(): a TensorFlow SavedModel's signatures, callable as
tf.saved_model.load(dir).signatures[key] is."""

import os

from . import _graphrun
from . import _state


class Signature:
    """One signature: call it with its input keys as keyword arguments; it
    returns {output key: NumPy array} for every output (call(inputs,
    outputs) picks some). `inputs` and `outputs` describe the keys as
    (dtype, shape)."""

    def __init__(self, model, key, info):
        self._model = model
        self.name = key
        self.inputs = info["inputs"]
        self.outputs = info["outputs"]
        self.method_name = info["method_name"]

    def __call__(self, **inputs):
        return self._model.call(self.name, list(inputs.items()), [])

    def call(self, inputs, outputs=None):
        """`inputs`: {input key: value}; `outputs`: the output keys wanted."""
        return self._model.call(self.name, list(inputs.items()), list(outputs or []))

    def __repr__(self):
        return "<graphrun signature %r: %s -> %s>" % (
            self.name, sorted(self.inputs), sorted(self.outputs))


class SavedModel:
    """A loaded SavedModel: variables restored, tables and assets initialized,
    as TensorFlow's loader leaves them. `signatures` maps each key to a
    Signature; thread-safe to call."""

    def __init__(self, native):
        self._native = native
        self.signatures = {k: Signature(native, k, v) for k, v in native.signatures().items()}

    @property
    def export_dir(self):
        return self._native.dir

    def __repr__(self):
        return "<graphrun SavedModel %s: signatures %s>" % (self.export_dir, sorted(self.signatures))


def load(export_dir, tags=("serve",), **options):
    """Loads the SavedModel in `export_dir` (its MetaGraphDef of `tags`) in a
    session made with `options` (as graphrun.Session takes them)."""
    if isinstance(tags, str):
        tags = [t for t in tags.split(",") if t]
    native = _graphrun.SavedModel(os.fspath(export_dir), list(tags),
                                  _state.session_options(options))
    return SavedModel(native)
