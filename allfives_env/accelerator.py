"""The optional C accelerators (``_fastobs``, ``_fastlook``): setup.py builds them where a C
compiler is, ``ALLFIVES_PURE_PYTHON=1`` turns them off; each caller keeps its pure-Python reference."""

from __future__ import annotations

import importlib
import os


def load(name: str):
    """The accelerator module ``allfives_env.NAME``, or ``None`` (not built, or turned off)."""
    if os.environ.get("ALLFIVES_PURE_PYTHON", "") not in ("", "0"):
        return None
    try:
        return importlib.import_module(f"allfives_env.{name}")
    except ImportError:
        return None
