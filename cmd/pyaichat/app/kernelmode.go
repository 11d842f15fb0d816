package app

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/pyaichat/pyaichat/agent"
	"github.com/pyaichat/pyaichat/cmd/pyaichat/config"
	"github.com/pyaichat/pyaichat/cmd/pyaichat/sessionlog"
	"github.com/pyaichat/pyaichat/cmd/pyaichat/sessionlog/live"
	"github.com/pyaichat/pyaichat/pybridge/kernel"
	"github.com/pyaichat/pyaichat/repl"
	"github.com/pyaichat/pyaichat/repl/interp"
	"github.com/pyaichat/pyaichat/repl/term"
)

// kernelStart bounds how long a kernel may take to start and answer:
// a hang, not a measure (an ipykernel on a loaded machine takes seconds).
const kernelStart = 60 * time.Second

// inKernel says that py> runs in a Jupyter kernel (--existing, --kernel).
func (c cmdline) inKernel() bool { return c.attach || c.kernelName != "" }

// kernelFlagsWrong says what of the command line does not go with a
// kernel, or "".
func kernelFlagsWrong(c cmdline) string {
	switch {
	case c.attach && c.kernelName != "":
		return "--existing attaches to a running kernel and --kernel starts one: give one of them"
	case c.script != "" || c.module != "" || len(c.commands) > 0:
		return "--existing and --kernel take no -c, -m or FILE: run setup code in the kernel"
	case c.resume != "":
		return "--continue and --resume do not go with --existing or --kernel"
	case c.venv != "":
		return "--venv does not go with --existing or --kernel: the kernel's own Python runs py>"
	}
	return ""
}

// kernelSession is a connected kernel, and the process when pyaichat
// started it (owned).
type kernelSession struct {
	client *kernel.Client
	owned  *kernel.Owned
	file   string
	name   string
	info   kernel.Info
	host   string
}

// connectKernel starts or finds the kernel the command line names and
// connects to it.
func connectKernel(c cmdline) (*kernelSession, error) {
	ctx, cancel := context.WithTimeout(context.Background(), kernelStart)
	defer cancel()
	s := &kernelSession{}
	var err error
	if c.kernelName != "" {
		spec, err := kernel.FindSpec(c.kernelName)
		if err != nil {
			return nil, err
		}
		if s.owned, err = kernel.Launch(ctx, spec); err != nil {
			return nil, err
		}
		s.file, s.name = s.owned.ConnectionFile, spec.Name
	} else if s.file, err = kernel.ResolveConnectionFile(c.existing); err != nil {
		return nil, err
	}
	conn, err := kernel.ReadConnectionFile(s.file)
	if err == nil {
		s.client, err = kernel.Dial(ctx, conn)
	}
	if err == nil {
		s.info, err = s.client.KernelInfo(ctx)
	}
	if err != nil {
		s.close()
		return nil, err
	}
	if s.name == "" {
		s.name = conn.KernelName
	}
	s.host = conn.IP
	// The kernel's own host name says which machine it is, where its
	// address may be a tunnel's end on this one.
	if v, err := s.client.Evaluate(ctx, map[string]string{"host": "__import__('socket').gethostname()"}); err == nil && v["host"] != "" {
		s.host = fmt.Sprintf("%s (%s)", trimQuotes(v["host"]), conn.IP)
	}
	return s, nil
}

func trimQuotes(s string) string {
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// label names the kernel for the banner and the session log.
func (s *kernelSession) label() string {
	name := s.name
	if name == "" {
		name = filepath.Base(s.file)
	}
	return fmt.Sprintf("%s (%s %s) on %s", name, s.info.Implementation, s.info.ImplementationVersion, s.host)
}

// close leaves the kernel: an owned one is shut down (and killed if it
// does not end), an attached one is left running.
func (s *kernelSession) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if s.client != nil && s.owned != nil {
		_ = s.client.Shutdown(ctx)
	}
	if s.client != nil {
		s.client.Close()
	}
	if s.owned != nil {
		s.owned.Wait(ctx)
	}
}

