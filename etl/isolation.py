"""GDAL's work on a delivered file, done in a child process that can be killed: opening the file
(its layers, fields, CRS and feature count) and reading its features.

Why: GDAL runs whatever a file asks of it, and some files ask for ever. A GeoPackage whose
layer is an SQLite view defined with an endless `WITH RECURSIVE` makes GDAL spin at full CPU,
in pyogrio.list_layers as much as while reading, inside a C call that no Python code can
interrupt. In-process, such a file held the nightly's reconciliation lock until someone
killed the whole process. In a child, it costs at most the stall limit: the parent waits for
each answer or batch at most `read_stall_seconds` (and `max_read_seconds` in all, counting
only the time spent waiting on the child, never the time the database takes with the batches
already read), then kills the child and refuses the file in one line (etl.limits, docs/ingest.md
"Limits").

How: the children are forked from a forkserver (multiprocessing), a clean process started once
per parent process, that has imported only what reading needs (etl.reader_child: pyogrio and
pyarrow, without geopandas and pandas, which pyogrio would otherwise import: 0.7 s): a child
costs a fork, not an interpreter start. A child sends its batches back as Arrow IPC streams
over a pipe (no copy of a feature into a Python object), its answers and refusals as pickles.
The parent's environment travels with each request (the RULEM_* limits, GDAL's settings), so a
child sees what the parent sees now, not what it saw when the forkserver started. A child dies
with the forkserver, which dies with the parent (Linux PR_SET_PDEATHSIG): a killed ingest
leaves no reader spinning.

`stop_readers(thread)` kills the children a thread is waiting on: etl.reading.ahead calls it
when its consumer stops early, so a reader thread waiting on a spinning child is not waited
for.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from etl.limits import Limits, env_name
from etl.problems import IngestRefused, refuse

PRELOAD = "etl.reader_child"  # what the forkserver imports before it forks any child

_context_lock = threading.Lock()
_context: Any = None
_children_lock = threading.Lock()
_children: dict[int, set[Any]] = {}  # thread ident -> the children it waits on


class ReaderStopped(Exception):
    """The child was killed because its reader was told to stop (etl.reading.ahead)."""


def _ctx() -> Any:
    global _context
    with _context_lock:
        if _context is None:
            ctx = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload([PRELOAD])
            _context = ctx
        return _context


def _prestart() -> None:
    """Start the forkserver now, in the background: its 0.3 s (an interpreter, pyogrio and
    GDAL's libraries) then passes while this process finishes importing the ingest (about
    0.4 s more: pyogrio with geopandas, shapely, SQLAlchemy), instead of before the first file
    is opened. Not in the forkserver itself, which imports this module too."""
    if "etl.reader_child" in sys.modules:
        return

    def start() -> None:
        from multiprocessing import forkserver

        _ctx()
        with contextlib.suppress(Exception):  # the first child will try again, and say why
            forkserver.ensure_running()

    threading.Thread(target=start, name="rulem-reader-start", daemon=True).start()


def call(fn: Callable[..., Any], args: tuple, file: str, limits: Limits,
         doing: str = "opening") -> Any:
    """fn(*args) computed in a child process; the child's IngestRefused is raised here. A child
    that gives no answer within the limits is killed and the file refused."""
    for kind, value in _run(fn, args, file, limits, doing, stream=False):
        if kind == "result":
            return value
    raise refuse(file, f"{doing} stopped: GDAL's reader ended without an answer")


def stream(fn: Callable[..., Iterator[Any]], args: tuple, file: str, limits: Limits,
           doing: str = "reading") -> Iterator[Any]:
    """The items of fn(*args), a generator run in a child process: Arrow record batches come
    through Arrow IPC, anything else pickled. Each item must come within the stall limit."""
    for kind, value in _run(fn, args, file, limits, doing, stream=True):
        if kind == "item":
            yield value


def stop_readers(thread_ident: int | None) -> None:
    """Kill the reader children the thread is waiting on (its wait then ends at once)."""
    with _children_lock:
        procs = list(_children.get(thread_ident or 0, ()))
    for proc in procs:
        _kill(proc)


def _run(fn: Callable[..., Any], args: tuple, file: str, limits: Limits, doing: str,
         stream: bool) -> Iterator[tuple[str, Any]]:
    ctx = _ctx()
    receive, send = ctx.Pipe(duplex=False)
    _widen(receive)
    proc = ctx.Process(target=_child_main, args=(send, fn, args, dict(os.environ), stream),
                       name="rulem-reader", daemon=False)
    me = threading.get_ident()
    try:
        proc.start()
    finally:
        send.close()  # the child's end: the pipe reports the child's death as EOF
    with _children_lock:
        _children.setdefault(me, set()).add(proc)
    clock = _Clock(file, limits, doing)
    try:
        while True:
            header = clock.receive(receive, proc, lambda: receive.recv())
            kind = header[0]
            if kind == "batch":
                import pyarrow as pa

                data = clock.receive(receive, proc, partial(_read_exactly, receive, header[1]))
                yield "item", pa.ipc.open_stream(data).read_next_batch()
            elif kind == "item":
                yield "item", header[1]
            elif kind == "result":
                yield "result", header[1]
                return
            elif kind == "end":
                return
            elif kind == "refused":
                _, name, problems, total, summary = header
                exc = IngestRefused(name, problems, total)
                exc.args = (summary,)
                raise exc
            else:  # "error": a bug or an unexpected failure in the child
                raise refuse(file, f"{doing} failed: {header[1]}; check that it is a "
                             "complete GIS file of a supported format")
    finally:
        with _children_lock:
            mine = _children.get(me)
            if mine is not None:
                mine.discard(proc)
                if not mine:
                    del _children[me]
        receive.close()
        _kill(proc)
        proc.join()
        _stopped_pids.discard(proc.pid)
        proc.close()


class _Clock:
    """The time spent waiting on one child: each wait at most the stall limit, all the waits
    together at most the overall limit."""

    def __init__(self, file: str, limits: Limits, doing: str) -> None:
        self.file, self.limits, self.doing = file, limits, doing
        self.waited = 0.0

    def receive(self, conn: Any, proc: Any, get: Callable[[], Any]) -> Any:
        left = self.limits.max_read_seconds - self.waited
        wait = min(self.limits.read_stall_seconds, max(left, 0.0))
        start = time.monotonic()
        try:
            if conn.poll(wait):
                return get()
        except (EOFError, OSError):
            self._died(proc)
        finally:
            self.waited += time.monotonic() - start
        _kill(proc)
        if wait < self.limits.read_stall_seconds:
            raise refuse(self.file, f"{self.doing} stopped: GDAL took more than "
                         f"{_seconds(self.limits.max_read_seconds)} in all on this file; "
                         f"nothing was loaded (raise the limit with "
                         f"{env_name('max_read_seconds')} if the file is real and that slow)")
        what = "no answer" if self.doing == "opening" else "no feature"
        raise refuse(self.file, f"{self.doing} stopped: GDAL gave {what} for "
                     f"{_seconds(self.limits.read_stall_seconds)} (a recursive view or a "
                     f"broken file?); nothing was loaded (raise the limit with "
                     f"{env_name('read_stall_seconds')} if the file is real and that slow)")

    def _died(self, proc: Any) -> None:
        proc.join(5)
        code = proc.exitcode
        if code == -signal.SIGKILL and _stopped(proc):
            raise ReaderStopped(f"{self.file}: {self.doing} was stopped")
        if code in (-signal.SIGTERM, -signal.SIGINT, -signal.SIGHUP):
            # A service stop or Ctrl-C reaches the whole process group: this process has
            # most likely been told too. Let its own handler raise (the nightly's Terminated,
            # KeyboardInterrupt) rather than refuse a file that did nothing wrong.
            time.sleep(1.0)
        if code is not None and code < 0:
            how = f"was killed by signal {signal.Signals(-code).name}"
        else:
            how = f"ended (exit status {code})"
        raise refuse(self.file, f"{self.doing} stopped: GDAL's reader {how} without finishing "
                     "(a corrupt file, or the machine out of memory?); nothing was loaded")


def _widen(conn: Any) -> None:
    """A 1 MiB pipe (Linux's limit for a user; 64 KiB by default): a batch of 25,000 polygons
    (about 9 MB) then crosses in 9 writes instead of 140."""
    try:
        import fcntl

        fcntl.fcntl(conn.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except (ImportError, OSError):
        pass


def _read_exactly(conn: Any, size: int) -> bytearray:
    """The size bytes of a batch, read from the pipe straight into one buffer (Connection's
    recv_bytes would grow a BytesIO from reads that each allocate the rest of the message)."""
    data = bytearray(size)
    view = memoryview(data)
    fd = conn.fileno()
    done = 0
    while done < size:
        got = os.readv(fd, [view[done:]])
        if got == 0:
            raise EOFError
        done += got
    return data


def _write_all(conn: Any, data: Any) -> None:
    view = memoryview(data)
    fd = conn.fileno()
    while view:
        view = view[os.write(fd, view):]


def _seconds(value: float) -> str:
    return f"{value:g} s"


_stopped_pids: set[int] = set()


def _stopped(proc: Any) -> bool:
    return proc.pid in _stopped_pids


def _kill(proc: Any) -> None:
    try:
        if proc.pid is not None and proc.exitcode is None:
            _stopped_pids.add(proc.pid)
            proc.kill()
    except (ValueError, OSError, AttributeError):  # closed, or already gone
        pass


_prestart()


# --- the child's side --------------------------------------------------------------------
def _child_main(conn: Any, fn: Callable[..., Any], args: tuple, environ: dict[str, str],
                stream: bool) -> None:
    _die_with_parent()
    os.environ.clear()
    os.environ.update(environ)
    try:
        if not stream:
            conn.send(("result", fn(*args)))
        else:
            for item in fn(*args):
                if type(item).__name__ == "RecordBatch":
                    data = _ipc(item)
                    conn.send(("batch", data.size))
                    _write_all(conn, data)
                else:
                    conn.send(("item", item))
            conn.send(("end",))
    except IngestRefused as exc:
        conn.send(("refused", exc.file, list(exc.problems), exc.total, str(exc)))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which decides
        text = " ".join(str(exc).split()) or type(exc).__name__
        with contextlib.suppress(OSError, ValueError):
            conn.send(("error", f"{type(exc).__name__}: {text}"[:1000]))
    finally:
        conn.close()


def _ipc(batch: Any) -> Any:
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return sink.getvalue()


def _die_with_parent() -> None:
    """SIGKILL when the forkserver (and so the ingest that started it) ends (Linux)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass

