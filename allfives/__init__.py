"""The applications of All Fives RL: the ``allfives`` command line, the HTTP bot server and
terminal play.

This is the top layer. It builds on ``train`` (training, export), ``agents`` (bots, the
tournament) and ``allfives_env`` (engine, observation, environments); nothing below imports it
(``tests/test_architecture.py`` checks the layers). ``python -m allfives`` runs the command line.
"""
