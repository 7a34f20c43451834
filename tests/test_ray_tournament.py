"""Tournaments on Ray (``--ray``): the same results as local workers, a killed worker changes nothing, clear errors."""

import json
import os
import signal
import sys
import threading
import time

import pytest
from helpers import run_cli

from allfives_agents.tournament.cluster import ClusterError, check_address, import_ray
from allfives_agents.tournament import TournamentError, run_tournament
from allfives_env.engine import Rules

TIMINGS = ("seconds", "games_per_s")

pytestmark = pytest.mark.usefixtures("one_ray_at_a_time")


def without_timings(results: dict) -> dict:
    return {k: v for k, v in results.items() if k not in TIMINGS}


@pytest.mark.slow
def test_a_ray_tournament_writes_the_results_of_local_workers(tmp_path):
    pytest.importorskip("ray")
    common = ["tournament", "--agents", "random,greedy,onnx:allfives_2p", "--games", "8", "--seed", "3", "--target", "100"]
    local = run_cli(*common, "--workers", "2", "--out", tmp_path / "local", timeout=300)
    on_ray = run_cli(*common, "--ray", "--workers", "2", "--out", tmp_path / "ray", timeout=300)
    assert local.returncode == 0, local.stderr[-2000:]
    assert on_ray.returncode == 0, on_ray.stderr[-2000:]
    a, b = (json.loads((tmp_path / d / "results.json").read_text()) for d in ("local", "ray"))
    assert without_timings(a) == without_timings(b) and b["games"] == 3 * 8
    assert (tmp_path / "local" / "games.jsonl").read_text() == (tmp_path / "ray" / "games.jsonl").read_text()
    # a run stopped after 10 games goes on on Ray to the same results
    (tmp_path / "resumed").mkdir()
    kept = (tmp_path / "local" / "games.jsonl").read_text().splitlines(keepends=True)[:10]
    (tmp_path / "resumed" / "games.jsonl").write_text("".join(kept))
    resumed = run_cli(*common, "--ray", "--workers", "2", "--out", tmp_path / "resumed", "--resume", timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    c = json.loads((tmp_path / "resumed" / "results.json").read_text())
    assert c["config"].pop("resumed_games") == 10 and a["config"].pop("resumed_games") == 0
    assert without_timings(c) == without_timings(a)
    assert (tmp_path / "resumed" / "games.jsonl").read_text() == (tmp_path / "local" / "games.jsonl").read_text()


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as f:
        return int(f.read().rsplit(b")", 1)[1].split()[1])


def _descends_from_this_test(pid: int) -> bool:
    """Whether ``pid`` was started by this process (its own local Ray), not by another test worker's."""
    me = os.getpid()
    try:
        while pid > 1:
            pid = _parent(pid)
            if pid == me:
                return True
    except (OSError, ValueError, IndexError):
        pass
    return False


def _kill_one_running_chunk(killed: list, stop: threading.Event) -> None:
    """SIGKILL the first Ray worker process of this test's own Ray seen playing a chunk (its title is
    ``ray::_play_chunk``); other test workers' Ray processes are left alone."""
    while not stop.is_set() and not killed:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    title = f.read().split(b"\0")[0]
            except OSError:
                continue
            if title == b"ray::_play_chunk" and _descends_from_this_test(int(pid)):
                os.kill(int(pid), signal.SIGKILL)
                killed.append(int(pid))
                return
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the Ray worker processes in /proc")
def test_a_worker_killed_mid_run_loses_and_double_counts_no_game():
    pytest.importorskip("ray")
    agents, rules = ["greedy", "ismcts:iters=20"], Rules.make(target_score=100)
    expected = run_tournament(agents, rules, games=30, seed=2, workers=2)
    killed, stop = [], threading.Event()
    killer = threading.Thread(target=_kill_one_running_chunk, args=(killed, stop), daemon=True)
    killer.start()
    try:
        result = run_tournament(agents, rules, games=30, seed=2, ray="local", workers=2)
    finally:
        stop.set()
        killer.join()
    assert killed, "no Ray worker was seen playing a chunk"
    assert [r.game for r in result.results] == list(range(30)), "every game once, in schedule order"
    assert result.results == expected.results
    assert without_timings(result.to_dict()) == without_timings(expected.to_dict())


def test_bad_ray_addresses_and_a_missing_ray_are_one_clear_line(monkeypatch):
    for address in ("local", "auto", "10.0.0.1:6379", "ray://head:10001"):
        assert check_address(address) == address
    with pytest.raises(ClusterError, match=r"bad Ray address 'head'.*HOST:PORT"):
        check_address("head")
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ClusterError, match=r"needs ray.*\.\[scale\]"):
        import_ray()
    with pytest.raises(TournamentError, match=r"needs ray.*\.\[scale\]"):
        run_tournament(["random", "greedy"], games=2, ray="local")


