"""Start and stop helper processes (peer servers, redis-server) for tests.

Every process runs in its own process group, so stopping it also stops whatever
it spawned (uvicorn workers, node children). Its stdout and stderr go to a
temporary log file; when a process dies early or never starts listening, the
error carries the tail of that log.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

HOST = "127.0.0.1"


def missing_dependency(message: str) -> None:
    """Skip the current test because something it needs is absent; fail under CI.

    CI (``CI=true``) installs every dependency with ``.ci/peers.sh``, so a missing
    one there is a broken setup rather than a reason to skip.
    """
    import pytest

    if os.environ.get("CI") == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def port_open(port: int, host: str = HOST) -> bool:
    """Whether ``host:port`` accepts a TCP connection."""
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def _tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def _stop_group(proc: subprocess.Popen[bytes], sig: int, grace: float) -> None:
    """Send ``sig`` to the process group of ``proc`` and reap it (SIGKILL after
    ``grace``)."""
    if proc.poll() is not None:
        _kill_leftovers(proc)
        return
    with suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    _kill_leftovers(proc)


def _kill_leftovers(proc: subprocess.Popen[bytes]) -> None:
    """Kill children that outlived the group leader (the group id is the leader's
    pid)."""
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


@dataclass
class ServerHandle:
    """A running server process started by :func:`run_server`."""

    proc: subprocess.Popen[bytes]
    port: int
    log_path: Path
    url_path: str = ""
    host: str = HOST

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` without a path."""
        return f"http://{self.host}:{self.port}"

    @property
    def url(self) -> str:
        """The endpoint URL: the base URL plus ``url_path`` (e.g. ``/mcp``)."""
        return self.base_url + self.url_path

    def log_tail(self, lines: int = 40) -> str:
        """The last ``lines`` lines the process wrote to stdout/stderr."""
        return _tail(self.log_path, lines)

    def kill9(self) -> None:
        """Kill the whole process group with SIGKILL (a crash, no clean shutdown)."""
        _stop_group(self.proc, signal.SIGKILL, grace=5)

    def terminate(self, grace: float = 5.0) -> None:
        """Stop the process group with SIGTERM, then SIGKILL after ``grace`` seconds."""
        _stop_group(self.proc, signal.SIGTERM, grace=grace)


def _spawn(
    cmd: Sequence[str | os.PathLike[str]],
    log_path: Path,
    env: Mapping[str, str] | None,
    cwd: str | os.PathLike[str] | None,
) -> subprocess.Popen[bytes]:
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            [os.fspath(part) for part in cmd],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=full_env,
            cwd=cwd,
            start_new_session=True,
        )


def _http_answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1):
            return True
    except urllib.error.HTTPError as exc:
        return exc.code < 500
    except (urllib.error.URLError, OSError):
        return False


def wait_until_listening(
    proc: subprocess.Popen[bytes],
    port: int,
    log_path: Path,
    *,
    timeout: float,
    ready_url: str | None = None,
    what: str = "server",
) -> None:
    """Block until ``port`` accepts connections (and ``ready_url`` answers, if given).

    Raises ``RuntimeError`` with the log tail if the process exits first or the
    deadline passes.
    """
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(
                f"{what} exited with code {proc.returncode} before listening on "
                f"port {port}:\n{_tail(log_path)}"
            )
        if port_open(port) and (ready_url is None or _http_answers(ready_url)):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"{what} did not listen on port {port} within {timeout:.0f}s:\n"
                f"{_tail(log_path)}"
            )
        time.sleep(0.05)


@contextmanager
def run_server(
    cmd: Sequence[str | os.PathLike[str]],
    port: int,
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    ready_path: str | None = None,
    timeout: float = 30,
    url_path: str = "",
) -> Iterator[ServerHandle]:
    """Run ``cmd`` (which must listen on 127.0.0.1:``port``) for the ``with`` block.

    Waits until the port accepts TCP connections; with ``ready_path`` it also waits
    until an HTTP GET of that path answers with a status below 500. Yields a
    :class:`ServerHandle` whose ``url`` is ``http://127.0.0.1:PORT`` + ``url_path``.
    The whole process group is terminated on exit.
    """
    log_dir = Path(tempfile.mkdtemp(prefix="mcptasks-proc-"))
    log_path = log_dir / "output.log"
    proc = _spawn(cmd, log_path, env, cwd)
    handle = ServerHandle(proc=proc, port=port, log_path=log_path, url_path=url_path)
    try:
        ready_url = handle.base_url + ready_path if ready_path is not None else None
        wait_until_listening(
            proc,
            port,
            log_path,
            timeout=timeout,
            ready_url=ready_url,
            what=os.fspath(cmd[0]),
        )
        yield handle
    finally:
        handle.terminate()
        shutil.rmtree(log_dir, ignore_errors=True)


