"""Hardening: bad arguments to the environments, agents, policy files and export get clear errors."""

import json
import warnings
from pathlib import Path

import gymnasium
import numpy as np
import pytest

from allfives_agents import AgentSpec, make_agent
from allfives_agents.nets.policy import NumpyPolicy, PolicyFileError
from allfives_env.aec import env, raw_env
from allfives_env.engine import Game, GameOverError, Rules
from allfives_env.engine.tiles import NUM_ACTIONS
from allfives_env.observation import OBS_SIZES, OBS_VERSION
from allfives_env.single_agent import SingleAgentEnv

OBS_SIZE = OBS_SIZES[OBS_VERSION]  # the default environment's observation

from helpers import run_cli

ROOT_MODELS = Path(__file__).resolve().parent.parent / "models"


@pytest.fixture(autouse=True)
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


# -- actions ----------------------------------------------------------------------------------------------


def legal(e):
    return int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0])


@pytest.mark.parametrize("action", [True, False])
def test_a_bool_is_not_an_action_for_the_pettingzoo_env(action):
    e = env()
    e.reset(seed=0)
    agent = e.agent_selection
    with pytest.raises(TypeError, match=r"action must be an int action id 0\.\.111.*not (True|False)"):
        e.step(action)
    assert e.agent_selection == agent and not any(e.terminations.values()), "nothing happened"
    e.step(legal(e))  # the game goes on


def test_a_bool_is_not_an_action_for_the_raw_env():
    e = raw_env()
    e.reset(seed=0)
    agent, hands = e.agent_selection, list(e.game.hands)
    with pytest.raises(TypeError, match="not True"):
        e.step(True)
    assert e.agent_selection == agent and list(e.game.hands) == hands


@pytest.mark.parametrize("action", [0.9, "0", None, 1.0, np.float64(0.0)])
def test_non_int_actions_are_refused_by_the_raw_env(action):
    e = raw_env()
    e.reset(seed=0)
    with pytest.raises(TypeError, match="action must be an int action id"):
        e.step(action)


def test_the_pettingzoo_env_still_takes_numpy_ints_and_ends_on_illegal_ids():
    e = env()
    e.reset(seed=0)
    e.step(np.int64(legal(e)))
    mask = e.observe(e.agent_selection)["action_mask"]
    e.step(int(np.flatnonzero(mask == 0)[0]))
    assert all(e.terminations.values()) and "illegal_move" in e.infos[e.agent_selection]
    e.step(None)  # dead agents step with None


def play_to_the_end(e):
    while e.agents:
        agent = e.agent_selection
        if e.terminations[agent] or e.truncations[agent]:
            e.step(None)
        else:
            e.step(legal(e))


def test_raw_env_stepped_after_the_game_ended_says_so():
    e = raw_env(max_hands=1)
    e.reset(seed=0)
    play_to_the_end(e)
    for action in (0, None):
        with pytest.raises(GameOverError, match=r"the game is over.*reset\(\)"):
            e.step(action)
    e.reset(seed=0)  # and a new game can start
    assert e.agents


@pytest.mark.parametrize("action", [0.9, "0", None, True, np.float64(0.0), [0]])
@pytest.mark.parametrize("illegal_action", ["raise", "lose"])
def test_single_agent_env_takes_only_ints(action, illegal_action):
    e = SingleAgentEnv(illegal_action=illegal_action)
    e.reset(seed=0)
    with pytest.raises(TypeError, match=r"action must be an int action id 0\.\.111"):
        e.step(action)
    # nothing happened: a legal numpy int is still taken
    obs, reward, term, trunc, info = e.step(np.int64(np.flatnonzero(e.action_masks())[0]))
    assert obs.shape == (OBS_SIZE,)


# -- seeds ------------------------------------------------------------------------------------------------


def dealt(e, seed):
    e.reset(seed=seed)
    game = e.unwrapped.game
    return list(game.hands), list(game.events), game.current_player


