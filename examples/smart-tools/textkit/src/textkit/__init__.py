"""textkit: count and summarise text."""

__version__ = "0.3.1"
