package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"time"
)

// The state directory: volumes/<id>/tree is a volume's tree, bind-mounted into Pods;
// snapshots/<id>/tree is a snapshot's copy of a volume, never mounted, only copied from,
// which is what keeps it unchanged. Each has a meta.json beside its tree, written last, with
// what CreateVolume or CreateSnapshot answered: a retried call with other arguments is told
// AlreadyExists, as the spec asks.
type store struct {
	dir string
	// One lock for every call: the sidecars retry and overlap, the machine is small, and a
	// copy racing a delete of the same tree is the one mistake worth ruling out.
	mu sync.Mutex
}

type volumeMeta struct {
	ID            string `json:"id"`
	CapacityBytes int64  `json:"capacityBytes"`
	// The snapshot it was restored from, "" for an empty one.
	SourceSnapshot string `json:"sourceSnapshot,omitempty"`
}

type snapshotMeta struct {
	ID           string    `json:"id"`
	SourceVolume string    `json:"sourceVolume"`
	SizeBytes    int64     `json:"sizeBytes"`
	CreatedAt    time.Time `json:"createdAt"`
}

// The sidecars name volumes pvc-<uid> and snapshots snapshot-<uid>; anything that could
// climb out of the state directory is refused.
var safeID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

func openStore(dir string) (*store, error) {
	for _, sub := range []string{"volumes", "snapshots"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return nil, err
		}
	}
	return &store{dir: dir}, nil
}

func (s *store) volumePath(id string) string   { return filepath.Join(s.dir, "volumes", id) }
func (s *store) volumeTree(id string) string   { return filepath.Join(s.volumePath(id), "tree") }
func (s *store) snapshotPath(id string) string { return filepath.Join(s.dir, "snapshots", id) }

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// copyTree makes dst a copy of src: modes, owners, timestamps, symlinks as links. `cp -a`
// already does all of it exactly; it copies into a temporary name and renames, so that a
// copy cut short never passes for a volume or a snapshot.
func copyTree(src, dst string) error {
	partial := dst + ".partial"
	if err := os.RemoveAll(partial); err != nil {
		return err
	}
	if out, err := exec.Command("cp", "-a", "--", src, partial).CombinedOutput(); err != nil {
		_ = os.RemoveAll(partial)
		return fmt.Errorf("cp -a %s %s: %v: %s", src, partial, err, out)
	}
	return os.Rename(partial, dst)
}

// treeSize is the snapshot's size_bytes: what its files hold (the snapshot-controller
// reports it as restoreSize, and a claim restored from it must ask for at least that).
func treeSize(root string) (int64, error) {
	var size int64
	err := filepath.WalkDir(root, func(_ string, entry fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if entry.Type().IsRegular() {
			info, err := entry.Info()
			if err != nil {
				return err
			}
			size += info.Size()
		}
		return nil
	})
	return size, err
}

// readMeta reads <dir>/meta.json as a T; nil when there is none (nothing, or a volume or
// snapshot whose making was cut short).
func readMeta[T any](dir string) (*T, error) {
	data, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var value T
	if err := json.Unmarshal(data, &value); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return &value, nil
}

// meta.json last, by rename: its presence is what says the volume or snapshot is whole.
func writeMeta(dir string, value any) error {
	data, err := json.Marshal(value)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "meta.json")
	if err := os.WriteFile(path+".partial", data, 0o600); err != nil {
		return err
	}
	return os.Rename(path+".partial", path)
}

func readSnapshot(dir string) (*snapshotMeta, error) { return readMeta[snapshotMeta](dir) }

func readVolume(dir string) (*volumeMeta, error) { return readMeta[volumeMeta](dir) }

// listSnapshots reads every snapshot whose meta.json was written (a half-made one has none).
func (s *store) listSnapshots() ([]*snapshotMeta, error) {
	entries, err := os.ReadDir(filepath.Join(s.dir, "snapshots"))
	if err != nil {
		return nil, err
	}
	var all []*snapshotMeta
	for _, entry := range entries {
		meta, err := readSnapshot(s.snapshotPath(entry.Name()))
		if err != nil {
			return nil, err
		}
		if meta != nil {
			all = append(all, meta)
		}
	}
	return all, nil
}
