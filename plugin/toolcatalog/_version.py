"""The package version (its own module, so any module can import it without importing the package API)."""

__version__ = "0.1.0"
