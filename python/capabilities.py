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

import _pyaichat  # pybridge's C module

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
        return _np_summary(sys.modules["numpy"], obj, t)
    pd = sys.modules.get("pandas")
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
    if t is np.ndarray or t is getattr(np, "memmap", None):

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
        fmt = sys.modules.get("pandas.io.formats.format")
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
    lib = _lib_preview(v, t)
    if lib is not None:
        return lib
    return _qual(t) + " object"


def _lib(module, name):
    """module.name read from the module's dict if the session imported
    module (never imported here), else None."""
    m = sys.modules.get(module)
    if type(m) is not types.ModuleType:
        return None
    return m.__dict__.get(name)


def _derives(t, module, name):
    """Whether type t derives from the class module.name (see _lib)."""
    base = _lib(module, name)
    return type(base) is type and base in _T_MRO(t)


def _np_dtype(nd, a):
    """a.dtype for a numpy array, through ndarray's own getter."""
    return nd.__dict__["dtype"].__get__(a)


def _pandas_own(t):
    mod = _T_MODULE(t)
    return type(mod) is str and mod.startswith("pandas.")


def _lib_preview(v, t):
    """numpy arrays and pandas objects by shape and dtype, read through
    numpy's C getters and the dicts of pandas' own types: no user code, and
    none of pandas' caches is filled. None when that does not answer."""
    nd = _lib("numpy", "ndarray")
    if _derives(t, "numpy", "ndarray"):
        shape = nd.__dict__["shape"].__get__(v)
        dtype = _np_dtype(nd, v)
        return "%s, shape %s, %s" % (_T_NAME(t), shape, _clean(str(dtype))[:_PREVIEW_LIMIT])
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
                data = v.__dict__.get("_data")
                dtype = _np_dtype(nd, data) if type(data) is nd else None
                return "%s, length %d%s" % (_T_NAME(t), n, ", " + _clean(str(dtype)) if dtype is not None else "")
    except Exception:  # noqa: another pandas version; the generic preview
        pass
    return None


def _pd_axes(v):
    mgr = v.__dict__.get("_mgr")
    if mgr is None or not _pandas_own(type(mgr)):
        return None
    axes = mgr.axes
    return axes if type(axes) is list else None


def _pd_len(idx):
    """len(idx) for pandas' own Index types, from the range, array or codes
    they hold; None for anything else."""
    if not _pandas_own(type(idx)):
        return None
    d = idx.__dict__
    for key in ("_range", "_data"):
        x = d.get(key)
        if type(x) is range or type(x) is _lib("numpy", "ndarray"):
            return len(x)
        if x is not None and _pandas_own(type(x)):
            return len(x)  # pandas' own extension arrays
    codes = d.get("_codes")
    if type(codes) is not tuple and codes is not None and _pandas_own(type(codes)):
        codes = tuple(codes)
    if type(codes) is tuple and codes and type(codes[0]) is _lib("numpy", "ndarray"):
        return len(codes[0])
    return None


def _pd_series_name(v):
    name = v.__dict__.get("_name")
    if name is None:
        return ""
    try:
        text, cut = _bounded_repr(name, _PREVIEW_LIMIT // 2, False)
    except _NeedsUserCode:
        return ""
    return " " + text + ("..." if cut else "")


def _pd_series_dtype(v, nd):
    blocks = v.__dict__["_mgr"].blocks
    if type(blocks) is not tuple or len(blocks) != 1 or not _pandas_own(type(blocks[0])):
        return ""
    values = blocks[0].values
    if type(values) is nd:
        return ", " + _clean(str(_np_dtype(nd, values)))
    if _pandas_own(type(values)):
        return ", " + _clean(str(values.dtype))
    return ""


# ---- the session -------------------------------------------------------


def _namespace():
    """The py> namespace: __main__'s dict as the REPL helper holds it. Read
    from the helper's module dict, never through attributes that could
    create its console lazily (and import code) on pyaichat's behalf."""
    try:
        repl = _pyaichat.helper("_pyaichat_repl")
    except ImportError:  # the capabilities run without the REPL (tests)
        repl = None
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
    try:
        _pyaichat.readline = _eof_readline
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
