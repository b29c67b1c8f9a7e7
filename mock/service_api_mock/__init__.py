"""A local mock of the service's public HTTP API, for tests, demos and benchmarks."""

__all__: list[str] = []
