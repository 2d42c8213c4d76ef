package main

import (
	"context"
	"log"

	registration "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// What node-driver-registrar answers the kubelet: the plugin's kind, name and CSI socket.
// The kubelet then calls NodeGetInfo on that socket and records the driver in the CSINode.
type registrationServer struct {
	registration.UnimplementedRegistrationServer
	name     string
	endpoint string
}

func (r *registrationServer) GetInfo(context.Context, *registration.InfoRequest) (*registration.PluginInfo, error) {
	return &registration.PluginInfo{
		Type:              registration.CSIPlugin,
		Name:              r.name,
		Endpoint:          r.endpoint,
		SupportedVersions: []string{"1.0.0"},
	}, nil
}

func (r *registrationServer) NotifyRegistrationStatus(_ context.Context, status *registration.RegistrationStatus) (*registration.RegistrationStatusResponse, error) {
	// Logged, not fatal: the kubelet tries again when the socket is seen again, and a test
	// that needs the driver fails on the missing CSINode entry with this line in the log.
	if status.PluginRegistered {
		log.Printf("registered with the kubelet")
	} else {
		log.Printf("the kubelet refused the registration: %s", status.Error)
	}
	return &registration.RegistrationStatusResponse{}, nil
}
