"""pyaichat's support code inside a Jupyter kernel.

Sent once to the kernel as a silent execution, which runs it in a fresh
namespace (never the user's) registered as the module ``_pyaichat_kernel``.
It stands in for what the embedded interpreter's C bridge gives pyaichat's
helpers (the ``_pyaichat`` module: reads that run no user code) and runs
every capability call in a fork()ed copy of the kernel process, as
pybridge does locally: the copy has no descriptors but its result pipe,
may not write files, start processes, connect, import or open anything
for writing (an audit hook; there is no seccomp filter here), and is
killed at the call's deadline. Its effects die with it, so the kernel's
namespace never changes.

Each entry point returns base64 of a JSON envelope, as a plain ASCII
string, so that its repr (what a user_expression's text/plain holds) is
read back without a Python parser.
"""

import base64
import builtins
import io
import json
import os
import resource
import select
import signal
import sys
import time
import types

_Refused = type("Refused", (PermissionError,), {"__module__": "pyaichat",
                                                 "__doc__": "A capability tried something it may not do."})

# The audit events refused in a copy, by prefix, as isolate.c refuses
# them; "open" is allowed for reading in a helper step (linecache reads
# source files for tracebacks), never in an isolated evaluation.
_REFUSED = (
    "open", "os.", "subprocess.", "_posixsubprocess", "socket.", "ctypes.",
    "import", "shutil.", "pty.", "tempfile.", "glob.", "mmap.", "fcntl.",
    "sqlite3.", "urllib.", "http.", "ftplib.", "smtplib.", "poplib.",
    "imaplib.", "nntplib.", "telnetlib.", "webbrowser.", "syslog.",
    "resource.", "_thread.start_new_thread", "signal.", "builtins.input",
    "pdb.", "sys.setopencodehook", "cpython.run_", "code.__new__", "marshal.load",
)
_Isolation = type("IsolationError", (Exception,), {"__module__": "pyaichat"})
_armed = [False, False]  # [guard on, reading files allowed]
_SIMPLE = (str, bytes, int)
_str_eq = str.__eq__
_helpers = {}


def _guard(event, args):
    if not _armed[0] or not event.startswith(_REFUSED):
        return
    if event == "open" and _armed[1] and len(args) >= 3 and type(args[2]) is int and args[2] & os.O_ACCMODE == os.O_RDONLY:
        return
    first = args[0] if len(args) and type(args[0]) in _SIMPLE else None
    shown = "%s(%.200r)" % (event, first) if first is not None else event
    raise _Refused(shown + " refused: capabilities are read-only and may not use "
                   "files, processes, the network, signals, threads or imports")

# ---- the bridge's reads, for the helpers ----------------------------------

_TYPE_DICT = type.__dict__["__dict__"].__get__
_FUNC_CODE = types.FunctionType.__dict__["__code__"].__get__
_GETSET = type(types.FunctionType.__dict__["__code__"])
_MRO = type.__dict__["__mro__"].__get__


def _lookup(d, key, default):
    """d[key] for an exact dict (or a class's own dict) and an exact str
    key, comparing only exact str keys: no user __eq__ or __hash__ runs."""
    if type(key) is not str:
        return default
    if isinstance(d, type):
        d = dict(_TYPE_DICT(d))
    if type(d) is not dict:
        return default
    for k, v in list(d.items()):
        if k is key or (type(k) is str and _str_eq(k, key)):
            return v
    return default


def _inst_dict(obj):
    """obj's own __dict__ through the type's builtin descriptor, or None
    (a property named __dict__ is never called)."""
    if isinstance(obj, (type, types.ModuleType)):
        return None
    for klass in _MRO(type(obj)):
        desc = _TYPE_DICT(klass).get("__dict__")
        if desc is None:
            continue
        if type(desc) is not _GETSET:
            return None
        try:
            return desc.__get__(obj)
        except Exception:
            return None
    return None


def _tb_frame(tb):
    if type(tb) is not types.TracebackType:
        raise TypeError("tb_frame: not a traceback")
    return tb.tb_frame


def _frame_code(frame):
    if type(frame) is not types.FrameType:
        raise TypeError("frame_code: not a frame")
    return frame.f_code


def _func_code(fn):
    if type(fn) is not types.FunctionType:
        raise TypeError("func_code: not a function")
    return _FUNC_CODE(fn)


def _scrub_environ(names, dicts):
    """Wipe the values of names in the copy's environment."""
    if not _armed[0]:
        raise RuntimeError("scrub_environ runs only in an isolated copy")
    seen = []
    for d in dicts:
        if type(d) is not dict or any(d is s for s in seen):
            continue
        seen.append(d)
        for k in list(d):
            name = os.fsdecode(k) if type(k) is bytes else k if type(k) is str else None
            if name in names:
                d[k] = b"" if type(k) is bytes else ""


def _helper(name):
    try:
        return _helpers[name]
    except KeyError:
        raise ImportError("pyaichat helper %s is not loaded" % name) from None


def _readline():
    return ""


_bridge = types.ModuleType("_pyaichat")
for _name, _fn in (("ident", id), ("lookup", _lookup), ("inst_dict", _inst_dict), ("tb_frame", _tb_frame),
                   ("frame_code", _frame_code), ("func_code", _func_code), ("scrub_environ", _scrub_environ),
                   ("helper", _helper), ("readline", _readline)):
    setattr(_bridge, _name, _fn)
