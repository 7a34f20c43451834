"""All Fives for reinforcement learning: rules engine, PettingZoo environment, observation spec.

Importing this package is cheap: ``allfives_env.engine`` needs only the standard library, and the
environment classes (which need numpy, gymnasium and pettingzoo) load on first use.
"""

__version__ = "0.1.0"
