"""pyaichat's py> execution, built on the stdlib's own interactive machinery.

Loaded by pybridge as the module ``_pyaichat_repl``; never imported by user
code.  Every entry point takes and returns plain strings so that one cgo
crossing does one whole operation.
"""

import builtins
import functools
import io
import sys

import _pyaichat  # the C module pybridge registers: line input through Go

# sys.path and sys.meta_path as pybridge loads this module: before sys.path[0]
# (the script's or the working directory) is set and any user code ran.
# pybridge loads later helpers with these too.
_OWN_PATH = tuple(sys.path)
_OWN_META_PATH = tuple(sys.meta_path)

# The namespaces of the modules the helpers use that are loaded already,
# copied before any user code ran: a helper loaded later (at the first
# TAB) takes their functions from here (start_namespace), not from modules
# the user may have changed since (os.stat replaced, os's __class__
# swapped for one with a __getattribute__).
_MODULE_TYPE = type(sys)
_M_DICT = _MODULE_TYPE.__dict__["__dict__"].__get__
_START_NAMESPACES = {}
for _name in ("os", "posix", "sys", "stat", "types", "re", "gc", "_frozen_importlib"):
    _m = sys.modules.get(_name)
    if type(_m) is _MODULE_TYPE:
        _START_NAMESPACES[_name] = dict(_M_DICT(_m))
del _name, _m
# Not sys's streams: the helpers write to none of them, and a reference
# kept here, where finalization never clears, would keep sys.stdout from
# being destroyed, and so flushed, at exit (what a __del__ printed as
# __main__ went would be lost).
for _name in ("stdin", "stdout", "stderr", "__stdin__", "__stdout__", "__stderr__"):
    _START_NAMESPACES.get("sys", {}).pop(_name, None)
del _name
_ModuleSpec = _START_NAMESPACES.get("_frozen_importlib", {}).get("ModuleSpec")
_SYS = _M_DICT(sys)
_MODULES = sys.modules


def start_namespace(name):
    """A copy of module name's namespace as it was at start-up, or None."""
    return _START_NAMESPACES.get(name)


class _OwnImports:
    """Imports for pyaichat's own use, from where Python's own come: the
    search path and finders Python started with, and none of the modules
    the user imported from elsewhere (a json.py in the working directory,
    say) while they run. Those are set aside and put back after, so that
    the user's stay theirs and pyaichat never runs their code in their
    place. pybridge loads helpers with this too (own_imports_begin)."""

    # Through sys's own dict, which the import system reads, and the
    # modules dict Python started with: a sys whose __class__ the user
    # swapped never answers.

    def __enter__(self):
        self._path, self._meta_path = _SYS.get("path"), _SYS.get("meta_path")
        self._theirs = {}
        for name, module in list(dict.items(_MODULES)):
            if _from_elsewhere(module):
                self._theirs[name] = dict.pop(_MODULES, name)
        _SYS["path"], _SYS["meta_path"] = list(_OWN_PATH), list(_OWN_META_PATH)
        return self

    def __exit__(self, *exc):
        _SYS["path"], _SYS["meta_path"] = self._path, self._meta_path
        dict.update(_MODULES, self._theirs)


def _from_elsewhere(module):
    """Whether module was loaded from a file outside the search path Python
    started with (built-in, frozen and file-less modules are not), or is
    not a plain module at all (a module whose __class__ was swapped, an
    object put in sys.modules): the import system would ask it for its
    __spec__ through its class. Read from dicts, never through attributes:
    this runs as a helper loads, and a module or spec the user made could
    answer with their code."""
    if type(module) is not _MODULE_TYPE:
        return True
    spec = _pyaichat.lookup(_M_DICT(module), "__spec__", None)
    if spec is None:
        return False
    if type(spec) is not _ModuleSpec:
        return True  # made by hand: not Python's own
    origin = _pyaichat.lookup(_pyaichat.inst_dict(spec), "origin", None)
    if type(origin) is not str or origin in ("built-in", "frozen"):
        return False
    return not any(p and origin.startswith(p + "/") for p in _OWN_PATH)


def own_imports_begin():
    """For pybridge: start loading a helper with _OwnImports."""
    return _OwnImports().__enter__()


def own_imports_end(token):
    """For pybridge: end what own_imports_begin started."""
    token.__exit__(None, None, None)


_own_modules = {}


def _stdlib(name):
    """The standard module name, for pyaichat's own use (see _OwnImports):
    a code.py or tokenize.py in the working directory, or a finder the user
    installed, cannot stand in for it and break the REPL (python3's REPL
    imports none of them)."""
    module = _own_modules.get(name)
    if module is None:
        with _OwnImports():
            module = _own_modules[name] = __import__(name, fromlist=["_"])
    return module


