"""graphrun.Session: tf.compat.v1.Session's shape over graphrun's runtime."""

import collections
import json
import os

from . import _graphrun
from . import _state
from . import errors

FULL_TRACE = 3  # TensorFlow's RunOptions.FULL_TRACE


class RunOptions:
    """Per-step options: `trace` (also trace_level=FULL_TRACE, as TensorFlow's
    RunOptions) and `timeout_in_ms` (0: none)."""

    def __init__(self, trace=False, timeout_in_ms=0, trace_level=None):
        self.trace = bool(trace) or trace_level == FULL_TRACE
        self.timeout_in_ms = int(timeout_in_ms)


class RunMetadata:
    """What a traced step recorded (filled by Session.run(..., run_metadata=)).

    step_stats: one dict per device, {"device", "nodes": [{"name", "label",
      "start_us", "duration_us", "thread_id"}]}.
    partition_graphs: the serialized GraphDef each device ran.
    placement: the placer's prediction for the step's plan.
    chrome_trace(): the step as Chrome trace JSON (Perfetto, chrome://tracing).
    SerializeToString(): TensorFlow's RunMetadata bytes
      (tf.compat.v1.RunMetadata.FromString reads them).
    """

    def __init__(self):
        self.step_stats = []
        self.partition_graphs = []
        self.placement = {}
        self._trace = ""
        self._serialized = b""

    def _fill(self, md):
        self.step_stats = md["step_stats"]
        self.partition_graphs = md["partition_graphs"]
        self.placement = md["placement"]
        self._trace = md["chrome_trace"]
        self._serialized = md["serialized"]

    def chrome_trace(self):
        return self._trace

    def write_chrome_trace(self, path):
        tmp = "%s.tmp-%d" % (path, os.getpid())
        with open(tmp, "w") as f:
            f.write(self._trace)
        os.replace(tmp, path)

    def SerializeToString(self):  # noqa: N802 (protobuf's name)
        return self._serialized

    def nodes(self):
        """Every traced node as (device, node dict), in start order."""
        out = [(d["device"], n) for d in self.step_stats for n in d["nodes"]]
        return sorted(out, key=lambda dn: dn[1]["start_us"])


def _name_of(x):
    """A tensor or op name from a str or an object with .name (tf.Tensor)."""
    if isinstance(x, str):
        return x
    name = getattr(x, "name", None)
    if isinstance(name, str):
        return name
    raise TypeError("a fetch or feed key must be a str name or have a .name, not %r" % (x,))


def _is_tensor_name(name):
    head, colon, index = name.rpartition(":")
    return bool(colon) and bool(head) and index.isdigit()


def _graph_source(graph):
    """(path or bytes, is_bytes) for a path, bytes, a GraphDef or a tf.Graph."""
    if isinstance(graph, (str, os.PathLike)):
        path = os.fspath(graph)
        if os.path.isdir(path):
            raise ValueError(
                "%s is a directory: load a SavedModel with graphrun.load(%r)" % (path, path))
        return path, False
    if isinstance(graph, (bytes, bytearray, memoryview)):
        return bytes(graph), True
    if hasattr(graph, "graph_def") and hasattr(graph, "meta_info_def"):
        graph = graph.graph_def  # a MetaGraphDef message: its graph
    if hasattr(graph, "as_graph_def"):
        graph = graph.as_graph_def()
    if hasattr(graph, "SerializeToString"):
        return graph.SerializeToString(), True
    raise TypeError("graph must be a path, serialized GraphDef bytes, a GraphDef or a tf.Graph, "
                    "not %s" % type(graph).__name__)


class _Fetches:
    """Flattens a fetch structure into unique tensor names and targets, and
    rebuilds the structure from the fetched values (TensorFlow's rules)."""

    def __init__(self, fetches):
        self.tensors = []
        self.targets = []
        self._index = {}
        self.structure = self._flatten(fetches)

    def _flatten(self, f):
        if isinstance(f, dict):
            if isinstance(f, collections.defaultdict):
                return ("defaultdict", f.default_factory, [(k, self._flatten(v)) for k, v in f.items()])
            return ("dict", type(f), [(k, self._flatten(v)) for k, v in f.items()])
        if isinstance(f, (list, tuple)):
            return ("seq", type(f), [self._flatten(v) for v in f])
        name = _name_of(f)
        if _is_tensor_name(name):
            if name not in self._index:
                self._index[name] = len(self.tensors)
                self.tensors.append(name)
            return ("tensor", self._index[name])
        if name not in self.targets:
            self.targets.append(name)
        return ("op",)

    def build(self, values, s=None):
        s = self.structure if s is None else s
        kind = s[0]
        if kind == "tensor":
            return values[s[1]]
        if kind == "op":
            return None
        if kind == "dict":
            return s[1]((k, self.build(values, v)) for k, v in s[2])
        if kind == "defaultdict":
            return collections.defaultdict(s[1], ((k, self.build(values, v)) for k, v in s[2]))
        items = [self.build(values, v) for v in s[2]]
        if hasattr(s[1], "_fields"):  # a namedtuple
            return s[1](*items)
        return s[1](items)


def _scalar(a):
    return a[()] if getattr(a, "ndim", None) == 0 else a


