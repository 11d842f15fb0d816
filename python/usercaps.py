"""pyaichat's loader of the user's own capabilities.

Loaded as the private module ``_pyaichat_usercaps`` by the Go capabilities
package when the assistant starts. ``discover`` lists the modules to import:
those the config names and those installed packages register under the
``pyaichat.capabilities`` entry point. ``load`` imports them, in the session,
once, before the first prompt, so that their own imports are done there
(the copy where a capability runs refuses imports); each function they
decorate with ``@pyaichat.capability`` becomes a capability whose JSON schema
comes from its signature. The functions are handed to the capabilities
helper (``_pyaichat_caps._USER``), which checks a call's arguments in the
session and calls the function in the copy, as it runs the built-in seven.

The modules are imported as ``import mytools`` would: they, and what they
import, are in ``sys.modules`` afterwards, with the ``pyaichat`` module
they import (``pyaichat.py``), put there first.
"""

# No import statement: the helper is loaded at every start, after the
# user's -c code or FILE, and what it imports at load is imported anew each
# time (pybridge keeps a helper's imports private). Finding the modules
# runs none of the user's code: posix's C functions as they were at
# start-up (not os's, whose path functions call os.fspath and isinstance,
# which the user may have replaced, nor through a module whose class was
# swapped), sys.modules and sys read through their dicts, and the builtins
# as they were at start-up (pybridge's for every helper). load() borrows
# inspect and JSON from the capabilities helper, loaded by then.
_GROUP = "pyaichat.capabilities"
_MAX_CAPS = 64  # user capabilities offered at most
_MAX_DESCRIPTION = 1024  # characters of a description
_MAX_SCHEMA = 4096  # bytes of an arguments schema, as JSON
_MAX_PROBLEM = 300  # characters of a problem's line
# The characters of a name a model's tool may have (OpenAI's function
# names: 1 to 64 of them).
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")

_MODULE_TYPE = _PYAICHAT_MODULE_TYPE  # noqa: F821
_M_DICT = type.__dict__["__dict__"].__get__(_MODULE_TYPE)["__dict__"].__get__
_BRIDGE = _PYAICHAT_BRIDGE  # noqa: F821
_MODULES = _PYAICHAT_MODULES  # noqa: F821
_lookup = _M_DICT(_BRIDGE)["lookup"]  # (dict, str key, default), no __eq__ called
_UNION_TYPE = type(int | None)


def _start_namespace(name):
    """Module name's namespace as it was at start-up (the REPL helper's
    copy), or as it is now when there is no REPL (tests)."""
    try:
        ns = _M_DICT(_M_DICT(_BRIDGE)["helper"]("_pyaichat_repl"))["start_namespace"](name)
    except (ImportError, KeyError):
        ns = None
    return ns if type(ns) is dict else _M_DICT(_lookup(_MODULES, name, None))


_posix = _start_namespace("posix")
_listdir, _stat, _getcwd, _getpid, _replace = (
    _posix[n] for n in ("listdir", "stat", "getcwd", "getpid", "replace")
)
_SYS = _lookup(_MODULES, "sys", None)


def _basename(path):
    return path.rpartition("/")[2]


# Borrowed from the capabilities helper by load().
inspect = _dumps = None


class _Unusable(Exception):
    """A decorated function that cannot be offered to a model."""


# ---- which modules ------------------------------------------------------


_MAX_CACHED_DIRS = 64


def _dir_declares(d):
    """Whether a distribution in directory d declares the entry point
    group, in its dist-info's entry_points.txt."""
    marker = ("[%s]" % _GROUP).encode()
    try:
        names = _listdir(d)
    except OSError:  # a zip file, a directory that went away
        return False
    for n in names:
        if not n.endswith((".dist-info", ".egg-info")):
            continue
        try:
            with open(d + "/" + n + "/entry_points.txt", "rb") as f:
                if marker in f.read(1 << 20):
                    return True
        except OSError:
            pass
    return False