def _console_class():
    # code imports traceback, linecache, tokenize and re: about 10 ms that
    # would otherwise delay the first prompt. They load on the first line.
    code = _stdlib("code")
    codeop = _stdlib("codeop")

    class _Console(code.InteractiveConsole):
        """InteractiveConsole's input handling, CPython's execution.

        code.InteractiveConsole buffers lines and decides with codeop whether
        a statement is complete, compiling it in "single" mode (so values go
        through sys.displayhook and bind ``_``).  Running the code is left to
        pybridge (see runcode), and an exception is shown by show_exception.
        """

        _last_source = ()

        def push(self, line):
            self._last_source = self.buffer + [line]
            more = super().push(line)
            if more and not line and len(self.buffer) > 1:
                return self._blank_line_ends()
            return more

        def _blank_line_ends(self):
            """python3's interactive tokenizer ends a statement at an empty
            line unless a bracket or a string is open, so a block header
            with no body yet (or a lone decorator) is an error there and
            then; codeop would wait for the body."""
            source = "\n".join(self.buffer)
            try:
                # The session's __future__ flags, but none that allow
                # incomplete input (codeop's own compiler sets them).
                flags = self.compile.compiler.flags & ~(
                    codeop.PyCF_DONT_IMPLY_DEDENT | getattr(codeop, "PyCF_ALLOW_INCOMPLETE_INPUT", 0x4000)
                )
                compile(source + "\n", self.filename, "single", flags, True)
            except SyntaxError as err:
                last = next((l for l in reversed(self.buffer) if l.strip()), "")
                header = isinstance(err, IndentationError) and err.msg.startswith("expected an indented block")
                # A lone decorator; not an @ inside a string still open.
                decorator = err.msg == "invalid syntax" and last.lstrip().startswith("@")
                if header or decorator:
                    if not err.offset:
                        err.offset = 1  # the interactive tokenizer points at the blank line
                    self.resetbuffer()
                    self.showsyntaxerror(self.filename)
                    return False
            return True

        def runsource(self, source, filename="<input>", symbol="single"):
            # Fast path: input that compiles as it stands is what codeop
            # would return too, without its second compile and warnings
            # bookkeeping (20 us a line).
            code_obj = _whole_statement(source) if symbol == "single" else None
            if code_obj is None:
                if _PY313:
                    # The compiler's warnings name the input as 3.13's do.
                    filename = _input_name(peek=True)
                try:
                    code_obj = self.compile(source, filename, symbol)
                except (OverflowError, SyntaxError, ValueError) as err:
                    better = _interactive_error(source, filename, symbol, err)
                    if _PY313:
                        _input_name()
                    try:
                        raise better from None
                    except (OverflowError, SyntaxError, ValueError):
                        self.showsyntaxerror(filename)
                    return False
                if code_obj is None:
                    return True
                if _PY313:
                    _named_input(code_obj, source, _input_name())
            self.runcode(code_obj)
            return False

        def showsyntaxerror(self, filename=None):
            # No code ran, so python3 keeps no traceback (sys.last_traceback
            # is None), and its tokenizer's line has no newline.
            err = sys.exc_info()[1]
            err.__traceback__ = None
            if isinstance(err, SyntaxError) and type(err.text) is str and err.text.endswith("\n"):
                err.text = err.text[:-1]
            # Its parser names the input "<stdin>" (3.13's REPL on a
            # terminal "<python-input-N>", and colours it).
            with _shown_as_error():
                if _PY313 and _terminal:
                    super().showsyntaxerror(filename, colorize=_stdlib("_colorize").can_colorize())
                else:
                    super().showsyntaxerror("<stdin>" if _PY313 else filename)
            sys.last_traceback = None  # 3.10's code module takes exc_info()'s

        def runcode(self, code_obj):
            # pybridge runs it from C, with no Python frame under it, so
            # user code sees the stack python3 -i gives it (f_back is None,
            # the full recursion limit, inspect.stack() of one frame).
            _queue(code_obj, "\n".join(self._last_source))
            return True

    return _Console


_PY313 = sys.version_info >= (3, 13)
_terminal = False  # stdin is a terminal (install_stdin)
_inputs = 0  # inputs named so far (_input_name)


def _input_name(peek=False):
    """The name 3.13's python3 -i gives an input: "<python-input-N>" on a
    terminal (its new REPL), "<stdin>-N" from a pipe, which tracebacks
    show as "<stdin>". Each input takes one, unless peek."""
    global _inputs
    name = ("<python-input-%d>" if _terminal else "<stdin>-%d") % _inputs
    if not peek:
        _inputs += 1
    return name


def _named_input(code_obj, source, name):
    """code_obj named name, and its source kept in linecache as 3.13's
    python3 -i keeps an input's, so that tracebacks show its lines."""
    lines = [line + "\n" for line in source.splitlines()]
    _stdlib("linecache").cache[name] = (len(source), None, lines, "<stdin>" if name.startswith("<stdin>") else name)
    return code_obj if code_obj.co_filename == name else _renamed(code_obj, name)


def _renamed(code_obj, name):
    """code_obj and the code objects in it, with co_filename name."""
    consts = tuple(_renamed(c, name) if type(c) is type(code_obj) else c for c in code_obj.co_consts)
    return code_obj.replace(co_filename=name, co_consts=consts)


def _interactive_error(source, filename, symbol, err):
    """The error CPython's own REPL reports for source, given the one codeop
    raised. The REPL parses with its interactive tokenizer, which sees each
    line's newline and never runs the "was never closed" check; codeop
    compiles a string, so a few messages differ. Others pass unchanged."""
    codeop = _stdlib("codeop")

    if not isinstance(err, SyntaxError):
        return err
    flags = codeop.PyCF_DONT_IMPLY_DEDENT
    retry = None
    if err.msg == "incomplete input":
        retry = source + "\n"
    elif err.msg.endswith("was never closed"):
        closers = _closers(source)
        if closers:
            retry = source + "\n" + closers + "\n"
    if retry is not None:
        try:
            compile(retry, filename, symbol, flags)
        except SyntaxError as other:
            if other.end_lineno != other.lineno and other.text:
                # The REPL's range stops at the end of the reported line
                # (3.13's takes in its newline).
                other.end_lineno = other.lineno
                other.end_offset = len(other.text.rstrip("\n")) + (1 if _PY313 else 0)
            err = other
    if isinstance(err, IndentationError) and err.msg.startswith("expected an indented block") and not _PY313:
        err.end_offset = err.offset  # the REPL marks one column (3.13's the token)
    return err


def _closers(source):
    """The brackets that would close the ones source leaves open."""
    import io as _io

    tokenize = _stdlib("tokenize")
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = []
    try:
        for tok in tokenize.generate_tokens(_io.StringIO(source).readline):
            if tok.type == tokenize.OP:
                if tok.string in pairs:
                    stack.append(pairs[tok.string])
                elif stack and tok.string == stack[-1]:
                    stack.pop()
    except (tokenize.TokenError, SyntaxError):
        pass
    return "".join(reversed(stack))


_main = sys.modules["__main__"]

# Runs last of the atexit handlers, registered before any of the user's
# (see bridge.c, exit_ends).
_stdlib("atexit").register(_pyaichat.exit_ends)


class _LazyConsole:
    """Creates the console on first use (see _console_class): the first
    input that is not a whole statement, or does not compile."""

    def __getattr__(self, name):
        global _console
        _console = _console_class()(_main.__dict__, filename="<stdin>")
        _console.compile.compiler = _compiler()
        return getattr(_console, name)


_console = _LazyConsole()
_session_compiler = None


