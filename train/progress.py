"""What a training run shows while it learns: a bar on a terminal, a line at a steady interval elsewhere.

Stable-Baselines3's own bar counts to the steps asked for and then past them (a rollout gathers
``n_steps * n_envs`` steps at a time), and written to a file or a pipe it shows nothing until the
end. ``Progress`` counts the run's steps against its ``total_steps``, never past it; where the output
is not a terminal (``make train > log``, a job scheduler, a notebook's captured cell) it prints a
plain line every ``every_s`` seconds instead: the steps, the speed since the last line, the last
evaluation.
"""

from __future__ import annotations

import sys
import time
from typing import Callable, TextIO

from stable_baselines3.common.callbacks import BaseCallback

#: seconds between two log lines where the output is not a terminal
LOG_EVERY_S = 30.0


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Progress(BaseCallback):
    """The run's progress: a bar (``bar=True``) or log lines on ``stream`` every ``every_s`` seconds.
    ``last_eval()`` says what the last evaluation found (``None`` before the first)."""

    def __init__(self, total: int, last_eval: Callable[[], str | None], bar: bool, every_s: float = LOG_EVERY_S,
                 stream: TextIO | None = None) -> None:
        super().__init__()
        self.total, self.last_eval, self.every_s = total, last_eval, every_s
        self.stream = stream or sys.stdout
        self.use_bar = bar
        self._bar = None
        self._last_time = self._last_steps = None

    def _on_training_start(self) -> None:
        steps = self.num_timesteps
        self._last_time, self._last_steps = time.monotonic(), steps
        if self.use_bar:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=self.total, initial=min(steps, self.total), unit="step", file=sys.stderr,
                             dynamic_ncols=True)
        else:
            self._line(steps, started=True)

    def _on_step(self) -> bool:
        if self._bar is not None:
            self._bar.update(min(self.num_timesteps, self.total) - self._bar.n)
        elif time.monotonic() - self._last_time >= self.every_s:
            self._line(self.num_timesteps)
        return True

    def _on_training_end(self) -> None:
        if self._bar is not None:
            self._bar.update(min(self.num_timesteps, self.total) - self._bar.n)
            self._bar.close()
            self._bar = None
        else:
            self._line(self.num_timesteps)

    def _line(self, steps: int, started: bool = False) -> None:
        now = time.monotonic()
        shown = min(steps, self.total)
        text = f"step {shown:,}/{self.total:,} ({shown / self.total:.0%})"
        if started:
            text = f"training from {text}"
        elif now > self._last_time:
            text += f", {(steps - self._last_steps) / (now - self._last_time):,.0f} steps/s"
        last = self.last_eval()
        if last:
            text += f", last evaluation: {last}"
        print(text, file=self.stream, flush=True)
        self._last_time, self._last_steps = now, steps