class Session:
    """Runs a TensorFlow graph with graphrun, as tf.compat.v1.Session does.

    graph: a GraphDef file (.pb, .pbtxt), a MetaGraphDef (.meta), serialized
      GraphDef bytes, a GraphDef message or a tf.Graph.
    Options are `graphrun run`'s flags as keyword arguments: cpu_devices,
      inter_op_threads, intra_op_threads, log_device_placement,
      allow_soft_placement, optimize (the graph optimizer), freeze_variables,
      check_numerics, clear_devices, gpus ("auto": the idle ones, "none", "0,2"),
      num_gpus, gpu_memory_fraction, gpu_allow_growth, cluster (a ClusterSpec
      dict or JSON file of running workers, or "TF_CONFIG" / "slurm": the
      launcher's environment), in_process_worker, local_workers, local_ps,
      wire_compression, ps_placement, auth_token_file, tls_*, quiet...
      graphrun.option_names() lists them.

    run() may be called from several threads at once; the GIL is released
    while a step runs.
    """

    def __init__(self, graph, **options):
        source, is_bytes = _graph_source(graph)
        self._cluster_file = None
        options = _state.session_options(options)
        cluster = options.pop("cluster", None)
        if isinstance(cluster, dict):
            import tempfile
            fd, self._cluster_file = tempfile.mkstemp(prefix="graphrun-cluster-", suffix=".json")
            with os.fdopen(fd, "w") as f:
                json.dump(cluster, f)
            options["cluster_file"] = self._cluster_file
        elif cluster is not None:
            options["cluster_file"] = os.fspath(cluster)
        self._native = _graphrun.Session(source, is_bytes, options)
        self._closed = False
        self._single = {}  # fetch str -> whether it names a tensor

    # -- TensorFlow's Session interface --------------------------------------

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs one step: `fetches` is a tensor name ("probs:0"), an op name
        (run for its effect; its value is None), an object with .name, or a
        list, tuple, namedtuple or dict of them, nested; the result has the
        same structure with NumPy arrays (0-d results as NumPy scalars).
        `feed_dict` maps tensor names to values (arrays, or anything
        np.asarray takes, converted to the placeholder's dtype)."""
        if self._closed:
            self._check_open()
        if type(fetches) is str and options is None and run_metadata is None:  # noqa: E721
            # The common call, one tensor name: no structure to build.
            plan = self._single.get(fetches)
            if plan is None:
                plan = self._single[fetches] = _is_tensor_name(fetches)
            if plan:
                feeds = [(k if type(k) is str else _name_of(k), v)  # noqa: E721
                         for k, v in feed_dict.items()] if feed_dict else []
                return _scalar(self._native.run(feeds, [fetches], [], False, 0)[0][0])
        f = _Fetches(fetches)
        feeds = []
        for key, value in (feed_dict or {}).items():
            name = _name_of(key)
            feeds.append((name, value))
        trace = run_metadata is not None or (options is not None and _wants_trace(options))
        timeout = int(getattr(options, "timeout_in_ms", 0) or 0) if options is not None else 0
        values, md = self._native.run(feeds, f.tensors, f.targets, trace, timeout)
        if run_metadata is not None and md is not None:
            run_metadata._fill(md)
        return f.build([_scalar(v) for v in values])

    def close(self):
        if not self._closed:
            self._closed = True
            self._native.close()
            if self._cluster_file:
                try:
                    os.unlink(self._cluster_file)
                except OSError:
                    pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:  # pylint: disable=broad-except
            pass

    # -- graphrun's additions ------------------------------------------------

    def devices(self):
        """The session's device names (/job:localhost/replica:0/task:0/device:CPU:0...)."""
        self._check_open()
        return self._native.devices()

    def save(self, prefix):
        """Writes the variables as a TensorFlow V2 checkpoint at PREFIX (with
        the graph's own Saver when the session came from a .meta that has
        one) and names it in the directory's `checkpoint` file. Written
        beside and renamed: a save that fails leaves what was there."""
        self._check_open()
        prefix = os.fspath(prefix)
        prepare_checkpoint_directory(prefix)
        self._native.save(prefix)
        return prefix

    def restore(self, prefix):
        """Sets the variables from the checkpoint at PREFIX (TensorFlow's V2
        format and keys), or from the newest one named by a directory's
        `checkpoint` file."""
        self._check_open()
        self._native.restore(os.fspath(prefix))

    def _check_open(self):
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")


def prepare_checkpoint_directory(prefix):
    """Makes the directory a checkpoint PREFIX goes to, before anything is
    written: an error names the prefix and the directory."""
    directory = _graphrun.checkpoint_directory(prefix)
    try:
        os.makedirs(directory, exist_ok=True)
    except (NotADirectoryError, FileExistsError):
        raise errors.InvalidArgumentError(
            "save %s: %s is not a directory" % (prefix, directory)) from None
    except OSError as e:
        raise errors.PermissionDeniedError(
            "save %s: cannot create directory %s: %s" % (prefix, directory, e.strerror)) from None
    if not os.path.isdir(directory):
        raise errors.InvalidArgumentError("save %s: %s is not a directory" % (prefix, directory))
    if not os.access(directory, os.W_OK | os.X_OK):
        raise errors.PermissionDeniedError(
            "save %s: directory %s is not writable" % (prefix, directory))


def _wants_trace(options):
    if isinstance(options, dict):
        return bool(options.get("trace")) or options.get("trace_level") == FULL_TRACE
    return bool(getattr(options, "trace", False)) or getattr(options, "trace_level", 0) == FULL_TRACE


RunOptions.FULL_TRACE = FULL_TRACE
