"""Test settings shared by every test file.

Hypothesis: no per-example deadline and no "input generation is slow" health
check, so that a loaded machine (CI shares 2 cores) never fails a property
test; each test keeps its own number of examples. ``SCORELENS_FUZZ=N`` selects
the ``fuzz`` profile, every health check off, for a fuzz campaign of N inputs
per entry point (``tests/test_hardening.py``; see docs/hardening.md).

The user's data folder is an empty temporary one for the whole run (and the
commands the tests start), so a calibration or adapted model of the person
running the tests never changes what a test reads.
"""

import os
import tempfile

from hypothesis import HealthCheck, settings

settings.register_profile("suite", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.register_profile("fuzz", deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile("fuzz" if os.environ.get("SCORELENS_FUZZ") else "suite")

os.environ["SCORELENS_HOME"] = tempfile.mkdtemp(prefix="scorelens-tests-")
