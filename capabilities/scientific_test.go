package capabilities

// numpy arrays and pandas objects, against the real libraries (Debian's
// python3-numpy and python3-pandas, installed by `make deps`). Expected text
// is computed by the libraries in the session wherever it can be.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/pyaichat/pyaichat/pybridge"
)

// sciHelper reads the session as text and hides modules from sys.modules
// (as if the session had never imported them) for the import tests.
const sciHelper = `
import __main__, sys

def text(expr):
    return str(eval(expr, __main__.__dict__))

_hidden = {}

def hide(names):
    names = names.split(",")
    for k in [k for k in sys.modules if type(k) is str]:
        if any(k == n or k.startswith(n + ".") for n in names):
            _hidden[k] = sys.modules.pop(k)
    return "ok"

def restore(_):
    sys.modules.update(_hidden)
    _hidden.clear()
    return "ok"

def modules(_):
    return "\n".join(sorted(k for k in sys.modules if type(k) is str))
`

var sciLoad = sync.OnceValue(func() error { return interp.LoadModule("_sci_test", sciHelper) })

// needScientific imports numpy (as np) and pandas (as pd) into the session.
// Their absence fails the test: these summaries are promised, not optional.
func needScientific(t testing.TB) {
	t.Helper()
	if err := sciLoad(); err != nil {
		t.Fatal(err)
	}
	if _, err := interp.Call(context.Background(), pybridge.CallUserCode, "_caps_test", "run", "import numpy as np, pandas as pd"); err != nil {
		t.Fatalf("numpy and pandas are missing from the embedded Python; run `make deps` (it installs python3-numpy and python3-pandas): %v", err)
	}
}

// pyText is str(eval(expr)) in the session.
func pyText(t testing.TB, expr string) string {
	t.Helper()
	return mustCall(t, "_sci_test", "text", expr, true)
}

func sciCall(t testing.TB, fn, arg string) string {
	t.Helper()
	return mustCall(t, "_sci_test", fn, arg, false)
}

// reprOf is get_repr(expr) checked to be within the repr cap, with the
// truncated flag it is expected to carry.
func reprOf(t testing.TB, cap, expr string, truncated bool) string {
	t.Helper()
	m := mustOK(t, cap, expr)
	r := str(t, m, "repr")
	if len(r) > 4096+16 {
		t.Errorf("%s(%s): %d characters, over the cap", cap, expr, len(r))
	}
	if m["truncated"] != truncated {
		t.Errorf("%s(%s): truncated=%v, want %v:\n%s", cap, expr, m["truncated"], truncated, r)
	}
	return r
}

func previews(t testing.TB) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, g := range mustOK(t, "list_globals", "")["globals"].([]any) {
		e := g.(map[string]any)
		got[e["name"].(string)] = e["preview"].(string)
	}
	return got
}

