package kernel

import "syscall"

func ownGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
