"""Installing as a library: a wheel built from the checkout, installed into a fresh venv, gives the
environment, the agents, the CLI and the shipped models, with nothing read from the checkout.

The venv borrows numpy, torch, gymnasium, onnxruntime... from the running interpreter (its
``--system-site-packages`` base, plus a ``.pth`` line naming this interpreter's site-packages when
that base lacks them) and installs the wheel with ``--no-deps``, so the test runs offline. Every
command runs from a folder outside the checkout with ``PYTHONPATH`` unset, and asserts that the
modules it imports are the venv's.
"""

import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

from allfives_agents.models import available_models, load_card, model_path
from allfives_env.observation import OBS_VERSION

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "models"
SHIPPED = ["allfives_2p", "allfives_3p", "allfives_4p"]

# what a source tree copy leaves out: environments, build outputs, caches, runs
IGNORE = shutil.ignore_patterns(
    ".venv", ".git", "build", "dist", "runs", "out", "*.egg-info", "__pycache__", ".pytest_cache",
    ".hypothesis", ".grimp_cache", ".import_linter_cache", "*.so", ".ipynb_checkpoints", "node_modules",
)
#: the offline page's files that npm ci copies into the checkout (scripts/vendor_web.mjs): a wheel
#: built after it must carry them
VENDOR = [f"allfives/web/static/vendor/{name}" for name in (
    "ort.wasm.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm",
    "models/allfives_2p.onnx", "models/allfives_3p.onnx", "models/allfives_4p.onnx")]
REQUIRE_NODE = os.environ.get("ALLFIVES_REQUIRE_NODE", "") not in ("", "0")


def test_models_are_found_by_name_in_the_checkout():
    assert set(SHIPPED) <= set(available_models())
    assert model_path("allfives_2p", "onnx") == MODELS / "allfives_2p.onnx"
    assert model_path("allfives_4p", "ppo") == MODELS / "allfives_4p.zip"
    assert load_card("allfives_2p")["name"] == "allfives_2p"
    with pytest.raises(FileNotFoundError, match="allfives_2p"):
        model_path("no_such_model")
    with pytest.raises(ValueError):
        model_path("models/allfives_2p.onnx")


@pytest.mark.parametrize("name", SHIPPED)
def test_cards_carry_the_model_hub_fields(name):
    card = load_card(name)
    for key in ("summary", "intended_use", "out_of_scope", "training_data", "compute", "evaluation_method",
                "limitations", "loading"):
        assert card[key], key
    assert card["license"] == "MIT" and "MIT License" in (ROOT / "LICENSE").read_text()
    assert card["compute"]["wall_seconds"] == card["training_wall_seconds"]
    assert card["loading"]["agent_onnx"] == f"onnx:{name}" and card["loading"]["server"].endswith(f"onnx:{name}")
    assert f"## {name}" in (MODELS / "README.md").read_text()


def test_agent_specs_take_a_model_name_or_a_path(tmp_path, monkeypatch):
    from allfives_agents import make_agent

    named = make_agent("onnx:allfives_2p")
    assert named.name == "onnx:allfives_2p" and named.policy.metadata["obs_version"] == str(OBS_VERSION)
    monkeypatch.chdir(ROOT)
    assert make_agent("ppo:models/allfives_2p.zip").name == "ppo:models/allfives_2p.zip"
    # a file of that name in the working directory wins over the shipped model
    monkeypatch.chdir(tmp_path)
    shutil.copy(MODELS / "allfives_4p.onnx", tmp_path / "allfives_2p")
    assert json.loads(make_agent("onnx:allfives_2p").policy.metadata["rules"])["num_players"] == 4


