package pybridge

import (
	"os"
	"testing"
)

var testInterp *Interp

func TestMain(m *testing.M) {
	in, err := Start(Config{Argv: []string{""}})
	if err != nil {
		panic(err)
	}
	testInterp = in
	code := m.Run()
	in.Close(5e9)
	os.Exit(code)
}

func TestCallHelperRoundTrip(t *testing.T) {
	out, err := testInterp.Push("x = 6 * 7")
	if err != nil || out.More || out.Exit {
		t.Fatalf("Push: %+v %v", out, err)
	}
	out, err = testInterp.Push("if x:")
	if err != nil || !out.More {
		t.Fatalf("Push(if): %+v %v", out, err)
	}
	if err := testInterp.ResetBlock(); err != nil {
		t.Fatal(err)
	}
}