func TestNumpySummaries(t *testing.T) {
	needScientific(t)
	setup(t, `
sn_small = np.arange(12).reshape(3, 4)
sn_big = np.arange(10**7, dtype=np.float64)
sn_obj = np.array([1, "two", None, [3, 4]], dtype=object)
sn_0d = np.array(2.5)
sn_struct = np.array([(1, 2.5, b"ab"), (3, 4.5, b"cd")], dtype=[("i", "i4"), ("f", "f8"), ("s", "S2")])
sn_masked = np.ma.masked_array([1, 2, 3], mask=[False, True, False])
sn_text = np.array(["x" * 10**5, "y"])
`)
	defer setup(t, "del sn_big")
	// These arrays are below numpy's summarising threshold or far above it,
	// so numpy's own rendering with its default options is the expectation.
	for _, c := range []struct {
		expr      string
		truncated bool
	}{
		{"sn_small", false},
		{"sn_big", true},
		{"sn_obj", false},
		{"sn_0d", false},
		{"sn_struct", false},
	} {
		want := pyText(t, fmt.Sprintf(`"array(%%s, shape=%%s, dtype=%%s)" %% (np.array2string(%[1]s, separator=", ", prefix="array("), %[1]s.shape, %[1]s.dtype)`, c.expr))
		if got := reprOf(t, "get_repr", c.expr, c.truncated); got != want {
			t.Errorf("get_repr(%s):\n%s\nwant\n%s", c.expr, got, want)
		}
	}
	// numpy's repr and the summary agree on the values.
	for _, expr := range []string{"sn_small", "sn_big"} {
		own := strings.TrimSuffix(value(t, expr), ")")
		if got := reprOf(t, "get_repr", expr, expr == "sn_big"); !strings.HasPrefix(got, own) {
			t.Errorf("get_repr(%s) = %q does not begin with numpy's %q", expr, got, own)
		}
	}
	r := reprOf(t, "get_repr", "sn_masked", false)
	contains(t, r, value(t, "sn_masked"))
	contains(t, r, "shape=(3,)")
	// A long string element is cut, not printed whole.
	r = reprOf(t, "get_repr", "sn_text", true)
	contains(t, r, "shape=(2,), dtype="+pyText(t, "sn_text.dtype"))
	if strings.Count(r, "x") > 100 {
		t.Errorf("a 10**5-character element printed whole: %d x's", strings.Count(r, "x"))
	}

	// eval_expr gives the same summaries for computed arrays.
	m := mustOK(t, "eval_expr", "sn_big[::2] * 2")
	if m["type"] != "numpy.ndarray" || m["truncated"] != true {
		t.Errorf("eval_expr: %v", m)
	}
	contains(t, str(t, m, "repr"), "shape=(5000000,), dtype=float64)")
	contains(t, str(t, m, "repr"), strings.TrimSuffix(value(t, "sn_big[::2] * 2"), ")"))

	// list_globals runs no numpy code: shape and dtype come from the C struct.
	got := previews(t)
	for _, name := range []string{"sn_small", "sn_big", "sn_obj", "sn_0d", "sn_struct"} {
		want := pyText(t, fmt.Sprintf(`"ndarray, shape %%s, %%s" %% (%[1]s.shape, %[1]s.dtype)`, name))
		if got[name] != want {
			t.Errorf("list_globals %s: %q, want %q", name, got[name], want)
		}
	}
	if got["sn_masked"] != "MaskedArray, shape (3,), int64" {
		t.Errorf("list_globals sn_masked: %q", got["sn_masked"])
	}

	tm := mustOK(t, "get_type", "sn_small")
	if tm["type"] != "numpy.ndarray" || tm["module"] != "numpy" {
		t.Errorf("get_type: %v", tm)
	}
	if names := dirNames(t, "sn_small"); names["shape"] != "attribute" || names["reshape"] != "method" {
		t.Errorf("get_dir: shape=%q reshape=%q", names["shape"], names["reshape"])
	}
	contains(t, str(t, mustOK(t, "get_doc", "sn_small"), "doc"), "ndarray")
}

// Arrays whose plain repr would print millions of values, or take minutes:
// the summary prints a bounded number of values and dimensions
// (BenchmarkHugeArraySummary times it).
func TestNumpySummaryIsBounded(t *testing.T) {
	needScientific(t)
	setup(t, `
sb_12d = np.broadcast_to(np.float64(1), (10,) * 12)
sb_8d = np.zeros((6,) * 8)
sb_sub = np.zeros(2, dtype=[("a", "f8", (1000, 1000))])
sb_objs = np.array([list(range(10**6)), "x" * 10**6, 3], dtype=object)
sb_options = np.get_printoptions()
np.set_printoptions(threshold=10**9)  # numpy's own repr would print every value
`)
	defer setup(t, "np.set_printoptions(**sb_options)\ndel sb_8d, sb_sub, sb_objs")
	for _, c := range []struct{ expr, want string }{
		{"sb_12d", "(only the sub-array [0, 0, 0, 0, 0, 0, 0, 0] is shown)"},
		{"sb_8d", "(only the sub-array [0, 0, 0, 0] is shown)"},
		{"sb_sub", "<values not shown: 1000000 per element>"},
		{"sb_objs", "list([0, 1, 2, 3"},
	} {
		r := reprOf(t, "get_repr", c.expr, true)
		contains(t, r, "shape="+pyText(t, c.expr+".shape"))
		contains(t, r, c.want)
		if len(r) > 1000 {
			t.Errorf("get_repr(%s): %d characters:\n%s", c.expr, len(r), r)
		}
	}
}

