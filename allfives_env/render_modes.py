"""The environments' ``render``: text for ``ansi`` and ``human`` (``allfives_env.render``), the frame
of ``allfives_env.picture`` for ``rgb_array``."""

from __future__ import annotations

from allfives_env.picture import rgb
from allfives_env.render import render_view

#: the render modes of both environments
RENDER_MODES = ["ansi", "human", "rgb_array"]


def render_as(view, mode: str):
    """``render_view(view)`` for ``ansi`` and ``human``; the picture as an RGB array for ``rgb_array``."""
    if mode == "rgb_array":
        return rgb(view)
    return render_view(view)
