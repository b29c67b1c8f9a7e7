"""The helpers of tests/spec (``spec_copy``: a copy of the spec, generated) for these
tests, whichever test files pytest collected first."""

import sys
from pathlib import Path

SPEC_TESTS = str(Path(__file__).resolve().parents[1] / "spec")
if SPEC_TESTS not in sys.path:
    sys.path.insert(0, SPEC_TESTS)