def _compiler():
    """The session's compiler: codeop's, which takes up the __future__
    imports of what it compiles, shared by typed lines, pastes and the
    console."""
    global _session_compiler
    if _session_compiler is None:
        _session_compiler = _stdlib("codeop").Compile()
    return _session_compiler


def _in_block():
    """Whether lines of an unfinished statement are buffered."""
    return type(_console) not in (_LazyConsole, type(None)) and bool(_console.buffer)


def _whole_statement(line):
    """line compiled, when it is a whole statement on its own (most lines
    typed at the prompt, or a block's lines together), else None: codeop
    then decides, through the console (it buffers a block's lines and
    shows errors as python3 does). Typed lines come here before the
    console exists: it loads the code module and traceback, about 200 KB
    that a session without an error never needs."""
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return None  # codeop's rules for blank lines and comments
    filename = _input_name(peek=True) if _PY313 else "<stdin>"
    try:
        code_obj = _compiler()(line, filename, "single")
    except (OverflowError, SyntaxError, ValueError):
        return None
    if _PY313:
        _named_input(code_obj, line, _input_name())
    return code_obj


# Type attributes read through type's own descriptors, so that no
# metaclass property or __getattribute__ runs.
_T_DICT = type.__dict__["__dict__"].__get__
_T_MRO = type.__dict__["__mro__"].__get__
_T_MODULE = type.__dict__["__module__"].__get__
_T_QUALNAME = type.__dict__["__qualname__"].__get__

# Values whose repr is CPython's own, all the way down.
_SAFE_TYPES = frozenset(
    (int, float, complex, bool, type(None), type(...), str, bytes, range,
     list, tuple, dict, set, frozenset)
)


def _type_name(t):
    try:
        module = _T_MODULE(t)
    except Exception:
        module = None
    name = _T_QUALNAME(t)
    return name if type(module) is not str or module == "builtins" else module + "." + name


def _safe_message(exc):
    """str(exc) when that runs no user code (no __str__ of the user's in
    its class's MRO, only plain arguments), else None."""
    for cls in _T_MRO(type(exc)):
        if _T_MODULE(cls) != "builtins" and "__str__" in _T_DICT(cls):
            return None
    if any(type(a) not in _SAFE_TYPES or type(a) in (list, tuple, dict, set, frozenset) for a in exc.args):
        return None
    return str(exc)


class _Recent:
    """The last few py> inputs and what came of them, for the assistant's
    automatic context. Recorded as each input ends, and never by running
    the user's code: python3 calls a value's __repr__ (or an exception's
    __str__) once, to show it, and so does pyaichat. Values come out as
    CPython's own repr when every part is a builtin type, else by type."""

    keep = 6
    item_chars = 300

    def __init__(self):
        self.items = []
        self._last_error = None
        self._result_before = None

    def _clip(self, text):
        if len(text) > self.item_chars:
            return text[: self.item_chars] + "..."
        return text

    def starting(self):
        """Input is about to run: a value is its result only if new."""
        self._result_before = builtins.__dict__.get("_")

    def record(self, source):
        source = source.rstrip("\n")
        shown = taken_shown()
        if not source.strip():
            return
        outcome = ""
        error = getattr(sys, "last_value", None)
        if error is not None and error is not self._last_error:
            self._last_error = error
            # Named as a traceback names it: no "__main__." either.
            outcome = "raised " + _type_name(type(error)).removeprefix("__main__.")
            message = _safe_message(error)
            if message:
                outcome += ": " + self._clip(message)
        else:
            result = builtins.__dict__.get("_")
            if result is not None and result is not self._result_before:
                outcome = "-> " + self._describe(result)
        self._result_before = None
        # Figures and rich values shown: what, never the pixels.
        for what in shown:
            outcome += ("\n    " if outcome else "") + self._clip(what)
        self.items.append((self._clip(source), outcome))
        del self.items[: -self.keep]

    def _describe(self, value):
        return self._clip(_safe_repr(value, self.item_chars))

    def render(self):
        lines = []
        for source, outcome in self.items:
            lines.append(">>> " + source.replace("\n", "\n... "))
            if outcome:
                lines.append("    " + outcome)
        return "\n".join(lines)


def _safe_repr(value, limit):
    """repr(value), cut near limit characters, where it is CPython's own:
    exact builtin types (a subclass may override __repr__) and containers
    of them. Anything else shows as <module.Type object>. Sets and dicts are
    not sorted, which would compare their items."""
    parts = []
    budget = [limit]

    def put(text):
        parts.append(text)
        budget[0] -= len(text)

    def walk(v, depth):
        t = type(v)
        if t not in _SAFE_TYPES:
            put("<%s object>" % _type_name(t))
            return
        if budget[0] <= 0:
            put("...")
            return
        if t in (list, tuple, set, frozenset, dict):
            if depth > 4:
                put("...")
                return
            if not v:
                put("()" if t is tuple else "set()" if t is set else "frozenset()" if t is frozenset else repr(v))
                return
            opener, closer = {list: "[]", tuple: "()", dict: "{}", set: "{}", frozenset: ("frozenset({", "})")}[t]
            put(opener)
            for i, item in enumerate(v.items() if t is dict else v):
                if i:
                    put(", ")
                if budget[0] <= 0:
                    put("...")
                    break
                if t is dict:
                    walk(item[0], depth + 1)
                    put(": ")
                    item = item[1]
                walk(item, depth + 1)
            if t is tuple and len(v) == 1:
                put(",")
            put(closer)
        elif t is int and v.bit_length() > 4 * limit:
            put("<int of %d bits>" % v.bit_length())
        elif t in (str, bytes) and len(v) > limit:
            put(repr(v[:limit]) + "...")
        else:
            put(repr(v))

    walk(value, 0)
    return "".join(parts)


_recent = _Recent()


def recent_context(_=""):
    """Text of the last few py> inputs, their results and errors."""
    return _recent.render()


def _flush():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass


class _shown_as_error:
    """Tags what stderr gets inside it as a traceback, for the session
    log's copy of the output (a notebook's error output), when that copy
    is on (capture_output)."""

    def __enter__(self):
        # stdout is not flushed first: python3 shows the traceback before
        # a line print(..., end="") left unfinished.
        _pyaichat.capture_kind(2)

    def __exit__(self, *exc):
        _flush()
        _pyaichat.capture_kind(0)


