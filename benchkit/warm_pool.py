"""A pool that forks xdist workers from a process that has already imported torch.

Why: on a short bench every ``-n`` worker spends about 1 s importing torch before its first run,
on the critical path of the session (docs/performance.md). A researcher re-benches many times a
day, so a process that imported torch once can serve the workers of every later session.

This file is deliberately standalone (it imports nothing from benchkit) and runs as a script:

    python warm_pool.py serve DIR KEY IDLE_SECONDS MODULE[,MODULE...]
        import the modules, then listen on DIR/KEY.sock; every connection forks one worker
    python warm_pool.py connect SOCKET -u [-B] -c CODE
        what xdist starts instead of ``python -u -c CODE`` (execnet's popen bootstrap): hand
        this process's stdin, stdout and stderr and its environment to a forked worker, forward
        signals to it and wait for it; without a usable pool, exec the plain interpreter

So the server never holds benchkit or idea code (it would go stale when edited), only the
preloaded modules. It refuses to fork, and exits, when a client's interpreter start-up differs
(``sys.path``) or a preloaded file changed on disk (an upgrade): the client then starts cold,
so a stale pool costs one cold session, never a wrong result. The socket lives in a directory
only its user can enter, and the server also checks the peer's uid: whoever connects runs code.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys
import time
from typing import NoReturn

COLD_REASON_ENV = "BENCHKIT_WARM_COLD"   # set in a worker that started cold, and why
WARM_ENV = "BENCHKIT_WARM_WORKER"        # set in a worker forked warm: the server's pid
_MAX_MESSAGE = 1 << 20
# seconds a request may take on the wire (not the worker's lifetime); a variable for the tests
REQUEST_TIMEOUT = float(os.environ.get("BENCHKIT_WARM_REQUEST_TIMEOUT", "10"))


# -- messages: one JSON object per line --------------------------------------------------
def send_message(conn: socket.socket, obj: dict, fds=()) -> None:
    data = json.dumps(obj).encode() + b"\n"
    if fds:
        socket.send_fds(conn, [data], list(fds))
    else:
        conn.sendall(data)


def recv_message(conn: socket.socket, with_fds: bool = False):
    """(message, fds). The message may span several reads; fds come with the first."""
    fds: list[int] = []
    chunks = []
    while True:
        if with_fds and not chunks:
            data, fds, _flags, _addr = socket.recv_fds(conn, 65536, 3)
        else:
            data = conn.recv(65536)
        if not data:
            raise ConnectionError("connection closed before a whole message")
        chunks.append(data)
        if data.endswith(b"\n"):
            break
        if sum(map(len, chunks)) > _MAX_MESSAGE:
            raise ConnectionError("message too long")
    return json.loads(b"".join(chunks)), fds


def request(path: str, obj: dict, timeout: float = 2.0) -> dict:
    """One request to the server at path (ping, stop); raises OSError when none answers."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(timeout)
        conn.connect(path)
        send_message(conn, obj)
        return recv_message(conn)[0]


# -- the client ------------------------------------------------------------------------------
def _exec_cold(argv: list[str], reason: str) -> NoReturn:
    os.environ[COLD_REASON_ENV] = reason
    os.execv(sys.executable, [sys.executable, *argv])


