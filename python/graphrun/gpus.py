"""The GPUs of this machine, and the idle-GPU choice shared GPU servers need."""

from . import _graphrun
from . import _state


def gpus(_fake=None, _claims_dir=""):
    """Every GPU of the host, by index: dicts with index, name, uuid,
    total_memory and free_memory (bytes), utilization_percent and
    other_processes (None when the driver does not say), and claimed (a
    graphrun process holds it). [] when there is no GPU or driver."""
    found, _ = _graphrun.gpus(_fake, _claims_dir)
    return found


def why_no_gpus():
    """Why gpus() is empty ("" when it is not)."""
    return _graphrun.gpus(None, "")[1]


def select_gpus(n=1, gpus="auto", _fake=None, _claims_dir=""):
    """Claims the `n` most idle GPUs for this process (free memory,
    utilization, other processes and other graphrun processes' claims
    decide; CUDA_VISIBLE_DEVICES is honoured) and makes them the default of
    every later Session and load(). Returns (indices, reasons): the chosen
    physical indices, and one line per GPU saying why. The claim lasts until
    the process exits or select_gpus() is called again. With no GPU at all
    it returns ([], [why]); asking for more GPUs than are visible raises
    ResourceExhaustedError."""
    selection = _graphrun.select_gpus(int(n), gpus, _fake, _claims_dir)
    _state.set_selection(selection)
    return list(selection.selected), list(selection.reasons)
