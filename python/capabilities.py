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

# The modules this helper uses, as snapshots of their namespaces read
# through their dicts: a module whose __class__ the user swapped for one
# with a __getattribute__ is never asked, and none is imported by an
# import statement, which reads a loaded module's __spec__ through its
# class. Those loaded before any input ran are taken as they were then
# (the REPL helper copied them at start-up), so that a function the user
# replaced since is not the one called. pybridge gives this module the
# builtins as they were at start-up, and the bridge module, sys.modules
# and the module type (_PYAICHAT_*): a repr, len or max the user replaces
# is never called.
_MODULES = _PYAICHAT_MODULES  # noqa: F821, set by pybridge
_BRIDGE = _PYAICHAT_BRIDGE  # noqa: F821
_M_DICT = type.__dict__["__dict__"].__get__(_PYAICHAT_MODULE_TYPE)["__dict__"].__get__  # noqa: F821
_OWN_BUILTINS = __builtins__ if type(__builtins__) is dict else _M_DICT(__builtins__)


def _import(name):
    """Module name as sys.modules holds it, imported only when it is not
    there yet."""
    m = _M_DICT(_BRIDGE)["lookup"](_MODULES, name, None)
    if m is None:
        __import__(name)
        m = _MODULES[name]
    return m


def _start_namespace(name):
    helper = _M_DICT(_BRIDGE)["helper"]
    try:
        return _M_DICT(helper("_pyaichat_repl"))["start_namespace"](name)
    except (ImportError, KeyError):  # the capabilities run without the REPL (tests)
        return None


_SimpleNamespace = (_start_namespace("types") or _M_DICT(_import("types")))["SimpleNamespace"]


def _own(name):
    start = _start_namespace(name)
    return _SimpleNamespace(**(start if type(start) is dict else _M_DICT(_import(name))))


gc, inspect, keyword, linecache, os, posix, re, stat, sys, types, _json, _pyaichat = (
    _own(n) for n in ("gc", "inspect", "keyword", "linecache", "os", "posix", "re", "stat", "sys", "types", "_json", "_pyaichat")
)
# The live modules, for what must be read as it is now: sys's last
# exception, os.environ as the user's code sees it, the builtins a name
# resolves to in the session.
_REAL_SYS, _REAL_OS, _LIVE_BUILTINS = _import("sys"), _import("os"), _import("builtins")

if sys.version_info < (3, 11):
    # inspect.signature of a builtin imports ast when called, before 3.11,
    # and the isolated copy refuses imports: it is loaded with this helper
    # and handed to inspect there (_signature).
    _ast = _import("ast")
else:
    _ast = None

_MODULE_NAME = __name__

# Type attributes read through type's own C descriptors, so that a
# metaclass's __getattribute__ or properties never run.
_T_NAME = type.__dict__["__name__"].__get__
_T_QUALNAME = type.__dict__["__qualname__"].__get__
_T_MODULE = type.__dict__["__module__"].__get__
_T_MRO = type.__dict__["__mro__"].__get__
_T_DICT = type.__dict__["__dict__"].__get__
_F_QUALNAME = types.FunctionType.__dict__["__qualname__"].__get__
_EXC_TB = BaseException.__dict__["__traceback__"].__get__

# Reads that run no user code and raise no audit event (a user audit hook
# is user code): d.get(key) compares keys with __eq__ when hashes collide,
# and id(), traceback.tb_frame, frame.f_code and function.__code__ are
# audited.
_get = _pyaichat.lookup  # (dict or class, str key, default)
_ident = _pyaichat.ident
_tb_frame = _pyaichat.tb_frame
_frame_code = _pyaichat.frame_code
_F_CODE = _pyaichat.func_code
_ABSENT = object()


def _sys(name, default=None):
    """sys.<name> from the module's own dict as it is now (sys may have a
    __getattr__)."""
    return _get(_M_DICT(_REAL_SYS), name, default)


def _module(name):
    """sys.modules[name], or None; never imported."""
    return _get(_sys("modules"), name, None)


def _no_default(o):
    raise TypeError("not JSON: %s" % _T_NAME(type(o)))


# JSON through the json module's C parts alone: its Python parts look
# builtins up in the live builtins module, which the user may have changed.
# The separators are json.dumps's.
_encode = _json.make_encoder(None, _no_default, _json.encode_basestring, None, ": ", ", ", False, False, True)


def _reject_constant(name):
    raise ValueError("not JSON: %s" % name)


_scan = _json.make_scanner(types.SimpleNamespace(
    strict=True, object_hook=None, object_pairs_hook=None,
    parse_float=float, parse_int=int, parse_constant=_reject_constant, memo={},
))


def _dumps(obj):
    """json.dumps(obj, ensure_ascii=False) for plain values."""
    return "".join(_encode(obj, 0))


def _loads(text):
    """json.loads(text) for a JSON document from Go."""
    text = text.strip()
    try:
        obj, end = _scan(text, 0)
    except StopIteration:
        raise ValueError("not JSON") from None
    if end != len(text):
        raise ValueError("not JSON: extra data")
    return obj


# What _lib found, for the length of one call: list_globals asks for the
# same classes once per global.
_lib_memo = {}
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
# Text that is not a repr is cut at these lengths (then marked with _CUT):
# a class, attribute or variable name can be megabytes long.
_NAME_LIMIT = 200  # names: types, modules, globals, locals, attributes
_LINE_LIMIT = 1000  # a source line, a file name, a signature
_MSG_LIMIT = 2000  # an exception's message
_CUT = "..."
# Source files larger than this are not read for traceback lines.
_MAX_SOURCE_BYTES = 8 << 20


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


def _exact(s):
    """s as an exact str, or None: a str subclass's own methods (strip,
    slicing) are user code, str.__str__ copies it without them."""
    if type(s) is str:
        return s
    if issubclass(type(s), str):
        return str.__str__(s)
    return None


