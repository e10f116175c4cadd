package workerid

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

func TestDead(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid
	host := Host()
	own := New()
	for _, c := range []struct {
		holder string
		want   bool
	}{
		{fmt.Sprintf("%s-%d-aaaa/0", host, dead), true},        // this host, process gone
		{fmt.Sprintf("%s-%d-bbbb", host, os.Getppid()), false}, // this host, process alive
		{fmt.Sprintf("elsewhere-%d-cccc", dead), false},        // another host
		{fmt.Sprintf("%s-%d-dddd", host, os.Getpid()), true},   // our pid, not our id: a previous instance
		{own + "/3", false}, // ours
		{New(), false},      // another of this process's
		{"not a generated id", false},
		{"x--1", false},
	} {
		if got := Dead(c.holder, own); got != c.want {
			t.Errorf("Dead(%q) = %v, want %v", c.holder, got, c.want)
		}
	}
	if h, pid, ok := parse(New()); !ok || h != host || pid != os.Getpid() {
		t.Errorf("New() parses as %q %d %v", h, pid, ok)
	}
}
