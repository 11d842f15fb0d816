"""pyaichat's inline suggestions at py>: the rest of the name being typed.

Loaded on first use as the module ``_pyaichat_suggest`` by cmd/pyaichat and
called through pybridge's CallReadOnly, on the interpreter's thread while it
waits at the prompt, once per key.  It runs no user code: names are read as
the keys of dicts (iterating a dict calls no __hash__ or __eq__), objects are
looked up by _pyaichat.lookup (exact str keys only), types are tested
exactly, and a class's attributes come from the dicts of its __mro__, read
through ``type``'s own descriptors.  Never getattr, dir(), hasattr: those
run properties, __getattr__, __getattribute__ and __dir__.

``name.attr`` is completed when ``name`` is a module (its __dict__), a
class (its __mro__'s dicts, read through ``type``'s descriptors, so that no
metaclass code runs), or any other object (its class's names, and its own
__dict__ when that is the plain one Python makes for instances of a class
defined in Python).  Dotted paths go through modules only.
"""

import bisect
import builtins
import keyword
import sys
import types

import _pyaichat  # pybridge's C module

_get = _pyaichat.lookup  # (dict or class, str key, default)
_M_DICT = types.ModuleType.__dict__["__dict__"].__get__
_T_MRO = type.__dict__["__mro__"].__get__
_T_DICT = type.__dict__["__dict__"].__get__
_T_FLAGS = type.__dict__["__flags__"].__get__
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement
_MODULE = types.ModuleType
_GETSET = types.GetSetDescriptorType
_ABSENT = object()
_KEYWORDS = sorted(keyword.kwlist)

# Candidates considered per source: enough to find the shortest among the
# first names in order, without scanning a namespace of a million names.
_SCAN = 64

# A namespace with more names than this is left out of suggestions: even
# comparing its names after each line would delay the first key.
_MAX_NAMES = 100_000

# New names put in place one by one in a kept sorted list, at most; more
# are sorted with it.
_INSERT_MAX = 64

# The sorted names of the namespace and of builtins, kept while nothing
# ran at py> (the generation Go passes changes after each run), so that a
# key costs a binary search, not a scan of every global.
_sorted = {}


def _namespace():
    """The py> namespace, as the capabilities find it (see capabilities.py):
    __main__'s dict as the REPL helper holds it."""
    try:
        repl = _pyaichat.helper("_pyaichat_repl")
    except ImportError:
        repl = None
    main = _get(_M_DICT(repl), "_main", None) if type(repl) is _MODULE else None
    if type(main) is not _MODULE:
        main = _get(_get(_M_DICT(sys), "modules", None), "__main__", None)
    if type(main) is not _MODULE:
        return {}
    return _M_DICT(main)


def _sorted_names(key, d, gen):
    """The str keys of d, sorted. Kept between keys while nothing ran at
    py>; after a run, the keys in their dict order are compared with the
    last ones: the same keys (a run that defined no name) keep the sorted
    list, a few new ones at the end (a run that defined a name) are put in
    their places, and anything else sorts them again."""
    kept = _sorted.get(key)
    if kept is not None and kept[0] is d and kept[1] == gen:
        return kept[3]
    now = [k for k in d if type(k) is str]
    if kept is not None and kept[0] is d:
        old, names = kept[2], kept[3]
        n = len(old)
        # Lists of exact str compare as str (identity first): no user code.
        if len(now) - n <= _INSERT_MAX and now[:n] == old:
            for k in now[n:]:
                bisect.insort(names, k)
        else:
            names = sorted(now)
    else:
        names = sorted(now)
    _sorted[key] = (d, gen, now, names)
    return names


def _from_sorted(names, prefix, best):
    for name in _prefixed(names, prefix, _SCAN):
        best = _better(name, prefix, best)
    return best


def _prefixed(names, prefix, limit):
    """The names of the sorted list names that start with prefix, at most
    limit of them."""
    i = bisect.bisect_left(names, prefix)
    for name in names[i : i + limit]:
        if not name.startswith(prefix):
            break
        yield name


def _sorted_sources(gen):
    """The sorted lists a name with no path before it comes from: the
    session's names (unless there are too many), the builtins, the
    keywords."""
    ns = _namespace()
    if len(ns) <= _MAX_NAMES:
        yield _sorted_names("ns", ns, gen)
    yield _sorted_names("builtins", builtins.__dict__, gen)
    yield _KEYWORDS


