"""The search (``ismcts``), its one home of options (``options``), and what it infers: the worlds it
samples (``belief``), their weights from the other seats' play (``inference``), fitted models of
play (``play_fit``) and a match equity table (``equity``). The move analysis built on playouts of
any agent is ``allfives_agents.analysis``."""