def _clip(s, limit):
    """(text, cut): s escaped and cut to limit characters. It is cut before
    it is escaped, so the cost does not grow with s; the escapes may
    lengthen it, so it is cut again after."""
    s = _exact(s)
    if s is None:
        return "?", False
    cut = len(s) > limit
    if cut:
        s = s[:limit]
    s = _clean(s)
    if len(s) > limit:
        s, cut = s[:limit], True
    return s, cut


def _text(s, limit):
    """s escaped and cut to limit characters, marked with _CUT when cut."""
    s, cut = _clip(s, limit)
    return s + _CUT if cut else s


def _qual(t):
    """A type's qualified name; builtins unqualified ("int")."""
    try:
        mod = _T_MODULE(t)
    except Exception:
        mod = None
    name = _text(_T_QUALNAME(t), _NAME_LIMIT)
    if type(mod) is not str or mod == "builtins":
        return name
    return _text(mod, _NAME_LIMIT) + "." + name


def _module_of(t):
    mod = _T_MODULE(t)
    return _text(mod, _NAME_LIMIT) if type(mod) is str else None


def _refused_type():
    """pyaichat's Refused exception, which isolate.c's audit hook raises;
    pybridge puts it in this module's globals as it loads it, out of user
    code's reach (an attribute of the shared _pyaichat module is not)."""
    return globals().get("_PYAICHAT_REFUSED")


def _error_type(t):
    """An exception type's name as reported: bare for Python's builtin
    exceptions and pyaichat's own Refused, qualified with the module for
    any other class ("__main__.Timeout"), so that no class of the user's
    can pass for one of pyaichat's error types (Timeout, Refused, Crashed
    are bare names) or for a builtin one (a class whose __module__ says
    "builtins" reads "builtins.ValueError"). Builtins are recognised by
    identity, never by name."""
    name = _T_NAME(t)
    if type(name) is str and (_get(_OWN_BUILTINS, name, None) is t or t is _refused_type()):
        return name
    try:
        mod = _T_MODULE(t)
    except Exception:
        mod = None
    mod = _text(mod, _NAME_LIMIT) if type(mod) is str else "?"
    return mod + "." + _text(_T_QUALNAME(t), _NAME_LIMIT)


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
        if t is int:
            out.put(_int_text(obj))
            out.cut = out.cut or obj.bit_length() > _MAX_INT_BITS
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


def _int_text(n):
    """repr(n), or its size when the conversion would be slow (beyond
    _MAX_INT_BITS) or is refused (the user lowered the digit limit)."""
    if n.bit_length() <= _MAX_INT_BITS:
        try:
            return repr(n)
        except ValueError:
            pass
    return "<int with about %d digits>" % (n.bit_length() * 0.30103 + 1)


def _int_str_fails(n):
    """Whether str(n) fails on the digit limit, judged by size alone (a
    huge n is never converted)."""
    limit = sys.get_int_max_str_digits()
    return limit > 0 and n.bit_length() * 0.30103 > limit + 1


def _render_container(obj, t, out, level):
    opener, closer, empty = _OPEN_CLOSE[t]
    if not obj:
        out.put(empty)
        return
    if _ident(obj) in out.active or level >= _MAX_LEVEL:
        out.put(opener + "..." + closer)
        out.cut = out.cut or level >= _MAX_LEVEL
        return
    out.active.add(_ident(obj))
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
    out.active.discard(_ident(obj))


def _render_user(obj, t, out):
    """A user (or library) object: only ever reached in the isolated copy."""
    try:
        summary = _library_summary(obj, t)
    except Exception:  # noqa: the library's own repr answers instead
        summary = None
    if summary is not None:
        text, elided = summary
        out.put(text)
        out.cut = out.cut or elided
        return
    r = repr(obj)
    if type(r) is not str:
        raise TypeError("__repr__ returned non-string (type %s)" % _qual(type(r)))
    out.put(r)


# ---- numpy and pandas --------------------------------------------------
#
# Summaries of the libraries' big objects, built from a few elements or a
# head slice so that their cost does not grow with the data: numpy's repr
# walks 6**ndim elements and honours a threshold the user may have raised;
# pandas' repr of a DataFrame imports a module lazily (refused in the copy).
# The libraries are looked up in sys.modules, never imported.

_NP_THRESHOLD = 100  # arrays with more elements are summarised
_NP_SHOWN = 128  # values printed at most, whatever the number of dimensions
_NP_DIMS = 4  # dimensions printed at most
_NP_ITEM = 60  # characters per object or string element
_PD_ROWS = 5  # rows in a DataFrame's head
_PD_COLS = 10  # columns in a DataFrame's head
_PD_NAMES = 50  # columns listed with their dtype
_PD_SERIES_ROWS = 10
_PD_CELL = 40  # characters per cell (pandas' display.max_colwidth)


def _library_summary(obj, t):
    """(text, elided) for numpy arrays and pandas objects when the session
    already uses those libraries, else None."""
    if _derives(t, "numpy", "ndarray"):
        return _np_summary(_module("numpy"), obj, t)
    pd = _module("pandas")
    if type(_lib("pandas", "Index")) is not type:
        return None
    if t is _lib("pandas", "DataFrame"):
        return _pd_frame(pd, obj)
    if t is _lib("pandas", "Series"):
        return _pd_series(pd, obj)
    if _derives(t, "pandas", "Index"):
        return _pd_index(obj, t)
    return None


def _np_cells(dt):
    """How many values one element of dtype dt holds: a structured dtype's
    fields and subarrays are printed in full by numpy."""
    sub = dt.subdtype
    if sub is not None:
        n = 1
        for d in sub[1]:
            n *= d
        return n * _np_cells(sub[0])
    if dt.names is None:
        return 1
    return sum(_np_cells(dt.fields[name][0]) for name in dt.names)