def capture_output(_=""):
    """Turn on the session log's copy of Python's output (pyaichat
    --log-output): sys.stderr gets a _pyaichat.Tracked layer as sys.stdout
    has (its layer copies too once capture is on in C), and sys.displayhook
    becomes _pyaichat.displayhook, which calls the hook it replaces with
    its output tagged as a result. "no" when stdout is not on a terminal."""
    global _original_stderr
    if _tail_raw is None:
        return "no"
    err = sys.stderr
    tracked = _over_tracked(err, 2)
    if tracked is not None:
        _original_stderr = err  # kept alive: it owns fd 2
        sys.stderr = sys.__stderr__ = tracked[1]
    _pyaichat.set_displayhook(sys.displayhook)
    sys.displayhook = _pyaichat.displayhook
    return "ok"


def _exit_status(exc):
    """The process status CPython would exit with for SystemExit(exc.code)."""
    status = exc.code
    if status is None:
        return 0
    if isinstance(status, int):
        # CPython exits with (int)PyLong_AsLong(code): -1 when it overflows,
        # which 3.12 reports, and 3.13 reports later, at threading's
        # shutdown.
        if -(2**63) <= status < 2**63:
            return status & 0xFF
        if sys.version_info >= (3, 13):
            sys.stderr.write("Exception ignored on threading shutdown:\n")
        if sys.version_info >= (3, 12):
            sys.stderr.write("OverflowError: Python int too large to convert to C long\n")
        return 255
    try:
        sys.stderr.write(str(status) + "\n")
    except Exception:
        pass
    return 1


def _undecodable(source):
    """Report input that was not valid UTF-8 as CPython's tokenizer does."""
    try:
        source.encode("utf-8", "surrogateescape").decode("utf-8")
    except UnicodeDecodeError as err:
        sys.stderr.write(
            '  File "<stdin>", line 0\n    \nSyntaxError: (unicode error) %s\n' % err
        )
        return True
    return False


# Code compiled from the user's input, waiting for pybridge to run it: a list
# of code objects and the source they came from (for the automatic context).
_pending = []
_pending_source = ""


def _queue(code_obj, source):
    global _pending_source
    if not _pending:
        _recent.starting()
    _pending.append(code_obj)
    _pending_source = source
    _keep_defining_input(code_obj, source)


# The text of the inputs that defined a function or a class, oldest first,
# for name?? (typed_source). Before 3.13 python3 keeps no input's text:
# "<stdin>" must stay out of linecache, or tracebacks would show source
# lines that python3 -i does not. 3.13's inputs are in linecache, which
# inspect finds a function's source in, but not a class's.
_defining_inputs = []
_MAX_KEPT_INPUT = 1 << 20  # characters: a huge paste is not kept


def _keep_defining_input(code_obj, source):
    if not code_obj.co_filename.startswith(("<stdin>", "<python-input-")) or len(source) > _MAX_KEPT_INPUT:
        return
    if not any(type(c) is type(code_obj) for c in code_obj.co_consts):
        return
    if not (_defining_inputs and _defining_inputs[-1] is source):  # a paste queues each statement
        _defining_inputs.append(source)


def typed_source(obj):
    """The source of a function or class defined at the prompt, from the
    input that defined it (the newest that compiles to the same code), or
    None. Only name?? asks, so the inputs are compiled again only then."""
    inspect = _stdlib("inspect")
    if inspect.ismethod(obj):
        obj = obj.__func__
    if inspect.isfunction(obj):
        obj = inspect.unwrap(obj)  # as inspect.getsource does: the decorated function's
    code = getattr(obj, "__code__", None)
    if code is not None and code.co_filename != "<stdin>":
        return None
    flags = _compiler().flags & ~(
        _stdlib("codeop").PyCF_DONT_IMPLY_DEDENT | getattr(_stdlib("codeop"), "PyCF_ALLOW_INCOMPLETE_INPUT", 0x4000)
    )
    for source in reversed(_defining_inputs):
        lines = [line + "\n" for line in source.split("\n")]
        if code is not None:
            first = _first_line_of(code, source, flags)
        elif inspect.isclass(obj) and obj.__module__ == "__main__":
            first = _class_line(obj, source)
        else:
            return None
        if first:
            return "".join(inspect.getblock(lines[first - 1 :]))
    return None


def _first_line_of(code, source, flags):
    """code's first line if source compiles to it (a code object in it with
    the same name, first line and bytecode), else None."""
    try:
        todo = [compile(source + "\n", "<stdin>", "exec", flags, True)]
    except (SyntaxError, ValueError, OverflowError):
        return None
    while todo:
        c = todo.pop()
        if c.co_name == code.co_name and c.co_firstlineno == code.co_firstlineno and c.co_code == code.co_code:
            return c.co_firstlineno
        todo.extend(k for k in c.co_consts if type(k) is type(c))
    return None


def _class_line(cls, source):
    """The first line (its first decorator's) of the top-level class
    statement that defines cls's name in source, else None."""
    ast = _stdlib("ast")
    try:
        tree = compile(source + "\n", "<stdin>", "exec", ast.PyCF_ONLY_AST)
    except (SyntaxError, ValueError, OverflowError):
        return None
    for node in reversed(tree.body):
        if isinstance(node, ast.ClassDef) and node.name == cls.__qualname__:
            return min([node.lineno] + [d.lineno for d in node.decorator_list])
    return None


# What a REPL step answers pybridge (bridge.c reads it): a tuple (STEP_*,
# exit status, the type of the exception the input raised or "", what
# output left on the terminal's current line). STEP_RUN: run the queued
# code (take_pending), after which after_run or show_exception answers.
STEP_DONE, STEP_MORE, STEP_RUN, STEP_EXIT = 0, 1, 2, 3


def _ready():
    """What the Go side does next: "run" the queued code, or nothing."""
    return "run" if _pending else "ok"


def _entry(fn):
    """An entry point for input: fn answers "ok", "more" or "run" (see
    _ready), which the entry turns into the step tuple pybridge reads.
    After "run", after_run or show_exception answers once the code ran;
    otherwise the tuple carries what output left on the terminal's
    current line, for the next prompt to follow, and whether the input
    raised (a syntax error is shown without running anything)."""

    @functools.wraps(fn)
    def entry(arg=""):
        before = getattr(sys, "last_value", None)
        answer = fn(arg)
        if answer == "run":
            return (STEP_RUN, 0, "", "")
        if answer == "more":
            return (STEP_MORE, 0, "", stdout_tail())
        return (STEP_DONE, 0, _new_error(before), stdout_tail())

    return entry