func TestPandasSummaries(t *testing.T) {
	needScientific(t)
	setup(t, `
sp_df = pd.DataFrame({"x": np.arange(10**6), "y": np.arange(10**6) * 0.5, "a, b": ["r%d" % i for i in range(10**6)]})
sp_wide = pd.DataFrame(np.arange(3 * 300).reshape(3, 300))
sp_mi = pd.DataFrame(np.arange(12).reshape(4, 3), index=pd.MultiIndex.from_product([["a", "b"], [1, 2]], names=["k", "n"]), columns=pd.MultiIndex.from_tuples([("x", "p"), ("x", "q"), ("y", "p")]))
sp_s = pd.Series(np.arange(10**6) * 2, name="doubled")
sp_idx = pd.Index(["id%d" % i for i in range(10**6)], name="ids")
sp_range = pd.RangeIndex(10**6)
sp_ts = pd.Series(np.arange(10**5), index=pd.date_range("2024-01-01", periods=10**5, freq="min"))
`)
	defer setup(t, "del sp_df, sp_s, sp_idx, sp_ts")

	// What pandas itself says about each frame, computed in the session.
	columns := func(df string) string {
		return pyText(t, fmt.Sprintf(`", ".join("%%r %%s" %% (c, d) for c, d in list(%s.dtypes.items())[:50])`, df))
	}

	r := reprOf(t, "get_repr", "sp_df", true)
	for _, want := range []string{
		"DataFrame, " + pyText(t, `"%d rows x %d columns" % sp_df.shape`),
		"columns: " + columns("sp_df") + "\n",
		"index: " + value(t, "sp_df.index") + "\n",
		"head (first 5 rows):\n" + pyText(t, "sp_df.head(5).to_string(max_colwidth=40)"),
	} {
		contains(t, r, want)
	}

	r = reprOf(t, "get_repr", "sp_wide", true)
	contains(t, r, "DataFrame, 3 rows x 300 columns\ncolumns: "+columns("sp_wide")+", ... (250 more)\n")
	contains(t, r, "head (first 3 rows, first 10 columns):\n"+pyText(t, "sp_wide.iloc[:, :10].to_string()"))

	r = reprOf(t, "get_repr", "sp_mi", false)
	contains(t, r, "columns: ('x', 'p') int64, ('x', 'q') int64, ('y', 'p') int64\n")
	contains(t, r, "index: MultiIndex, 2 levels, names ['k', 'n']\n")
	contains(t, r, "rows:\n"+pyText(t, "sp_mi.to_string()"))

	r = reprOf(t, "get_repr", "sp_s", true)
	contains(t, r, "Series 'doubled', length 1000000, dtype int64\n")
	contains(t, r, "head (first 10):\n"+pyText(t, "sp_s.head(10).to_frame().to_string(header=False)"))
	r = reprOf(t, "get_repr", "sp_ts", true)
	contains(t, r, "index: DatetimeIndex, dtype datetime64[ns]\n")
	contains(t, r, pyText(t, "sp_ts.head(10).to_frame().to_string(header=False)"))

	r = reprOf(t, "get_repr", "sp_idx", true)
	if want := "Index, length 1000000, first 10:\n" + value(t, "sp_idx[:10]"); r != want {
		t.Errorf("index:\n%s\nwant\n%s", r, want)
	}
	if r = reprOf(t, "get_repr", "sp_range", false); r != value(t, "sp_range") {
		t.Errorf("range index: %q", r)
	}

	// Computed objects, through eval_expr.
	m := mustOK(t, "eval_expr", "sp_df[sp_df.x % 2 == 0]")
	if m["type"] != "pandas.core.frame.DataFrame" || m["truncated"] != true {
		t.Errorf("eval_expr: %v", m)
	}
	contains(t, str(t, m, "repr"), "DataFrame, 500000 rows x 3 columns\n")
	m = mustOK(t, "eval_expr", "sp_df.y")
	contains(t, str(t, m, "repr"), "Series 'y', length 1000000, dtype float64\n")
	m = mustOK(t, "eval_expr", "sp_df[['x', 'y']].describe()")
	contains(t, str(t, m, "repr"), pyText(t, "sp_df[['x', 'y']].describe().head(5).to_string(max_colwidth=40)"))

	got := previews(t)
	for name, want := range map[string]string{
		"sp_df":    "DataFrame, 1000000 rows x 3 columns",
		"sp_wide":  "DataFrame, 3 rows x 300 columns",
		"sp_mi":    "DataFrame, 4 rows x 3 columns",
		"sp_s":     "Series 'doubled', length 1000000, int64",
		"sp_ts":    "Series, length 100000, int64",
		"sp_idx":   "Index, length 1000000, object",
		"sp_range": "RangeIndex, length 1000000",
	} {
		if got[name] != want {
			t.Errorf("list_globals %s: %q, want %q", name, got[name], want)
		}
	}

	tm := mustOK(t, "get_type", "sp_df")
	if tm["type"] != "pandas.core.frame.DataFrame" || tm["module"] != "pandas.core.frame" {
		t.Errorf("get_type: %v", tm)
	}
	names := dirNames(t, "sp_df")
	if names["head"] != "method" || names["shape"] != "property" {
		t.Errorf("get_dir: head=%q shape=%q", names["head"], names["shape"])
	}
	// pandas adds column names to dir(); the public names come first.
	if k := dirNames(t, "sp_df[['x']].rename(columns={'x': 'aaa'})")["aaa"]; k != "attribute" {
		t.Errorf("get_dir: column aaa listed as %q", k)
	}
	contains(t, str(t, mustOK(t, "get_doc", "sp_df"), "doc"), "Two-dimensional")
	contains(t, str(t, mustOK(t, "get_doc", "sp_s.head"), "signature"), "(n")
}

