"""``allfives bots``: the named bots, each a measured setting per game, with their strength and speed."""

from __future__ import annotations

from .common import print_json_line


def add_parser(sub, name: str) -> None:
    p = sub.add_parser(
        name,
        help="the named bots (fast, strong, strongest...): strength against expert, time per move, their settings",
        description="The named bots. A name works wherever an agent spec does (tournament, play, serve, analyze, "
        "the web page) and picks its setting for the game's players. Every figure: 2000 duplicate games "
        "against expert, 95%% Wilson interval (docs/results.md has the commands).",
    )
    p.add_argument("--players", type=int, choices=(2, 3, 4), help="only the settings for this many players")
    p.add_argument("--markdown", action="store_true", help="the table as Markdown (the README's)")
    p.add_argument("--json", action="store_true", help="everything as one JSON object")
    p.set_defaults(run=run)


def run(args) -> int:
    from allfives_agents.bots import BOTS, bots_table, describe_game

    if args.markdown:
        print(bots_table())
        return 0
    if args.json:
        print_json_line({
            name: {
                "summary": bot.summary,
                "generic": bot.generic,
                "settings": [
                    {"players": n, "partnerships": partnerships, "spec": s.spec, "win_rate": s.measured.win_rate,
                     "ci": list(s.measured.ci), "ms_per_move": s.measured.ms_per_move, "command": s.measured.command}
                    for (n, partnerships), s in bot.settings.items() if args.players in (None, n)
                ],
            }
            for name, bot in BOTS.items()
        })
        return 0
    for name, bot in BOTS.items():
        print(f"{name}: {bot.summary}")
        for game, setting in bot.settings.items():
            if args.players not in (None, game[0]):
                continue
            m = setting.measured
            print(f"  {describe_game(game):26s} {m.win_rate:5.1f}% [{m.ci[0]:.1f}, {m.ci[1]:.1f}] vs expert   "
                  f"{m.ms_per_move:6.2f} ms a move   {setting.spec}")
    print("\nplay one: allfives play --opponent strong    a tournament: allfives tournament --agents strong expert --games 200 --seed 1")
    return 0