def _new_error(before):
    """The type of the exception the input just handled raised (it set a
    new sys.last_value: it raised, or did not compile), else "": the
    session log records each input's outcome."""
    error = getattr(sys, "last_value", None)
    if error is None or error is before:
        return ""
    return _type_name(type(error)).removeprefix("__main__.")


def _line_entered():
    """Typed or pasted input was echoed and ended the terminal's line."""
    if _tail_raw is not None:
        _tail_raw.tail = b""


@_entry
def push(line):
    """Feed one line typed at the prompt: "more" (incomplete), "run" (code
    is queued for pybridge to run) or "ok" (nothing to run, e.g. a
    SyntaxError, already shown)."""
    _line_entered()
    try:
        if _undecodable(line):
            if _in_block():
                _console.resetbuffer()
            return "ok"
        in_block = _in_block()
        magic = _magic_asked(line) if not in_block else None
        if magic:
            # "%timeit x" and "!ls" are SyntaxErrors in Python: IPython's
            # magics (magics.py).
            _queue(compile("__import__('_pyaichat').helper(%r).run_magic(%r)" % (__name__, magic),
                           "<pyaichat>", "exec"), line)
            return _ready()
        asked = _help_asked(line) if not in_block else None
        if asked:
            # "obj?" and "obj??" are SyntaxErrors in Python: IPython's help.
            _queue(compile("__import__('_pyaichat').helper(%r).show_help(%r, %r)"
                           % ((__name__,) + asked), "<pyaichat>", "exec"), line)
            return _ready()
        code_obj = _whole_statement(line) if not in_block else None
        if code_obj is not None:
            _queue(code_obj, line)
            return _ready()
        if _console.push(line):
            return "more"
        return _ready()
    finally:
        _flush()


def more_lines(source):
    """Whether Enter after source, a block typed at py> as one buffer,
    adds a line to it rather than running it: "1" where the statement is
    not complete, as code.InteractiveConsole decides it line by line
    (codeop, and python3's interactive tokenizer, which ends a block at a
    blank line: a header with no body yet is an error there and then).
    "" otherwise, syntax errors included: they show as the block runs."""
    if _undecodable(source):
        return ""
    codeop = _stdlib("codeop")
    # A compiler of its own: codeop's would take on the __future__ flags
    # of what it compiles before the input runs.
    compiler = codeop.CommandCompiler()
    compiler.compiler.flags = _compiler().flags
    try:
        if compiler(source, "<stdin>", "single") is not None:
            return ""
    except (OverflowError, SyntaxError, ValueError):
        return ""
    lines = source.split("\n")
    if len(lines) > 1 and not lines[-1].strip():
        flags = compiler.compiler.flags & ~(
            codeop.PyCF_DONT_IMPLY_DEDENT | getattr(codeop, "PyCF_ALLOW_INCOMPLETE_INPUT", 0x4000)
        )
        try:
            compile(source + "\n", "<stdin>", "single", flags, True)
        except SyntaxError as err:
            header = isinstance(err, IndentationError) and err.msg.startswith("expected an indented block")
            last = next((l for l in reversed(lines) if l.strip()), "")
            if header or err.msg == "invalid syntax" and last.lstrip().startswith("@"):
                return ""
    return "1"


def _help_asked(line):
    """For a dotted name followed by ? or ??, alone on a line, the name and
    whether ?? asked for the source; else None. (Not a regular expression:
    this module loads before the user's first line, and loading re here
    would leave private copies of re and enum, whose classes show where
    CPython lists subclasses.)"""
    text = line.strip()
    if not text.endswith("?"):
        return None
    full = text.endswith("??")
    name = text[: -2 if full else -1]
    if not name or not all(part.isidentifier() for part in name.split(".")):
        return None
    return name, full


def show_help(name, full):
    """What IPython shows for ``name?`` (signature, docstring, type) or
    ``name??`` (the source, where there is one). Finding the object is
    what help(name) would do: names and attributes, nothing else."""
    inspect = _stdlib("inspect")
    first, *rest = name.split(".")
    try:
        obj = _main.__dict__[first] if first in _main.__dict__ else getattr(builtins, first)
        for attr in rest:
            obj = getattr(obj, attr)
    except AttributeError:
        print("Object `%s` not found." % name)  # as IPython says it
        return
    out = []
    if full:
        try:
            out.append(inspect.getsource(obj).rstrip("\n"))
            source_file = inspect.getsourcefile(obj)
            if source_file:
                out.append("File:      " + source_file)
        except (TypeError, OSError):
            typed = typed_source(obj)  # defined at the prompt
            if typed:
                out.append(typed.rstrip("\n"))
            else:
                full = False  # builtins and the like: what ? shows
    if not full:
        try:
            out.append("Signature: " + name + str(inspect.signature(obj)))
        except (TypeError, ValueError):
            pass
        doc = inspect.getdoc(obj)
        out.append("Docstring: " + (doc if doc else "<no docstring>"))
    out.append("Type:      " + type(obj).__name__)
    print("\n".join(out))


@_entry
def push_eof(_=""):
    """End of input with a statement pending: compile what is buffered as
    final, as python3 does at EOF ("was never closed" and the like)."""
    codeop = _stdlib("codeop")

    _line_entered()
    source = "\n".join(_console.buffer)
    _console.resetbuffer()
    try:
        try:
            code_obj = compile(source + "\n", "<stdin>", "single", codeop.PyCF_DONT_IMPLY_DEDENT)
        except (OverflowError, SyntaxError, ValueError):
            _console.showsyntaxerror("<stdin>")
            return "ok"
        _queue(code_obj, source)
        return _ready()
    finally:
        _flush()


def reset(_=""):
    """Discard a pending block (Ctrl-C at a continuation prompt)."""
    if _in_block():
        _console.resetbuffer()
    del _pending[:]
    return "ok"