def _np_edges(shape, cells):
    """(edgeitems, lead): numpy's edgeitems, and how many leading axes to
    fix at 0, so that at most _NP_DIMS dimensions and _NP_SHOWN values are
    printed; None when not even one element fits."""
    if 0 in shape:
        return 3, 0
    for lead in range(max(len(shape) - _NP_DIMS, 0), len(shape) + 1):
        for e in (3, 2, 1):
            n = cells
            for d in shape[lead:]:
                n *= min(d, 2 * e)
            if n <= _NP_SHOWN:
                return e, lead
    return None


def _np_summary(np, a, t):
    shape, dtype = a.shape, a.dtype
    tail = "shape=%s, dtype=%s" % (shape, dtype)
    # numpy's own names: array([...]) for ndarray, memmap([...])...
    name = "array" if t is np.ndarray else _T_NAME(t)
    edges = _np_edges(shape, _np_cells(dtype))
    if edges is None:
        return "%s(<values not shown: %d per element>, %s)" % (name, _np_cells(dtype), tail), True
    e, lead = edges
    view = a[(0,) * lead + (Ellipsis,)] if lead else a
    elided = [view.size < a.size or view.size > _NP_THRESHOLD]
    if t is np.ndarray or t is _lib("numpy", "memmap"):

        def cut(r):
            if len(r) > _NP_ITEM:
                elided[0] = True
                return r[:_NP_ITEM] + "..."
            return r

        def item(x):
            text, c = _bounded_repr(x, _NP_ITEM, True)
            elided[0] = elided[0] or c
            # As numpy shows them: a list element is not a dimension.
            return "list(%s)" % text if type(x) is list else text

        def string(x):
            return cut(repr(x[: _NP_ITEM + 1]))

        prefix = name + "("
        body = np.array2string(
            view,
            threshold=_NP_THRESHOLD,
            edgeitems=e,
            separator=", ",
            prefix=prefix,
            formatter={"object": item, "numpystr": string, "void": lambda x: cut(repr(x))},
        )
        text = "%s%s, %s)" % (prefix, body, tail)
    else:
        # Subclasses (masked arrays, matrices, ...) print themselves, under
        # bounded print options.
        with np.printoptions(threshold=_NP_THRESHOLD, edgeitems=e):
            r = repr(view)
        if type(r) is not str:
            raise TypeError("__repr__ returned non-string")
        text = "%s\n%s" % (r, tail)
    if view.size < a.size:
        text += "\n(only the sub-array [%s] is shown)" % ", ".join(["0"] * lead)
    return text, elided[0]


def _pd_name(x):
    return _bounded_repr(x, _PD_CELL, True)[0]


def _pd_table(pd, frame, header=True):
    """A small frame's rows as pandas prints them. Through the formatter
    DataFrame.to_string uses: to_string itself imports a module lazily."""
    with pd.option_context("display.max_colwidth", _PD_CELL):
        fmt = _module("pandas.io.formats.format")
        formatter = getattr(fmt, "DataFrameFormatter", None)
        if formatter is not None and hasattr(formatter, "get_strcols"):
            f = formatter(frame, header=header)
            return f.adj.adjoin(1, *f.get_strcols())
        return frame.to_string(header=header)


def _pd_index_line(idx):
    t = type(idx)
    if t is _lib("pandas", "RangeIndex"):
        return repr(idx)
    names = [n for n in idx.names]
    if len(names) > 1:
        return "%s, %d levels, names %s" % (_T_NAME(t), len(names), _pd_name(names))
    line = "%s, dtype %s" % (_T_NAME(t), idx.dtype)
    if names and names[0] is not None:
        line += ", name " + _pd_name(names[0])
    return line


def _pd_frame(pd, df):
    nrows, ncols = df.shape
    k = min(ncols, _PD_NAMES)
    # The dtypes of the listed columns only: a zero-row slice copies nothing.
    dtypes = list(df.iloc[:0, :k].dtypes)
    cols = ", ".join("%s %s" % (_pd_name(c), d) for c, d in zip(df.columns[:k].tolist(), dtypes))
    if ncols > k:
        cols += ", ... (%d more)" % (ncols - k)
    elif not ncols:
        cols = "(none)"
    lines = [
        "DataFrame, %d rows x %d columns" % (nrows, ncols),
        "columns: " + cols,
        "index: " + _pd_index_line(df.index),
    ]
    hr, hc = min(nrows, _PD_ROWS), min(ncols, _PD_COLS)
    if hr and hc:
        if hr == nrows and hc == ncols:
            lines.append("rows:")
        elif hc == ncols:
            lines.append("head (first %d rows):" % hr)
        else:
            lines.append("head (first %d rows, first %d columns):" % (hr, hc))
        lines.append(_pd_table(pd, df.iloc[:hr, :hc]))
    return "\n".join(lines), nrows > hr or ncols > hc


def _pd_series(pd, s):
    n = len(s)
    first = "Series"
    if s.name is not None:
        first += " " + _pd_name(s.name)
    lines = [
        "%s, length %d, dtype %s" % (first, n, s.dtype),
        "index: " + _pd_index_line(s.index),
    ]
    h = min(n, _PD_SERIES_ROWS)
    if h:
        lines.append("rows:" if h == n else "head (first %d):" % h)
        lines.append(_pd_table(pd, s.iloc[:h].to_frame(), header=False))
    return "\n".join(lines), n > h


