"""Module-level forms of the random operations."""

__all__: list[str] = []
