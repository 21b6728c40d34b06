"""Module-level forms of the shape_index operations."""

__all__: list[str] = []
