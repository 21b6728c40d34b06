"""Module-level forms of the reduce operations."""

__all__: list[str] = []
