import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

from hypothesis import settings

settings.register_profile("ci", deadline=None, max_examples=60, print_blob=True)
settings.load_profile("ci")