def _pd_index(idx, t):
    n = len(idx)
    if t is _lib("pandas", "RangeIndex"):
        return repr(idx), False
    h = min(n, _PD_SERIES_ROWS)
    line = "%s, length %d" % (_T_NAME(t), n)
    if h < n:
        line += ", first %d:" % h
    return line + "\n" + repr(idx[:h]), h < n


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
        name = _get(_M_DICT(v), "__name__", None)
        return "module " + (_text(name, _NAME_LIMIT) if type(name) is str else "?")
    if t is types.FunctionType:
        code = _F_CODE(v)
        n = code.co_argcount + code.co_kwonlyargcount
        sig = ", ".join(_text(p, _NAME_LIMIT) for p in code.co_varnames[: min(n, 20)])
        if n > 20:
            sig += ", ..."
        return _text("function %s(%s)" % (_text(_F_QUALNAME(v), _NAME_LIMIT), sig), _LINE_LIMIT)
    if t is types.BuiltinFunctionType:
        return "builtin function"
    if issubclass(t, type):
        return "class " + _qual(v)
    lib = _lib_preview(v, t)
    if lib is not None:
        return lib
    return _qual(t) + " object"


def _lib(module, name):
    """module.name read from the module's dict if the session imported
    module (never imported here), else None."""
    key = (module, name)
    v = _lib_memo.get(key, _ABSENT)
    if v is _ABSENT:
        m = _module(module)
        v = _get(_M_DICT(m), name, None) if type(m) is types.ModuleType else None
        _lib_memo[key] = v
    return v


def _derives(t, module, name):
    """Whether type t derives from the class module.name (see _lib)."""
    base = _lib(module, name)
    return type(base) is type and base in _T_MRO(t)


def _pandas_own(t):
    """Whether t is one of pandas' own classes: its module is a pandas
    module that holds it under its name (any class may claim
    __module__ = "pandas.core.frame")."""
    mod = _T_MODULE(t)
    if type(mod) is not str or not mod.startswith("pandas."):
        return False
    m = _module(mod)
    return type(m) is types.ModuleType and _get(_M_DICT(m), _T_QUALNAME(t), None) is t


_GETSET = type(type.__dict__["__name__"])
_MEMBER = type(BaseException.__dict__["__suppress_context__"])
_inst_dict = _pyaichat.inst_dict  # obj's own __dict__, never its class's


def _c_get(t, name, obj):
    """obj.name through the C getter class t holds under name (numpy's
    shape), or _ABSENT when t holds anything else there."""
    desc = _get(t, name, None)
    if type(desc) is _GETSET or type(desc) is _MEMBER:
        return desc.__get__(obj, t)
    return _ABSENT


def _np_dtype(nd, a):
    """a.dtype for a numpy array, through ndarray's own getter."""
    dtype = _c_get(nd, "dtype", a)
    if dtype is _ABSENT:
        raise _NeedsUserCode("dtype")
    return dtype


def _attr(obj, name):
    """obj.name when a C getter or member of its class answers it (a
    Cython class's attribute), else its own __dict__'s entry, else a plain
    value its class holds; _ABSENT when its class holds anything else
    under that name first (a property the user patched on, a method), so
    no user code runs."""
    t = type(obj)
    for k in _T_MRO(t):
        desc = _get(k, name, _ABSENT)
        if desc is _ABSENT:
            continue
        if type(desc) is _GETSET or type(desc) is _MEMBER:
            return desc.__get__(obj, t)
        if type(desc) not in _BUILTIN_SAFE:
            return _ABSENT
        break
    own = _get(_inst_dict(obj), name, _ABSENT)
    return own if own is not _ABSENT else desc


def _lib_preview(v, t):
    """numpy arrays and pandas objects by shape and dtype, read through
    numpy's C getters and the dicts of pandas' own types: no user code, and
    none of pandas' caches is filled. None when that does not answer."""
    nd = _lib("numpy", "ndarray")
    if _derives(t, "numpy", "ndarray"):
        shape, dtype = _c_get(nd, "shape", v), _c_get(nd, "dtype", v)
        if shape is _ABSENT or dtype is _ABSENT:
            return None
        return "%s, shape %s, %s" % (_text(_T_NAME(t), _NAME_LIMIT), shape, _text(str(dtype), _PREVIEW_LIMIT))
    pd_index = _lib("pandas", "Index")
    if pd_index is None or not _pandas_own(t):
        return None
    try:
        if t is _lib("pandas", "DataFrame"):
            axes = _pd_axes(v)
            if axes is not None and len(axes) == 2:
                ncols, nrows = _pd_len(axes[0]), _pd_len(axes[1])
                if ncols is not None and nrows is not None:
                    return "DataFrame, %d rows x %d columns" % (nrows, ncols)
        elif t is _lib("pandas", "Series"):
            axes = _pd_axes(v)
            n = _pd_len(axes[0]) if axes is not None and len(axes) == 1 else None
            if n is not None:
                return "Series%s, length %d%s" % (_pd_series_name(v), n, _pd_series_dtype(v, nd))
        elif _derives(t, "pandas", "Index"):
            n = _pd_len(v)
            if n is not None:
                data = _get(_inst_dict(v), "_data", None)
                dtype = _np_dtype(nd, data) if type(data) is nd else None
                name = _text(_T_NAME(t), _NAME_LIMIT)
                return "%s, length %d%s" % (name, n, ", " + _text(str(dtype), _PREVIEW_LIMIT) if dtype is not None else "")
    except Exception:  # noqa: another pandas version; the generic preview
        pass
    return None


def _pd_mgr(v):
    mgr = _get(_inst_dict(v), "_mgr", None)
    return mgr if mgr is not None and _pandas_own(type(mgr)) else None


def _pd_axes(v):
    mgr = _pd_mgr(v)
    axes = _attr(mgr, "axes") if mgr is not None else None
    return axes if type(axes) is list else None


def _np_len(x):
    """len(x) for an exact ndarray or range, else None."""
    if type(x) is range or type(x) is _lib("numpy", "ndarray"):
        return len(x)
    return None