@_entry
def run_block(source):
    """Compile pasted text the way Python 3.13's REPL and IPython run a paste.

    The whole block is parsed at once, so blank lines inside an indented block
    do not end it; its top-level statements are then queued in order, the
    last compiled as the interactive interpreter would ("single" mode, so
    its value displays) and the others as a script's ("exec"), as 3.13's
    REPL does. pybridge stops at the first exception.
    """
    ast = _stdlib("ast")

    _line_entered()
    try:
        if _undecodable(source):
            return "ok"
        try:
            tree = compile(source, "<stdin>", "exec", ast.PyCF_ONLY_AST)
            # Through the console's compiler, which carries (and takes up)
            # the session's __future__ imports, as for typed lines.
            compiler = _compiler()
            last = len(tree.body) - 1
            codes = [
                compiler(ast.Interactive(body=[stmt]), "<stdin>", "single")
                if i == last
                else compiler(ast.Module(body=[stmt], type_ignores=[]), "<stdin>", "exec")
                for i, stmt in enumerate(tree.body)
            ]
            if _PY313 and codes:
                name = _input_name()
                codes = [_named_input(c, source, name) for c in codes]
        except (SyntaxError, ValueError, OverflowError):
            _console.showsyntaxerror("<stdin>")
            return "ok"
        for code_obj in codes:
            _queue(code_obj, source)
        return _ready()
    finally:
        _flush()


def _show_compile_error():
    """Show the error that reading or compiling setup code raised as python3
    shows it: with no traceback, since none of it ran."""
    exc_type, exc, _ = sys.exc_info()
    exc.__traceback__ = None
    sys.last_type, sys.last_value, sys.last_traceback = exc_type, exc, None
    sys.excepthook(exc_type, exc, None)


# Setup code (-c CODE, FILE) runs as python3 -i runs it, before the REPL:
# a SystemExit from it is shown like any exception instead of exiting, and
# FILE's __file__ and __cached__ are removed from __main__ once it ran.
_setup_running = False
_script_names = False


def _setup_done():
    global _setup_running, _script_names
    _setup_running = False
    if _script_names:
        _script_names = False
        _main.__dict__.pop("__file__", None)
        _main.__dict__.pop("__cached__", None)


def _importer(path):
    """The importer python3 would run path's __main__ module with (a
    directory or a zip file), or None for a plain script."""
    for hook in sys.path_hooks:
        try:
            return hook(path)
        except ImportError:
            continue
    return None


# A directory or zip file runs through runpy, as python3 runs it; this shim
# is the code pybridge runs, and its frame (as every "<pyaichat>" one) is
# left out of tracebacks.
_RUN_MAIN_MODULE = compile(
    "__import__('runpy')._run_module_as_main('__main__', False)", "<pyaichat>", "exec"
)