// Column names and cells that could break the layout or drive a terminal.
func TestPandasOddNames(t *testing.T) {
	needScientific(t)
	setup(t, `
sp_odd = pd.DataFrame({"nl\nname": [1], "\x1b[31mred": [2], 7: [3], ("t", 1): [4], None: [5], "long" * 30: ["v" * 1000]})
sp_dup = pd.DataFrame([[1, 2]], columns=["a", "a"])
sp_empty = pd.DataFrame(columns=["a", "b"])
sp_nocols = pd.DataFrame(index=range(3))
`)
	r := reprOf(t, "get_repr", "sp_odd", false)
	if strings.Contains(r, "\x1b") || !strings.Contains(r, `\x1b[31mred`) {
		t.Errorf("control characters not escaped: %q", r)
	}
	contains(t, r, `columns: 'nl\nname' int64, '\x1b[31mred' int64, 7 int64, ('t', 1) int64, None int64, 'longlong`)
	if strings.Count(r, "v") > 100 {
		t.Errorf("a 1000-character cell printed whole")
	}
	contains(t, reprOf(t, "get_repr", "sp_dup", false), "columns: 'a' int64, 'a' int64\n")
	r = reprOf(t, "get_repr", "sp_empty", false)
	if want := "DataFrame, 0 rows x 2 columns\ncolumns: 'a' object, 'b' object\nindex: " + pyText(t, `"%s, dtype %s" % (type(sp_empty.index).__name__, sp_empty.index.dtype)`); r != want {
		t.Errorf("empty frame: %q, want %q", r, want)
	}
	contains(t, reprOf(t, "get_repr", "sp_nocols", false), "DataFrame, 3 rows x 0 columns\ncolumns: (none)\n")
}

// DataFrame.to_string imports pandas.io.formats.string the first time it
// runs, and the isolated copy refuses imports: the summary must not need it.
func TestDataFrameSummaryNeedsNoLazyImport(t *testing.T) {
	needScientific(t)
	setup(t, `sl_df = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})`)
	sciCall(t, "hide", "pandas.io.formats.string")
	defer sciCall(t, "restore", "")
	r := reprOf(t, "get_repr", "sl_df", false)
	contains(t, r, "rows:\n   a  b\n0  1  x\n1  2  y")
	if strings.Contains(sciCall(t, "modules", ""), "pandas.io.formats.string") {
		t.Errorf("the module was imported into the session")
	}
}

