"""graphrun's errors as Python exceptions, named and numbered as TensorFlow's.

Every failed call raises a subclass of OpError for its status code, carrying
the message the graphrun CLI prints (it names the node, op, device, task,
variable or file)::

    try:
        sess.run("probs:0", {"x:0": batch})
    except graphrun.errors.InvalidArgumentError as e:
        print(e.code, e.message)
"""

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """A graphrun call failed: `code` (TensorFlow's numbers) and `message`."""

    code = UNKNOWN

    def __init__(self, message, code=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self):
        return self.message


class CancelledError(OpError):
    code = CANCELLED


class UnknownError(OpError):
    code = UNKNOWN


class InvalidArgumentError(OpError, ValueError):
    code = INVALID_ARGUMENT


class DeadlineExceededError(OpError, TimeoutError):
    code = DEADLINE_EXCEEDED


class NotFoundError(OpError, LookupError):
    code = NOT_FOUND


class AlreadyExistsError(OpError):
    code = ALREADY_EXISTS


class PermissionDeniedError(OpError, PermissionError):
    code = PERMISSION_DENIED


class ResourceExhaustedError(OpError, MemoryError):
    code = RESOURCE_EXHAUSTED


class FailedPreconditionError(OpError):
    code = FAILED_PRECONDITION


class AbortedError(OpError):
    code = ABORTED


class OutOfRangeError(OpError):
    code = OUT_OF_RANGE


class UnimplementedError(OpError, NotImplementedError):
    code = UNIMPLEMENTED


class InternalError(OpError):
    code = INTERNAL


class UnavailableError(OpError, ConnectionError):
    code = UNAVAILABLE


class DataLossError(OpError):
    code = DATA_LOSS


class UnauthenticatedError(OpError):
    code = UNAUTHENTICATED


_BY_CODE = {cls.code: cls for cls in (
    CancelledError, UnknownError, InvalidArgumentError, DeadlineExceededError,
    NotFoundError, AlreadyExistsError, PermissionDeniedError,
    ResourceExhaustedError, FailedPreconditionError, AbortedError,
    OutOfRangeError, UnimplementedError, InternalError, UnavailableError,
    DataLossError, UnauthenticatedError)}


def _from_status(code, message):
    """The exception for a status (used by the native module)."""
    cls = _BY_CODE.get(code, UnknownError)
    return cls(message, code)
