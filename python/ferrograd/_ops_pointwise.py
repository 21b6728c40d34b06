"""Module-level forms of the pointwise operations."""

__all__: list[str] = []
