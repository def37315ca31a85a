"""graphrun.train(): `graphrun train` from Python, with the history returned."""

import os
import sys
import time

import numpy as np

from . import _graphrun
from . import errors
from .session import Session, prepare_checkpoint_directory

_KEEP_PERIODIC = 5  # newest periodic checkpoints kept, as the CLI keeps them


class TrainResult:
    """What train() did: `history` maps each fetch to its values stacked over
    the steps ([steps, ...]); `losses` is the first fetch's history as
    floats; `session` holds the trained variables (save() or run() more);
    `checkpoints` lists what was saved, newest last."""

    def __init__(self, session, fetches):
        self.session = session
        self._fetches = list(fetches)
        self._values = {f: [] for f in self._fetches}
        self.checkpoints = []
        self.steps = 0
        self.step_seconds = []

    @property
    def history(self):
        return {f: np.stack(v) if v else np.zeros((0,)) for f, v in self._values.items()}

    @property
    def losses(self):
        if not self._fetches:
            return []
        return [float(np.asarray(v).reshape(-1)[0]) for v in self._values[self._fetches[0]]]


def _tensor(name):
    return name if ":" in name else name + ":0"


def _with_step(e, step):
    """`e` again, its message prefixed with the step, as the CLI says it."""
    if isinstance(e, errors.OpError):
        return errors._from_status(e.code, "step %d: %s" % (step, e.message))
    return e


class _Progress:
    def __init__(self, steps, show, label):
        self._bar = None
        self._line = False
        self._label = label
        self._start = time.monotonic()
        self._last = 0.0
        if show is False or (show is None and not sys.stderr.isatty()):
            return
        try:
            import tqdm  # pylint: disable=import-outside-toplevel
            self._bar = tqdm.tqdm(total=steps, unit="step", file=sys.stderr)
        except ImportError:
            self._line = True
        self._steps = steps

    def update(self, done, loss):
        if self._bar is not None:
            self._bar.update(1)
            if loss is not None:
                self._bar.set_postfix({self._label: "%.6g" % loss}, refresh=False)
        elif self._line:
            now = time.monotonic()
            if now - self._last > 0.2 or done == self._steps:
                self._last = now
                rate = done / max(now - self._start, 1e-9)
                text = "\rstep %d/%d  %.1f steps/s" % (done, self._steps, rate)
                if loss is not None:
                    text += "  %s %.6g" % (self._label, loss)
                sys.stderr.write(text)
                sys.stderr.flush()

    def close(self):
        if self._bar is not None:
            self._bar.close()
        elif self._line:
            sys.stderr.write("\n")


def train(graph, train=None, steps=1, init=None, restore=None, feeds=None, feed_steps=None,
          fetches=(), save=None, save_every=0, progress=None, session=None, **options):
    """Trains a TensorFlow training graph as `graphrun train` does.

    graph: what Session takes; a .meta names its train op, initializers and
      Saver, so train=, init= and the Saver need not be given.
    train: the op run every step. init: op name(s) run once first (or
      restore: a checkpoint prefix or directory, TensorFlow's V2 format).
    feeds: {tensor: value} fed every step; feed_steps: {tensor: array} whose
      leading axis is the step (step i is fed slice i).
    fetches: tensor names fetched every step ("loss" means "loss:0").
    save: a checkpoint PREFIX written after the last step; save_every=K also
      writes PREFIX-<step> every K steps (the newest five kept), each named
      in the `checkpoint` file once complete.
    progress: a progress bar on stderr (tqdm where installed); None: only on
      a terminal. session: an open Session to go on training in (then
      `graph` and options are unused).
    Ctrl-C finishes the step in flight, saves (with save=) and re-raises
    KeyboardInterrupt carrying the result so far as `.train_result`.
    Returns a TrainResult (history, losses, session, checkpoints).
    """
    if session is None:
        session = Session(graph, **options)
    meta = session._native.meta_info()  # pylint: disable=protected-access
    init = [init] if isinstance(init, str) else list(init or [])
    if restore is not None and init:
        raise errors.InvalidArgumentError("restore and init both set the variables: give one")
    if train is None and meta["train_ops"]:
        train = meta["train_ops"][0]
    if not init and restore is None:
        init = list(meta["init_ops"])
    what = graph if isinstance(graph, (str, os.PathLike)) else "the graph"
    if train is None:
        raise errors.InvalidArgumentError(
            "give the train op: train=OP (%s names none in a train_op collection)" % what)
    if steps < 0:
        raise errors.InvalidArgumentError("steps must be >= 0")
    if save_every < 0:
        raise errors.InvalidArgumentError("save_every must be >= 0")
    if save_every and save is None:
        raise errors.InvalidArgumentError("save_every needs save=PREFIX")
    for op in init + [train]:
        if not session._native.has_node(op):  # pylint: disable=protected-access
            raise errors.NotFoundError("op '%s' is not in %s" % (op, what))
    step_feeds = {}
    for name, value in (feed_steps or {}).items():
        value = np.asarray(value)
        if value.ndim == 0 or value.shape[0] < steps:
            raise errors.InvalidArgumentError(
                "feed_steps %s: needs a leading step axis of at least steps=%d, has shape %s"
                % (name, steps, list(value.shape)))
        step_feeds[name] = value
    if save is not None:
        save = os.fspath(save)
        prepare_checkpoint_directory(save)

    fixed = dict(feeds or {})
    if init:
        try:
            session.run(init, fixed)
        except errors.OpError as e:
            raise errors._from_status(e.code, "init: " + e.message) from None
    if restore is not None:
        session.restore(restore)

    fetch_names = [_tensor(f) for f in fetches]
    result = TrainResult(session, list(fetches))
    periodic = []

    def checkpoint(prefix, drop_oldest):
        dropped = []
        if drop_oldest:
            periodic.append(prefix)
            if len(periodic) > _KEEP_PERIODIC:
                dropped.append(periodic.pop(0))
        session._native.save(prefix, dropped)  # pylint: disable=protected-access
        for d in dropped:
            _graphrun.remove_checkpoint(d)
            result.checkpoints.remove(d)
        result.checkpoints.append(prefix)

    bar = _Progress(steps, progress, fetches[0] if fetches else "")
    try:
        for step in range(steps):
            feed = dict(fixed)
            for name, value in step_feeds.items():
                feed[name] = value[step]
            t0 = time.perf_counter()
            try:
                values = session.run(fetch_names + [train], feed)[:-1]
            except errors.OpError as e:
                raise _with_step(e, step) from None
            result.step_seconds.append(time.perf_counter() - t0)
            for f, v in zip(result._values, values):  # pylint: disable=protected-access
                result._values[f].append(np.array(v))  # pylint: disable=protected-access
            result.steps = step + 1
            loss = None
            if values and np.ndim(values[0]) == 0 and np.issubdtype(np.asarray(values[0]).dtype, np.number):
                loss = float(values[0])
            bar.update(result.steps, loss)
            if save_every and result.steps % save_every == 0 and result.steps != steps:
                checkpoint("%s-%d" % (save, result.steps), True)
    except KeyboardInterrupt as e:
        # The step in flight finished (its update is in the variables and in
        # the checkpoint); the result so far rides on the exception.
        bar.close()
        if save is not None:
            checkpoint(save, False)
        e.train_result = result
        raise
    bar.close()
    if save is not None:
        checkpoint(save, False)
    return result
