"""graphrun from Python: TensorFlow graphs, SavedModels and training graphs
run, trained and checkpointed by graphrun's runtime, NumPy in and out.

    import graphrun
    with graphrun.Session("model.pb") as sess:
        probs = sess.run("probs:0", {"x:0": batch})
    model = graphrun.load("saved_model_dir")
    out = model.signatures["serving_default"](x=batch)
    result = graphrun.train("model.meta", steps=100, feed_steps={"x:0": xs, "y:0": ys},
                            fetches=["loss"], save="ckpt/model")
"""

from . import errors
from ._graphrun import option_names
from .gpus import gpus, select_gpus, why_no_gpus
from .saved_model import SavedModel, Signature, load
from .session import FULL_TRACE, RunMetadata, RunOptions, Session
from .training import TrainResult, train

__version__ = "0.1.0"

__all__ = [
    "FULL_TRACE", "RunMetadata", "RunOptions", "SavedModel", "Session", "Signature",
    "TrainResult", "errors", "gpus", "load", "option_names", "select_gpus", "train",
    "why_no_gpus",
]