def _pd_len(idx):
    """len(idx) for pandas' own Index types, from the range, array or codes
    they hold (an extension array's own array); None for anything else."""
    if not _pandas_own(type(idx)):
        return None
    d = _inst_dict(idx)
    for key in ("_range", "_data"):
        x = _get(d, key, None)
        n = _np_len(x)
        if n is None and x is not None and _pandas_own(type(x)):
            for inner in ("_ndarray", "_codes", "_data"):  # pandas' own extension arrays
                n = _np_len(_attr(x, inner))
                if n is not None:
                    break
        if n is not None:
            return n
    codes = _get(d, "_codes", None)
    if type(codes) is not tuple and codes is not None and _pandas_own(type(codes)) and list in _T_MRO(type(codes)):
        codes = tuple(list.__iter__(codes))
    if type(codes) is tuple and codes:
        return _np_len(codes[0])
    return None


def _pd_series_name(v):
    name = _get(_inst_dict(v), "_name", None)
    if name is None:
        return ""
    try:
        text, cut = _bounded_repr(name, _PREVIEW_LIMIT // 2, False)
    except _NeedsUserCode:
        return ""
    return " " + text + ("..." if cut else "")


def _pd_series_dtype(v, nd):
    mgr = _pd_mgr(v)
    blocks = _attr(mgr, "blocks") if mgr is not None else None
    if type(blocks) is not tuple or len(blocks) != 1 or not _pandas_own(type(blocks[0])):
        return ""
    values = _attr(blocks[0], "values")
    if type(values) is nd:
        return ", " + _clean(str(_np_dtype(nd, values)))
    return ""


# ---- the session -------------------------------------------------------


def _namespace():
    """The py> namespace: __main__'s dict as the REPL helper holds it. Read
    from the helper's module dict, never through attributes that could
    create its console lazily (and import code) on pyaichat's behalf."""
    try:
        repl = _pyaichat.helper("_pyaichat_repl")  # a helper: private
    except ImportError:  # the capabilities run without the REPL (tests)
        repl = None
    main = _get(_M_DICT(repl), "_main", None) if type(repl) is types.ModuleType else None
    if type(main) is not types.ModuleType:
        main = _module("__main__")
    ns = _M_DICT(main)
    return ns


_MISSING = object()


def _lookup(name):
    """The value of a plain name as eval would find it, without user code.
    Returns _MISSING for NameError, or raises _NeedsUserCode when a non-str
    key could make the dict lookup call a user __eq__."""
    ns = _namespace()
    for table in (ns, _M_DICT(_LIVE_BUILTINS)):
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


def _type_result(v, a, user):
    t = type(v)
    mro = _T_MRO(t)
    cap = a["max_items"]
    names = [_qual(c) for c in mro[:cap]]
    if len(mro) > cap:
        names.append("... (%d more)" % (len(mro) - cap))
    res = {
        "type": _qual(t),
        "module": _module_of(t),
        "mro": names,
    }
    if callable(v):
        if not user:
            raise _NeedsUserCode("signature")
        res["signature"] = _signature(v)
    return res


def _signature(v):
    if _ast is not None:
        # In the isolated copy, where sys.modules is the copy's to change.
        sys.modules.setdefault("ast", _ast)
    try:
        return _text(str(inspect.signature(v)), _LINE_LIMIT)
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
    return _type_result(_value(a, user), a, user)


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
        out.append({"name": _text(n, _NAME_LIMIT), "kind": kind})
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
        doc, truncated = _clip(doc, a["limit"])
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
        out.append({"name": _text(k, _NAME_LIMIT), "type": _qual(type(v)), "preview": _preview(v)})
    return {"globals": out, "omitted": max(len(pairs) - cap, 0)}


# Builtin exceptions whose __str__ is BaseException's: str(args[0]) for one
# argument, str(args) for more (AttributeError and NameError list their own
# __str__ slot, the same C function).
_ARGS_STR = (BaseException, AttributeError, NameError)
# Fields that a builtin __str__ reads whatever their size, and the one type
# each must have: it indexes the object of a Unicode error (reading a
# UnicodeDecodeError's as bytes, whatever it holds) and counts an exception
# group's exceptions.
_WHOLE_FIELDS = {
    (UnicodeDecodeError, "object"): bytes,
    (UnicodeEncodeError, "object"): str,
    (UnicodeTranslateError, "object"): str,
}
# Builtin exceptions whose __str__ formats fields and never args.
_ARGS_UNUSED = (SyntaxError, UnicodeDecodeError, UnicodeEncodeError, UnicodeTranslateError)
try:  # exception groups: Python 3.11 and newer
    _WHOLE_FIELDS[(BaseExceptionGroup, "exceptions")] = tuple
    _ARGS_UNUSED += (BaseExceptionGroup,)
except NameError:
    pass
_SMALL_TEXT = 1 << 20
_MAX_ARGS = 16


def _str_owner(t):
    """The class whose __str__ str() of an instance of t runs, from the
    MRO's own dicts (never a metaclass or a __getattribute__)."""
    for cls in _T_MRO(t):
        if _get(cls, "__str__", _ABSENT) is not _ABSENT:
            return cls
    return object


def _is_builtin(cls):
    """Whether cls is one of Python's builtin classes: by identity with
    the builtins module's own entry, since any class may claim
    __module__ = "builtins"."""
    name = _T_NAME(cls)
    return type(name) is str and _get(_OWN_BUILTINS, name, None) is cls


def _small(x):
    """Whether str() and repr() of x are builtin code whose cost is small:
    exact scalars, ints under _MAX_INT_BITS (decimal conversion is
    quadratic), str and bytes under _SMALL_TEXT."""
    t = type(x)
    if t is int:
        return x.bit_length() <= _MAX_INT_BITS
    if t is str or t is bytes:
        return len(x) <= _SMALL_TEXT
    return t is float or t is bool or t is _NONE_T


def _fields(v, owner):
    """The values a builtin __str__ may read besides args: the member and
    getset descriptors of owner and its builtin bases, read through the
    descriptors themselves, less the _WHOLE_FIELDS that have their type."""
    vals = []
    for cls in _T_MRO(owner):
        if cls is BaseException:
            break
        for k, d in _T_DICT(cls).items():
            if type(d) is not types.MemberDescriptorType and type(d) is not types.GetSetDescriptorType:
                continue
            if k[:2] == "__":
                continue
            try:
                x = d.__get__(v)
            except AttributeError:  # characters_written, when never set
                continue
            if type(x) is _WHOLE_FIELDS.get((owner, k)):
                continue
            vals.append(x)
    return vals


def _str_text(x):
    """str(x) in the copy, where user code may run: escaped and cut, or
    what CPython prints when str() fails (raises, or returns no str)."""
    try:
        s = str(x)
    except BaseException:  # noqa: a user __str__ may raise anything
        return "<exception str() failed>"
    return _text(s, _MSG_LIMIT)


def _repr_text(x, user):
    text, cut = _bounded_repr(x, _MSG_LIMIT, user)
    return text + _CUT if cut else text


def _args_message(v, user, key_error=False):
    """BaseException.__str__ (KeyError's with key_error), bounded: args are
    rendered structurally, never converted whole, whatever their number
    or size (a huge int is shown by size)."""
    args = _EXC_ARGS(v)
    if not args:
        return ""
    if len(args) > 1:
        return _repr_text(args, user)
    x = args[0]
    if key_error:
        return _repr_text(x, user)
    if type(x) is str:
        return _text(x, _MSG_LIMIT)
    if type(x) is int:
        # What CPython prints when str() fails on the digit limit; a huge
        # int within the limit (the user may have lifted it) by its size.
        if x.bit_length() <= _MAX_INT_BITS:
            try:
                return str(x)
            except ValueError:
                return "<exception str() failed>"
        return "<exception str() failed>" if _int_str_fails(x) else _int_text(x)
    if type(x) in _BUILTIN_SAFE:
        # str() of these is their repr.
        return _repr_text(x, user)
    if not user:
        raise _NeedsUserCode("str(argument)")
    return _str_text(x)


def _exc_message(v, user):
    """str(exception), bounded in time and size. In-process (user false)
    only builtin __str__ methods over builtin values are run; anything else
    raises _NeedsUserCode. A str() that fails reads as CPython prints it."""
    owner = _str_owner(type(v))
    if not _is_builtin(owner):
        if not user:
            raise _NeedsUserCode("__str__")
        return _str_text(v)
    if owner in _ARGS_STR:
        return _args_message(v, user)
    if owner is KeyError:
        return _args_message(v, user, key_error=True)
    if owner is ImportError:
        msg = ImportError.__dict__["msg"].__get__(v)
        return _text(msg, _MSG_LIMIT) if type(msg) is str else _args_message(v, user)
    # OSError, SyntaxError, the Unicode errors, exception groups: their
    # __str__ formats fields (OSError's falls back to args); run it only on
    # small builtin values.
    vals = _fields(v, owner)
    if owner not in _ARGS_UNUSED:
        args = _EXC_ARGS(v)
        vals.extend(args if len(args) <= _MAX_ARGS else [args])
    if all(_small(x) for x in vals):
        return _str_text(v)
    if any(type(x) not in _BUILTIN_SAFE for x in vals):
        if not user:
            raise _NeedsUserCode("field")
        return _str_text(v)
    return _args_message(v, user)


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


# A function frame's f_locals from 3.13 on (PEP 667): a view of the
# frame's variables, read by C code, as safe to iterate as a dict.
_FrameLocalsProxy = type((lambda: sys._getframe().f_locals)())
if _FrameLocalsProxy is dict:
    _FrameLocalsProxy = None


def _frame_locals(f, user):
    """A frame's first locals, name to preview. Only an exact dict is read
    (with dict's own iteration): exec() may have given the frame a user
    mapping, whose items() would be user code."""
    code = _frame_code(f)
    if not code.co_flags & inspect.CO_OPTIMIZED and (code.co_varnames or code.co_cellvars or code.co_freevars):
        # Reading f_locals of a class or exec body with closures stores
        # them into its namespace first: a metaclass's __prepare__ mapping
        # would run user code.
        return {"<locals>": "<not read: a class or exec body with closures>"}
    loc = f.f_locals
    # A module-level frame's locals are its globals: list_globals shows
    # those, and a namespace of thousands would drown the frame.
    if loc is f.f_globals:
        return {}
    if type(loc) is not dict and (_FrameLocalsProxy is None or type(loc) is not _FrameLocalsProxy):
        return {"<locals>": "<%s mapping, not read>" % _qual(type(loc))}
    out = {}
    for i, (name, val) in enumerate(loc.items()):
        if i >= _MAX_LOCALS:
            break
        key = _text(name, _NAME_LIMIT) if issubclass(type(name), str) else "<%s key>" % _qual(type(name))
        out[key] = _local_preview(val, user)
    return out


def _user_frame(code):
    name = _exact(code.co_filename)
    return name is None or not name.startswith("<pyaichat")


def _cached_line(filename, lineno):
    """Line lineno of filename if linecache holds the file's lines, else
    None. Only entries already read are used: a lazy entry (a loader's
    get_source, registered by linecache.lazycache) would run user code."""
    cache = linecache.cache
    entry = _get(cache, filename, None)
    if type(entry) is not tuple or len(entry) != 4 or type(entry[2]) is not list:
        return None
    lines = entry[2]
    if not 1 <= lineno <= len(lines):
        return None
    return _exact(lines[lineno - 1])


# A coding cookie, on one of a file's first two lines (PEP 263).
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


def _cache_source(cache, filename, st):
    """What linecache.updatecache does, without its Python code, which
    looks builtins up in the live builtins module: the file's lines,
    decoded as its coding cookie says (UTF-8 otherwise), put in linecache's
    cache."""
    with open(filename, "rb") as f:
        data = f.read(_MAX_SOURCE_BYTES + 1)
    encoding = "utf-8"
    for line in data.split(b"\n", 2)[:2]:
        m = _COOKIE.match(line)
        if m is not None:
            encoding = m.group(1).decode("ascii")
            break
    if data.startswith(b"\xef\xbb\xbf"):
        data, encoding = data[3:], "utf-8"
    parts = data.decode(encoding).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1] + "\n")
    cache[filename] = (st.st_size, st.st_mtime, lines, filename)


