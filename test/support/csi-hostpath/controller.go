package main

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

type controller struct {
	csi.UnimplementedControllerServer
	*driver
}

func (c controller) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	var caps []*csi.ControllerServiceCapability
	for _, kind := range []csi.ControllerServiceCapability_RPC_Type{
		csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
		// With this one the provisioner accepts a claim whose dataSource is a VolumeSnapshot.
		csi.ControllerServiceCapability_RPC_CREATE_DELETE_SNAPSHOT,
		csi.ControllerServiceCapability_RPC_LIST_SNAPSHOTS,
	} {
		caps = append(caps, &csi.ControllerServiceCapability{
			Type: &csi.ControllerServiceCapability_Rpc{Rpc: &csi.ControllerServiceCapability_RPC{Type: kind}},
		})
	}
	return &csi.ControllerGetCapabilitiesResponse{Capabilities: caps}, nil
}

// Directories only: a raw block volume cannot be a directory.
func checkCapabilities(caps []*csi.VolumeCapability) error {
	if len(caps) == 0 {
		return status.Error(codes.InvalidArgument, "volume_capabilities missing")
	}
	for _, capability := range caps {
		if capability.GetMount() == nil {
			return status.Error(codes.InvalidArgument, "only mount volumes (a directory), not block")
		}
	}
	return nil
}

func (c controller) CreateVolume(_ context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	id := req.GetName()
	if !safeID.MatchString(id) {
		return nil, status.Errorf(codes.InvalidArgument, "bad volume name %q", id)
	}
	if err := checkCapabilities(req.GetVolumeCapabilities()); err != nil {
		return nil, err
	}
	source := req.GetVolumeContentSource()
	if source != nil && source.GetSnapshot() == nil {
		return nil, status.Error(codes.InvalidArgument, "only snapshots can be a volume's source (no cloning)")
	}
	// No quota: the capacity is what was asked for, and the directory may hold more.
	want := volumeMeta{
		ID:             id,
		CapacityBytes:  req.GetCapacityRange().GetRequiredBytes(),
		SourceSnapshot: source.GetSnapshot().GetSnapshotId(),
	}
	c.store.mu.Lock()
	defer c.store.mu.Unlock()
	dir := c.store.volumePath(id)
	have, err := readVolume(dir)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if have != nil {
		// A retried CreateVolume (the provisioner timed out and asks again) finds it made.
		if *have != want {
			return nil, status.Errorf(codes.AlreadyExists, "volume %q exists with other arguments: %+v", id, *have)
		}
	} else if err := c.makeVolume(dir, want); err != nil {
		return nil, err
	}
	return &csi.CreateVolumeResponse{Volume: &csi.Volume{
		VolumeId:      id,
		CapacityBytes: want.CapacityBytes,
		ContentSource: source,
	}}, nil
}

// makeVolume makes the tree (empty, or a copy of the snapshot's), then its meta.json.
func (c controller) makeVolume(dir string, meta volumeMeta) error {
	tree := filepath.Join(dir, "tree")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	if err := os.RemoveAll(tree); err != nil { // an earlier attempt cut short
		return status.Error(codes.Internal, err.Error())
	}
	if meta.SourceSnapshot != "" {
		snapshot, err := readSnapshot(c.store.snapshotPath(meta.SourceSnapshot))
		if err != nil {
			return status.Error(codes.Internal, err.Error())
		}
		if snapshot == nil || !safeID.MatchString(meta.SourceSnapshot) {
			return status.Errorf(codes.NotFound, "no snapshot %q", meta.SourceSnapshot)
		}
		if err := copyTree(filepath.Join(c.store.snapshotPath(meta.SourceSnapshot), "tree"), tree); err != nil {
			return status.Error(codes.Internal, err.Error())
		}
	} else {
		// Root-owned 0755: the kubelet gives it the Pod's fsGroup (CSIDriver fsGroupPolicy File).
		if err := os.Mkdir(tree, 0o755); err != nil {
			return status.Error(codes.Internal, err.Error())
		}
		if err := os.Chmod(tree, 0o755); err != nil { // past the umask
			return status.Error(codes.Internal, err.Error())
		}
	}
	if err := writeMeta(dir, meta); err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	return nil
}

func (c controller) DeleteVolume(_ context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	if err := c.remove("volume", req.GetVolumeId(), c.store.volumePath); err != nil {
		return nil, err
	}
	return &csi.DeleteVolumeResponse{}, nil
}