def _from_any(names, prefix, best):
    for name in names:
        if type(name) is str and name.startswith(prefix):
            best = _better(name, prefix, best)
    return best


def _better(name, prefix, best):
    if len(name) == len(prefix):
        return best
    if name[:1] == "_" and prefix[:1] != "_":
        return best  # private names only when asked for
    if best is None or (len(name), name) < (len(best), best):
        return name
    return best


def _resolve(path):
    """The object a dotted path names, through modules only; _ABSENT if
    it is not one a lookup can reach without running code."""
    obj = _get(_namespace(), path[0], _ABSENT)
    if obj is _ABSENT:
        obj = _get(builtins.__dict__, path[0], _ABSENT)
    for name in path[1:]:
        if type(obj) is not _MODULE:
            return _ABSENT
        obj = _get(_M_DICT(obj), name, _ABSENT)
    return obj


def _class_names(cls):
    names = []
    for c in _T_MRO(cls):
        names.extend(_T_DICT(c))
    return names


def _instance_dict(obj, cls):
    """obj's own __dict__ when it is the one Python gives instances of a
    class defined in Python (a C getter that returns the dict), else None."""
    if not _T_FLAGS(cls) & _HEAPTYPE:
        return None
    for c in _T_MRO(cls):
        desc = _get(c, "__dict__", _ABSENT)
        if desc is _ABSENT:
            continue
        if type(desc) is not _GETSET or not _T_FLAGS(c) & _HEAPTYPE:
            return None
        d = desc.__get__(obj, cls)
        return d if type(d) is dict else None
    return None


def _is_class(obj):
    # Not isinstance(obj, type), which may read a user __class__; and
    # "type in mro" would compare with ==, which a metaclass may define.
    for c in _T_MRO(type(obj)):
        if c is type:
            return True
    return False


def _attr_names(obj):
    t = type(obj)
    if t is _MODULE:
        return _M_DICT(obj)
    if _is_class(obj):
        return _class_names(obj)
    names = _class_names(t)
    d = _instance_dict(obj, t)
    if d is not None:
        names.extend(d)
    return names


def suggest(arg):
    """arg: the generation, the dotted path before the name (may be
    empty) and the name's start, one a line. Returns the rest of the name
    to suggest, or ""."""
    gen, path, prefix = arg.split("\n")
    if path:
        obj = _resolve(path.split("."))
        if obj is _ABSENT:
            return ""
        best = _from_any(_attr_names(obj), prefix, None)
    else:
        best = None
        for names in _sorted_sources(gen):
            best = _from_sorted(names, prefix, best)
    return "" if best is None else best[len(prefix) :]


_MAX_CANDIDATES = 500


def candidates(arg):
    """arg as for suggest. Returns every name the name's start may
    complete to, sorted, one a line (private names only when the start is
    one), at most _MAX_CANDIDATES."""
    gen, path, prefix = arg.split("\n")
    if path:
        obj = _resolve(path.split("."))
        if obj is _ABSENT:
            return ""
        names = set(n for n in _attr_names(obj) if type(n) is str)
    else:
        names = set()
        for sorted_names in _sorted_sources(gen):
            names.update(_prefixed(sorted_names, prefix, _MAX_CANDIDATES))
    private = prefix[:1] == "_"
    found = sorted(n for n in names if n.startswith(prefix) and (private or n[:1] != "_"))
    return "\n".join(found[:_MAX_CANDIDATES])


_FUNCTION = types.FunctionType
_F_CODE = types.FunctionType.__dict__["__code__"].__get__


def _parameters(fn):
    """The names a Python function takes by keyword, read from its code
    object: no signature object, which may run __signature__ or a
    decorator's code."""
    code = _F_CODE(fn)
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    return list(names[code.co_posonlyargcount :])


def arguments(arg):
    """arg: the generation, the dotted path of the function being called
    and the start of a name, one a line. Returns the keyword arguments
    (as "name=") the call may go on with, sorted, one a line: for a
    function defined in Python, or a class whose __init__ is one."""
    gen, path, prefix = arg.split("\n")
    obj = _resolve(path.split("."))
    if type(obj) is _FUNCTION:
        names = _parameters(obj)
    elif _is_class(obj):
        init = _ABSENT
        for c in _T_MRO(obj):
            init = _get(c, "__init__", _ABSENT)
            if init is not _ABSENT:
                break
        if type(init) is not _FUNCTION:
            return ""
        names = _parameters(init)[1:]
    else:
        return ""
    return "\n".join(sorted(n + "=" for n in names if n.startswith(prefix)))
