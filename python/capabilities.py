"""pyaichat's capabilities: read-only views of the py> session.

Loaded lazily (on the first capability call) as the module ``_pyaichat_caps``
by the Go capabilities package; never imported by user code.

Every entry point takes a JSON object as text and returns a JSON envelope as
text: ``{"ok": RESULT}`` or ``{"error": {"type": ..., "message": ...}}``.

There are two entry points:

``inproc(args)`` runs inside the session and runs no user code at all: it
looks values up in dicts, tests exact types (never ``isinstance``, which reads
a user ``__class__``), reads type attributes through ``type``'s own
descriptors (never through a metaclass) and renders only builtin values.  When
an answer needs user code (an expression, a user ``__repr__``, a signature)
it returns ``{"isolate": true}`` and Go repeats the call through
``isolated(args)`` in a fork()ed copy of the session, where user code may run
but its effects die with the copy (pybridge.CallIsolated).

Everything this module needs is imported here, at load time: inside the
isolated copy imports are refused, and no capability imports a module.
"""

import builtins
import gc
import inspect
import json
import keyword
import linecache
import os
import re
import sys
import types

_MODULE_NAME = __name__

# Type attributes read through type's own C descriptors, so that a
# metaclass's __getattribute__ or properties never run.
_T_NAME = type.__dict__["__name__"].__get__
_T_QUALNAME = type.__dict__["__qualname__"].__get__
_T_MODULE = type.__dict__["__module__"].__get__
_T_MRO = type.__dict__["__mro__"].__get__
_T_DICT = type.__dict__["__dict__"].__get__
_F_QUALNAME = types.FunctionType.__dict__["__qualname__"].__get__
_F_CODE = types.FunctionType.__dict__["__code__"].__get__
_EXC_TB = BaseException.__dict__["__traceback__"].__get__
_EXC_ARGS = BaseException.__dict__["args"].__get__

_NONE_T = type(None)
_SCALARS = frozenset({int, float, complex, bool, _NONE_T, type(Ellipsis), type(NotImplemented)})
_CONTAINERS = frozenset({list, tuple, dict, set, frozenset})
_BUILTIN_SAFE = _SCALARS | _CONTAINERS | {str, bytes, bytearray, range}

_MAX_LEVEL = 6
# Ints with more bits than this are not converted to decimal: the conversion
# is quadratic and Python refuses it beyond 4300 digits anyway.
_MAX_INT_BITS = 10000
_PREVIEW_LIMIT = 80
_MAX_FRAMES = 30
_MAX_LOCALS = 30
_LOCAL_LIMIT = 200


class _NeedsUserCode(Exception):
    """Raised by the renderer in in-process mode when only user code could
    answer (a user type's __repr__, a custom exception __str__...)."""


# ---- text hygiene ------------------------------------------------------

# Control characters (C0 except tab and newline, DEL, C1), lone surrogates and
# the invisible format characters that reorder or hide text on a terminal.
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e"
    "\u2060-\u2069\ufeff\ud800-\udfff]"
)


def _escape_char(m):
    o = ord(m.group())
    if o < 0x100:
        return "\\x%02x" % o
    return "\\u%04x" % o


def _clean(s):
    """Escape what could drive a terminal or break UTF-8: reprs reach both
    the user's screen and the model."""
    if s.isprintable():
        return s
    return _UNSAFE.sub(_escape_char, s)


def _qual(t):
    """A type's qualified name; builtins unqualified ("int")."""
    try:
        mod = _T_MODULE(t)
    except Exception:
        mod = None
    name = _T_QUALNAME(t)
    if type(mod) is not str or mod == "builtins":
        return _clean(name)
    return _clean(mod + "." + name)


def _module_of(t):
    mod = _T_MODULE(t)
    return _clean(mod) if type(mod) is str else None


# ---- bounded rendering -------------------------------------------------


class _Out:
    """Accumulates a repr under a character budget; once the budget is spent
    the renderer stops walking, so the full repr is never built."""

    __slots__ = ("parts", "left", "cut", "user", "active")

    def __init__(self, limit, user):
        self.parts = []
        self.left = limit
        self.cut = False
        self.user = user
        self.active = set()

    def put(self, s):
        if len(s) > self.left:
            s = s[: max(self.left, 0)]
            self.cut = True
        self.parts.append(s)
        self.left -= len(s)

    def text(self):
        return "".join(self.parts)


