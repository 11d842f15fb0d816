module github.com/pyaichat/pyaichat

go 1.26.8

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/Netflix/go-expect v0.0.0-20220104043353-73e0943537d2 // indirect
	github.com/chzyer/readline v1.5.1
	github.com/clipperhouse/uax29/v2 v2.2.0 // indirect
	github.com/creack/pty v1.1.24 // indirect
	github.com/hinshun/vt10x v0.0.0-20220301184237-5011da428d02 // indirect
	github.com/mattn/go-runewidth v0.0.31
	github.com/sashabaranov/go-openai v1.43.0
	golang.org/x/sys v0.49.0
)