def _run(args, cwd, env, timeout=300):
    result = subprocess.run(args, check=False, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    command = " ".join(map(str, args))
    assert result.returncode == 0, f"{command} failed:\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    return result.stdout


CHECK = """
import importlib.util, json, sys
sys.modules["matplotlib"] = None  # play needs no matplotlib (the plot extra)
from pathlib import Path
import allfives, allfives_env, allfives_agents, allfives_train
from allfives_agents import make_agent
from allfives_agents.models import available_models, model_path
from allfives_env.engine import Game, Rules

venv = Path(sys.prefix).resolve()
for module in (allfives, allfives_env, allfives_agents, allfives_train):
    assert venv in Path(module.__file__).resolve().parents, (module.__file__, venv)
for name in ("agents", "train"):  # the repository's folder names are not import names of the wheel
    assert importlib.util.find_spec(name) is None, name
path = model_path("allfives_2p", "onnx")
assert venv in path.resolve().parents, path
assert available_models() == ["allfives_2p", "allfives_3p", "allfives_4p"], available_models()

env = allfives_env.env(num_players=2)
env.reset(seed=1)
agent = make_agent("onnx:allfives_2p", seed=1)
game = Game(Rules.make(num_players=2), seed=1)
view = game.view(game.current_player)
action = agent.act(view)
assert action in view.legal_actions
game.step(action)
import gymnasium
frame = gymnasium.make("AllFives-v0", render_mode="rgb_array")
frame.reset(seed=1)
assert frame.render().ndim == 3
search = make_agent("counter-expert", seed=1, rules=game.rules)  # its fitted model of play comes from the wheel
assert search.act(view) in view.legal_actions
from allfives_agents.tournament import run_tournament
from allfives_agents.tournament.report import write_outputs
out = Path("out"); out.mkdir()
written = write_outputs(run_tournament(["greedy", "random"], games=2, seed=1), out)
assert [p.name for p in written] == ["results.json", "pairings.csv", "ratings.csv"], written
print(json.dumps({"action": action, "model": str(path)}))
"""


@pytest.mark.slow
def test_wheel_installs_into_a_fresh_venv(tmp_path):
    # a copy of the source tree, so nothing of the checkout's build/ or egg-info goes into the wheel
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=IGNORE, symlinks=True)
    wheels = tmp_path / "wheels"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PIP_NO_INDEX"] = "1"  # offline: everything needed is already installed
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", wheels, "."], src, env)
    (wheel,) = wheels.glob("allfives-*.whl")

    # the sdist carries the models too (MANIFEST.in), so a wheel built from it has them
    sdist_dir = tmp_path / "sdist"
    _run([sys.executable, "-c", f"import setuptools.build_meta as b; b.build_sdist({str(sdist_dir)!r})"], src, env)
    (sdist,) = sdist_dir.glob("allfives-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {Path(n).relative_to(Path(n).parts[0]).as_posix() for n in tar.getnames() if len(Path(n).parts) > 1}
    for name in SHIPPED:
        assert {f"models/{name}.zip", f"models/{name}.onnx", f"models/{name}.json"} <= names
    page = {f"allfives/web/static/{name}" for name in ("index.html", "app.js", "review.js", "style.css", "favicon.svg", "allfives.js", "offline.html", "offline.js")}
    if REQUIRE_NODE or all((ROOT / name).is_file() for name in VENDOR):  # after npm ci (make install)
        page |= set(VENDOR)
    assert page <= names
    with zipfile.ZipFile(wheel) as whl:
        listed = set(whl.namelist())
    assert page <= listed  # the web page is served from the installed package
    # only allfives* at the top of site-packages: no generic agents/ or train/ to collide with others
    tops = {n.split("/")[0] for n in listed if not n.split("/")[0].endswith(".dist-info")}
    assert tops and all(t.startswith("allfives") for t in tops), tops
    assert {"allfives_agents/model_files/play/expert_2p.json", "allfives_agents/model_files/allfives_2p.onnx"} <= listed

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv], tmp_path, env)
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    python = bin_dir / "python"
    venv_site = Path(
        subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                       capture_output=True, text=True, check=True, env=env).stdout.strip()
    )
    # the dependencies: this interpreter's site-packages, after the venv's own (a plain path line:
    # the .pth files there, the editable install's finder among them, are not run)
    ours = [p for p in {*site.getsitepackages(), sysconfig.get_paths()["purelib"]} if Path(p).is_dir()]
    (venv_site / "zz_borrowed_deps.pth").write_text("".join(f"{p}\n" for p in sorted(ours)))
    pip_install = ["install", "--no-deps", "--no-index", "-q", wheel]
    _run([sys.executable, "-m", "pip", "--python", python, *pip_install], tmp_path, env)

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    out = json.loads(_run([python, "-c", CHECK], outside, env).strip().splitlines()[-1])
    assert Path(out["model"]).name == "allfives_2p.onnx"

    allfives = bin_dir / "allfives"
    assert "tournament" in _run([allfives, "--help"], outside, env)
    text = _run([allfives, "tournament", "--agents", "onnx:allfives_2p,greedy", "--games", "2", "--seed", "1"],
                outside, env)
    assert "onnx:allfives_2p" in text
    assert not (outside / "models").exists()