def _source_line(filename, lineno):
    """The source line, from linecache; a file not cached yet is read only
    when it is a regular file of a sane size, so a frame claiming to come
    from /dev/tty never reads the terminal."""
    filename = _exact(filename)
    if filename is None or type(lineno) is not int:
        return None
    cache = linecache.cache
    if type(cache) is dict and _get(cache, filename, _ABSENT) is _ABSENT and not filename.startswith("<"):
        try:
            st = os.stat(filename)
        except (OSError, ValueError):
            st = None
        if st is not None and stat.S_ISREG(st.st_mode) and st.st_size <= _MAX_SOURCE_BYTES:
            try:
                _cache_source(cache, filename, st)
            except Exception:  # noqa: unreadable, undecodable: no line
                pass
    line = _cached_line(filename, lineno)
    return _text(line.strip(), _LINE_LIMIT) if line else None


def cap_get_last_exception(a, user):
    v = _sys("last_value")
    if v is None or not issubclass(type(v), BaseException):
        return {"exception": None}
    frames = []
    tb = _EXC_TB(v)
    while tb is not None:
        f = _tb_frame(tb)
        code = _frame_code(f)
        if _user_frame(code):
            frames.append((f, code, tb.tb_lineno))
        tb = tb.tb_next
    omitted = max(len(frames) - _MAX_FRAMES, 0)
    frames = frames[-_MAX_FRAMES:]
    out = []
    lines = ["Traceback (most recent call last):"]
    for f, code, lineno in frames:
        src = _source_line(code.co_filename, lineno)
        fname = _text(code.co_filename, _LINE_LIMIT)
        func = _text(code.co_name, _NAME_LIMIT)
        out.append({"file": fname, "line": lineno, "function": func, "source": src, "locals": _frame_locals(f, user)})
        lines.append('  File "%s", line %d, in %s' % (fname, lineno, func))
        if src:
            lines.append("    " + src)
    msg = _exc_message(v, user)
    name = _error_type(type(v))
    lines.append(name + (": " + msg if msg else ""))
    text = "\n".join(lines)
    if len(text) > a["limit"]:
        text = text[: a["limit"]] + _CUT
    return {
        "exception": {
            "type": name,
            "message": msg,
            "traceback": text,
            "frames": out,
            "omitted_frames": omitted,
        }
    }


