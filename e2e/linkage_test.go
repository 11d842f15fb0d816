package e2e

import (
	"debug/elf"
	"strings"
	"testing"
)

// However libpython is linked (statically where the interpreter has a
// static library, else shared), extension modules loaded from files find
// CPython's symbols, sys.executable is an interpreter of the same version,
// and --version says how the binary was linked, as its ELF header does.
func TestLinkage(t *testing.T) {
	t.Parallel()
	f, err := elf.Open(binary)
	if err != nil {
		t.Fatal(err)
	}
	libs, err := f.ImportedLibraries()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	shared := false
	for _, l := range libs {
		shared = shared || strings.HasPrefix(l, "libpython")
	}
	r := runWith(t, t.TempDir(), binary, []string{"--version"}, "")
	want := "libpython: linked into pyaichat (static)"
	if shared {
		want = "(shared library)"
	}
	if !strings.Contains(r.stdout, want) {
		t.Errorf("binary needs %v, yet --version says:\n%s\nwant %q in it", libs, r.stdout, want)
	}

	// Each module is used, not only imported: a missing symbol shows at
	// import, a wrong one (two copies of CPython's types) at first use.
	const code = `
import importlib, subprocess, sys
loaded = []
for name, use in [
    ("_ctypes", "__import__('ctypes').sizeof(__import__('ctypes').c_int) == 4"),
    ("_decimal", "str(__import__('decimal').Decimal('1.10') + 2) == '3.10'"),
    ("_json", "__import__('json').loads('[1, {\"a\": 2}]') == [1, {'a': 2}]"),
    ("_sqlite3", "__import__('sqlite3').connect(':memory:').execute('select 6*7').fetchone() == (42,)"),
    ("_ssl", "__import__('ssl').create_default_context().check_hostname"),
    ("_struct", "__import__('struct').pack('<h', 1) == b'\\x01\\x00'"),
    ("array", "__import__('array').array('i', [1, 2]).tolist() == [1, 2]"),
    ("math", "__import__('math').isqrt(10**6) == 1000"),
]:
    mod = importlib.import_module(name)
    if getattr(mod, "__file__", "").endswith(".so"):
        assert eval(use), name
        loaded.append(name)
print("extension modules:", len(loaded))
out = subprocess.run([sys.executable, "-c", "import sys; print(sys.version)"], capture_output=True, text=True).stdout
print("same interpreter:", out.strip() == sys.version)
`
	r = runWith(t, t.TempDir(), binary, []string{"-q", "-c", code}, "")
	if r.status != 0 || !strings.Contains(r.stdout, "same interpreter: True") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "extension modules: 0") {
		t.Errorf("no module of the list is an extension module file in this Python, so nothing was checked:\n%s", r.stdout)
	}
}