def _non_utf8(source, filename):
    """CPython's error for a script that is not UTF-8 and declares no
    encoding (compile() says "(unicode error)" instead), or None."""
    tokenize = _stdlib("tokenize")

    try:
        _, head = tokenize.detect_encoding(io.BytesIO(source).readline)
    except SyntaxError:
        return None
    if any(tokenize.cookie_re.match(line.decode("latin-1")) for line in head):
        return None  # declared: compile() reports it as CPython does
    for lineno, line in enumerate(source.splitlines(True), 1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as err:
            if sys.version_info < (3, 11):  # 3.10's tokenizer says the next line
                lineno, pep = lineno + 1, "https://python.org/dev/peps/pep-0263/"
            else:
                pep = "https://peps.python.org/pep-0263/"
            return SyntaxError(
                "Non-UTF-8 code starting with '\\x%.2x' in file %s on line %d, "
                "but no encoding declared; see %s for details" % (line[err.start], filename, lineno, pep)
            )
    return None


def _compile_script(path, source):
    """The code object python3 would run for the script at path."""
    if path.endswith(".pyc"):
        import marshal

        importlib_util = _stdlib("importlib.util")

        if source[:4] != importlib_util.MAGIC_NUMBER:
            raise RuntimeError("Bad magic number in .pyc file")
        return marshal.loads(source[16:])
    try:
        return compile(source, path, "exec")
    except SyntaxError as err:
        if err.msg.startswith("(unicode error)"):
            better = _non_utf8(source, path)
            if better is not None:
                raise better from None
        raise


# python3 -x: FILE's first line is not Python (a DOS launcher line).
_skip_first_line = False


def skip_source_first_line(_=""):
    """python3 -x: run_file skips FILE's first line, keeping its newline so
    that line numbers stay the file's, as CPython skips it."""
    global _skip_first_line
    _skip_first_line = True
    return "ok"


@_entry
def run_file(path):
    """Queue FILE to run as __main__, like ``python3 -i FILE``: it runs in
    __main__ itself, so its globals stay in the interactive namespace."""
    import os

    global _setup_running
    path = os.path.abspath(path)
    if _importer(path) is not None:
        _setup_running = True
        _queue(_RUN_MAIN_MODULE, "")
        return _ready()
    try:
        with io.open_code(path) as f:
            source = f.read()
    except OSError as err:
        sys.stderr.write("pyaichat: can't open file %r: [Errno %d] %s\n" % (path, err.errno, err.strerror))
        return "ok"
    finally:
        _flush()
    if _skip_first_line:
        end = source.find(b"\n")
        source = source[end:] if end >= 0 else b""
    return _run_script(path, source, inspect=True)


@_entry
def run_startup(path):
    """Queue the PYTHONSTARTUP file to run in __main__, as python3 runs it
    before the first prompt when it has no FILE or -c."""
    try:
        with io.open_code(path) as f:
            source = f.read()
    except OSError:
        sys.stderr.write("Could not open PYTHONSTARTUP\n")
        _show_compile_error()
        return "ok"
    finally:
        _flush()
    # python3 runs it as the REPL starts, where SystemExit exits.
    return _run_script(path, source, inspect=False)


def _run_script(path, source, inspect):
    """Queue a script's source to run in __main__ under the name path, as
    CPython's _PyRun_SimpleFileObject runs it; with inspect, as python3 -i
    does, a SystemExit from it is shown instead of exiting."""
    global _setup_running, _script_names
    try:
        # As python3 does once the file is open, whether it compiles or not.
        import _frozen_importlib_external as external  # loaded at start-up

        loader = external.SourcelessFileLoader if path.endswith(".pyc") else external.SourceFileLoader
        _main.__dict__["__loader__"] = loader("__main__", path)
        try:
            code_obj = _compile_script(path, source)
        except (SyntaxError, ValueError, RuntimeError, EOFError):
            _show_compile_error()
            return "ok"
        _main.__dict__["__file__"] = path
        _main.__dict__["__cached__"] = None
        _setup_running, _script_names = inspect, True
        _queue(code_obj, "")
        return _ready()
    finally:
        _flush()


@_entry
def run_command(source):
    """Queue ``-c CODE`` to run in __main__ (like ``python3 -i -c CODE``)."""
    global _setup_running
    try:
        try:
            code_obj = compile(source, "<string>", "exec")
        except (SyntaxError, ValueError):
            _show_compile_error()
            return "ok"
        if _PY313:
            # As python3.13 -c keeps it, for tracebacks.
            lines = [line + "\n" for line in source.splitlines()]
            _stdlib("linecache").cache["<string>"] = (len(source), None, lines, "<string>")
        _setup_running = True
        _queue(code_obj, "")
        return _ready()
    finally:
        _flush()


@_entry
def run_module(name):
    """Queue ``-m MODULE`` to run as __main__, as ``python3 -i -m MODULE``
    runs it: through runpy, in __main__'s namespace, with sys.argv[0] the
    module's path."""
    global _setup_running
    _setup_running = True
    _queue(compile("__import__('runpy')._run_module_as_main(%r, True)" % name, "<pyaichat>", "exec"), "")
    return _ready()


def take_pending():
    """Hand the queued code to pybridge (called from C)."""
    codes = list(_pending)
    del _pending[:]
    return codes


def after_run(_=None):
    """Called from C once the queued code ran to the end: its step tuple."""
    draw_pending()
    _recent.record(_pending_source)
    _setup_done()
    _flush()
    return (STEP_DONE, 0, "", stdout_tail())


def _show(exc, tb):
    """Show exc with traceback tb as python3's prompt does, setting sys.last_*."""
    sys.last_type, sys.last_value, sys.last_traceback = type(exc), exc, tb
    with _shown_as_error():
        try:
            sys.excepthook(type(exc), exc, tb)
        except BaseException as hook_err:
            sys.stderr.write("Error in sys.excepthook:\n")
            sys.__excepthook__(type(hook_err), hook_err, hook_err.__traceback__)
            sys.stderr.write("\nOriginal exception was:\n")
            sys.__excepthook__(type(exc), exc, tb)


def _user_frames(tb):
    """tb without pyaichat's own frames: the "<pyaichat>" shim that ran
    the input, and for a magic (%time, %run) the helper's frames and the
    runpy frames %run ran the file through, as IPython shows none."""
    if tb is None or tb.tb_frame.f_code.co_filename != "<pyaichat>":
        return tb
    tb = tb.tb_next
    in_helper = False
    while tb is not None and tb.tb_frame.f_code.co_filename.startswith("<pyaichat "):
        tb, in_helper = tb.tb_next, True
    while in_helper and tb is not None and tb.tb_frame.f_code.co_filename == "<frozen runpy>":
        tb = tb.tb_next
    return tb


def show_exception(exc):
    """Called from C with the exception that stopped the queued code: the
    exit status for SystemExit, else show it as python3 -i does; the step
    tuple either way."""
    try:
        if isinstance(exc, SystemExit) and not _setup_running:
            return (STEP_EXIT, _exit_status(exc), "", "")
        tb = exc.__traceback__ = _user_frames(exc.__traceback__)
        draw_pending()
        _show(exc, tb)
        _recent.record(_pending_source)
        _setup_done()
        _flush()
        return (STEP_DONE, 0, _type_name(type(exc)).removeprefix("__main__."), stdout_tail())
    finally:
        _flush()


def show_signal_error(exc):
    """Called from C with what a signal handler raised while no user code
    ran: as python3's prompt, whose read the signal interrupted, exits for
    SystemExit, or shows it and sets sys.last_*; the step tuple."""
    try:
        if isinstance(exc, SystemExit):
            return (STEP_EXIT, _exit_status(exc), "", "")
        tb = exc.__traceback__
        _show(exc, tb)
        return (STEP_DONE, 0, _type_name(type(exc)).removeprefix("__main__."), stdout_tail())
    finally:
        _flush()


class _Stdin(io.TextIOBase):
    """sys.stdin for user code: lines come through pyaichat's terminal layer.

    The line editor owns the terminal between statements; routing reads
    through Go means keystrokes are never stolen and Ctrl-C interrupts a
    blocked read.  fileno() and isatty() still describe the real descriptor,
    so ``input()`` on a terminal takes CPython's PyOS_Readline path, which
    pybridge also points at Go.
    """

    def __init__(self, real):
        self._real = real
        self._eof = False
        self._unread = ""  # the rest of a line a sized read stopped in

    # What reconfigure() set, over the real stream's.
    _encoding = None
    _errors = None

    @property
    def encoding(self):
        return self._encoding or getattr(self._real, "encoding", "utf-8")

    @property
    def errors(self):
        return self._errors or getattr(self._real, "errors", "strict")

    @property
    def buffer(self):
        return self._real.buffer

    name = "<stdin>"
    mode = "r"
    newlines = None

    @property
    def line_buffering(self):
        return getattr(self._real, "line_buffering", False)

    @property
    def write_through(self):
        return getattr(self._real, "write_through", False)

    def reconfigure(self, *, encoding=None, errors=None, newline=None, line_buffering=None, write_through=None):
        """As TextIOWrapper.reconfigure: encoding and errors apply to the
        lines read from now on (the others mean nothing for this stream)."""
        if encoding is not None:
            _stdlib("codecs").lookup(encoding)
            self._encoding = encoding
            if errors is None:
                self._errors = "strict"
        if errors is not None:
            self._errors = errors

    def _decoded(self, line):
        """line (read as UTF-8 with surrogateescape) as the stream's
        encoding and errors, once reconfigure() changed them, decode it."""
        if self._encoding is None and self._errors is None:
            return line
        return line.encode("utf-8", "surrogateescape").decode(self.encoding, self.errors)

    def readable(self):
        return True

    def fileno(self):
        return self._real.fileno()

    def isatty(self):
        return self._real.isatty()

    def readline(self, size=-1):
        if self.closed:
            raise ValueError("I/O operation on closed file.")
        if size is None:
            size = -1
        line, self._unread = self._unread, ""
        if not line:
            line = self._decoded(_pyaichat.readline())
        if 0 <= size < len(line):
            # As a buffered stream does: the rest waits for the next read.
            line, self._unread = line[:size], line[size:]
        return line

    def read(self, size=-1):
        if size is None:
            size = -1
        parts = []
        total = 0
        while size < 0 or total < size:
            line = self.readline(-1 if size < 0 else size - total)
            if not line:
                break
            parts.append(line)
            total += len(line)
        return "".join(parts)

    def readlines(self, hint=-1):
        return list(iter(self.readline, ""))

    def __iter__(self):
        return iter(self.readline, "")

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def close(self):
        # site's exit()/quit() close sys.stdin before raising SystemExit; the
        # REPL must keep working for the status to reach Go, so only mark it.
        pass


def _lines_read():
    """Lines user code has read from the terminal (input(), sys.stdin)."""
    return _pyaichat.lines_read()


def _counting_stdin():
    """sys.stdin as python3 has it on a terminal (a TextIOWrapper over a
    BufferedReader over fd 0), with _pyaichat.Tracked, which counts the
    lines read, as its raw layer; or None when sys.stdin is not that."""
    real = sys.stdin
    buffer = getattr(real, "buffer", None)
    if real is None or type(buffer) is not io.BufferedReader or type(buffer.raw) is not io.FileIO:
        return None
    return io.TextIOWrapper(
        io.BufferedReader(_pyaichat.Tracked(buffer.raw)),
        encoding=real.encoding,
        errors=real.errors,
        line_buffering=real.line_buffering,
    )


_tail_raw = None
_original_stdout = None
_original_stderr = None
_original_stdin = []


def _track_stdout_tail():
    global _tail_raw, _original_stdout
    out = sys.stdout
    if out is None or not out.isatty():
        return
    # _pyaichat.Tracked remembers the text after the last newline.
    tracked = _over_tracked(out, 1)
    if tracked is None:
        return
    _tail_raw = tracked[0]
    _original_stdout = out  # kept alive: it owns fd 1
    sys.stdout = sys.__stdout__ = tracked[1]


def _over_tracked(stream, which):
    """stream's layers built again with a _pyaichat.Tracked (which: 1 for
    stdout, 2 for stderr) over its FileIO: buffered (line-buffered on a
    terminal), or unbuffered under -u; stream is flushed. The Tracked
    layer and the new text stream, or None when stream is not made of
    those layers."""
    buffer = getattr(stream, "buffer", None)
    if type(buffer) is io.BufferedWriter and type(buffer.raw) is io.FileIO:
        raw = _pyaichat.Tracked(buffer.raw, which)
        layer = io.BufferedWriter(raw)
    elif type(buffer) is io.FileIO:
        raw = layer = _pyaichat.Tracked(buffer, which)
    else:
        return None
    stream.flush()
    return raw, io.TextIOWrapper(
        layer,
        encoding=stream.encoding,
        errors=stream.errors,
        line_buffering=stream.line_buffering,
        write_through=stream.write_through,
    )


def stdout_tail(_=""):
    """The text the last output left on the terminal's current line."""
    if _tail_raw is None or not _tail_raw.tail:
        return ""
    try:
        sys.stdout.flush()
    except Exception:
        pass
    if _lines_read() != _tail_raw.lines_at:
        # input() or sys.stdin read a line since: its Enter ended the line.
        _tail_raw.tail = b""
        return ""
    return _tail_raw.tail.decode("utf-8", "replace")


def install_stdin(terminal):
    """sys.stdin for user code. On a terminal (terminal == "1") user code
    reads it itself, as in python3, while pyaichat reads nothing; input()
    takes PyOS_Readline's path, where pybridge calls GNU readline as
    python3 -i does. Otherwise lines come through pyaichat (_Stdin)."""
    global _terminal
    _terminal = terminal == "1"
    _track_stdout_tail()
    stdin = _counting_stdin() if _terminal else None
    if stdin is not None:
        _original_stdin.append(sys.stdin)  # kept alive: closing it would close fd 0
        sys.stdin = sys.__stdin__ = stdin
        _pyaichat.native_input(True)
    elif sys.stdin is not None:  # None: closed at start, as in python3
        sys.stdin = _Stdin(sys.__stdin__)
    # Set in every interactive interpreter, to python3's: libraries test
    # for them, and code.interact() and pdb's interact prompt with them.
    # pyaichat's own prompts are its own.
    sys.ps1 = ">>> "
    sys.ps2 = "... "
    return "ok"


def set_path0(entry):
    """Put the script's directory (or "" for the cwd) first on sys.path, as
    python3 does for ``-i FILE``, ``-c`` and the bare REPL."""
    import os.path

    if entry:
        if _importer(os.path.abspath(entry)) is not None:
            entry = os.path.abspath(entry)  # a directory or zip file runs from itself
        else:
            # python3 resolves the script's links with realpath(3), and
            # keeps the name as given when that fails (no such file).
            if os.path.exists(entry):
                entry = os.path.realpath(entry)
            entry = os.path.dirname(entry)
    sys.path.insert(0, entry)
    return "ok"


def set_main_importer(entry):
    """Put a directory or zip file run as the script first on sys.path, as
    python3 does under -P and -I too (its __main__ is imported from it)."""
    import os.path

    path = os.path.abspath(entry)
    if _importer(path) is not None:
        sys.path.insert(0, path)
    return "ok"


def exit_begins():
    """Called from C as exit begins: _pyaichat.exit_begins, registered
    last, runs first of the atexit handlers (see bridge.c)."""
    _stdlib("atexit").register(_pyaichat.exit_begins)


def release_main(_=""):
    """At exit, once the atexit handlers ran: let go of __main__. python3
    destroys its objects first of all modules' (finalization drops it from
    sys.modules first); held here, they outlived the modules their
    __del__ needs (an open multiprocessing.Pool failed in __del__)."""
    global _main, _console
    _main = _console = None
    return "ok"
