
# ---- IPython's common line magics (appended to repl.py as one module) ----
#
# A line that starts with % or ! is a SyntaxError in Python, so giving it
# IPython's meaning changes nothing that Python accepts, as obj? does. The
# magics run as the user's code (Ctrl-C stops them, their output is the
# user's) in the user's namespace, and print what IPython prints.

_magics_on = True


def set_magics(on):
    """For pybridge: magics = false in the config makes them SyntaxErrors."""
    global _magics_on
    _magics_on = on == "1"
    return "ok"


def _magic_asked(line):
    """The magic line to run for a line typed at the top level, else None:
    "%name args" or "!command", or "x = !command", which is refused."""
    if not _magics_on:
        return None
    text = line.strip()
    if text[:1] in ("%", "!") and text[1:2] not in ("", "=") and not text.startswith("%%"):
        return text
    name, eq, rest = text.partition("=")
    if eq and name.strip().isidentifier() and rest.strip().startswith("!"):
        return text
    return None


_PM = "\xb1"


def _format_time(timespan, precision=3):
    """A time as IPython's _format_time writes it."""
    if timespan >= 60.0:
        parts = [("d", 60 * 60 * 24), ("h", 60 * 60), ("min", 60), ("s", 1)]
        out = []
        leftover = timespan
        for suffix, length in parts:
            value = int(leftover / length)
            if value > 0:
                leftover = leftover % length
                out.append("%s%s" % (value, suffix))
            if leftover < 1:
                break
        return " ".join(out)
    units = ["s", "ms", "\xb5s", "ns"]
    encoding = getattr(sys.stdout, "encoding", None)
    try:
        "\xb5".encode(encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        units[2] = "us"
    scaling = [1, 1e3, 1e6, 1e9]
    math = _stdlib("math")
    order = min(-int(math.floor(math.log10(timespan)) // 3), 3) if timespan > 0.0 else 3
    return "%.*g %s" % (precision, timespan * scaling[order], units[order])


class _UsageError(Exception):
    pass


def run_magic(line):
    """Runs one magic line, as IPython's %name or !command."""
    try:
        if line.startswith("!"):
            return _shell(line[1:].strip())
        if not line.startswith("%"):
            raise _UsageError("x = !command is not supported here; use subprocess.run(..., capture_output=True).stdout")
        name, _, arg = line[1:].partition(" ")
        magic = _MAGICS.get(name)
        if magic is None:
            raise _UsageError("Line magic function `%%%s` not found." % name)
        return magic(arg.strip())
    except _UsageError as err:
        print("UsageError: %s" % err, file=sys.stderr)


def _shell(command):
    if not command:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    _stdlib("subprocess").run(command, shell=True)


def _timeit(arg):
    """%timeit [-n N] [-r R] statement"""
    timeit = _stdlib("timeit")
    number = 0
    repeat = max(timeit.default_repeat, 7)  # as IPython
    stmt = arg
    while stmt.startswith(("-n ", "-r ")):
        option, _, rest = stmt.partition(" ")
        value, _, stmt = rest.strip().partition(" ")
        stmt = stmt.strip()
        if not value.isdigit() or int(value) < 1:
            raise _UsageError("%s takes a positive number" % option)
        if option == "-n":
            number = int(value)
        else:
            repeat = int(value)
    if not stmt:
        raise _UsageError("%timeit takes a statement: %timeit [-n N] [-r R] statement")
    timer = timeit.Timer(stmt, timer=_stdlib("time").perf_counter, globals=_main.__dict__)
    if number == 0:
        for index in range(10):
            number = 10 ** index
            if timer.timeit(number) >= 0.2:
                break
    runs = timer.repeat(repeat, number)
    best, worst = min(runs) / number, max(runs) / number
    average = sum(runs) / len(runs) / number
    stdev = (sum((r / number - average) ** 2 for r in runs) / len(runs)) ** 0.5
    if worst > 4 * best and best > 0 and worst > 1e-6:
        print("The slowest run took %0.2f times longer than the fastest. This could mean"
              " that an intermediate result is being cached." % (worst / best))
    print("{mean} {pm} {std} per loop (mean {pm} std. dev. of {runs} run{rs}, {loops:,} loop{ls} each)".format(
        pm=_PM, mean=_format_time(average), std=_format_time(stdev), runs=repeat,
        rs="" if repeat == 1 else "s", loops=number, ls="" if number == 1 else "s"))


def _time(arg):
    """%time statement: its CPU and wall time; an expression's value is
    shown as the prompt shows it."""
    if not arg:
        raise _UsageError("%time takes a statement or an expression")
    time, resource = _stdlib("time"), _stdlib("resource")
    try:
        code, is_expr = compile(arg, "<timed eval>", "eval"), True
    except SyntaxError:
        code, is_expr = compile(arg, "<timed exec>", "exec"), False
    usage = resource.getrusage(resource.RUSAGE_SELF)
    wall = time.time()
    try:
        value = eval(code, _main.__dict__)
    finally:
        wall = time.time() - wall
        end = resource.getrusage(resource.RUSAGE_SELF)
        user, system = end.ru_utime - usage.ru_utime, end.ru_stime - usage.ru_stime
        print("CPU times: user %s, sys: %s, total: %s" % (_format_time(user), _format_time(system), _format_time(user + system)))
        print("Wall time: %s" % _format_time(wall))
    if is_expr:
        sys.displayhook(value)


def _run(arg):
    """%run FILE [args]: FILE as __main__ with sys.argv = [FILE, args...],
    its names then in the session, as IPython's %run leaves them."""
    shlex = _stdlib("shlex")
    argv = shlex.split(arg)
    if not argv:
        raise _UsageError("%run takes a file: %run FILE [args]")
    path = _stdlib("os").path.expanduser(argv[0])
    saved = sys.argv
    sys.argv = [path] + argv[1:]
    try:
        names = _stdlib("runpy").run_path(path, run_name="__main__")
    except FileNotFoundError:
        raise _UsageError("File `%s` not found." % argv[0]) from None
    finally:
        sys.argv = saved
    _main.__dict__.update((k, v) for k, v in names.items() if not k.startswith("__"))


def _pip(arg):
    """%pip args: the session's own pip (its virtualenv's)."""
    sys.stdout.flush()
    _stdlib("subprocess").run([sys.executable, "-m", "pip"] + _stdlib("shlex").split(arg))
    print("Note: you may need to restart the kernel to use updated packages.")


def _cd(arg):
    os = _stdlib("os")
    target = os.path.expanduser(arg.strip("'\"") or "~")
    try:
        os.chdir(target)
    except OSError as err:
        raise _UsageError("[Errno %s] %s: %r" % (err.errno, err.strerror, target)) from None
    print(os.getcwd())


def _env(arg):
    os = _stdlib("os")
    if not arg:
        sys.displayhook(dict(os.environ))
        return
    if "=" in arg or " " in arg:
        sep = "=" if "=" in arg else " "
        name, value = (part.strip() for part in arg.split(sep, 1))
        os.environ[name] = value
        print("env: %s=%s" % (name, value))
        return
    if arg not in os.environ:
        raise _UsageError("Environment does not have key: %s" % arg)
    sys.displayhook(os.environ[arg])


def _who(arg):
    names = sorted(k for k, v in _main.__dict__.items()
                   if not k.startswith("_") and not isinstance(v, type(sys)) and k not in _START_NAMES)
    if not names:
        print("Interactive namespace is empty.")
        return
    print("".join(name + "\t " for name in names))  # as IPython spaces them


def _magic(arg):
    print("Line magics (only where Python would raise SyntaxError; magics = false in the config turns them off):")
    for name in sorted(_MAGICS):
        print("  %%%-8s %s" % (name, _MAGIC_HELP[name]))
    print("  !command  run a shell command")


_MAGICS = {"timeit": _timeit, "time": _time, "run": _run, "pip": _pip,
           "cd": _cd, "env": _env, "who": _who, "magic": _magic}
_MAGIC_HELP = {
    "timeit": "time a statement over many runs (-n loops, -r runs)",
    "time": "time one statement or expression",
    "run": "run a file as __main__, its names then in the session",
    "pip": "the session's pip",
    "cd": "change the working directory",
    "env": "show or set environment variables",
    "who": "the names you defined",
    "magic": "this list",
}

# The names __main__ has before any input: %who leaves them out.
_START_NAMES = frozenset(_main.__dict__)