def _declares_group(cache, key):
    """Whether a distribution on sys.path declares the entry point group,
    so that importlib.metadata (tens of milliseconds to import) is imported
    only when one does. Reading every dist-info takes milliseconds (4 ms
    for 125 distributions), at every start: what each directory held is
    kept in the cache file, by the directory's modification time, which
    changes when a distribution is installed or removed there. With key
    (what decided this start's sys.path, "" when Go cannot tell), the
    cache also keeps the directories on sys.path, so that a later start
    with the same key finds in Go that none declares the group and does
    not call this helper at all (capabilities.entryPointsUnchanged)."""
    seen, record_before = _read_cache(cache)
    fresh, declared, on_path = {}, False, []
    path = _lookup(_M_DICT(_SYS), "path", None)
    for entry in path if type(path) is list else ():
        if type(entry) is not str:
            continue
        try:
            d = entry if entry.startswith("/") else _getcwd() + "/" + entry
            on_path.append(d)
            mtime = _stat(d).st_mtime_ns
        except OSError:
            continue
        known = seen.get(d)
        if type(known) is list and len(known) == 2 and known[0] == mtime:
            fresh[d] = known
        else:
            fresh[d] = [mtime, _dir_declares(d)]
        declared = declared or fresh[d][1] is True
    record = (key, on_path) if key else record_before
    changed = any(seen.get(d) != v for d, v in fresh.items())
    changed = changed or any(d in seen and d not in fresh for d in on_path)
    if cache and (changed or record != record_before):
        for d, v in seen.items():
            # A directory on sys.path that is gone is not kept: the
            # cache says it is absent by having no line for it.
            if d not in fresh and d not in on_path and len(fresh) < _MAX_CACHED_DIRS:
                fresh[d] = v
        _write_cache(cache, fresh, record)
    return declared


def _read_cache(path):
    """The cache: {directory: [mtime_ns, declares]}, from lines
    "mtime_ns TAB 0|1 TAB directory", and the last start's sys.path with
    its key, (key, [directory]), from the line "= TAB key TAB directories
    joined by NUL" (None without one)."""
    seen, record = {}, None
    if not path:
        return seen, record
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            for line in f:
                fields = line.rstrip("\n").split("\t", 2)
                if len(fields) == 3 and fields[0].isdigit():
                    seen[fields[2]] = [int(fields[0]), fields[1] == "1"]
                elif len(fields) == 3 and fields[0] == "=":
                    record = (fields[1], fields[2].split("\0"))
    except (OSError, ValueError):
        return {}, None
    return seen, record


