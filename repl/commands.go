package repl

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// Command is one slash command of the REPL's table: the assistant's
// (/model, /tools...), and those of whoever wires the REPL (/save, /code).
// A line at ai> that starts with a command's name runs it; at py> only an
// AtPy command runs, and only on a terminal outside a block (the line is a
// SyntaxError in Python, so no valid code changes meaning, and piped input
// stays exactly python3's).
type Command struct {
	Name string // with its slash: "/model"
	Args string // its arguments as /help shows them: "[NAME]"
	Help string // what it does, in a line for /help
	AtPy bool
	// Run runs the command with the rest of the line; what it prints goes
	// to out, and Ctrl-C cancels ctx. The Action says what the REPL does
	// next; an error is a line for the user.
	Run func(ctx context.Context, arg string, out io.Writer) (Action, error)
}

// Action is what the REPL does once a command has run.
type Action struct {
	Exit bool // leave pyaichat, as exit() at py> does
	// ToPy switches to py> with Code in the line editor, ready to edit;
	// nothing runs until Enter (without a line editor, Code is shown).
	ToPy bool
	Code string
}

// leaves are the words that leave pyaichat from ai>, never sent to the
// model.
var leaves = map[string]bool{"exit": true, "quit": true}

// AddCommands adds commands to the table (the assistant's, once it is
// there), before Run.
func (r *Loop) AddCommands(cmds ...Command) {
	r.opts.Commands = append(r.opts.Commands, cmds...)
}

// table is every command: the REPL's own (/help, /exit, /quit) and
// Options.Commands.
func (r *Loop) table() []Command {
	exit := func(context.Context, string, io.Writer) (Action, error) { return Action{Exit: true}, nil }
	own := []Command{
		{Name: "/help", Help: "this help", Run: r.help},
		{Name: "/exit", Help: "leave pyaichat (also exit, quit, /quit, Ctrl-D)", Run: exit},
		{Name: "/quit", Run: exit},
	}
	return append(own, r.opts.Commands...)
}

// command finds the command a line names, and the rest of the line.
func (r *Loop) command(line string) (Command, string, bool) {
	name, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	if !strings.HasPrefix(name, "/") {
		return Command{}, "", false // every line at py> comes here: build no table
	}
	for _, c := range r.table() {
		if c.Name == name {
			return c, strings.TrimSpace(arg), true
		}
	}
	return Command{}, "", false
}

// help is /help: the table, one command a line; a command without help
// text (/quit beside /exit) is not listed.
func (r *Loop) help(_ context.Context, _ string, out io.Writer) (Action, error) {
	var b strings.Builder
	b.WriteString("Ask a question about your session, or:\n")
	for _, c := range r.table() {
		if c.Help == "" {
			continue
		}
		use := strings.TrimSpace(c.Name + " " + c.Args)
		fmt.Fprintf(&b, "  %-17s %s\n", use, c.Help)
	}
	_, err := io.WriteString(out, b.String())
	return Action{}, err
}

// runCommand runs a command as a question runs: the terminal does not
// echo meanwhile, and Ctrl-C cancels it. It says whether to leave.
func (r *Loop) runCommand(c Command, arg string) (exit bool) {
	var act Action
	cancelled, err := r.Ask(func(ctx context.Context) error {
		var err error
		act, err = c.Run(ctx, arg, r.opts.Stdout)
		return err
	})
	switch {
	case cancelled:
		return false
	case err != nil:
		fmt.Fprintf(r.opts.Stdout, "pyaichat: %v\n", err)
		return false
	case act.ToPy:
		r.switchTo(ModePy)
		if r.editor != nil {
			r.toPy = act.Code
		} else {
			fmt.Fprintln(r.opts.Stdout, act.Code) // no line editor to put it in: shown, to copy
		}
	}
	return act.Exit
}