_OPEN_CLOSE = {
    list: ("[", "]", "[]"),
    tuple: ("(", ")", "()"),
    set: ("{", "}", "set()"),
    frozenset: ("frozenset({", "})", "frozenset()"),
    dict: ("{", "}", "{}"),
}


def _render(obj, out, level):
    t = type(obj)
    if t in _SCALARS:
        if t is int and obj.bit_length() > _MAX_INT_BITS:
            out.put("<int with about %d digits>" % (obj.bit_length() * 0.30103 + 1))
            out.cut = True
            return
        out.put(repr(obj))
    elif t is str or t is bytes or t is bytearray:
        take = max(out.left, 0)
        if len(obj) > take:
            out.put(repr(obj[:take]))
            out.cut = True
        else:
            out.put(repr(obj))
    elif t in _CONTAINERS:
        _render_container(obj, t, out, level)
    elif t is range:
        out.put(repr(obj))
    elif not out.user:
        raise _NeedsUserCode(_qual(t))
    else:
        _render_user(obj, t, out)


def _render_container(obj, t, out, level):
    opener, closer, empty = _OPEN_CLOSE[t]
    if not obj:
        out.put(empty)
        return
    if id(obj) in out.active or level >= _MAX_LEVEL:
        out.put(opener + "..." + closer)
        out.cut = out.cut or level >= _MAX_LEVEL
        return
    out.active.add(id(obj))
    out.put(opener)
    first = True
    items = obj.items() if t is dict else obj
    for x in items:
        if out.left <= 0:
            out.cut = True
            break
        if not first:
            out.put(", ")
        first = False
        if t is dict:
            _render(x[0], out, level + 1)
            out.put(": ")
            _render(x[1], out, level + 1)
        else:
            _render(x, out, level + 1)
    if out.cut and out.left <= 0:
        out.parts.append("...")
    if t is tuple and len(obj) == 1:
        out.parts.append(",")
    # The closer is always added so that a cut repr still reads as a
    # structure; it may exceed the budget by a few characters.
    out.parts.append(closer)
    out.active.discard(id(obj))


def _render_user(obj, t, out):
    """A user (or library) object: only ever reached in the isolated copy."""
    summary = _library_summary(obj, t, out.left)
    if summary is not None:
        out.put(summary)
        return
    r = repr(obj)
    if type(r) is not str:
        raise TypeError("__repr__ returned non-string (type %s)" % _qual(type(r)))
    out.put(r)


def _library_summary(obj, t, limit):
    """numpy arrays and pandas objects as shape, dtype/columns and a head, when
    the session already uses those libraries (they are never imported)."""
    np = sys.modules.get("numpy")
    if np is not None and t is getattr(np, "ndarray", None):
        body = np.array2string(obj, threshold=100, edgeitems=3, separator=", ")
        return "array(%s, shape=%s, dtype=%s)" % (body, obj.shape, obj.dtype)
    pd = sys.modules.get("pandas")
    if pd is not None:
        if t is getattr(pd, "DataFrame", None):
            cols = ", ".join(str(c) for c in list(obj.columns[:50]))
            head = obj.head(5).to_string(max_cols=20, max_colwidth=40)
            return "DataFrame shape=%s columns=[%s]\n%s" % (obj.shape, cols, head)
        if t is getattr(pd, "Series", None):
            head = obj.head(10).to_string(max_rows=10)
            return "Series name=%r length=%d dtype=%s\n%s" % (obj.name, len(obj), obj.dtype, head)
    return None


def _bounded_repr(obj, limit, user):
    """(text, truncated): at most about limit characters, control characters
    escaped. In in-process mode raises _NeedsUserCode for user types."""
    out = _Out(limit, user)
    _render(obj, out, 0)
    text = _clean(out.text())
    cut = out.cut
    # Escaping can lengthen the text; the cap is on what the caller receives.
    if len(text) > limit + 8:
        text = text[:limit]
        cut = True
    return text, cut


