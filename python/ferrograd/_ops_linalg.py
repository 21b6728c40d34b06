"""Module-level forms of the linalg operations."""

__all__: list[str] = []