sys.modules.setdefault("_pyaichat", _bridge)
_bridge = sys.modules["_pyaichat"]


def _encode(envelope):
    return base64.b64encode(json.dumps(envelope, ensure_ascii=True).encode()).decode()


def load(name, source):
    """Loads a helper module from its source, as pybridge loads one."""
    try:
        mod = types.ModuleType(name)
        g = mod.__dict__
        g.update(__builtins__=dict(vars(builtins)), _PYAICHAT_REFUSED=_Refused, _PYAICHAT_BRIDGE=_bridge,
                 _PYAICHAT_MODULES=sys.modules, _PYAICHAT_MODULE_TYPE=types.ModuleType)
        exec(compile(source, "<pyaichat %s>" % name, "exec"), g)
        _helpers[name] = mod
        return _encode({"ok": ""})
    except BaseException as e:
        return _encode({"error": {"type": type(e).__name__, "message": str(e)}})


# ---- a call in a copy of the kernel ---------------------------------------

_MAX_RESULT = 64 << 20


# What a copy may allocate beyond the kernel's own address space, as
# pybridge allows its copies: a runaway expression fails with MemoryError
# instead of pressing the machine.
_AS_BUDGET = 1 << 30


def _address_space():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * resource.getpagesize()


def _protect_shared():
    """Makes the copy's shared writable mappings read-only, as pybridge
    does: through one (an anonymous mmap, multiprocessing's shared
    memory, a numpy memmap opened r+) the copy would write into the
    kernel's own memory. A write there then kills the copy."""
    spans = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) >= 2 and fields[1][1] == "w" and fields[1][3] == "s":
                lo, hi = fields[0].split("-")
                spans.append((int(lo, 16), int(hi, 16)))
    if not spans:
        return
    import ctypes  # only in the copy, and before the guard is up

    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    for lo, hi in spans:
        if libc.mprotect(lo, hi - lo, 1) != 0:  # PROT_READ
            raise OSError(ctypes.get_errno(), "making a shared mapping read-only failed")


def _child(w, module, fn, arg, isolated, cpu_seconds):
    """Runs in the copy: guards up, the call, its result to w, exit."""
    status = 0
    try:
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        os.closerange(3, w)
        os.closerange(w + 1, 1 << 16)
        sys.stdout = sys.stderr = io.StringIO()
        sys.stdin = io.StringIO()
        try:
            _protect_shared()
        except OSError as e:
            raise _Isolation("the kernel's shared memory cannot be made read-only in the copy (%s): "
                             "the call is refused rather than run where it could write there" % e) from None
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))
        resource.setrlimit(resource.RLIMIT_AS, (_address_space() + _AS_BUDGET,) * 2)
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
        sys.addaudithook(_guard)  # in the copy only: the kernel never pays for it
        _armed[1] = not isolated
        _armed[0] = True
        envelope = {"ok": getattr(_helper(module), fn)(arg)}
    except BaseException as e:  # the guard's refusals, the helper's own failures
        try:
            envelope = {"error": {"type": type(e).__name__, "message": str(e)[:2000]}}
        except BaseException:
            envelope = {"error": {"type": "Crashed", "message": "the result could not be rendered"}}
        status = 1
    try:
        data = json.dumps(envelope, ensure_ascii=True).encode()
        view = memoryview(data)
        while view:
            view = view[os.write(w, view):]
        # Closed before exit: the exit tears the copy's memory down before
        # it closes descriptors, and the kernel reads until end of file.
        os.close(w)
    finally:
        os._exit(status)


def call(module, fn, arg, deadline_ms, isolated):
    """module.fn(arg) in a fork()ed copy of the kernel, killed after
    deadline_ms; returns the encoded envelope {"ok": text} or
    {"error": {"type", "message"}}."""
    if not hasattr(os, "fork"):
        return _encode({"error": {"type": "IsolationError",
                                  "message": "this kernel's system has no fork(): capabilities cannot run isolated here, and do not run in place"}})
    r, w = os.pipe()
    try:
        pid = os.fork()
    except OSError as e:
        os.close(r)
        os.close(w)
        return _encode({"error": {"type": "IsolationError", "message": "fork: %s" % e}})
    if pid == 0:
        _child(w, module, fn, arg, isolated, max(1, deadline_ms // 1000 + 1))
    os.close(w)
    return _encode(_collect(r, pid, deadline_ms))


_unreaped = []


def _reap():
    """Collects the copies that have ended, without waiting: tearing down
    the copy of a large kernel takes as long as making it, and no call
    needs to wait for that (the next call collects it)."""
    for pid in list(_unreaped):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            _unreaped.remove(pid)


def _collect(r, pid, deadline_ms):
    """Reads the copy's result until it closes its end or the deadline."""
    chunks, size = [], 0
    end = time.monotonic() + deadline_ms / 1000
    try:
        while True:
            left = end - time.monotonic()
            if left <= 0 or not select.select([r], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                return {"error": {"type": "Timeout", "message": "the evaluation took longer than %d ms and was stopped; the session is unchanged" % deadline_ms}}
            chunk = os.read(r, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > _MAX_RESULT:
                os.kill(pid, signal.SIGKILL)
                return {"error": {"type": "IsolationError", "message": "the result was over 64 MiB"}}
    finally:
        os.close(r)
        _unreaped.append(pid)
        _reap()
    if not chunks:
        return {"error": {"type": "Crashed", "message": "the isolated copy died without a result; the session is unchanged"}}
    return json.loads(b"".join(chunks))
