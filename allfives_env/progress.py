"""A progress bar for long loops of games (simulations, tournaments), on stderr.

It appears only when a run lasts more than a second, so short runs and tests print nothing.
"""

from __future__ import annotations

import sys


def progress(total: int, desc: str, enabled: bool = True):
    """A ``tqdm`` bar counting ``total`` games; ``enabled=False`` gives one that draws nothing."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="game", delay=1.0, disable=not enabled, file=sys.stderr, leave=False)
