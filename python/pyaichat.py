"""pyaichat: make your own functions capabilities the assistant can call.

    import pyaichat

    @pyaichat.capability
    def table_sizes(schema: str = "public") -> dict:
        \"\"\"Row counts of the tables in schema, from the session's engine.\"\"\"
        ...

A module that does this, named in pyaichat's config.toml
(capability_modules = ["mytools"]) or registered under the
"pyaichat.capabilities" entry point of an installed package, is imported
once when pyaichat starts; each decorated function becomes a tool. Its JSON
schema comes from its signature (str, int, float, bool, list, dict,
Optional[...] and defaults), its description from its docstring's first
paragraph. It runs as the seven built-in capabilities do: in a copy of the
session, under their deadline, output bound and refusals (files,
processes, network, imports not already done).

This module exists only inside pyaichat.
"""

# The decorated functions, in the order they were decorated, with the
# name each is offered under: pyaichat reads them after each import.
_registered = []


def capability(fn=None, *, name=None):
    """Make fn a capability, offered to the model as name (default: the
    function's own name). Use as @capability or @capability(name="...")."""
    if fn is None:
        return lambda f: capability(f, name=name)
    if type(fn).__name__ != "function" or not hasattr(fn, "__code__"):
        raise TypeError(
            "@pyaichat.capability decorates a function defined with def, not a %s"
            " (use @pyaichat.capability or @pyaichat.capability(name=...))" % type(fn).__name__
        )
    if name is not None and type(name) is not str:
        raise TypeError("@pyaichat.capability(name=...) takes a str, not a %s" % type(name).__name__)
    _registered.append((fn, name or fn.__name__))
    return fn