def _warm_lines():
    """Read the traceback's source lines into linecache before forking: the
    isolated copy may not open files."""
    v = _sys("last_value")
    tb = _EXC_TB(v) if v is not None and issubclass(type(v), BaseException) else None
    frames = []
    while tb is not None:
        code = _frame_code(_tb_frame(tb))
        if _user_frame(code):
            frames.append((code.co_filename, tb.tb_lineno))
        tb = tb.tb_next
    for filename, lineno in frames[-_MAX_FRAMES:]:
        _source_line(filename, lineno)


# ---- the user's capabilities -------------------------------------------

# The user's capabilities, filled once at start by the user capabilities
# helper (usercaps.py): name -> (function, params), where params maps each
# parameter to (the JSON types it accepts or None for any, required).
_USER = {}

# Python's types of the JSON values each JSON schema type takes.
_JSON_TYPES = {
    "string": (str,), "integer": (int,), "number": (int, float),
    "boolean": (bool,), "array": (list,), "object": (dict,), "null": (_NONE_T,),
}


class _BadArguments(Exception):
    """A call whose arguments do not fit the capability's signature."""


def _check_user_args(name, params, args):
    """Checks args (decoded JSON) against params before any user code runs,
    with the error the model must read to mend its call."""
    if type(args) is not dict:
        raise _BadArguments("%s: arguments must be a JSON object" % name)
    for k in args:
        if k not in params:
            raise _BadArguments("%s: unexpected argument %r; it takes %s" % (name, k, ", ".join(params) or "none"))
    for k, (types_, required) in params.items():
        if k not in args:
            if required:
                raise _BadArguments("%s: argument %r is missing" % (name, k))
            continue
        v = args[k]
        if types_ is None:
            continue
        ok = any(type(v) in _JSON_TYPES[t] for t in types_)
        if not ok:
            raise _BadArguments("%s: %r must be %s" % (name, k, " or ".join(types_)))


def _plain(x, a, level):
    """x as JSON data: builtin values as they are (text escaped as reprs
    are, a str subclass's as its str: SQLAlchemy's names are one),
    containers to max_items entries and _MAX_LEVEL levels, anything else
    as its bounded repr."""
    t = type(x)
    if issubclass(t, str):
        return _text(x, a["limit"])
    if t is bool or t is _NONE_T:
        return x
    if t is int:
        return x if x.bit_length() <= _MAX_INT_BITS else _int_text(x)
    if t is float:
        return x if x - x == 0 else repr(x)  # inf and nan are not JSON
    if level < _MAX_LEVEL and (t is list or t is tuple):
        return [_plain(y, a, level + 1) for y in x[:a["max_items"]]]
    if level < _MAX_LEVEL and t is dict:
        out = {}
        for k, y in x.items():
            if len(out) >= a["max_items"]:
                break
            key = _text(k, _NAME_LIMIT) if issubclass(type(k), str) else _bounded_repr(k, _NAME_LIMIT, True)[0]
            out[key] = _plain(y, a, level + 1)
        return out
    return _bounded_repr(x, a["limit"], True)[0]


