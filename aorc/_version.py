"""The package version, in one place (the footer's softwareVersion and ``aorc --version``)."""

__all__ = ["__version__"]

__version__ = "0.1.0"
