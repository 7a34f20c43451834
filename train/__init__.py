"""Self-play training of All Fives bots with MaskablePPO: typed configs, pool, callbacks, checkpoints."""