def _preview(v):
    """A short description that runs no user code: builtin values shown
    directly when short, other objects by type and size."""
    t = type(v)
    if t in _BUILTIN_SAFE:
        try:
            text, cut = _bounded_repr(v, _PREVIEW_LIMIT, False)
        except _NeedsUserCode:
            cut, text = True, ""
        if not cut:
            return text
        if t in _CONTAINERS or t is bytearray or t is bytes or t is str:
            return "%s, %d %s" % (_T_NAME(t), len(v), "items" if t in _CONTAINERS else "chars" if t is str else "bytes")
        return text
    if t is types.ModuleType:
        name = v.__dict__.get("__name__")
        return "module " + (_clean(name) if type(name) is str else "?")
    if t is types.FunctionType:
        code = _F_CODE(v)
        params = list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
        return "function %s(%s)" % (_clean(_F_QUALNAME(v)), ", ".join(params))
    if t is types.BuiltinFunctionType:
        return "builtin function"
    if issubclass(t, type):
        return "class " + _qual(v)
    np = sys.modules.get("numpy")
    if np is not None and t is getattr(np, "ndarray", None):
        return "ndarray, shape %s, %s" % (v.shape, _clean(str(v.dtype)))
    return _qual(t) + " object"


# ---- the session -------------------------------------------------------


def _namespace():
    """The py> namespace: __main__'s dict as the REPL helper holds it. Read
    from the helper's module dict, never through attributes that could
    create its console lazily (and import code) on pyaichat's behalf."""
    repl = sys.modules.get("_pyaichat_repl")
    main = repl.__dict__.get("_main") if type(repl) is types.ModuleType else None
    if type(main) is not types.ModuleType:
        main = sys.modules["__main__"]
    ns = main.__dict__
    return ns


_MISSING = object()


def _lookup(name):
    """The value of a plain name as eval would find it, without user code.
    Returns _MISSING for NameError, or raises _NeedsUserCode when a non-str
    key could make the dict lookup call a user __eq__."""
    ns = _namespace()
    for table in (ns, builtins.__dict__):
        if not set(map(type, table)) <= {str}:
            raise _NeedsUserCode("non-str key")
        v = table.get(name, _MISSING)
        if v is not _MISSING:
            return v
    return _MISSING


def _plain_name(expr):
    e = expr.strip()
    if e.isascii() and e.isidentifier() and not keyword.iskeyword(e):
        return e
    return None


def _eval(expr):
    """Evaluate an expression in the session namespace (isolated copy only)."""
    code = compile(expr.strip(), "<expr>", "eval", dont_inherit=True)
    return eval(code, _namespace())


# ---- capabilities ------------------------------------------------------


def _type_result(v, user):
    t = type(v)
    res = {
        "type": _qual(t),
        "module": _module_of(t),
        "mro": [_qual(c) for c in _T_MRO(t)],
    }
    if callable(v):
        if not user:
            raise _NeedsUserCode("signature")
        res["signature"] = _signature(v)
    return res


def _signature(v):
    try:
        return _clean(str(inspect.signature(v)))
    except (TypeError, ValueError):
        return None


def _repr_result(v, a, user):
    text, cut = _bounded_repr(v, a["limit"], user)
    return {"repr": text, "truncated": cut}


def _value(a, user):
    expr = a["expr"]
    if user:
        return _eval(expr)
    name = _plain_name(expr)
    if name is None:
        raise _NeedsUserCode("expression")
    v = _lookup(name)
    if v is _MISSING:
        raise NameError("name %r is not defined" % name)
    return v


def cap_get_type(a, user):
    return _type_result(_value(a, user), user)


def cap_get_repr(a, user):
    return _repr_result(_value(a, user), a, user)


def cap_eval_expr(a, user):
    v = _value(a, user)
    res = _repr_result(v, a, user)
    res["type"] = _qual(type(v))
    return res


def _dir_order(n):
    return (2 if n[:2] == "__" else 1 if n[:1] == "_" else 0, n)