// runKernel is pyaichat with py> in a Jupyter kernel.
func runKernel(std stdio, c cmdline, set config.Settings, cfgErr error) int {
	cfg := withSecrets(set.Agent)
	if msg := kernelFlagsWrong(c); msg != "" {
		std.warn(msg)
		return exitUsage
	}
	opts, _, err := openInput(std, c.unbuffered())
	if err != nil {
		std.warn(err.Error())
		return 1
	}
	ks, err := connectKernel(c)
	if err != nil {
		restoreTerm(opts.Term)
		std.warn(err.Error())
		return 1
	}
	ki := &kernelInterp{client: ks.client, stdout: std.out, stderr: std.err, plain: opts.Term == nil, warn: std.warn}
	opts.Interp = ki
	lg := openLogAs(c, set, opts.Term != nil, std.warn, ks.info.LanguageInfo.Version, ks.label()+", "+ks.file)
	opts.OnInput = logKernelInputs(lg, ki, c.logOutput || set.Log.Output)
	opts.Commands = []repl.Command{live.SaveCommand(lg)}
	session, err := repl.New(opts)
	if err != nil {
		ks.close()
		restoreTerm(opts.Term)
		std.warn(err.Error())
		return 1
	}
	if c.question != "" {
		status := askKernel(std, c, cfg, cfgErr, session, ks.client, opts.Term)
		restoreTerm(opts.Term)
		ks.close()
		return status
	}
	if !c.quiet && opts.Term != nil {
		kernelBanner(std.err, ks)
	}
	if cfgErr != nil {
		std.warn(fmt.Sprintf("ai> is unavailable: %v", cfgErr))
	} else {
		caps := &kernelCaps{client: ks.client}
		assistant := newAssistant(cfg, newRegistry(cfg.Secrets, caps, ""), caps.recentContext, opts.Term, false, std, colorWanted(opts.Term != nil), live.Events(lg))
		session.SetAssistant(assistant)
		session.AddCommands(assistantCommands(assistant)...)
	}
	status, _ := session.Run()
	endLog(lg, status)
	restoreTerm(opts.Term)
	if ks.owned != nil && ki.keepKernel.Load() {
		// As jupyter console: the kernel watches pyaichat and would end
		// with it anyway.
		std.warn("pyaichat started this kernel, which ends with it: attach to a kernel started elsewhere to keep one")
	}
	ks.close()
	return status
}

// askKernel is -p on a kernel: one question, answered as locally, whose
// tool calls look at the kernel.
func askKernel(std stdio, c cmdline, cfg agent.Config, cfgErr error, session *repl.Loop, client *kernel.Client, tm *term.Terminal) int {
	if cfgErr != nil {
		return configFailed(std, c, cfgErr)
	}
	question := c.question
	if !term.IsTerminal(std.in) {
		question = withStdin(question, std)
	}
	report := jsonReportFor(c, cfg.Model, question, std.out)
	caps := &kernelCaps{client: client}
	assistant := newAssistant(cfg, newRegistry(cfg.Secrets, caps, ""), caps.recentContext, tm, true, std, colorWanted(tm != nil), report.Events())
	return askOnce(session, assistant, question, std, report)
}

// kernelBanner says where py> runs and what that means.
func kernelBanner(w io.Writer, ks *kernelSession) {
	lang := ks.info.LanguageInfo
	fmt.Fprintf(w, "%s %s in the Jupyter kernel %s\n", capitalized(lang.Name), lang.Version, ks.label())
	fmt.Fprintf(w, "connection file %s\n", ks.file)
	fmt.Fprintln(w, "py> runs each input in the kernel with IPython's semantics (magics, its tracebacks), not python3's.")
	if ks.owned != nil {
		fmt.Fprintln(w, "pyaichat started this kernel: exit shuts it down.")
	} else {
		fmt.Fprintln(w, "exit leaves the kernel running.")
	}
	fmt.Fprintln(w, "ai> looks at the kernel's namespace read-only, each call in a forked copy of the kernel process.")
}

func capitalized(s string) string {
	if s == "" {
		return "Kernel"
	}
	return string(s[0]&^0x20) + s[1:]
}

// logKernelInputs logs each py> input, with what it printed when the
// session keeps output.
func logKernelInputs(w *sessionlog.Writer, ki *kernelInterp, withOutput bool) func(string, interp.Outcome) {
	if w == nil {
		return nil
	}
	return func(src string, o interp.Outcome) {
		r := live.PyRecord(src, o)
		if withOutput && !w.OutputOff() {
			for _, p := range ki.lastOutput() {
				r.Output = append(r.Output, p)
				r.OutputBytes += len(p.Text)
			}
		}
		w.Write(r)
	}
}