def test_the_cli_refuses_a_bad_ray_address_before_playing():
    result = run_cli("tournament", "--agents", "random,greedy", "--games", "2", "--seed", "1", "--ray", "no address", timeout=120)
    assert result.returncode == 2 and result.stderr.startswith("error: bad Ray address 'no address'")
    result = run_cli("tournament", "--agents", "random,greedy", "--games", "2", "--seed", "1", "--ray", "127.0.0.1:1", timeout=120)
    assert result.returncode == 2 and "error: no Ray cluster at 127.0.0.1:1" in result.stderr


@pytest.mark.slow
def test_an_agent_that_fails_on_ray_stops_the_tournament_with_its_own_message(tmp_path):
    pytest.importorskip("ray")
    bad = tmp_path / "bad.zip"
    bad.write_text("not a model")
    with pytest.raises(TournamentError) as local:
        run_tournament(["random", f"ppo:{bad}"], games=2, workers=1)
    with pytest.raises(TournamentError) as on_ray:
        run_tournament(["random", f"ppo:{bad}"], games=2, ray="local", workers=2)
    assert str(on_ray.value) == str(local.value) and "not a readable policy file" in str(on_ray.value)


# a lost node, worker or driver: one line, and --resume goes on ------------------------------------------------


def _driver_that_dies(sender, schedule, specs, tasks, address, workers, keep_records, registry):
    """A Ray driver whose node dies after 3 games: Ray ends such a driver with exit status 1 and no
    exception (seen when Ray's dashboard agent is killed: the raylet shares its fate)."""
    from allfives_agents.tournament.games import Runner

    runner = Runner(schedule, specs, keep_records)
    for task in tasks[:3]:
        sender.send(("game", runner.play(task)))
    os._exit(1)


def test_a_ray_driver_that_dies_is_one_error_line_and_resume_goes_on(tmp_path, monkeypatch, capsys):
    pytest.importorskip("ray")
    from allfives.cli.main import main as cli_main
    from allfives_agents.tournament import on_ray

    monkeypatch.setattr(on_ray, "_drive", _driver_that_dies)
    common = ["tournament", "--agents", "random,greedy", "--games", "8", "--seed", "3", "--target", "60"]
    out, local = tmp_path / "out", tmp_path / "local"
    assert cli_main([*common, "--out", str(out), "--ray"]) == 2
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: the Ray driver stopped (exit status 1) after 3 of 8 games") and "Traceback" not in err
    assert f"the games played are kept in {out / 'games.jsonl'}: the same command with --resume" in last
    assert len((out / "games.jsonl").read_text().splitlines()) == 3

    assert cli_main([*common, "--out", str(out), "--resume"]) == 0
    assert cli_main([*common, "--out", str(local)]) == 0
    a, b = (json.loads((d / "results.json").read_text()) for d in (out, local))
    assert a["config"].pop("resumed_games") == 3 and b["config"].pop("resumed_games") == 0
    assert without_timings(a) == without_timings(b)
    assert (out / "games.jsonl").read_text() == (local / "games.jsonl").read_text()


class FakeRay:
    """What the driver asks of ray, with Ray's own exceptions: ``wait`` (and ``cancel``, as a Ray that
    is gone does) raises ``error``."""

    def __init__(self, error) -> None:
        import ray

        self.exceptions, self.error, self.shut = ray.exceptions, error, False

    def put(self, value):
        return value

    def remote(self, **options):
        return lambda function: type("Remote", (), {"remote": staticmethod(lambda *args: object())})

    def wait(self, refs, num_returns):
        raise self.error

    def cancel(self, ref, force):
        raise self.error

    def shutdown(self):
        self.shut = True


@pytest.mark.parametrize("name", ["NodeDiedError", "WorkerCrashedError", "LocalRayletDiedError", "RaySystemError", "ObjectLostError", "RayError"])
def test_ray_errors_of_a_lost_node_or_worker_are_one_line(monkeypatch, name):
    ray = pytest.importorskip("ray")
    from allfives_agents import AgentSpec
    from allfives_agents.tournament import cluster, on_ray

    make = {"NodeDiedError": lambda c: c("The node died.\nsee raylet.out"), "RaySystemError": lambda c: c("System error: raylet gone"),
            "ObjectLostError": lambda c: c("00ff", None, "here")}.get(name, lambda c: c("lost\nmore"))
    fake = FakeRay(make(getattr(ray.exceptions, name)))
    monkeypatch.setattr(cluster, "connect", lambda *args, **kwargs: (fake, True))
    with pytest.raises(on_ray.RayLost) as info:
        on_ray._play(None, [AgentSpec.parse("random")], [(0, g) for g in range(4)], "local", 2, False, list)
    assert str(info.value).startswith(f"Ray failed under the tournament ({name}: ") and "\n" not in str(info.value)
    assert fake.shut, "the Ray it started is shut down"
