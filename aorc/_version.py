"""The package version, in one place (the footer's softwareVersion and ``aorc --version``)."""

__version__ = "0.1.0"
