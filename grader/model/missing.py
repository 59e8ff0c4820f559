"""What a probe raises when the submission is not there yet: a stub, a missing file, a missing name.

The worker reports them by name; the judge turns them into one plain line, not a traceback.
"""

from __future__ import annotations



class NotImplementedYet(Exception):
    """A stub constant still holds NotImplemented."""


class MissingSubmissionFile(Exception):
    """The exercise's file is not in the submission folder."""


class MissingName(AttributeError):
    """The exercise file does not define the function or constant a check needs."""
