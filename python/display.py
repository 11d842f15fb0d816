
# ---- Images: figures and rich values, drawn in the terminal ----
#
# matplotlib's figures (plt.show(), a Figure at the prompt) and values with
# IPython's _repr_png_ / _repr_svg_ / _repr_html_ are drawn where the user
# is, through _pyaichat.draw_image (Go writes kitty's, iTerm2's or sixel's
# escape sequences, whichever the terminal answered it draws), or saved as
# a file whose path one dim line gives. The automatic context records
# what was shown, not the pixels.

import _thread  # loaded with the interpreter: no new module

_figure_dir = ""
_saved_count = 0
_shown = []  # what the input under way showed, for _Recent


def set_figure_dir(path):
    """For pybridge: where figures are saved when they cannot be drawn."""
    global _figure_dir
    _figure_dir = path
    return "ok"


# The terminal is asked what it draws on the interpreter's main thread
# only: a figure shown by another thread while the prompt is up would ask
# while the prompt reads the terminal, which would take the answers as
# keys. Such a figure is saved until the main thread has asked.
_MAIN_THREAD = _thread.get_ident()
_graphics_asked = False


def _graphics():
    """(protocol or None, cell width, cell height, columns, rows)."""
    global _graphics_asked
    if not _graphics_asked and _thread.get_ident() != _MAIN_THREAD:
        return None, 10, 20, 80, 24
    _graphics_asked = True
    fields = _pyaichat.graphics().split()
    if len(fields) != 5 or fields[0] == "-":
        return None, 10, 20, 80, 24
    return (fields[0],) + tuple(int(f) for f in fields[1:])


def _save(data, suffix):
    """data written to a new file in the figure directory: its path."""
    global _figure_dir, _saved_count
    os = _stdlib("os")
    if not _figure_dir:
        _figure_dir = _stdlib("tempfile").mkdtemp(prefix="pyaichat-figures-")
    os.makedirs(_figure_dir, mode=0o700, exist_ok=True)
    while True:
        _saved_count += 1
        path = os.path.join(_figure_dir, "figure-%d%s" % (_saved_count, suffix))
        try:
            with open(path, "xb") as f:
                f.write(data)
            return path
        except FileExistsError:
            continue


def _saved_note(path):
    _flush()
    dim = _terminal and sys.stdout.isatty()
    sys.stdout.write(("\x1b[2m%s\x1b[0m\n" if dim else "%s\n") % ("saved " + path))
    sys.stdout.flush()


def _show_png(png, what):
    """Draw a PNG, or save it where nothing can draw it."""
    if _graphics()[0] is not None:
        _flush()
        if _pyaichat.draw_image(png) is None:
            if _tail_raw is not None:
                _tail_raw.tail = b""  # the image ended the line
            _shown.append(what)
            return
    path = _save(png, ".png")
    _saved_note(path)
    _shown.append("%s, saved as %s" % (what, path))


def _figure_png(fig):
    """fig as PNG, made smaller where the window is too small for it."""
    protocol, cell_w, cell_h, cols, rows = _graphics()
    dpi = fig.dpi
    width, height = fig.get_size_inches()
    if protocol is not None:
        room_w, room_h = cols * cell_w, max(rows - 2, 4) * cell_h
        scale = min(1.0, room_w / (width * dpi), room_h / (height * dpi))
        dpi = max(dpi * scale, 10)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def _plural(n, word, words=None):
    return "%d %s" % (n, word if n == 1 else (words or word + "s"))


def describe_figure(fig):
    """What a figure holds, read from its artists: "1 axes, line plot,
    3 points". Only matplotlib's own objects are asked."""
    parts = ["%d axes" % len(fig.axes)]
    for ax in fig.axes:
        points = sum(len(line.get_xydata()) for line in ax.lines)
        if ax.lines:
            parts.append("line plot" if len(ax.lines) == 1 else _plural(len(ax.lines), "lines"))
        scattered = sum(len(c.get_offsets()) for c in ax.collections if hasattr(c, "get_offsets"))
        if scattered:
            parts.append("scatter")
            points += scattered
        bars = sum(1 for p in ax.patches if type(p).__name__ == "Rectangle")
        if bars:
            parts.append(_plural(bars, "bar"))
        if ax.images:
            parts.append(_plural(len(ax.images), "image"))
        if points:
            parts.append(_plural(points, "point"))
        title = ax.get_title()
        if title:
            parts.append("title %r" % title[:60])
    return ", ".join(parts)


def show_figure(fig):
    """Draw a matplotlib figure (plt.show(), a Figure at the prompt)."""
    _show_png(_figure_png(fig), "figure shown: " + describe_figure(fig))


def show_rich(value):
    """Called by _pyaichat.rich_displayhook for a value of a rich type:
    True once it is shown, False to show its repr instead (its _repr_*_
    gave nothing, or raised)."""
    try:
        return _show_rich(value)
    except Exception:
        return False


