package app

import (
	"context"
	"fmt"
	"os/exec"
	"time"

	"github.com/pyaichat/pyaichat/pybridge/kernel"
)

// kernelPatience bounds doctor's wait for a kernel's answer: a kernel
// that answers does so within a second; a hang is a finding, not a wait.
const kernelPatience = 15 * time.Second

// kernelFinding is doctor's word on the kernel --existing or --kernel
// names: whether an attached kernel answers a kernel_info_request, or
// whether a kernelspec can be started. Nil when neither is given.
func kernelFinding(c cmdline) []finding {
	switch {
	case c.attach:
		return []finding{existingFinding(c.existing)}
	case c.kernelName != "":
		return []finding{specFinding(c.kernelName)}
	}
	return nil
}

func existingFinding(name string) finding {
	f := finding{level: levelFail, topic: "kernel"}
	file, err := kernel.ResolveConnectionFile(name)
	if err != nil {
		f.text, f.fix = err.Error(), "start a kernel (a notebook, jupyter console) or name its connection file"
		return f
	}
	info, err := kernel.ReadConnectionFile(file)
	if err != nil {
		f.text, f.fix = err.Error(), "name a kernel's connection file (kernel-*.json)"
		return f
	}
	ctx, cancel := context.WithTimeout(context.Background(), kernelPatience)
	defer cancel()
	client, err := kernel.Dial(ctx, info)
	if err != nil {
		f.text = fmt.Sprintf("%s: %v", file, err)
		f.fix = "is the kernel running, and for a remote one, are its five ports forwarded (docs/kernels.md)?"
		return f
	}
	defer client.Close()
	ki, err := client.KernelInfo(ctx)
	if err != nil {
		f.text, f.fix = fmt.Sprintf("%s: %v", file, err), "restart the kernel"
		return f
	}
	f.level = levelOK
	f.text = fmt.Sprintf("%s answers kernel_info_request: %s %s, %s %s, at %s",
		file, ki.Implementation, ki.ImplementationVersion, ki.LanguageInfo.Name, ki.LanguageInfo.Version, info.IP)
	return f
}

func specFinding(name string) finding {
	spec, err := kernel.FindSpec(name)
	if err != nil {
		return finding{level: levelFail, topic: "kernel", text: err.Error(), fix: "install the kernel (python3 -m ipykernel install --user) or name one that jupyter kernelspec list shows"}
	}
	if _, err := exec.LookPath(spec.Argv[0]); err != nil {
		return finding{level: levelFail, topic: "kernel", text: fmt.Sprintf("kernelspec %s in %s runs %s: %v", name, spec.Dir, spec.Argv[0], err), fix: "reinstall the kernel"}
	}
	return finding{level: levelOK, topic: "kernel", text: fmt.Sprintf("kernelspec %s (%s) in %s; pyaichat starts it with --kernel", name, spec.DisplayName, spec.Dir)}
}
