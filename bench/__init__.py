"""Benchmarks of the client against the local mock, run with ``python -m bench.run``.

Example::

    python -m bench.run --smoke --out /tmp/bench-smoke
"""
