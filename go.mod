module github.com/pyaichat/pyaichat

go 1.26.8

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/chzyer/readline v1.5.1
	github.com/sashabaranov/go-openai v1.43.0
	golang.org/x/sys v0.49.0
)
