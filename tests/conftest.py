import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import pytest
from filelock import FileLock
from hypothesis import settings

settings.register_profile("ci", deadline=None, max_examples=60, print_blob=True)
settings.load_profile("ci")


@pytest.fixture
def one_ray_at_a_time(tmp_path_factory):
    """Hold a lock shared by the pytest-xdist workers for the test's length, so that the tests that
    start a local Ray (or a CLI that does) never start two at the same moment on this machine:
    two Rays starting together can collide, which is a fact of the test run, not of the code."""
    shared = tmp_path_factory.getbasetemp().parent  # the same folder for every xdist worker
    with FileLock(shared / "one_ray_at_a_time.lock"):
        yield