// No capability imports a module: with numpy and pandas absent from
// sys.modules (as in a session that never imported them) every capability
// leaves sys.modules as it was, and a numpy-only session gains no pandas.
func TestSummariesImportNothing(t *testing.T) {
	needScientific(t)
	setup(t, `
si_list = [1, [2, 3]]
class SiThing:
    def __repr__(self):
        return "SiThing()"
si_obj = SiThing()
si_arr = np.arange(6).reshape(2, 3)
`)
	sciCall(t, "hide", "numpy,pandas")
	defer sciCall(t, "restore", "")
	before := sciCall(t, "modules", "")
	for _, c := range [][2]string{
		{"list_globals", ""}, {"get_last_exception", ""},
		{"get_repr", "si_list"}, {"get_repr", "si_obj"}, {"get_repr", "[si_obj, si_list]"},
		{"eval_expr", "si_list[1]"}, {"get_type", "si_obj"}, {"get_dir", "si_obj"}, {"get_doc", "si_obj"},
	} {
		_ = mustOK(t, c[0], c[1])
	}
	if after := sciCall(t, "modules", ""); after != before {
		t.Errorf("sys.modules changed: %s", diffLines(before, after))
	}

	// numpy in use, pandas not: the array is summarised, pandas stays out.
	sciCall(t, "restore", "")
	sciCall(t, "hide", "pandas")
	before = sciCall(t, "modules", "")
	contains(t, reprOf(t, "get_repr", "si_arr", false), "shape=(2, 3), dtype=int64)")
	if p := previews(t)["si_arr"]; p != "ndarray, shape (2, 3), int64" {
		t.Errorf("preview: %q", p)
	}
	_ = mustOK(t, "eval_expr", "si_arr.sum()")
	if after := sciCall(t, "modules", ""); after != before {
		t.Errorf("sys.modules changed: %s", diffLines(before, after))
	}
}

// The session's arrays and frames are not changed by being looked at, not
// even pandas' caches (list_globals and get_type answer in the session).
func TestScientificObjectsUnchanged(t *testing.T) {
	needScientific(t)
	setup(t, `
su_arr = np.arange(20.0).reshape(4, 5)
su_arr_copy = su_arr.copy()
su_df = pd.DataFrame({"a": np.arange(1000), "b": ["s%d" % i for i in range(1000)]})
su_df_copy = su_df.copy(deep=True)
su_s = su_df["a"] * 1
def su_state():
    return repr((sorted(vars(su_df)), sorted(su_df._item_cache), sorted(su_df.index._cache), sorted(su_df.columns._cache),
                 sorted(vars(su_s)), sorted(su_s.index._cache), su_arr.flags.writeable, su_arr.flags.owndata))
`)
	before := value(t, "su_state()")
	for _, c := range [][2]string{
		{"list_globals", ""},
		{"get_type", "su_df"}, {"get_type", "su_s"}, {"get_type", "su_arr"},
		{"get_repr", "su_df"}, {"get_repr", "su_s"}, {"get_repr", "su_arr"},
		{"eval_expr", "su_df.b"}, {"eval_expr", "su_df.iloc[3]"}, {"eval_expr", "su_arr.sort()"},
		{"eval_expr", "su_df.sort_values('b', inplace=True)"}, {"eval_expr", "su_df.__setitem__('c', 1)"},
		{"get_dir", "su_df"}, {"get_doc", "su_df"},
	} {
		_ = mustOK(t, c[0], c[1])
	}
	if after := value(t, "su_state()"); after != before {
		t.Errorf("pandas state changed:\n%s\nwas\n%s", after, before)
	}
	if got := value(t, "(su_df.equals(su_df_copy), list(su_df.columns), bool((su_arr == su_arr_copy).all()))"); got != "(True, ['a', 'b'], True)" {
		t.Errorf("values changed: %s", got)
	}
}

func dirNames(t testing.TB, expr string) map[string]string {
	t.Helper()
	names := map[string]string{}
	for _, n := range mustOK(t, "get_dir", expr)["names"].([]any) {
		e := n.(map[string]any)
		names[e["name"].(string)] = e["kind"].(string)
	}
	return names
}

func diffLines(before, after string) string {
	had := map[string]bool{}
	for _, l := range strings.Split(before, "\n") {
		had[l] = true
	}
	var added []string
	for _, l := range strings.Split(after, "\n") {
		if !had[l] {
			added = append(added, l)
		}
	}
	return fmt.Sprintf("added %v", added)
}