def _show_rich(value):
    kind = _type_name(type(value))
    for cls in _T_MRO(type(value)):
        if _T_QUALNAME(cls) == "Figure" and _T_MODULE(cls) == "matplotlib.figure":
            show_figure(value)
            return True
    png = _repr(value, "_repr_png_")
    if isinstance(png, bytes) and png:
        _show_png(png, "image shown: " + kind)
        return True
    svg = _repr(value, "_repr_svg_")
    if isinstance(svg, str) and svg:
        try:
            cairosvg = _stdlib("cairosvg")
        except ImportError:
            cairosvg = None
        if cairosvg is not None:
            _show_png(cairosvg.svg2png(bytestring=svg.encode()), "image shown: " + kind)
        else:
            path = _save(svg.encode(), ".svg")
            _saved_note(path)
            _shown.append("SVG of %s saved as %s" % (kind, path))
        return True
    html = _repr(value, "_repr_html_")
    if isinstance(html, str) and html:
        path = _save(html.encode(), ".html")
        _saved_note(path)
        _shown.append("HTML of %s saved as %s" % (kind, path))
        return True
    return False


def _repr(value, name):
    """value's name() as IPython's display protocol calls it, or None."""
    method = getattr(value, name, None)
    if method is None:
        return None
    data = method()
    if isinstance(data, tuple):  # (data, metadata)
        data = data[0]
    return data


def taken_shown():
    """What the input that just ended showed, for _Recent."""
    shown = list(_shown)
    del _shown[:]
    return shown


# ---- pyaichat's matplotlib backend ----

_pending_figures = []  # changed in interactive mode during the input


def draw_pending():
    """After an input: in interactive mode (plt.ion()), draw the figures
    it changed that are still open, then close them, as Jupyter's inline
    backend does after a cell."""
    if not _pending_figures:
        return
    figures = list(_pending_figures)
    del _pending_figures[:]
    mpl = sys.modules.get("matplotlib")
    helpers = sys.modules.get("matplotlib._pylab_helpers")
    if mpl is None or helpers is None or not mpl.is_interactive():
        return
    open_figures = [m.canvas.figure for m in helpers.Gcf.get_all_fig_managers()]
    for fig in figures:
        if any(fig is f for f in open_figures):
            try:
                show_figure(fig)
            except Exception as err:
                sys.stderr.write("pyaichat: the figure could not be drawn: %s\n" % err)
            helpers.Gcf.destroy_fig(fig)


def matplotlib_loaded():
    """Called from C once matplotlib's rcParams exist (still inside its
    import): pyaichat's backend becomes the one pyplot uses, unless the
    user chose one: MPLBACKEND, or a matplotlibrc of their own that names
    one (Debian's /etc/matplotlibrc is not theirs). matplotlib.use()
    later wins, as it would over any default."""
    os = _stdlib("os")
    mpl = sys.modules.get("matplotlib")
    if mpl is None or os.environ.get("MPLBACKEND"):
        return
    rc = mpl.rcParams
    chosen = dict.get(rc, "backend")
    try:
        fname = mpl.matplotlib_fname()
    except Exception:
        fname = ""
    own = os.path.dirname(mpl.__file__)
    system = fname.startswith(("/etc/", "/usr/share/matplotlib/", own + os.sep))
    if not system and chosen is not getattr(mpl.rcsetup, "_auto_backend_sentinel", None):
        return
    sys.modules[_BACKEND] = _backend_module()
    dict.__setitem__(rc, "backend", "module://" + _BACKEND)


_BACKEND = "_pyaichat_mpl"


def _backend_module():
    """The backend, a module that builds its classes at first use: they
    derive from matplotlib's, which cannot be imported while matplotlib
    itself is (matplotlib_loaded runs then)."""
    module = type(sys)(_BACKEND, "pyaichat's matplotlib backend: figures drawn in the terminal.")

    def build(name):
        backend_bases = __import__("matplotlib.backend_bases", fromlist=["_"])
        backend_agg = __import__("matplotlib.backends.backend_agg", fromlist=["_"])
        Gcf = __import__("matplotlib._pylab_helpers", fromlist=["_"]).Gcf

        class FigureManager(backend_bases.FigureManagerBase):
            def show(self):
                show_figure(self.canvas.figure)

        class FigureCanvas(backend_agg.FigureCanvasAgg):
            manager_class = FigureManager

            def draw_idle(self, *args, **kwargs):
                # In interactive mode (plt.ion()) pyplot asks for this
                # after each change: the figure is drawn once the input
                # ends (draw_pending), as Jupyter's inline backend does.
                if self.figure not in _pending_figures:
                    _pending_figures.append(self.figure)

        def show(*args, **kwargs):
            """Draw every open figure, then close them, as Jupyter's inline
            backend does: the next plot starts a new figure."""
            for manager in Gcf.get_all_fig_managers():
                show_figure(manager.canvas.figure)
            Gcf.destroy_all()

        def draw_if_interactive():
            pass

        module.__dict__.update(FigureCanvas=FigureCanvas, FigureManager=FigureManager, show=show,
                               draw_if_interactive=draw_if_interactive)
        del module.__dict__["__getattr__"]
        return module.__dict__[name]

    def __getattr__(name):
        if name in ("FigureCanvas", "FigureManager", "show", "draw_if_interactive"):
            return build(name)
        raise AttributeError("module %r has no attribute %r" % (_BACKEND, name))

    module.__getattr__ = __getattr__
    return module


sys.displayhook = _pyaichat.rich_displayhook