def connect(path: str, argv: list[str]) -> None:
    """Run argv (``-u [-B] -c CODE``) in a worker forked by the pool at path, or cold."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(REQUEST_TIMEOUT)
        conn.connect(path)
        mask = os.umask(0)
        os.umask(mask)
        send_message(conn, {"op": "fork", "argv": argv, "cwd": os.getcwd(),
                            "env": dict(os.environ), "sys_path": sys.path, "umask": mask},
                     fds=(0, 1, 2))
        answer = recv_message(conn)[0]
    except (OSError, ValueError) as exc:
        conn.close()
        _exec_cold(argv, f"no warm pool answered ({type(exc).__name__}: {exc})")
    if "pid" not in answer:
        conn.close()
        _exec_cold(argv, f"the warm pool refused: {answer.get('refused', answer)}")
    pid = int(answer["pid"])
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, lambda s, _f: _kill(pid, s))
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)   # the worker owns the pipes now: the controller must see their
    os.dup2(devnull, 1)   # end when the worker ends, not when this process does
    conn.settimeout(None)
    code = 0
    while True:  # the worker writes its exit status, or the connection ends with it
        try:
            data = conn.recv(16)
        except InterruptedError:
            continue
        except OSError:
            break
        if not data:
            break
        if len(data) >= 4:
            code = struct.unpack("!i", data[:4])[0]
    os._exit(code)


def _kill(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except OSError:
        pass


# -- the server ------------------------------------------------------------------------------
def _module_files() -> dict[str, list[int]]:
    files = {}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path:
            try:
                st = os.stat(path)
            except OSError:
                continue
            files[path] = [st.st_mtime_ns, st.st_size]
    return files


def serve(directory: str, key: str, idle: float, modules: list[str]) -> None:
    import fcntl
    import gc
    import importlib

    lock = open(os.path.join(directory, key + ".lock"), "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return  # another server of this key is alive (or starting)
    gc.disable()  # like benchkit.heap: the preloaded heap is frozen, later collections skip it
    for name in modules:
        importlib.import_module(name)
    gc.freeze()
    gc.enable()
    files = _module_files()
    path = os.path.join(directory, key + ".sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    listener.bind(path)
    bound = os.stat(path).st_ino  # unlinked at exit only if still ours
    listener.listen(16)
    listener.settimeout(1.0)
    info = {"pid": os.getpid(), "key": key, "modules": modules, "idle": idle,
            "started": time.time()}
    last = time.monotonic()
    try:
        while time.monotonic() - last < idle and _still_bound(path, bound):
            _reap()
            try:
                conn, _ = listener.accept()
            except socket.timeout:
                continue
            last = time.monotonic()
            with conn:
                if not _answer(conn, listener, files, info):
                    break
    finally:
        if _still_bound(path, bound):  # a newer pool's socket is not ours to remove
            os.unlink(path)
        listener.close()


def _still_bound(path: str, inode: int) -> bool:
    """False once the socket file is removed or replaced: nobody can reach this pool any more."""
    try:
        return os.stat(path).st_ino == inode
    except OSError:
        return False


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _answer(conn, listener, files, info) -> bool:
    """Answer one request; False when the pool should exit (asked to, or stale)."""
    conn.settimeout(REQUEST_TIMEOUT)
    fds: list[int] = []
    try:
        uid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                  struct.calcsize("3i")))[1]
        if uid != os.getuid():
            return True
        message, fds = recv_message(conn, with_fds=True)
        op = message.get("op")
        if op == "ping":
            send_message(conn, info)
            return True
        if op == "stop":
            send_message(conn, {"stopped": info["pid"]})
            return False
        if op != "fork" or len(fds) != 3:
            send_message(conn, {"refused": f"unknown request {op!r}"})
            return True
        why = _unsupported(message.get("argv", []))
        if why:  # this client cannot be served, the next may: the pool stays
            send_message(conn, {"refused": why})
            return True
        why = _stale(message, files)
        if why:  # for good: the pool exits, and the next session starts a fresh one
            send_message(conn, {"refused": why})
            return False
        pid = os.fork()
        if pid == 0:
            _become_worker(conn, listener, fds, message, info)  # never returns
        send_message(conn, {"pid": pid})
        return True
    except (OSError, ValueError):
        return True
    finally:
        for fd in fds:
            os.close(fd)


def _unsupported(argv: list[str]) -> str | None:
    if len(argv) < 3 or argv[0] != "-u" or argv[-2] != "-c" or set(argv[1:-2]) - {"-B"}:
        return f"cannot start {argv[:-1]!r} (only -u [-B] -c CODE)"
    return None


def _stale(message: dict, files: dict[str, list[int]]) -> str | None:
    """Why this pool can no longer give what a fresh interpreter would, or None."""
    if message.get("sys_path") != sys.path:
        return "the interpreter's sys.path differs from the pool's (a new .pth or PYTHONPATH?)"
    for path, stamp in files.items():
        try:
            st = os.stat(path)
        except OSError:
            return f"{path} was removed"
        if [st.st_mtime_ns, st.st_size] != stamp:
            return f"{path} changed on disk"
    return None


def _become_worker(conn, listener, fds, message, info) -> None:
    """The forked child: become what ``python -u [-B] -c CODE`` would be, then run CODE."""
    status = 1
    try:
        listener.close()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            os.close(fd)
        fds.clear()
        _watch_client(conn)
        os.chdir(message["cwd"])
        os.umask(int(message["umask"]))
        os.environ.clear()
        os.environ.update(message["env"])
        os.environ.pop(COLD_REASON_ENV, None)
        os.environ[WARM_ENV] = str(info["pid"])
        argv = message["argv"]
        sys.dont_write_bytecode = "-B" in argv
        sys.argv = ["-c"]
        if not sys.flags.safe_path:
            sys.path.insert(0, "")  # what -c puts first: the working directory
        _fresh_stdio()
        _fresh_main()
        _reseed_numpy()
        status = _run(argv[-1])
    finally:
        try:
            _send_status(conn, status)
        finally:
            os._exit(status)


def _watch_client(conn) -> None:
    """End this worker when its client ends (killed by xdist or by hand): nobody else would.
    The wait has no timeout: the request's would end a worker that trains longer."""
    import threading

    conn.settimeout(None)

    def watch():
        try:
            while conn.recv(16):
                pass
        except OSError:
            pass
        os._exit(70)

    threading.Thread(target=watch, daemon=True, name="benchkit-warm-client-watch").start()


