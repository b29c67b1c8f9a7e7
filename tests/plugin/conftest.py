"""The plugin's tests run users' test files in a pytest of their own (``pytester``)."""

pytest_plugins = ["pytester"]