def cap_user(a, user):
    """One of the user's capabilities: its arguments checked in the
    session, the function called in the copy (it is user code)."""
    name = a.get("name")
    entry = _USER.get(name)
    if entry is None:
        raise _BadArguments("unknown capability %r" % name)
    fn, params = entry
    args = a.get("args")
    if args is None:
        args = {}
    if not user:
        _check_user_args(name, params, args)
        raise _NeedsUserCode("user capability")
    v = fn(**args)
    t = type(v)
    if t in _SCALARS or t in _CONTAINERS or issubclass(t, str):
        return {"result": _plain(v, a, 0)}
    text, cut = _bounded_repr(v, a["limit"], True)
    return {"repr": text, "truncated": cut, "type": _qual(t)}


# Each capability: its function, and what must be done in the session
# before a copy answers it (None: nothing).
_CAPS = {
    "list_globals": (cap_list_globals, None),
    "get_type": (cap_get_type, None),
    "get_repr": (cap_get_repr, None),
    "get_dir": (cap_get_dir, None),
    "get_doc": (cap_get_doc, None),
    "eval_expr": (cap_eval_expr, None),
    "get_last_exception": (cap_get_last_exception, _warm_lines),
    "user": (cap_user, None),
}


def _error(type_name, message):
    return _dumps({"error": {"type": _text(type_name, _NAME_LIMIT * 3), "message": _text(message, _MSG_LIMIT)}})


def _shape(x, cap, items):
    """x with every string cut to cap characters and every list and dict
    to items entries."""
    t = type(x)
    if t is str:
        return x if len(x) <= cap else x[:cap] + _CUT
    if t is list:
        return [_shape(y, cap, items) for y in x[:items]]
    if t is dict:
        out = {}
        for k, y in x.items():
            if len(out) >= items:
                break
            out[_shape(k, cap, items)] = _shape(y, cap, items)
        return out
    return x


def _finish(res, a):
    """The result as JSON, under a bound that holds whatever the field:
    each field is cut where it is made, and this is the net under all of
    them. Strings are cut to the repr limit, lists and dicts to max_items;
    while the whole is over max_bytes (UTF-8), strings, then lists, are
    cut shorter."""
    cap = a["limit"] + 64
    items = a["max_items"]
    limit = a.get("max_bytes", 1 << 16)
    while True:
        text = _dumps({"ok": _shape(res, cap, items)})
        if len(text) <= limit // 4 or len(text.encode("utf-8", "backslashreplace")) <= limit:
            return text
        if cap > 16:
            cap //= 2
        elif items > 1:
            items //= 2
        else:
            return _error("InternalError", "the result does not fit in %d bytes" % limit)


def inproc(arg):
    """Answer without running any user code, or ask for isolation."""
    a = _loads(arg)
    _lib_memo.clear()
    entry = _CAPS.get(a.get("cap"))
    if entry is None:
        return _error("InvalidArguments", "unknown capability %r" % a.get("cap"))
    fn, before_copy = entry
    try:
        res = fn(a, False)
    except _NeedsUserCode:
        if before_copy is not None:
            before_copy()
        # The environment's names, so that Go can say which values the
        # copy must wipe before any expression runs (_scrub_environ).
        return _dumps({"isolate": True, "env": _environ_names()})
    except NameError as e:
        return _error("NameError", str(e))
    except _BadArguments as e:
        return _error("InvalidArguments", str(e))
    return _finish(res, a)


def _environ_names():
    """The names in the environment as os.environ holds it (on POSIX its
    data is posix.environ, a dict of bytes read without user code)."""
    return [
        os.fsdecode(k) if type(k) is bytes else k
        for k in posix.environ
        if type(k) is bytes or type(k) is str
    ]


def _scrub_environ(names):
    """Wipes the values of the named variables in this copy: in the C
    environment and in os.environ's data, where each becomes a marker. So
    an expression finds no secret to transform (reverse, join, encode)
    past the filter of what leaves the machine."""
    if not names:
        return
    dicts = [posix.environ]
    env = _get(_M_DICT(_REAL_OS), "environ", None)
    if type(env) is os._Environ:
        data = _get(_inst_dict(env), "_data", None)
        if type(data) is dict:
            dicts.append(data)
    _pyaichat.scrub_environ(set(names), tuple(dicts))


def _eof_readline(*_):
    return ""


def isolated(arg):
    """Answer in the fork()ed copy of the session (pybridge.CallIsolated): user
    code may run here; whatever it changes dies with the copy."""
    # Reading stdin through pyaichat would call back into Go, which does not
    # exist in this copy: stdin is at end of file here.
    try:
        _M_DICT(_BRIDGE)["readline"] = _eof_readline
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
        a = _loads(arg)
        _scrub_environ(a.get("secret_env"))
        _lib_memo.clear()
        res = _CAPS[a["cap"]][0](a, True)
        return _finish(res, a)
    except BaseException as e:  # noqa: SystemExit and KeyboardInterrupt too
        # The same bounded message as get_last_exception's (a 10**5000
        # int or a failing __str__ must not lose the error itself).
        try:
            msg = _exc_message(e, True)
        except BaseException:  # noqa: e.g. a RecursionError while rendering
            msg = "<exception str() failed>"
        return _error(_error_type(type(e)), msg)
