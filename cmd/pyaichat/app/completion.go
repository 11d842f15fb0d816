package app

import (
	"fmt"
	"io"
	"strings"
	"text/template"

	"github.com/pyaichat/pyaichat/capabilities"
	"github.com/pyaichat/pyaichat/cmd/pyaichat/config"
)

// An option is one of pyaichat's options for the completion scripts:
// its spelling, whether it takes an argument and what completes that
// argument ("" for nothing), and a few words of help (zsh and fish show
// them).
type option struct {
	Name, Arg, Help string
}

// The words the scripts complete, from the same tables pyaichat reads, so
// that a new provider or capability needs no edit here.
type completionWords struct {
	Options      []option
	Subcommands  []option // Arg: the words that follow the subcommand
	Providers    string
	Capabilities string
}

func completionData() completionWords {
	var providers []string
	for _, p := range config.Providers() {
		providers = append(providers, p.Name)
	}
	return completionWords{
		Options: []option{
			{"-c", "none", "run cmd, then stay interactive"},
			{"-m", "none", "run a library module as __main__"},
			{"-p", "none", "ask QUESTION once and exit"},
			{"-q", "", "no banner"}, {"-u", "", "unbuffered stdout and stderr"},
			{"-B", "", "no .pyc files"}, {"-E", "", "ignore PYTHON* variables"},
			{"-s", "", "no user site"}, {"-S", "", "no site module"},
			{"-I", "", "isolated"}, {"-P", "", "no unsafe path on sys.path"},
			{"-O", "", "optimize"}, {"-OO", "", "optimize, no docstrings"},
			{"-b", "", "bytes warnings"}, {"-i", "", "accepted (always interactive)"},
			{"-W", "none", "warning control"}, {"-X", "none", "implementation option"},
			{"-V", "", "versions"}, {"--version", "", "versions and where Python lives"},
			{"-h", "", "help"}, {"--help", "", "help"},
			{"--venv", "dir", "the virtualenv to use"},
			{"--model", "none", "the model to ask"},
			{"--base-url", "none", "an OpenAI-compatible API"},
			{"--provider", "provider", "the API and key variable of a known service"},
			{"--capability", "capability", "call one capability, print JSON"},
			{"--json", "", "with -p: one JSON object"},
			{"--json-stream", "", "with -p: JSON lines"},
			{"--no-log", "", "do not log this session"},
			{"--no-instructions", "", "leave out the instructions files"},
			{"--log-output", "", "log what py> inputs print"},
			{"--continue", "", "resume the latest session"},
			{"--resume", "none", "resume session ID"},
		},
		Subcommands: []option{
			{"sessions", "show export", "list, show or export logged sessions"},
			{"serve", "--addr --open --print-conn-json --", "the REPL in a browser tab"},
			{"doctor", "--model --base-url --provider --venv", "check the set-up"},
			{"config", "path show edit", "the config file and the settings in force"},
			{"completion", "bash zsh fish", "print a shell completion script"},
		},
		Providers:    strings.Join(providers, " "),
		Capabilities: strings.Join(capabilities.Names(), " "),
	}
}

// optionNames are the options' spellings, space-separated.
func (w completionWords) OptionNames() string {
	names := make([]string, len(w.Options))
	for i, o := range w.Options {
		names[i] = o.Name
	}
	return strings.Join(names, " ")
}

// NoArg are the options whose argument is completed by nothing.
func (w completionWords) NoArg() string {
	var names []string
	for _, o := range w.Options {
		if o.Arg == "none" {
			names = append(names, o.Name)
		}
	}
	return strings.Join(names, "|")
}

// SubcommandNames are the subcommands, space-separated.
func (w completionWords) SubcommandNames() string {
	names := make([]string, len(w.Subcommands))
	for i, s := range w.Subcommands {
		names[i] = s.Name
	}
	return strings.Join(names, " ")
}

// completionScripts are the scripts' templates by shell, parsed when one
// is asked for: parsed at start, they would stay in every session's heap.
var completionScripts = map[string]string{
	"bash": bashCompletion,
	"zsh":  zshCompletion,
	"fish": fishCompletion,
}

const completionUsage = `usage: pyaichat completion bash|zsh|fish

Prints the shell's completion script for pyaichat. To use it:
  bash:  source <(pyaichat completion bash)     (or save it in
         ~/.local/share/bash-completion/completions/pyaichat)
  zsh:   pyaichat completion zsh > "${fpath[1]}/_pyaichat"
  fish:  pyaichat completion fish > ~/.config/fish/completions/pyaichat.fish
`

