"""Build hook for the optional C accelerator of the observation encoder (everything else is in pyproject.toml).

``optional=True``: without a C compiler the build skips it and ``allfives_env.observation`` uses its
pure-Python encoder, which gives the same vectors.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("allfives_env._fastobs", ["allfives_env/_fastobs.c"], optional=True)])
