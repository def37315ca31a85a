"""Process-wide state of the graphrun package: the GPUs select_gpus() claimed
(the default for later sessions) and the program local worker tasks run."""

import os
import shutil
import threading

from . import _graphrun

_lock = threading.Lock()
_selection = None  # _graphrun.GpuSelection, held for the process's life


def worker_program():
    """The graphrun CLI that --local_workers tasks run: $GRAPHRUN_CLI, the one
    shipped in the package (wheel), the one beside it in a Bazel tree, or
    `graphrun` on PATH."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [
        os.environ.get("GRAPHRUN_CLI", ""),
        os.path.join(here, "bin", "graphrun"),
        os.path.join(here, "..", "..", "tools", "graphrun"),
        shutil.which("graphrun") or "",
    ]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.realpath(c)
    return ""


def set_selection(selection):
    global _selection
    with _lock:
        if _selection is not None:
            _selection.release()
        _selection = selection


def session_options(options):
    """`options` with the process's defaults filled in."""
    out = dict(options)
    with _lock:
        if (out.get("gpus") is None and out.get("num_gpus") is None and _selection is not None
                and _selection.selected):
            out["gpus"] = ",".join(str(i) for i in _selection.selected)
    if (out.get("local_workers") or out.get("local_ps")) and not _program:
        raise FileNotFoundError(
            "local worker processes run the graphrun CLI, and none was found: build it "
            "(./bazelw build //tools:graphrun) and set GRAPHRUN_CLI to its path")
    return out


_program = worker_program()
if _program:
    _graphrun.set_worker_program(_program)