@pytest.mark.parametrize("make", [raw_env, env, SingleAgentEnv], ids=["raw_env", "env", "SingleAgentEnv"])
def test_seeds_follow_gymnasium(make):
    e = make()
    with pytest.raises(gymnasium.error.Error, match="Seed must be greater or equal to zero, actual value: -1"):
        e.reset(seed=-1)
    for bad in ("abc", 1.5, True, np.float64(1.0)):
        with pytest.raises(gymnasium.error.Error, match="Seed must be a python integer, actual type"):
            e.reset(seed=bad)
    assert dealt(make(), np.int64(7)) == dealt(make(), 7)
    assert dealt(make(), np.uint32(8)) == dealt(make(), 8)
    assert dealt(make(), 1) != dealt(make(), 2)
    e.reset(seed=None)


# -- agent options ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec, message",
    [
        ("expert:points=nan", "agent 'expert': option points='nan' must be a finite number"),
        ("expert:threat=inf", "option threat='inf' must be a finite number"),
        ("ismcts:iters=5,iters=6", "agent 'ismcts': option 'iters' is given twice"),
        ("ismcts:iters=-5", "agent 'ismcts': option iters=-5 must be >= 1"),
        ("ismcts:iters=0", "option iters=0 must be >= 1"),
        ("ismcts:seconds=0", "option seconds=0.0 must be > 0"),
        ("ismcts:seconds=-1", "option seconds=-1.0 must be > 0"),
        ("ismcts:c=-0.5", "option c=-0.5 must be >= 0"),
        ("ismcts:c=nan", "option c='nan' must be a finite number"),
        ("ismcts:rollout=smart", "option rollout='smart' must be one of greedy, random, expert"),
    ],
)
def test_bad_option_values_are_refused_by_the_spec_parser(spec, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        AgentSpec.parse(spec)


def test_good_option_values_still_parse():
    spec = AgentSpec.parse("ismcts:iters=1,seconds=0.5,c=0,rollout=random")
    assert (spec.kind, spec.option_dict()) == ("ismcts", {"iters": 1, "seconds": 0.5, "c": 0.0, "rollout": "random"})
    assert AgentSpec.parse("expert:points=-2.5").option_dict() == {"points": -2.5}


def test_agents_built_directly_check_their_options_too():
    from allfives_agents import AGENTS
    from allfives_agents.expert import DEFAULT_WEIGHTS, ExpertAgent
    from allfives_agents.search.ismcts import ROLLOUTS, ISMCTSAgent

    assert AGENTS["ismcts"].options["rollout"].choices == ROLLOUTS
    assert set(AGENTS["expert"].options) == set(DEFAULT_WEIGHTS)

    with pytest.raises(ValueError, match="points=nan must be a finite number"):
        ExpertAgent(points=float("nan"))
    with pytest.raises(ValueError, match="has no option 'speed'"):
        ExpertAgent(speed=1.0)
    with pytest.raises(ValueError, match="c=-1 must be >= 0"):
        ISMCTSAgent(c=-1)
    with pytest.raises(ValueError, match="iters=0 must be >= 1"):
        ISMCTSAgent(iters=0)
    ISMCTSAgent(seconds=0.0)  # the default: no time budget


# -- policies trained for another number of players -------------------------------------------------------


def npz_policy(path: Path, rules: dict | None) -> Path:
    rng = np.random.default_rng(0)
    params = {"w0": rng.normal(size=(16, OBS_SIZE)), "b0": np.zeros(16), "w1": rng.normal(size=(112, 16)), "b1": np.zeros(112)}
    meta = {"obs_version": OBS_VERSION}
    if rules is not None:
        meta["rules"] = rules
    NumpyPolicy("mlp", params, "Tanh", meta).save(path)
    return path


def onnx_policy(path: Path, metadata: dict | None) -> Path:
    """A small ONNX policy built by hand (no torch): the exported graph's inputs and outputs."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = np.random.default_rng(0).normal(size=(OBS_SIZE, NUM_ACTIONS)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["observation", "w"], ["logits"]),
        helper.make_node("Greater", ["action_mask", "half"], ["legal"]),
        helper.make_node("Where", ["legal", "logits", "masked_value"], ["masked_logits"]),
        helper.make_node("ArgMax", ["masked_logits"], ["action"], axis=1, keepdims=0),
    ]
    graph = helper.make_graph(
        nodes,
        "policy",
        [
            helper.make_tensor_value_info("observation", TensorProto.FLOAT, ["N", OBS_SIZE]),
            helper.make_tensor_value_info("action_mask", TensorProto.FLOAT, ["N", NUM_ACTIONS]),
        ],
        [
            helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", NUM_ACTIONS]),
            helper.make_tensor_value_info("masked_logits", TensorProto.FLOAT, ["N", NUM_ACTIONS]),
            helper.make_tensor_value_info("action", TensorProto.INT64, ["N"]),
        ],
        [
            numpy_helper.from_array(w, "w"),
            numpy_helper.from_array(np.array(0.5, np.float32), "half"),
            numpy_helper.from_array(np.array(-1e9, np.float32), "masked_value"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    for key, value in (metadata or {}).items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.save(model, str(path))
    return path


def onnx_metadata(rules) -> dict:
    return {"obs_version": str(OBS_VERSION), "obs_size": str(OBS_SIZE), "rules": json.dumps(rules)}


def test_check_policy_players_is_the_servers_message(tmp_path):
    from allfives_agents.nets.policy import check_policy_players

    agent = make_agent(f"ppo:{npz_policy(tmp_path / 'p4.npz', {'num_players': 4})}")
    with pytest.raises(ValueError, match=r"the policy ppo:.*p4\.npz was trained for 4 players in partnerships \(rules \{"):
        check_policy_players(agent, Rules.make(num_players=2))
    check_policy_players(agent, Rules.make(num_players=4))
    check_policy_players(make_agent("greedy"), Rules.make(num_players=3))  # no policy: nothing to check
    unknown = make_agent(f"ppo:{npz_policy(tmp_path / 'p.npz', None)}")
    check_policy_players(unknown, Rules.make(num_players=3))  # rules not recorded: nothing to check
    bad = make_agent(f"ppo:{npz_policy(tmp_path / 'bad.npz', {'num_players': 5})}")
    with pytest.raises(ValueError, match=r"bad\.npz: the rules in the policy's metadata are invalid: num_players"):
        check_policy_players(bad, Rules.make())


def test_a_4_player_policy_is_refused_in_a_2_player_tournament(tmp_path):
    path = npz_policy(tmp_path / "p4.npz", {"num_players": 4})
    result = run_cli("tournament", "--players", "2", "--agents", f"random,ppo:{path}", "--games", "2", "--seed", "1", timeout=120)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr
    assert "was trained for 4 players in partnerships" in result.stderr and "this game is for 2 players" in result.stderr


def test_a_2_player_onnx_is_refused_in_a_4_player_tournament(tmp_path):
    path = onnx_policy(tmp_path / "p2.onnx", onnx_metadata({"num_players": 2}))
    make_agent(f"onnx:{path}")  # a readable policy
    result = run_cli("tournament", "--players", "4", "--agents", f"random,onnx:{path}", "--games", "2", "--seed", "1", timeout=120)
    assert result.returncode == 2, result.stderr
    assert "was trained for 2 players" in result.stderr and "this game is for 4 players in partnerships" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("flag", ["--opponent", "--partner", "--hint-bot"])
def test_play_refuses_a_policy_for_another_number_of_players(tmp_path, flag):
    path = npz_policy(tmp_path / "p4.npz", {"num_players": 4, "partnerships": False})
    players = "4" if flag == "--partner" else "2"
    other = tmp_path / "p4p.npz"
    npz_policy(other, {"num_players": 4})
    args = ["play", "--no-color", "--players", players, "--seed", "1"]
    if flag == "--partner":
        args += ["--opponent", str(other)]  # right for the game; the partner is not
    args += [flag, str(path)]
    result = run_cli(*args, stdin="", timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith(f"error: {flag}: the policy ppo:") and "Traceback" not in result.stderr
    assert "was trained for 4 players, cut-throat" in result.stderr


def test_play_refuses_a_2_player_onnx_in_a_4_player_game(tmp_path):
    path = onnx_policy(tmp_path / "p2.onnx", onnx_metadata({"num_players": 2}))
    result = run_cli("play", "--no-color", "--players", "4", "--opponent", str(path), stdin="", timeout=60)
    assert result.returncode == 2 and "was trained for 2 players" in result.stderr and "Traceback" not in result.stderr


# -- ONNX metadata ----------------------------------------------------------------------------------------


def test_onnx_with_bad_rules_metadata_names_the_file_and_key(tmp_path):
    for name, rules_text, problem in [
        ("json.onnx", "{num_players: 2}", "not valid JSON"),
        ("list.onnx", "[2]", "rules must be a mapping"),
        ("players.onnx", '{"num_players": 5}', "num_players must be 2, 3 or 4"),
        ("deep.onnx", "[" * 100_000 + "]" * 100_000, "not valid JSON (RecursionError)"),  # no traceback from the JSON reader
    ]:
        meta = dict(onnx_metadata(None), rules=rules_text)
        path = onnx_policy(tmp_path / name, meta)
        with pytest.raises(PolicyFileError) as info:
            make_agent(f"onnx:{path}")
        assert str(path) in str(info.value) and "'rules'" in str(info.value) and problem in str(info.value)


def test_onnx_without_metadata_names_the_file_and_what_is_missing(tmp_path):
    path = onnx_policy(tmp_path / "bare.onnx", None)
    with pytest.raises(PolicyFileError) as info:
        make_agent(f"onnx:{path}")
    text = str(info.value)
    assert str(path) in text and "obs_version" in text and "obs_size" in text and "size -1" not in text
    path = onnx_policy(tmp_path / "junk.onnx", dict(onnx_metadata(None), obs_size="big"))
    with pytest.raises(PolicyFileError, match=r"junk\.onnx.*'obs_size'.*'big'"):
        make_agent(f"onnx:{path}")


def test_onnx_with_good_or_null_rules_still_loads(tmp_path):
    agent = make_agent(f"onnx:{onnx_policy(tmp_path / 'ok.onnx', onnx_metadata({'num_players': 3}))}")
    assert agent.policy.rules == {"num_players": 3}
    agent = make_agent(f"onnx:{onnx_policy(tmp_path / 'null.onnx', onnx_metadata(None))}")
    assert agent.policy.rules is None


# -- export -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def model_zip(tmp_path_factory):
    from test_export import make_model

    return make_model("mlp", tmp_path_factory.mktemp("hardening") / "model.zip")


def test_export_check_must_not_be_negative(model_zip, tmp_path):
    out = tmp_path / "m.onnx"
    result = run_cli("export", model_zip, "--out", out, "--check", "-5", timeout=300)
    assert result.returncode == 2 and result.stderr.startswith("error: --check") and "Traceback" not in result.stderr
    assert not out.exists()


def test_export_refuses_to_overwrite_without_force(model_zip, tmp_path):
    import shutil

    model = tmp_path / "MODEL.zip"
    shutil.copy(model_zip, model)
    existing = tmp_path / "MODEL.onnx"
    existing.write_bytes(b"keep me")
    result = run_cli("export", model, "--check", "0", timeout=300)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("error: ") and str(existing) in result.stderr and "--force" in result.stderr
    assert existing.read_bytes() == b"keep me"
    result = run_cli("export", model, "--check", "0", "--force", timeout=300)
    assert result.returncode == 0, result.stderr
    assert existing.read_bytes() != b"keep me"
    make_agent(f"onnx:{existing}")
    # the model itself is never the output
    result = run_cli("export", model, "--out", model, "--check", "0", "--force", timeout=300)
    assert result.returncode == 2 and "the model itself" in result.stderr


def test_export_refuses_a_model_with_invalid_rules_metadata(tmp_path):
    from test_export import make_model
    from allfives_train.export import ExportError, export_onnx

    model = make_model("mlp", tmp_path / "bad.zip", {"obs_version": 1, "obs_size": OBS_SIZES[1], "rules": {"num_players": 5}})  # "mlp" reads version 1
    with pytest.raises(ExportError, match=r"bad\.zip.*'rules'.*num_players must be 2, 3 or 4"):
        export_onnx(model, tmp_path / "bad.onnx")
    assert not (tmp_path / "bad.onnx").exists()


class _CreatesFile:
    """Unpickling this creates a file: stands for any code a crafted pickle could run."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_a_ppo_zip_is_read_without_unpickling_anything(tmp_path):
    import base64
    import json as _json
    import pickle
    import zipfile

    marker = tmp_path / "ran"
    crafted = tmp_path / "crafted.zip"
    payload = base64.b64encode(pickle.dumps(_CreatesFile(marker))).decode()
    with zipfile.ZipFile(ROOT_MODELS / "allfives_2p.zip") as src, zipfile.ZipFile(crafted, "w") as dst:
        for item in src.infolist():
            content = src.read(item.filename)
            if item.filename == "data":
                data = _json.loads(content)
                for value in data.values():
                    if isinstance(value, dict) and ":serialized:" in value:
                        value[":serialized:"] = payload
                content = _json.dumps(data).encode()
            dst.writestr(item, content)
    agent = make_agent(f"ppo:{crafted}", seed=0)
    shipped = make_agent(f"ppo:{ROOT_MODELS / 'allfives_2p.zip'}", seed=0)
    game = Game(seed=3, num_players=2)
    view = game.view(game.current_player)
    assert agent.act(view) == shipped.act(view)
    assert not marker.exists(), "loading a ppo: zip unpickled a member of it"


def broken_onnx_policy(path: Path, *, input_name="observation", outputs=3, width=NUM_ACTIONS, nan=False) -> Path:
    """An ONNX policy that breaks the export contract in one way (the rest as ``onnx_policy``)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = np.random.default_rng(0).normal(size=(OBS_SIZE, width)).astype(np.float32)
    if nan:
        w[:] = np.nan
    nodes = [
        helper.make_node("MatMul", [input_name, "w"], ["logits"]),
        helper.make_node("Greater", ["action_mask", "half"], ["legal"]),
        helper.make_node("Where", ["legal", "logits", "masked_value"], ["masked_logits"]),
        helper.make_node("ArgMax", ["masked_logits"], ["action"], axis=1, keepdims=0),
    ]
    outs = [
        helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", width]),
        helper.make_tensor_value_info("masked_logits", TensorProto.FLOAT, ["N", width]),
        helper.make_tensor_value_info("action", TensorProto.INT64, ["N"]),
    ][3 - outputs:]
    graph = helper.make_graph(
        nodes, "policy",
        [helper.make_tensor_value_info(input_name, TensorProto.FLOAT, ["N", OBS_SIZE]),
         helper.make_tensor_value_info("action_mask", TensorProto.FLOAT, ["N", width])],
        outs,
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array(0.5, np.float32), "half"),
         numpy_helper.from_array(np.array(-1e9, np.float32), "masked_value")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    for key, value in onnx_metadata(None).items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.save(model, str(path))
    return path


def test_an_onnx_policy_that_breaks_the_contract_is_refused_at_load(tmp_path):
    pytest.importorskip("onnxruntime")
    assert make_agent(f"onnx:{broken_onnx_policy(tmp_path / 'good.onnx')}")  # the builder itself keeps the contract
    for name, options, problem in [
        ("input.onnx", {"input_name": "obs"}, "the graph's inputs are ['action_mask', 'obs']"),
        ("outputs.onnx", {"outputs": 1}, "the graph has 1 output(s) ['action']"),
        ("nan.onnx", {"nan": True}, "the graph's logits are not finite"),
        ("narrow.onnx", {"width": 5}, "the graph does not run on an observation of the contract"),
    ]:
        path = broken_onnx_policy(tmp_path / name, **options)
        with pytest.raises(PolicyFileError) as info:
            make_agent(f"onnx:{path}")
        assert str(path) in str(info.value) and problem in str(info.value), str(info.value)