func (c controller) ValidateVolumeCapabilities(_ context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	id := req.GetVolumeId()
	if id == "" || len(req.GetVolumeCapabilities()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "volume_id and volume_capabilities are required")
	}
	if meta, err := readVolume(c.store.volumePath(id)); !safeID.MatchString(id) || meta == nil || err != nil {
		return nil, status.Errorf(codes.NotFound, "no volume %q", id)
	}
	if err := checkCapabilities(req.GetVolumeCapabilities()); err != nil {
		return &csi.ValidateVolumeCapabilitiesResponse{Message: err.Error()}, nil
	}
	return &csi.ValidateVolumeCapabilitiesResponse{Confirmed: &csi.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeCapabilities: req.GetVolumeCapabilities(),
	}}, nil
}

func toCSI(meta *snapshotMeta) *csi.Snapshot {
	return &csi.Snapshot{
		SnapshotId:     meta.ID,
		SourceVolumeId: meta.SourceVolume,
		SizeBytes:      meta.SizeBytes,
		CreationTime:   timestamppb.New(meta.CreatedAt),
		// A copy is complete when CreateSnapshot returns: nothing is uploaded afterwards.
		ReadyToUse: true,
	}
}

func (c controller) CreateSnapshot(_ context.Context, req *csi.CreateSnapshotRequest) (*csi.CreateSnapshotResponse, error) {
	id, source := req.GetName(), req.GetSourceVolumeId()
	if !safeID.MatchString(id) || !safeID.MatchString(source) {
		return nil, status.Errorf(codes.InvalidArgument, "bad snapshot name %q or source %q", id, source)
	}
	c.store.mu.Lock()
	defer c.store.mu.Unlock()
	dir := c.store.snapshotPath(id)
	meta, err := readSnapshot(dir)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if meta != nil {
		// The spec's idempotency: the same name of the same volume is the same snapshot.
		if meta.SourceVolume != source {
			return nil, status.Errorf(codes.AlreadyExists, "snapshot %q is of volume %q", id, meta.SourceVolume)
		}
		return &csi.CreateSnapshotResponse{Snapshot: toCSI(meta)}, nil
	}
	if volume, err := readVolume(c.store.volumePath(source)); volume == nil || err != nil {
		return nil, status.Errorf(codes.NotFound, "no volume %q", source)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	tree := filepath.Join(dir, "tree")
	if err := os.RemoveAll(tree); err != nil { // an earlier attempt cut short
		return nil, status.Error(codes.Internal, err.Error())
	}
	if err := copyTree(c.store.volumeTree(source), tree); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	size, err := treeSize(tree)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	meta = &snapshotMeta{ID: id, SourceVolume: source, SizeBytes: size, CreatedAt: time.Now().UTC()}
	if err := writeMeta(dir, meta); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &csi.CreateSnapshotResponse{Snapshot: toCSI(meta)}, nil
}

func (c controller) DeleteSnapshot(_ context.Context, req *csi.DeleteSnapshotRequest) (*csi.DeleteSnapshotResponse, error) {
	if err := c.remove("snapshot", req.GetSnapshotId(), c.store.snapshotPath); err != nil {
		return nil, err
	}
	return &csi.DeleteSnapshotResponse{}, nil
}

// The snapshotter asks by snapshot id (a content created in advance, or a status refresh);
// the spec wants an empty answer, not an error, for an id it does not know.
func (c controller) ListSnapshots(_ context.Context, req *csi.ListSnapshotsRequest) (*csi.ListSnapshotsResponse, error) {
	c.store.mu.Lock()
	all, err := c.store.listSnapshots()
	c.store.mu.Unlock()
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	var matching []*snapshotMeta
	for _, meta := range all {
		if (req.GetSnapshotId() == "" || meta.ID == req.GetSnapshotId()) &&
			(req.GetSourceVolumeId() == "" || meta.SourceVolume == req.GetSourceVolumeId()) {
			matching = append(matching, meta)
		}
	}
	start := 0
	if token := req.GetStartingToken(); token != "" {
		start, err = strconv.Atoi(token)
		if err != nil || start < 0 || start > len(matching) {
			return nil, status.Errorf(codes.Aborted, "bad starting_token %q", token)
		}
	}
	end := len(matching)
	if limit := int(req.GetMaxEntries()); limit > 0 && start+limit < end {
		end = start + limit
	}
	resp := &csi.ListSnapshotsResponse{}
	for _, meta := range matching[start:end] {
		resp.Entries = append(resp.Entries, &csi.ListSnapshotsResponse_Entry{Snapshot: toCSI(meta)})
	}
	if end < len(matching) {
		resp.NextToken = strconv.Itoa(end)
	}
	return resp, nil
}

// remove deletes the volume or snapshot `id` names (`what` says which, for the error); an id
// that names nothing is deleted already, as the spec wants deletes idempotent.
func (c controller) remove(what string, id string, path func(string) string) error {
	if !safeID.MatchString(id) {
		return status.Errorf(codes.InvalidArgument, "bad %s id %q", what, id)
	}
	c.store.mu.Lock()
	defer c.store.mu.Unlock()
	if err := os.RemoveAll(path(id)); err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	return nil
}
