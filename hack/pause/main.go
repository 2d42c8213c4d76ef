// pause: the sandbox container of every Pod on the real node (hack/real-node). It holds the
// Pod's namespaces open and does nothing else: it waits for SIGINT or SIGTERM and exits 0,
// and, being PID 1 of a shared PID namespace, reaps the orphans reparented to it. Built
// here (hack/images.sh) because there is no registry to pull registry.k8s.io/pause from.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 16)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for received := range signals {
		if received != syscall.SIGCHLD {
			os.Exit(0)
		}
		// Reap every exited child without blocking; one SIGCHLD may stand for several.
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
