"""The package version: the same as the Maitento server it is released with."""

__version__ = "0.1.0"
