"""Tournaments: the schedule and one game (``games``), running them here, in processes or on Ray
(``run``, ``on_ray``, ``cluster``), resuming a run (``resume``), the statistics (``stats``) and the
reports (``report``).

    from allfives_agents.tournament import run_tournament
    result = run_tournament(["strong", "expert"], Rules.make(), games=200, seed=1, workers=2)
"""

from .games import GamePlan, Runner, Schedule, TournamentError, agent_labels, make_schedule, play_game
from .run import RESULT_FORMAT, TournamentResult, check_specs, run_tournament

__all__ = [
    "RESULT_FORMAT", "GamePlan", "Runner", "Schedule", "TournamentError", "TournamentResult", "agent_labels",
    "check_specs", "make_schedule", "play_game", "run_tournament",
]
