"""The ``service-api`` command line."""

__all__: list[str] = []
