"""Pure-Python workloads for BenchmarkSpeedVersusPython (e2e/speed_test.go).

Run as a FILE, `python3 workloads.py NAME` or `pyaichat workloads.py NAME`;
prints the best of three timings of the named workload in seconds, measured
inside the interpreter, so start-up is not part of it. Each takes at least
100 ms on the machines CI uses.
"""
import sys
import time


def loops():
    s = 0
    for i in range(2_000_000):
        s += i * i % 7
        if s > 10_000:
            s -= 10_000
    return s


def _add(a, b=1, *, c=2):
    return a + b + c


def calls():
    f = _add
    s = 0
    for i in range(800_000):
        s = f(i, 2, c=s & 3)
    return s


def dicts():
    d = {}
    for i in range(150_000):
        d["k%d" % i] = i
    s = 0
    for i in range(0, 150_000, 3):
        s += d["k%d" % i]
        del d["k%d" % (i + 1)]
    return s + len(d) + len(sorted(d.items(), key=lambda kv: kv[1] % 977))


def strings():
    words = ["alpha", "beta", "gamma", "delta", "epsilon"] * 40
    n = 0
    for i in range(12_000):
        line = " ".join(words)
        parts = line.upper().replace("A", "a").split()
        n += len(f"{i}:{parts[i % len(parts)]}:{line[i % 50:i % 50 + 10]!r}")
        n += line.count("ta") + line.find("epsilon", i % 100)
    return n


class _Point:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x = x
        self.y = y

    def moved(self, dx):
        return _Point(self.x + dx, self.y)

    @property
    def norm1(self):
        return abs(self.x) + abs(self.y)


class _Named:
    def __init__(self, name):
        self.name = name
        self.count = 0

    def bump(self):
        self.count += 1
        return self


def classes():
    s = 0
    p = _Point(0, 0)
    named = _Named("n")
    for i in range(400_000):
        p = p.moved(1)
        s += p.norm1 & 7
        named.bump()
    return s + named.count


def comprehensions():
    s = 0
    for i in range(60):
        squares = [x * x for x in range(20_000) if x % 3]
        table = {x: str(x) for x in range(5_000)}
        odd = {x for x in squares if x & 1}
        s += sum(x % 11 for x in squares) + len(table) + len(odd)
    return s


def exceptions():
    s = 0
    for i in range(400_000):
        try:
            if i % 2:
                raise KeyError(i)
            s += {}[i]
        except KeyError as e:
            s += 1 if e.args[0] is not None else 0
        finally:
            s += 1
    return s


WORKLOADS = {f.__name__: f for f in (loops, calls, dicts, strings, classes, comprehensions, exceptions)}

if __name__ == "__main__":
    work = WORKLOADS[sys.argv[1]]
    best = None
    for _ in range(3):
        t0 = time.perf_counter()
        work()
        t = time.perf_counter() - t0
        best = t if best is None else min(best, t)
    print("seconds", best)