def _fresh_stdio() -> None:
    import io

    encoding, errors = sys.stdout.encoding, sys.stdout.errors
    sys.stdin = sys.__stdin__ = open(0, "r", closefd=False)
    sys.stdout = sys.__stdout__ = io.TextIOWrapper(io.FileIO(1, "w", closefd=False),
                                                   encoding=encoding, errors=errors,
                                                   write_through=True)
    sys.stderr = sys.__stderr__ = io.TextIOWrapper(io.FileIO(2, "w", closefd=False),
                                                   encoding=encoding, errors="backslashreplace",
                                                   write_through=True)


def _fresh_main() -> None:
    import builtins
    import types

    main = types.ModuleType("__main__")
    main.__builtins__ = builtins
    sys.modules["__main__"] = main


def _reseed_numpy() -> None:
    """The forked workers would share numpy's global RNG state (Python's random module
    reseeds itself after a fork); seed it from entropy as a fresh interpreter does."""
    np_random = sys.modules.get("numpy.random")
    if np_random is not None:
        np_random.seed()


def _run(code: str) -> int:
    import atexit

    try:
        exec(compile(code, "<string>", "exec"), sys.modules["__main__"].__dict__)
        status = 0
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    except BaseException:
        import traceback

        traceback.print_exc()
        status = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    return status


def _send_status(conn, status: int) -> None:
    try:
        conn.sendall(struct.pack("!i", status))
    except OSError:
        pass


def main(argv: list[str]) -> None:
    if not sys.flags.safe_path:
        # this script's folder, which Python put first: benchkit's modules must not shadow
        # anything the pool or the worker imports (client and pool compare sys.path without it)
        del sys.path[0]
    if len(argv) >= 2 and argv[0] == "connect":
        connect(argv[1], argv[2:])
    elif len(argv) == 5 and argv[0] == "serve":
        serve(argv[1], argv[2], float(argv[3]), [m for m in argv[4].split(",") if m])
    else:
        sys.exit("usage: warm_pool.py serve DIR KEY IDLE MODULES | connect SOCKET ARGS...")


if __name__ == "__main__":
    main(sys.argv[1:])
