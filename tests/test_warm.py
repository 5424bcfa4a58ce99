"""The warm worker pool of --bench-warm (benchkit/warm_pool.py, benchkit/warm.py).

The pool's own behaviour is tested with a pool that preloads a tiny module (it starts in
milliseconds); the plugin as users meet it with real ``-n 2`` sessions, whose pool preloads torch.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from benchkit import warm, warm_pool

pytestmark = pytest.mark.skipif(not warm.supported(), reason="the warm pool needs Linux")

POOL = str(warm.POOL_SCRIPT)


@pytest.fixture
def pool_dir(monkeypatch):
    """A private pool directory under /tmp (a socket path must stay under 108 bytes); every
    pool started in it is stopped afterwards."""
    path = Path(tempfile.mkdtemp(prefix="bkw-", dir="/tmp"))
    monkeypatch.setenv(warm.DIR_ENV, str(path))
    yield path
    warm.stop_all()
    for log in path.glob("*.log"):
        log.unlink()
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def dummy_env(tmp_path):
    """An environment whose PYTHONPATH holds ``bkw_dummy``, the module a test pool preloads."""
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "bkw_dummy.py").write_text("VALUE = 1\n")
    env = dict(os.environ, PYTHONPATH=str(lib))
    env.pop(warm_pool.WARM_ENV, None)
    env.pop(warm_pool.COLD_REASON_ENV, None)
    return env, lib / "bkw_dummy.py"


def wait_for(predicate, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"not true within {timeout} s: {predicate}")


def start_server(pool_dir, env, idle=60.0, key="testkey"):
    proc = subprocess.Popen([sys.executable, "-u", POOL, "serve", str(pool_dir), key, str(idle),
                             "bkw_dummy"], env=env, stdin=subprocess.DEVNULL)
    sock = pool_dir / f"{key}.sock"
    wait_for(lambda: warm.ping(sock))
    return proc, sock


CODE = ("import json, os, sys; print(json.dumps({'warm': os.environ.get('BENCHKIT_WARM_WORKER'),"
        " 'cold': os.environ.get('BENCHKIT_WARM_COLD'), 'preloaded': 'bkw_dummy' in sys.modules,"
        " 'cwd': os.getcwd(), 'mark': os.environ.get('BKW_MARK'), 'argv': sys.argv,"
        " 'path0': sys.path[0], 'line': sys.stdin.readline().strip()}));"
        " print('to stderr', file=sys.stderr); sys.exit(int(os.environ.get('BKW_EXIT', '0')))")


def client(sock, env, cwd, stdin="hello\n", code=CODE, **extra_env):
    return subprocess.run([sys.executable, POOL, "connect", str(sock), "-u", "-c", code],
                          env=dict(env, **extra_env), cwd=cwd, input=stdin, text=True,
                          capture_output=True, timeout=60)


def client_in_background(sock, env, code):
    return subprocess.Popen([sys.executable, POOL, "connect", str(sock), "-u", "-c", code],
                            env=env, stdin=subprocess.DEVNULL)


def test_a_forked_worker_is_what_python_u_c_would_be(pool_dir, dummy_env, tmp_path):
    env, _ = dummy_env
    proc, sock = start_server(pool_dir, env)
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    done = client(sock, env, elsewhere, BKW_MARK="from-client", BKW_EXIT="3")
    out = json.loads(done.stdout)
    assert done.returncode == 3, done.stderr
    assert out["warm"] == str(proc.pid) and out["cold"] is None and out["preloaded"]
    assert out["cwd"] == str(elsewhere) and out["mark"] == "from-client"
    assert out["argv"] == ["-c"] and out["path0"] == "" and out["line"] == "hello"
    assert done.stderr == "to stderr\n"
    assert proc.poll() is None, "the pool serves the next worker too"
    again = client(sock, env, elsewhere)
    assert again.returncode == 0 and json.loads(again.stdout)["warm"] == str(proc.pid)


def test_without_a_pool_the_worker_starts_cold_and_says_why(pool_dir, dummy_env, tmp_path):
    env, _ = dummy_env
    done = client(pool_dir / "nobody.sock", env, tmp_path, BKW_EXIT="2")
    out = json.loads(done.stdout)
    assert done.returncode == 2
    assert out["warm"] is None and not out["preloaded"] and out["line"] == "hello"
    assert out["cold"].startswith("no warm pool answered (FileNotFoundError")


def test_a_changed_preloaded_file_makes_the_pool_refuse_and_exit(pool_dir, dummy_env, tmp_path):
    env, module = dummy_env
    proc, sock = start_server(pool_dir, env)
    module.write_text("VALUE = 2  # edited\n")
    done = client(sock, env, tmp_path)
    out = json.loads(done.stdout)
    assert out["warm"] is None and not out["preloaded"]
    assert "the warm pool refused" in out["cold"] and "bkw_dummy.py changed on disk" in out["cold"]
    assert proc.wait(timeout=30) == 0
    assert not sock.exists()


def test_a_different_sys_path_is_refused(pool_dir, dummy_env, tmp_path):
    env, module = dummy_env
    proc, sock = start_server(pool_dir, env)
    other = dict(env, PYTHONPATH=f"{module.parent}{os.pathsep}{tmp_path}")
    out = json.loads(client(sock, other, tmp_path).stdout)
    assert "sys.path differs" in out["cold"]
    proc.wait(timeout=30)


def test_a_worker_outlives_the_request_timeout(pool_dir, dummy_env, tmp_path):
    """A regression: the worker inherited the request's socket timeout (10 s) and ended itself
    in the middle of a longer session."""
    env, _ = dummy_env
    env = dict(env, BENCHKIT_WARM_REQUEST_TIMEOUT="0.3")
    proc, sock = start_server(pool_dir, env)
    code = "import os, time; time.sleep(1.5); print(os.environ.get('BENCHKIT_WARM_WORKER'))"
    done = client(sock, env, tmp_path, code=code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(proc.pid)


def test_a_killed_client_takes_its_worker_with_it(pool_dir, dummy_env, tmp_path):
    env, _ = dummy_env
    _, sock = start_server(pool_dir, env)
    pidfile = tmp_path / "pid"
    code = (f"import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid()));"
            " time.sleep(120)")
    proc = client_in_background(sock, env, code)
    pid = int(wait_for(lambda: pidfile.exists() and pidfile.read_text()))
    proc.kill()
    proc.wait()
    wait_for(lambda: not _alive(pid), timeout=20)


def test_a_signal_to_the_client_reaches_the_worker(pool_dir, dummy_env, tmp_path):
    env, _ = dummy_env
    _, sock = start_server(pool_dir, env)
    ready = tmp_path / "ready"
    code = (f"import time\ntry:\n    open({str(ready)!r}, 'w').close(); time.sleep(120)\n"
            "except KeyboardInterrupt:\n    raise SystemExit(42)")
    proc = client_in_background(sock, env, code)
    wait_for(ready.exists)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=20) == 42


def test_the_pool_exits_when_idle(pool_dir, dummy_env):
    env, _ = dummy_env
    proc, sock = start_server(pool_dir, env, idle=1.5)
    assert proc.wait(timeout=30) == 0
    assert not sock.exists()


def test_a_command_it_cannot_start_runs_cold_and_the_pool_stays(pool_dir, dummy_env, tmp_path):
    env, _ = dummy_env
    proc, sock = start_server(pool_dir, env)
    done = subprocess.run([sys.executable, POOL, "connect", str(sock), "-c",
                           "import os; print(os.environ['BENCHKIT_WARM_COLD'])"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert "only -u [-B] -c CODE" in done.stdout
    assert warm.ping(sock) is not None and proc.poll() is None


def test_the_pool_exits_when_its_socket_is_removed(pool_dir, dummy_env):
    env, _ = dummy_env
    proc, sock = start_server(pool_dir, env)
    sock.unlink()
    assert proc.wait(timeout=30) == 0


def test_the_pool_does_not_put_benchkit_first_on_sys_path(pool_dir, dummy_env, tmp_path):
    """Its script's folder (benchkit/) would come first, and its modules (stats, run, table,
    ...) could shadow what a worker imports; the worker gets '' first, as python -c gives."""
    env, _ = dummy_env
    _, sock = start_server(pool_dir, env)
    code = "import sys, json; print(json.dumps(sys.path))"
    warm_path = json.loads(client(sock, env, tmp_path, code=code).stdout)
    cold = subprocess.run([sys.executable, "-u", "-c", code], env=env, capture_output=True,
                          text=True, cwd=tmp_path)
    assert warm_path == json.loads(cold.stdout)
    assert str(warm.POOL_SCRIPT.parent) not in warm_path


def test_one_pool_per_key(pool_dir, dummy_env):
    env, _ = dummy_env
    first, _ = start_server(pool_dir, env)
    second = subprocess.run([sys.executable, "-u", POOL, "serve", str(pool_dir), "testkey", "60",
                             "bkw_dummy"], env=env, timeout=60)
    assert second.returncode == 0 and first.poll() is None


def test_the_key_follows_what_changes_how_torch_loads():
    base = {"HOME": "/a", "PWD": "/x", "OMP_NUM_THREADS": "1"}
    key = warm.pool_key(base)
    assert warm.pool_key(dict(base, HOME="/b", PWD="/y", BENCHKIT_WARM_DIR="/d")) == key
    for changed in ({"OMP_NUM_THREADS": "2"}, {"PYTHONPATH": "/lib"}, {"MKL_X": "1"},
                    {"TORCH_HOME": "/t"}, {"LD_PRELOAD": "x.so"}):
        assert warm.pool_key(dict(base, **changed)) != key, changed


def test_a_shared_pool_directory_is_not_used(pool_dir, pytester):
    pool_dir.chmod(0o777)
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest_subprocess("-n", "2", "--bench-warm", "-p", "no:randomly")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*--bench-warm: workers started cold (* is not a private "
                                 "directory of this user)"])
    assert not list(pool_dir.glob("*.sock"))


def test_without_workers_the_option_does_nothing(pool_dir, pytester):
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest_subprocess("--bench-warm", "-p", "no:randomly")
    assert result.ret == 0
    result.stdout.no_fnmatch_line("*--bench-warm*")
    assert not list(pool_dir.glob("*"))


@pytest.mark.parametrize("args, message", [
    (["--bench-warm-idle", "0"], "--bench-warm-idle '0' is not valid; valid: minutes in (0, 1440]"),
    (["--bench-warm-idle", "soon"], "--bench-warm-idle 'soon' is not valid"),
    (["-o", "bench_warm=maybe"], "bench_warm 'maybe' is not a boolean; valid: true or false"),
])
def test_bad_warm_settings_are_usage_errors(pytester, args, message):
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest_subprocess(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


IDEA = '''
import pytest

pytestmark = pytest.mark.bench(name="warmed", track="tabular", grid={"lr": [1e-2]}, seeds=2)

@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())

@pytest.mark.arm("idea")
def test_idea(run):
    run.fit(run.track.model(), lr=3e-3)
'''

CONFTEST = '''
import json, os, sys

def pytest_configure(config):
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        with open(f"torch_at_start_{worker}.json", "w") as f:
            json.dump("torch" in sys.modules, f)
'''


def test_a_second_session_forks_its_workers_warm_with_the_same_bits(pool_dir, pytester):
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_warmed=IDEA)
    pytester.makeconftest(CONFTEST)
    args = ("--bench-epochs", "1", "-p", "no:randomly", "--bench-fresh", "-n", "2",
            "--bench-warm", "--bench-warm-idle", "5")
    path = pytester.path / "reports" / "warmed" / "tabular" / "bench_report.json"

    first = pytester.runpytest_subprocess(*args)
    assert first.ret == 0
    first.stdout.fnmatch_lines(["*--bench-warm: 0 of 2 worker(s) forked from the warm pool*",
                                "*started cold because no warm pool answered*"])
    cold = json.loads(path.read_text())
    assert json.loads((pytester.path / "torch_at_start_gw0.json").read_text()) is False
    pools = wait_for(warm.pools)            # started after the session, in the background
    assert pools[0]["modules"] == list(warm.PRELOAD)

    second = pytester.runpytest_subprocess(*args)
    assert second.ret == 0
    second.stdout.fnmatch_lines(["*--bench-warm: 2 of 2 worker(s) forked from the warm pool*"])
    second.stdout.no_fnmatch_line("*started cold*")
    assert "already imported" not in second.stdout.str()
    for worker in ("gw0", "gw1"):
        assert json.loads((pytester.path / f"torch_at_start_{worker}.json").read_text()) is True
    warmed = json.loads(path.read_text())
    assert [(r["arm"], r["seed"], r["val"].hex(), r["test"].hex()) for r in warmed["runs"]] == \
        [(r["arm"], r["seed"], r["val"].hex(), r["test"].hex()) for r in cold["runs"]]
    assert warmed["comparison"] == cold["comparison"]
    assert [p["pid"] for p in warm.pools()] == [pools[0]["pid"]], "no second pool"


def test_the_cli_lists_and_stops_pools(pool_dir, dummy_env):
    env, _ = dummy_env
    proc, sock = start_server(pool_dir, env)
    cli = [sys.executable, "-m", "benchkit", "warm"]
    listed = subprocess.run(cli, capture_output=True, text=True, env=env, timeout=60)
    assert listed.returncode == 0
    assert f"running: pid {proc.pid}, preloaded bkw_dummy" in listed.stdout
    stopped = subprocess.run(cli + ["--stop"], capture_output=True, text=True, env=env, timeout=60)
    assert f"stopped: pid {proc.pid}" in stopped.stdout
    assert proc.wait(timeout=30) == 0
    after = subprocess.run(cli, capture_output=True, text=True, env=env, timeout=60)
    assert "no warm pool is running" in after.stdout


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie waits for the pool to reap it: it no longer runs
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_an_interrupted_warm_session_leaves_no_worker_and_resumes(pool_dir, pytester):
    """Ctrl-C reaches the terminal's process group: the controller and the clients, not the
    pool's forks. The clients forward it; no fork outlives the session, and the next session
    trains only what is missing."""
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_warmed=IDEA.replace("seeds=2", "seeds=16"))
    args = [sys.executable, "-m", "pytest", "-p", "no:randomly", "-n", "2", "--bench-warm",
            "--bench-warm-idle", "2", "-q"]
    env = dict(os.environ, PYTHONPATH=str(pytester.path))
    subprocess.run(args + ["--bench-epochs", "1", "--bench-fresh"], cwd=pytester.path, env=env,
                   capture_output=True, timeout=300)
    pool = wait_for(warm.pools)[0]
    runs = pytester.path / ".pytest_cache" / "d" / "benchkit-runs"
    before = set(runs.rglob("*.json"))
    session = subprocess.Popen(args, cwd=pytester.path, env=env, start_new_session=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wait_for(lambda: len(set(runs.rglob("*.json")) - before) >= 3, timeout=120)
    os.killpg(session.pid, signal.SIGINT)
    out = session.communicate(timeout=120)[0]
    assert session.returncode == pytest.ExitCode.INTERRUPTED, out
    stored = len(set(runs.rglob("*.json")) - before)
    assert stored < 32, "interrupted before the end"
    children = Path(f"/proc/{pool['pid']}/task/{pool['pid']}/children")
    wait_for(lambda: not [p for p in children.read_text().split() if _alive(int(p))], timeout=30)

    again = subprocess.run(args, cwd=pytester.path, env=env, capture_output=True, text=True,
                           timeout=300)
    assert again.returncode == 0, again.stdout
    assert "2 of 2 worker(s) forked from the warm pool" in again.stdout
    report = json.loads((pytester.path / "reports" / "warmed" / "tabular" /
                         "bench_report.json").read_text())
    assert sum(r["reused"] for r in report["runs"]) >= stored
    assert len(report["runs"]) == 32
