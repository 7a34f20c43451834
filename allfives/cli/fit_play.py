"""``allfives fit-play``: fit a model of a player's play to its game records (``allfives_agents.search.play_fit``)."""

from __future__ import annotations

import os

from .common import CLIError, print_json_line, refuse_input_as_output


def add_parser(sub, name: str) -> None:
    p = sub.add_parser(name, help="fit expert's weights to a player's recorded choices: a model of its play for ismcts:belief=expert,bweights=FILE")
    p.add_argument("files", nargs="+", metavar="RECORDS", help="allfives-record/1 files (a tournament's games.jsonl) in which the player played")
    p.add_argument("--player", required=True, help="the player's name in the records' players field (an agent spec, as the tournament writes it)")
    p.add_argument("--out", required=True, metavar="FILE", help="the play model file to write (JSON); an existing file only with --force")
    p.add_argument("--force", action="store_true", help="replace an existing --out file")
    p.add_argument("--holdout", type=float, default=0.2, help="the share of choices kept out of the fit to measure it (0 to 0.9, default 0.2)")
    p.add_argument("--l2", type=float, default=1e-4, help="the L2 penalty per choice (default 1e-4)")
    p.add_argument("--seed", type=int, default=0, help="the seed of the held-out split")
    p.add_argument("--json", action="store_true", help="print the model and its figures as one JSON object")
    p.set_defaults(run=run)


def run(args) -> int:
    from allfives_agents.expert import DEFAULT_WEIGHTS
    from allfives_agents.search.play_fit import PlayModelError, agreement, fit, log_loss, read_choices, save_model
    from allfives_env.engine.errors import RecordError

    if not 0 <= args.holdout <= 0.9:
        raise CLIError(f"--holdout must be between 0 and 0.9, got {args.holdout}")
    if not args.l2 > 0:
        raise CLIError(f"--l2 must be positive, got {args.l2}")
    refuse_input_as_output(args.out, args.files, "--out")
    if os.path.exists(args.out) and not args.force:
        raise CLIError(f"--out {args.out} exists: --force to replace it (a shipped model of play is in models/play/), or another file")
    try:
        choices = read_choices(args.files, args.player)
        train, held = choices.split(args.holdout, args.seed) if args.holdout > 0 else (choices, None)
        if not train or (held is not None and not held):
            raise CLIError(f"{len(choices)} choices are too few to hold {args.holdout:g} of them out; lower --holdout")
        model = fit(train, args.l2)
    except (RecordError, PlayModelError) as exc:
        raise CLIError(str(exc)) from None
    facts = {
        "player": args.player,
        "records": list(args.files),
        "games": choices.games,
        "choices": len(choices),
        "fitted_on": len(train),
        "held_out": len(held) if held is not None else 0,
        "agreement": agreement(held, model.weights) if held is not None else None,
        "expert_agreement": agreement(held, DEFAULT_WEIGHTS) if held is not None else None,
        "log_loss": round(log_loss(held, model), 6) if held is not None else None,
    }
    try:
        save_model(args.out, model, **facts)
    except OSError as exc:
        raise CLIError(f"cannot write {args.out}: {exc.strerror}") from None
    if args.json:
        print_json_line({"weights": model.weights, "scale": model.scale, **facts, "out": args.out})
        return 0
    print(f"{args.player}: {len(choices)} choices between two or more moves in {choices.games} games; fitted on {len(train)}")
    for key, value in model.weights.items():
        print(f"  {key:9} {value:8.3f}   (expert {DEFAULT_WEIGHTS[key]:g})")
    print(f"  scale     {model.scale:8.3f}   (its chance of a move: softmax(scale * score))")
    if held is not None:
        print(f"held-out choices: {len(held)}; the fitted model's best move is the one chosen in {facts['agreement']:.1%} "
              f"(expert's own weights: {facts['expert_agreement']:.1%}); log loss of its chances {facts['log_loss']:.4f} per choice")
    print(f"wrote {args.out}: use it as ismcts:belief=expert,bweights={args.out}[,opp=model] (the other sides' play) or bpartner={args.out} (a partner's)")
    return 0