def _write_cache(path, dirs, record):
    """Writes the cache whole (a new file renamed over the old), or not at
    all: a cache that cannot be written only costs the next start the scan."""
    lines = [
        "%d\t%d\t%s\n" % (mtime, 1 if declares else 0, d)
        for d, (mtime, declares) in dirs.items()
        if "\n" not in d
    ]
    if record and not any("\n" in d or "\0" in d for d in record[1]):
        lines.insert(0, "=\t%s\t%s\n" % (record[0], "\0".join(record[1])))
    try:
        tmp = "%s.%d" % (path, _getpid())
        with open(tmp, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.writelines(lines)
        _replace(tmp, path)
    except OSError:
        pass


def _entry_points(cache, key):
    if not _declares_group(cache, key):
        return []
    import importlib.metadata

    out = []
    for ep in importlib.metadata.entry_points(group=_GROUP):
        dist = ep.dist.name if ep.dist is not None else "an installed package"
        module = ep.value.partition(":")[0].strip()
        out.append({"module": module, "from": "entry point %s of %s" % (ep.name, dist)})
    return out


def discover(arg):
    """The modules to import. arg is lines: the cache file ("" for none),
    the key of this start's sys.path ("" for none, see _declares_group),
    then the modules the config names. The answer is lines too, without
    JSON (see the imports above): "module TAB where it is named" for each
    module, "!problem" for each problem."""
    cache, key, *modules = arg.split("\n")
    sources = [{"module": m, "from": "capability_modules"} for m in modules if m]
    problems = []
    try:
        sources += _entry_points(cache, key)
    except Exception as e:
        problems.append(_line("reading the %s entry points" % _GROUP, e))
    seen, lines = set(), []
    for s in sources:
        if s["module"] not in seen:
            seen.add(s["module"])
            lines.append(("%s\t%s" % (s["module"], s["from"])).replace("\n", " "))
    lines += ["!" + p.replace("\n", " ") for p in problems]
    return "\n".join(lines)


# ---- importing them ---------------------------------------------------------


def _public_module(source):
    """The pyaichat module user code imports: the one in sys.modules, or a
    new one from source put there."""
    m = _lookup(_MODULES, "pyaichat", None)
    if type(m) is _MODULE_TYPE and type(_M_DICT(m).get("_registered")) is list:
        return m
    m = _MODULE_TYPE("pyaichat")
    exec(compile(source, "<pyaichat>", "exec"), _M_DICT(m))
    _MODULES["pyaichat"] = m
    return m


def _where(e):
    """file:line of the innermost frame of e's traceback in a file of the
    user's (not the import system's or pyaichat's), or of the SyntaxError
    itself."""
    if isinstance(e, SyntaxError) and e.filename:
        return "%s:%s" % (_basename(e.filename), e.lineno)
    where = ""
    tb = e.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if not filename.startswith("<"):
            where = "%s:%d" % (_basename(filename), tb.tb_lineno)
        tb = tb.tb_next
    return where


def _line(what, e):
    """One line for a problem: what failed, the exception and where."""
    try:
        msg = str(e)
    except Exception:
        msg = "<exception str() failed>"
    if isinstance(e, SyntaxError):
        msg = e.msg
    msg = msg.strip().splitlines()[0] if msg.strip() else ""
    text = "%s: %s%s" % (what, type(e).__name__, ": " + msg if msg else "")
    where = _where(e)
    if where:
        text += " (%s)" % where
    if len(text) > _MAX_PROBLEM:
        text = text[:_MAX_PROBLEM] + "..."
    return text


def load(arg):
    """Imports the modules and offers their capabilities:
    {"sources", "reserved": [built-in names], "public": source of the
    pyaichat module} -> {"caps": [{"name", "description", "schema",
    "module"}], "problems": [lines]}."""
    global inspect, _dumps
    caps_helper = _M_DICT(_M_DICT(_BRIDGE)["helper"]("_pyaichat_caps"))
    inspect, _dumps, table = caps_helper["inspect"], caps_helper["_dumps"], caps_helper["_USER"]
    a = caps_helper["_loads"](arg)
    public = _public_module(a["public"])
    registered = _M_DICT(public)["_registered"]
    reserved = set(a.get("reserved") or ())
    caps, problems = [], []
    for src in a["sources"]:
        module, origin = src["module"], src["from"]
        start = len(registered)
        try:
            __import__(module)
        except BaseException as e:  # noqa: SystemExit or Ctrl-C at import too
            del registered[start:]
            problems.append(_line("capability module %s (%s)" % (module, origin), e))
            continue
        for fn, name in registered[start:]:
            try:
                cap, params = _offer(fn, name, reserved, table)
            except _Unusable as e:
                problems.append(("capability %s in %s: %s" % (name, module, e))[:_MAX_PROBLEM])
                continue
            cap["module"] = module
            table[name] = (fn, params)
            caps.append(cap)
    return _dumps({"caps": caps, "problems": problems})


# ---- a function as a tool -------------------------------------------------


def _offer(fn, name, reserved, table):
    """The tool fn becomes, and its parameters as the capabilities helper
    checks them, or _Unusable saying why it cannot be one."""
    if type(name) is not str or not 1 <= len(name) <= 64 or not _NAME_CHARS.issuperset(name):
        raise _Unusable("the name must be 1-64 letters, digits, _ or -")
    if name in reserved:
        raise _Unusable("the name is a built-in capability's; give it another (@pyaichat.capability(name=...))")
    if name in table:
        raise _Unusable("another capability already has this name")
    if len(table) >= _MAX_CAPS:
        raise _Unusable("over the %d user capabilities allowed" % _MAX_CAPS)
    schema, params = _arguments(fn)
    text = _dumps(schema)
    if len(text.encode()) > _MAX_SCHEMA:
        raise _Unusable("its arguments' schema is over %d bytes" % _MAX_SCHEMA)
    return {"name": name, "description": _description(fn, name), "schema": schema}, params


def _description(fn, name):
    """The docstring's first paragraph, bounded."""
    doc = fn.__doc__
    if type(doc) is not str or not doc.strip():
        return "%s: the user's capability (no docstring)." % name
    first = inspect.cleandoc(doc).split("\n\n")[0].strip()
    if len(first) > _MAX_DESCRIPTION:
        first = first[:_MAX_DESCRIPTION] + "..."
    return first


def _arguments(fn):
    """The JSON schema of fn's arguments object, and its parameters as
    {name: (JSON types or None for any, required)}."""
    try:
        sig = inspect.signature(fn)
        hints = inspect.get_annotations(fn, eval_str=True)
    except Exception as e:
        raise _Unusable("its signature cannot be read: %s: %s" % (type(e).__name__, e)) from None
    props, required, params = {}, [], {}
    for p in sig.parameters.values():
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            raise _Unusable("parameter %s: *args, **kwargs and positional-only parameters cannot come from JSON" % p.name)
        names, items = _json_types(p.name, hints.get(p.name, p.annotation))
        schema = {}
        if p.default is p.empty:
            required.append(p.name)
        else:
            if p.default is None and names is not None and "null" not in names:
                names = names + ["null"]
            if _is_json(p.default, 0):
                schema["default"] = p.default
        if names is not None:
            schema["type"] = names[0] if len(names) == 1 else names
        if items is not None:
            schema["items"] = {"type": items[0] if len(items) == 1 else items}
        props[p.name] = schema
        params[p.name] = (tuple(names) if names is not None else None, p.default is p.empty)
    schema = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema, params


_SIMPLE = {
    str: "string", int: "integer", float: "number", bool: "boolean",
    list: "array", tuple: "array", dict: "object", type(None): "null", None: "null",
}
_ANY = (object,)


def _json_types(param, ann):
    """(JSON type names or None for any, those of a list's items or None)
    for an annotation; _Unusable for one no JSON value can be."""
    if ann is inspect.Parameter.empty or ann in _ANY or repr(ann) == "typing.Any":
        return None, None
    if type(ann) is type or ann is None:
        if ann in _SIMPLE:
            return [_SIMPLE[ann]], None
    args = getattr(ann, "__args__", None) or ()
    origin = getattr(ann, "__origin__", None)
    if type(ann) is _UNION_TYPE or repr(origin) == "typing.Union":
        names = []
        for x in args:
            sub, _ = _json_types(param, x)
            if sub is None:
                return None, None
            names += [n for n in sub if n not in names]
        return names, None
    if origin in (list, tuple, dict):
        items = None
        if origin is list and len(args) == 1:
            items, _ = _json_types(param, args[0])
        return [_SIMPLE[origin]], items
    raise _Unusable(
        "parameter %s: %s cannot come from JSON (use str, int, float, bool,"
        " list, dict, Optional[...] or no annotation)" % (param, _ann_name(ann))
    )


def _ann_name(ann):
    if type(ann) is type:
        return ann.__qualname__
    text = repr(ann)
    return text if len(text) <= 80 else text[:80] + "..."


def _is_json(v, level):
    """Whether v is plain JSON data (a default shown in the schema)."""
    t = type(v)
    if v is None or t in (str, int, bool):
        return True
    if t is float:
        return v - v == 0
    if level < 4 and t in (list, tuple):
        return all(_is_json(x, level + 1) for x in v)
    if level < 4 and t is dict:
        return all(type(k) is str and _is_json(x, level + 1) for k, x in v.items())
    return False
