"""Input files read whole: only regular files, and only up to a size.

A device or a pipe named as a file (``/dev/zero``) would be read until the memory runs out, and a
file far larger than any real one of its kind is a mistake; both are refused before a byte is read.
"""

from __future__ import annotations

import os
import stat

#: the largest file of each kind read whole: far above any real one (a 2000-game tournament's
#: records are about 20 MB, a shipped policy 2 MB)
RECORDS_MAX_BYTES = 2 << 30
POLICY_MAX_BYTES = 1 << 30
MODEL_OF_PLAY_MAX_BYTES = 16 << 20


def refusal(path, limit: int) -> str | None:
    """Why ``path`` is not read (``"not a regular file"``, ``"N bytes, more than the M a file of this
    kind may have"``), or ``None`` when it may be (a missing file is left to the reader to name)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file (a device, a pipe or a folder): refused"
    if info.st_size > limit:
        return f"{info.st_size} bytes, more than the {limit} a file of this kind may have: refused"
    return None
