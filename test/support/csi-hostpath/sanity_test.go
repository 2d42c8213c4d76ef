package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kubernetes-csi/csi-test/v5/pkg/sanity"
)

// csi-sanity, the kubernetes-csi conformance suite, against the driver in this process: every
// call the sidecars and the kubelet make, and the spec's error codes and idempotency. Node
// publishing bind-mounts, so it needs root (as the real node does).
func TestSanity(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("NodePublishVolume bind-mounts: needs root")
	}
	dir := t.TempDir()
	store, err := openStore(filepath.Join(dir, "state"))
	if err != nil {
		t.Fatal(err)
	}
	server := newCSIServer(&driver{name: "hostpath.csi.lorenz.dev", nodeID: "sanity-node", store: store})
	listener, err := listenUnix(filepath.Join(dir, "csi.sock"))
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = server.Serve(listener) }()
	defer server.Stop()

	config := sanity.NewTestConfig()
	config.Address = "unix://" + filepath.Join(dir, "csi.sock")
	config.TargetPath = filepath.Join(dir, "target")
	config.StagingPath = filepath.Join(dir, "staging")
	sanity.Test(t, config)
}