@dataclass
class RedisHandle:
    """A redis-server started by :func:`start_redis`."""

    port: int
    data_dir: Path
    appendonly: bool
    proc: subprocess.Popen[bytes]
    host: str = HOST
    _binary: str = field(default="redis-server", repr=False)

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:PORT/0``."""
        return f"redis://{self.host}:{self.port}/0"

    @property
    def log_path(self) -> Path:
        return self.data_dir / "redis.log"

    def command(self) -> list[str]:
        cmd = [
            self._binary,
            "--port",
            str(self.port),
            "--bind",
            self.host,
            "--dir",
            str(self.data_dir),
            "--save",
            "",
        ]
        if self.appendonly:
            cmd += ["--appendonly", "yes", "--appendfsync", "always"]
        else:
            cmd += ["--appendonly", "no"]
        return cmd

    def start(self, timeout: float = 15) -> None:
        """(Re)start the server on the same port and data directory."""
        self.proc = _spawn(self.command(), self.log_path, None, self.data_dir)
        wait_until_listening(
            self.proc, self.port, self.log_path, timeout=timeout, what="redis-server"
        )

    def kill9(self) -> None:
        """Kill redis-server with SIGKILL (data written with appendfsync always
        survives)."""
        _stop_group(self.proc, signal.SIGKILL, grace=5)

    def stop(self) -> None:
        """Stop redis-server with SIGTERM."""
        _stop_group(self.proc, signal.SIGTERM, grace=5)

    def restart(self, *, hard: bool = True) -> None:
        """Stop (SIGKILL when ``hard``, else SIGTERM) and start again on the same
        port."""
        if hard:
            self.kill9()
        else:
            self.stop()
        self.start()


@contextmanager
def start_redis(
    *, appendonly: bool = False, timeout: float = 15
) -> Iterator[RedisHandle]:
    """Run a private redis-server on a free port for the ``with`` block.

    The default keeps everything in memory (``--save '' --appendonly no``). With
    ``appendonly=True`` it writes an append-only file (fsync on every write) into
    a temporary directory, so :meth:`RedisHandle.restart` keeps the data. Skips
    the test when ``redis-server`` is not installed (fails when ``CI=true``).
    """
    binary = shutil.which("redis-server")
    if binary is None:
        missing_dependency("redis-server not installed: run .ci/peers.sh")
        raise AssertionError("unreachable")
    data_dir = Path(tempfile.mkdtemp(prefix="mcptasks-redis-"))
    handle = RedisHandle(
        port=free_port(),
        data_dir=data_dir,
        appendonly=appendonly,
        proc=None,  # type: ignore[arg-type]  # set by start()
        _binary=binary,
    )
    try:
        handle.start(timeout=timeout)
        yield handle
    finally:
        if handle.proc is not None:
            handle.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


def celery_worker_command(name: str, concurrency: int) -> list[str]:
    """The command of a ``celery -A examples.celery_app worker`` named ``name`` with
    ``concurrency`` prefork processes, run from the repository root as the docs say
    (no mingle or gossip: the tests' workers need not know each other)."""
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "examples.celery_app",
        "worker",
        "-c",
        str(concurrency),
        "-n",
        f"{name}@%h",
        "--loglevel",
        "INFO",
        "--without-mingle",
        "--without-gossip",
    ]


def celery_front_end_command(port: int, redis_url: str, *extra: str) -> list[str]:
    """The command of ``examples/server.py`` on ``port`` running its tools on the
    workers of ``celery_worker_command`` (broker and task store at ``redis_url``),
    with ``extra`` options."""
    return [
        sys.executable,
        str(Path(__file__).resolve().parents[2] / "examples" / "server.py"),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--redis",
        redis_url,
        "--executor",
        "celery:examples.celery_app",
        *extra,
    ]


class CeleryWorker:
    """One ``celery_worker_command`` process group, started at once, run from the
    repository root with ``env`` added to this process's environment, logging to
    ``log_dir/NAME.log``."""

    def __init__(
        self,
        env: Mapping[str, str],
        name: str,
        log_dir: Path,
        *,
        concurrency: int = 1,
    ) -> None:
        self.log_path = log_dir / f"{name}.log"
        self.proc = _spawn(
            celery_worker_command(name, concurrency),
            self.log_path,
            env,
            Path(__file__).resolve().parents[2],
        )

    def log(self) -> str:
        """Everything the worker wrote."""
        return self.log_path.read_text(errors="replace")

    def wait_ready(self, timeout: float = 60) -> None:
        """Return once the worker consumes (its ``ready.`` line)."""
        from tests.support.waiting import until_sync

        def ready() -> bool:
            assert self.proc.poll() is None, self.log()[-3000:]
            return " ready." in self.log()

        until_sync(ready, timeout=timeout, what="the celery worker is ready")

    def kill9(self) -> None:
        """Kill the whole worker (master and children) at once."""
        with suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        """Stop the worker (SIGTERM, then SIGKILL after 10 s)."""
        if self.proc.poll() is None:
            with suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            with suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=10)
        self.kill9()
