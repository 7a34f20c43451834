"""``allfives export``: a trained policy to ONNX (observation + mask in, logits + action out), checked."""

from __future__ import annotations

from pathlib import Path

from .common import CLIError, print_json_line


def add_parser(sub, name: str) -> None:
    p = sub.add_parser(name, help="export a trained policy (MaskablePPO, or RLlib PPO) to ONNX (see docs/frontends.md)")
    p.add_argument("model", help="the model zip written by allfives train (final.zip, best.zip, models/*.zip); for the "
                   "rllib trainer, a run folder (its latest checkpoint) or a checkpoint folder (RUN/checkpoints/step_N)")
    p.add_argument("--out", help="the ONNX file to write (default: MODEL with .onnx)")
    p.add_argument("--force", action="store_true", help="overwrite the ONNX file if it exists (default: refuse)")
    p.add_argument("--opset", type=int, default=17, help="ONNX opset (default %(default)s)")
    p.add_argument("--check", type=int, default=1000, metavar="N",
                   help="compare ONNX and torch on N observations of random games (0: skip; default %(default)s)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object on the last line")
    p.set_defaults(run=run)


def run(args) -> int:
    if args.check < 0:
        raise CLIError(f"--check must be 0 (skip) or a number of observations, got {args.check}")
    out = Path(args.out) if args.out else Path(args.model).with_suffix(".onnx")
    model = Path(args.model)
    if not model.exists():
        raise CLIError(f"model file not found: {model}")
    if out.exists() or out.is_symlink():
        if model.exists() and out.resolve() == model.resolve():
            raise CLIError(f"--out {out} is the model itself; choose another file")
        if out.is_dir():
            raise CLIError(f"{out} is a directory; give --out the ONNX file to write")
        if not args.force:
            raise CLIError(f"{out} already exists; give --force to overwrite it, or --out another file")

    from allfives_train.export import ExportError, export_onnx
    from allfives_train.parity import check_parity

    if model.is_dir():
        from allfives_train.rllib_export import check_rllib_parity as check_parity, export_rllib as export_onnx, rllib_checkpoint

        try:
            model = rllib_checkpoint(model)
        except ExportError as exc:
            raise CLIError(str(exc)) from None
    try:
        info = export_onnx(model, out, opset=args.opset)
    except ExportError as exc:
        raise CLIError(str(exc)) from None
    except OSError as exc:
        raise CLIError(f"cannot write {out}: {exc}") from None
    print(f"wrote {out} (OBS_VERSION {info['obs_version']}, inputs: observation, action_mask; outputs: logits, masked_logits, action)")
    result = {"onnx": str(out), "obs_version": int(info["obs_version"])}
    if args.check > 0:
        parity = check_parity(model, out, count=args.check)
        result.update(parity)
        print(
            f"parity on {parity['observations']} observations: max |logit difference| {parity['max_abs_diff']:.2e}, "
            f"same action {parity['same_action']:.2%}"
        )
        if parity["max_abs_diff"] >= 1e-4 or parity["same_action"] < 1.0 or not parity["all_legal"]:
            print("error: the exported policy does not match the model")
            return 1
    if args.json:
        print_json_line(result)
    return 0
