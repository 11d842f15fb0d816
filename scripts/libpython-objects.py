"""Prints the linker flags that link every object of a static libpython.

    python3 scripts/libpython-objects.py /path/to/libpython3.X.a

One global symbol of each object, named undefined (-Wl,-u,SYMBOL), makes
the linker take that object, so the executable holds all of libpython as
a shared libpython does: an extension module may need an object that
nothing in pyaichat calls (3.13's _interpreters needs interpconfig.o).
--whole-archive would do the same, but Go's link repeats the cgo flags,
and a whole archive given twice defines everything twice; -u is harmless
when repeated.
"""
import subprocess
import sys


def one_symbol_per_object(archive):
    out = subprocess.run(["nm", "-g", "--defined-only", archive], check=True,
                         capture_output=True, text=True).stdout
    syms, member, taken = [], None, False
    for line in out.splitlines():
        if line.endswith(":") and " " not in line:
            member, taken = line, False
            continue
        parts = line.split()
        if member and not taken and len(parts) == 3 and parts[1] in "TDBR":
            syms.append(parts[2])
            taken = True
    return syms


if __name__ == "__main__":
    print(" ".join("-Wl,-u," + s for s in one_symbol_per_object(sys.argv[1])))
