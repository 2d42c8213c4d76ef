// A hostpath CSI driver for the containers tier's real node: volumes and snapshots are
// directories on this machine. It stands where csi-driver-host-path and node-driver-registrar
// would (neither is served by the module proxy here): one process serves the CSI Identity,
// Controller and Node services on a unix socket, and registers itself with the kubelet through
// the kubelet's plugin registration socket. Test infrastructure only: no quotas, no topology,
// one node.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	registration "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

func main() {
	endpoint := flag.String("endpoint", "", "unix socket to serve CSI on")
	stateDir := flag.String("state-dir", "", "where volumes and snapshots are kept")
	nodeID := flag.String("node-id", "", "the Node's name, answered by NodeGetInfo")
	driverName := flag.String("driver-name", "hostpath.csi.lorenz.dev", "the CSI driver name")
	registryDir := flag.String("registry-dir", "",
		"the kubelet's plugins_registry directory; empty: do not register (the sidecars only)")
	flag.Parse()
	if *endpoint == "" || *stateDir == "" || *nodeID == "" {
		log.Fatal("--endpoint, --state-dir and --node-id are required")
	}
	store, err := openStore(*stateDir)
	if err != nil {
		log.Fatal(err)
	}
	d := &driver{name: *driverName, nodeID: *nodeID, store: store}

	server := newCSIServer(d)
	csiListener, err := listenUnix(*endpoint)
	if err != nil {
		log.Fatal(err)
	}
	go serve(server, csiListener)

	var registrar *grpc.Server
	if *registryDir != "" {
		// The kubelet watches this directory and dials every socket that appears in it; it
		// must exist before the CSI socket is answered, which it is by now.
		registrar = grpc.NewServer()
		registration.RegisterRegistrationServer(registrar, &registrationServer{
			name: *driverName, endpoint: *endpoint,
		})
		regListener, err := listenUnix(filepath.Join(*registryDir, *driverName+"-reg.sock"))
		if err != nil {
			log.Fatal(err)
		}
		go serve(registrar, regListener)
	}
	log.Printf("%s serving CSI on %s (node %s, state %s)", *driverName, *endpoint, *nodeID, *stateDir)

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	<-signals
	// Stopping removes the sockets (the listeners unlink them): a socket left in
	// plugins_registry would make the kubelet retry a dead plugin.
	if registrar != nil {
		registrar.Stop()
	}
	server.Stop()
}

// The three CSI services on one server: the sidecars and the kubelet share the socket.
func newCSIServer(d *driver) *grpc.Server {
	server := grpc.NewServer(grpc.UnaryInterceptor(logCalls))
	csi.RegisterIdentityServer(server, identity{driver: d})
	csi.RegisterControllerServer(server, controller{driver: d})
	csi.RegisterNodeServer(server, node{driver: d})
	return server
}

func listenUnix(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, err
	}
	// A socket left by an earlier run of the same node would make Listen fail.
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	listener, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	return listener, nil
}

func serve(server *grpc.Server, listener net.Listener) {
	if err := server.Serve(listener); err != nil {
		log.Fatalf("serving on %s: %v", listener.Addr(), err)
	}
}

// Every call and its outcome go to the log: that log is what a failing test points at.
func logCalls(ctx context.Context, req any, info *grpc.UnaryServerInfo,
	handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	if err != nil {
		log.Printf("%s %v -> error: %v", info.FullMethod, req, err)
	} else {
		log.Printf("%s %v -> ok", info.FullMethod, req)
	}
	return resp, err
}

type driver struct {
	name   string
	nodeID string
	store  *store
}