def cap_get_dir(a, user):
    if not user:
        raise _NeedsUserCode("dir")
    v = _eval(a["expr"])
    names = [n for n in dir(v) if type(n) is str]
    # Public names first, dunders last: with a cap, what a person would
    # look for survives.
    names.sort(key=_dir_order)
    cap = a["max_items"]
    out = []
    for n in names[:cap]:
        try:
            static = inspect.getattr_static(v, n)
            kind = _kind(static)
        except AttributeError:
            kind = "attribute"  # provided dynamically (__getattr__)
        out.append({"name": _clean(n), "kind": kind})
    return {"names": out, "omitted": max(len(names) - cap, 0)}


_METHOD_TYPES = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.MethodDescriptorType,
    types.WrapperDescriptorType,
    types.MethodWrapperType,
    types.ClassMethodDescriptorType,
    staticmethod,
    classmethod,
)


def _kind(static):
    t = type(static)
    if issubclass(t, property):
        return "property"
    if issubclass(t, type):
        return "class"
    if issubclass(t, _METHOD_TYPES):
        return "method"
    if t is types.ModuleType:
        return "module"
    return "attribute"


def cap_get_doc(a, user):
    if not user:
        raise _NeedsUserCode("doc")
    v = _eval(a["expr"])
    doc = inspect.getdoc(v)
    truncated = False
    if doc is not None:
        limit = a["limit"]
        if len(doc) > limit:
            doc, truncated = doc[:limit], True
        doc = _clean(doc)
    return {
        "doc": doc,
        "signature": _signature(v) if callable(v) else None,
        "truncated": truncated,
    }


def cap_list_globals(a, user):
    ns = _namespace()
    # Items, not lookups: a lookup could compare a user key with __eq__.
    # Sorting the pairs compares only the (distinct, exact str) names.
    pairs = [
        (k, v)
        for k, v in ns.items()
        if type(k) is str
        # module dunders (__builtins__, __name__...) and pyaichat's helpers
        and not (k[:2] == "__" and k[-2:] == "__")
        and not k.startswith("_pyaichat")
    ]
    pairs.sort()
    cap = a["max_items"]
    out = []
    for k, v in pairs[:cap]:
        out.append({"name": _clean(k), "type": _qual(type(v)), "preview": _preview(v)})
    return {"globals": out, "omitted": max(len(pairs) - cap, 0)}


def _exc_message(v, user):
    """str(exception), computed in-process only when no user code can run:
    the class that defines __str__ is a builtin one and every value it may
    format is a builtin value."""
    if user:
        return _clean(str(v))
    for cls in _T_MRO(type(v)):
        if "__str__" in _T_DICT(cls):
            if _T_MODULE(cls) != "builtins":
                raise _NeedsUserCode("__str__")
            break
    values = list(_EXC_ARGS(v))
    for base, attrs in _EXC_FIELDS:
        if issubclass(type(v), base):
            values.extend(base.__dict__[a].__get__(v) for a in attrs)
    for x in values:
        _bounded_repr(x, _PREVIEW_LIMIT, False)  # raises for user objects
    return _clean(str(v))


# Fields that builtin exceptions' __str__ formats besides args, read through
# the C member descriptors.
_EXC_FIELDS = (
    (OSError, ("filename", "filename2", "strerror")),
    (SyntaxError, ("msg", "filename", "lineno", "text")),
)


def _local_preview(val, user):
    if user:
        try:
            return _bounded_repr(val, _LOCAL_LIMIT, True)[0]
        except BaseException as e:  # noqa: a user __repr__ may raise anything
            return "<repr failed: %s>" % _qual(type(e))
    try:
        return _bounded_repr(val, _LOCAL_LIMIT, False)[0]
    except _NeedsUserCode:
        return "<%s>" % _preview(val)


def _user_frame(code):
    return not code.co_filename.startswith("<pyaichat")


def _source_line(filename, lineno):
    """The source line from linecache; files are read only when they are
    regular files, so a frame claiming to come from /dev/tty never reads
    the terminal."""
    if filename not in linecache.cache:
        if filename.startswith("<") or not os.path.isfile(filename):
            return None
    line = linecache.getline(filename, lineno)
    return _clean(line.strip()) if line else None