// runCompletion is pyaichat completion SHELL.
func runCompletion(std stdio, args []string) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		io.WriteString(std.out, completionUsage)
		return 0
	}
	script, ok := "", len(args) == 1
	if ok {
		script, ok = completionScripts[args[0]]
	}
	if !ok {
		io.WriteString(std.err, completionUsage)
		return exitUsage
	}
	tmpl := template.Must(template.New(args[0]).Parse(script))
	if err := tmpl.Execute(std.out, completionData()); err != nil {
		std.warn(fmt.Sprintf("writing the %s completion: %v", args[0], err))
		return 1
	}
	return 0
}

const bashCompletion = `# bash completion for pyaichat (pyaichat completion bash)
_pyaichat() {
    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"
    COMPREPLY=()
    case "$prev" in
        --venv) COMPREPLY=($(compgen -d -- "$cur")); return;;
        --provider) COMPREPLY=($(compgen -W "{{.Providers}}" -- "$cur")); return;;
        --capability) COMPREPLY=($(compgen -W "{{.Capabilities}}" -- "$cur")); return;;
        {{.NoArg}}) return;;
    esac
    if [[ $COMP_CWORD -ge 2 ]]; then
        case "${COMP_WORDS[1]}" in
{{- range .Subcommands}}
            {{.Name}})
                if [[ $COMP_CWORD -eq 2 || $cur == -* ]]; then
                    COMPREPLY=($(compgen -W "{{.Arg}}" -- "$cur"))
                fi
                return;;
{{- end}}
        esac
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "{{.OptionNames}}" -- "$cur"))
        return
    fi
    if [[ $COMP_CWORD -eq 1 ]]; then
        COMPREPLY=($(compgen -W "{{.SubcommandNames}}" -- "$cur"))
    fi
    COMPREPLY+=($(compgen -f -- "$cur"))
}
complete -o filenames -F _pyaichat pyaichat
`

const zshCompletion = `#compdef pyaichat
# zsh completion for pyaichat (pyaichat completion zsh)
_pyaichat() {
    local -a subcommands
    subcommands=(
{{- range .Subcommands}}
        '{{.Name}}:{{.Help}}'
{{- end}}
    )
    if (( CURRENT > 2 )); then
        case $words[2] in
{{- range .Subcommands}}
            {{.Name}}) compadd -- {{.Arg}}; return;;
{{- end}}
        esac
    fi
    if (( CURRENT == 2 )) && [[ $words[2] != -* ]]; then
        _describe -t commands 'pyaichat command' subcommands
    fi
    _arguments -s \
{{- range .Options}}
        '{{.Name}}[{{.Help}}]{{if eq .Arg "none"}}:value: {{else if eq .Arg "dir"}}:directory:_files -/{{else if eq .Arg "provider"}}:provider:({{$.Providers}}){{else if eq .Arg "capability"}}:capability:({{$.Capabilities}}){{end}}' \
{{- end}}
        '*:file:_files'
}
if [[ $funcstack[1] == _pyaichat ]]; then
    _pyaichat "$@"
else
    compdef _pyaichat pyaichat
fi
`

const fishCompletion = `# fish completion for pyaichat (pyaichat completion fish)
{{- range .Subcommands}}
complete -c pyaichat -n '__fish_use_subcommand' -a '{{.Name}}' -d '{{.Help}}'
complete -c pyaichat -n '__fish_seen_subcommand_from {{.Name}}' -f -a '{{.Arg}}'
{{- end}}
{{- range .Options}}
{{- if eq (len .Name) 2}}
complete -c pyaichat -s '{{slice .Name 1}}' -d '{{.Help}}'{{if ne .Arg ""}} -r{{end}}
{{- else if eq (slice .Name 0 2) "--"}}
complete -c pyaichat -l '{{slice .Name 2}}' -d '{{.Help}}'{{if eq .Arg "dir"}} -r -f -a '(__fish_complete_directories)'{{else if eq .Arg "provider"}} -r -f -a '{{$.Providers}}'{{else if eq .Arg "capability"}} -r -f -a '{{$.Capabilities}}'{{else if ne .Arg ""}} -r{{end}}
{{- else}}
complete -c pyaichat -o '{{slice .Name 1}}' -d '{{.Help}}'
{{- end}}
{{- end}}
`
