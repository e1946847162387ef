"""The ``aorc`` command (``aorc meta|head|cat|convert``); see :func:`main`."""

from aorc.cli.main import main

__all__ = ["main"]