def cap_get_last_exception(a, user):
    v = getattr(sys, "last_value", None)
    if v is None or not issubclass(type(v), BaseException):
        return {"exception": None}
    frames = []
    tb = _EXC_TB(v)
    while tb is not None:
        f = tb.tb_frame
        code = f.f_code
        if _user_frame(code):
            frames.append((f, code, tb.tb_lineno))
        tb = tb.tb_next
    omitted = max(len(frames) - _MAX_FRAMES, 0)
    frames = frames[-_MAX_FRAMES:]
    out = []
    lines = ["Traceback (most recent call last):"]
    for f, code, lineno in frames:
        src = _source_line(code.co_filename, lineno)
        local_prev = {}
        # A module-level frame's locals are its globals: list_globals shows
        # those, and a namespace of thousands would drown the frame.
        if f.f_locals is not f.f_globals:
            for i, (name, val) in enumerate(f.f_locals.items()):
                if i >= _MAX_LOCALS:
                    break
                local_prev[_clean(str(name))] = _local_preview(val, user)
        fname = _clean(code.co_filename)
        func = _clean(code.co_name)
        out.append({"file": fname, "line": lineno, "function": func, "source": src, "locals": local_prev})
        lines.append('  File "%s", line %d, in %s' % (fname, lineno, func))
        if src:
            lines.append("    " + src)
    msg = _exc_message(v, user)
    name = _qual(type(v))
    lines.append(name + (": " + msg if msg else ""))
    text = "\n".join(lines)
    if len(text) > a["limit"]:
        text = text[: a["limit"]] + "..."
    return {
        "exception": {
            "type": name,
            "message": msg,
            "traceback": text,
            "frames": out,
            "omitted_frames": omitted,
        }
    }


_CAPS = {
    "list_globals": cap_list_globals,
    "get_type": cap_get_type,
    "get_repr": cap_get_repr,
    "get_dir": cap_get_dir,
    "get_doc": cap_get_doc,
    "eval_expr": cap_eval_expr,
    "get_last_exception": cap_get_last_exception,
}


def _error(type_name, message):
    return json.dumps({"error": {"type": type_name, "message": _clean(message)[:2000]}}, ensure_ascii=False)


def inproc(arg):
    """Answer without running any user code, or ask for isolation."""
    a = json.loads(arg)
    fn = _CAPS.get(a.get("cap"))
    if fn is None:
        return _error("InvalidArguments", "unknown capability %r" % a.get("cap"))
    try:
        res = fn(a, False)
    except _NeedsUserCode:
        if a["cap"] == "get_last_exception":
            _warm_lines()
        return '{"isolate": true}'
    except NameError as e:
        return _error("NameError", str(e))
    return json.dumps({"ok": res}, ensure_ascii=False)


def _warm_lines():
    """Read the traceback's source lines into linecache before forking: the
    isolated copy may not open files."""
    v = getattr(sys, "last_value", None)
    tb = _EXC_TB(v) if v is not None and issubclass(type(v), BaseException) else None
    while tb is not None:
        code = tb.tb_frame.f_code
        if _user_frame(code):
            _source_line(code.co_filename, tb.tb_lineno)
        tb = tb.tb_next


def _eof_readline(*_):
    return ""


def isolated(arg):
    """Answer in the fork()ed copy of the session (pybridge.CallIsolated): user
    code may run here; whatever it changes dies with the copy."""
    # Reading stdin through pyaichat would call back into Go, which does not
    # exist in this copy: stdin is at end of file here.
    bridge = sys.modules.get("_pyaichat")
    if bridge is not None:
        try:
            bridge.readline = _eof_readline
        except Exception:
            pass
    # A collection here would walk the whole copied heap (and touch its
    # pages): the objects that existed at the fork are left alone.
    gc.freeze()
    # A recursion limit the user raised could overflow the C stack here;
    # a RecursionError is the clearer answer.
    if sys.getrecursionlimit() > 3000:
        sys.setrecursionlimit(3000)
    try:
        a = json.loads(arg)
        res = _CAPS[a["cap"]](a, True)
        return json.dumps({"ok": res}, ensure_ascii=False)
    except BaseException as e:  # noqa: SystemExit and KeyboardInterrupt too
        try:
            msg = str(e)
        except BaseException:
            msg = "<exception message unavailable>"
        return _error(_T_NAME(type(e)), msg)
