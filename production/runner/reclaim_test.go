package runner_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/audiopost/audiopost/internal/testdb"
	"github.com/audiopost/audiopost/production/runner"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/blob"
)

// deadPID is the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestReclaim(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	st := testdb.SQLite(t, filepath.Join(dir, "db"))
	bl, err := blob.OpenDir(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	dead := deadPID(t)
	holders := []string{
		fmt.Sprintf("%s-%d-aaaa/0", host, dead),       // this host, process gone: taken back
		fmt.Sprintf("%s-%d-bbbb", host, os.Getppid()), // this host, process alive: left
		fmt.Sprintf("elsewhere-%d-cccc", dead),        // another host: left to its lease
		"fixed-id/1",                                  // this runner's own fixed id: taken back
		fmt.Sprintf("%s-%d-dddd", host, os.Getpid()),  // our pid under another id: a previous instance
		"not a generated id",                          // left
	}
	ids := map[string]int64{}
	for _, h := range holders {
		if err := st.Enqueue(ctx, &storage.Job{Type: "process"}); err != nil {
			t.Fatal(err)
		}
		j, err := st.Claim(ctx, h, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		ids[h] = j.ID
	}
	r, err := runner.New(runner.Config{Store: st, Blobs: bl, WorkerID: "fixed-id"})
	if err != nil {
		t.Fatal(err)
	}
	n, err := r.Reclaim(ctx)
	if err != nil || n != 3 {
		t.Fatalf("Reclaim: %d, %v; want 3", n, err)
	}
	got := map[int64]bool{}
	for range 3 {
		j, err := st.Claim(ctx, "next", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		got[j.ID] = true
	}
	for _, h := range []string{holders[0], holders[3], holders[4]} {
		if !got[ids[h]] {
			t.Errorf("job of %q not taken back", h)
		}
	}
	if _, err := st.Claim(ctx, "next", time.Hour); err == nil {
		t.Error("a live or foreign worker's job was taken back")
	}
}
