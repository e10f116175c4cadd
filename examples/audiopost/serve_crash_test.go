package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/sqlstore"
)

// waitAddrFile waits until a starting serve process wrote its address,
// without a bound of its own: the process writes it or exits, and a hang
// is the test binary's -timeout to report (a bound in seconds failed
// tests on a loaded machine, where starting took more than 20 s).
func waitAddrFile(t *testing.T, p *proc, path string) string {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(path); err == nil {
			return "http://" + string(b)
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited at start: %v\n%s", p.name, p.cmd.ProcessState, p.out.String())
		case <-tick.C:
		}
	}
}

// poll calls cond every 20 ms until it is true, failing after timeout.
func poll(t *testing.T, timeout time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	deadline := time.After(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline:
			t.Fatalf("%s: not within %v", what, timeout)
		case <-tick.C:
		}
	}
	return time.Since(start)
}

// leftovers lists temporary files and empty folders under dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	var l []string
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if strings.HasPrefix(e.Name(), storage.TempPrefix) {
			l = append(l, p)
		}
		if e.IsDir() && p != dir {
			if ents, _ := os.ReadDir(p); len(ents) == 0 {
				l = append(l, p+"/ (empty)")
			}
		}
		return nil
	})
	return l
}

// TestServeCrashRecovery is the acceptance test of recovery: serve is
// killed with SIGKILL while productions are processed and an upload is
// half sent; started again on the same data folder, it resumes every
// interrupted production at once (reclaimed at the start, as on the same
// host, not taken over when the lease runs out: the lease is ten minutes,
// so the bound holds however slow the machine), each ends Done exactly
// once (one
// job completed once, one webhook), and the start-up clean-up leaves no
// temporary file or empty folder of the interrupted upload.
func TestServeCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("runs and kills serve processes")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	addrFile := filepath.Join(dir, "addr")
	hooks := &hookCounter{calls: map[string]int{}}
	hookSrv := httptest.NewServer(hooks)
	defer hookSrv.Close()
	const password = "crash test password"
	// A lease far beyond any start-up: a production resumed within half of
	// it was reclaimed at the start, not taken over after it ran out.
	const lease = 10 * time.Minute
	args := []string{"serve", "-data", data, "-addr", "127.0.0.1:0", "-addr-file", addrFile, "-admin-user", "admin",
		"-admin-password", password, "-allow-private-fetch", "-workers", "2", "-log-level", "info", "-lease", lease.String()}
	p1 := startProc(t, "serve 1", nil, args...)
	base := waitAddrFile(t, p1, addrFile)
	c := &apiClient{t: t, base: base, hc: &http.Client{Timeout: 30 * time.Second}, basic: [2]string{"admin", password}}

	pr := c.call("POST", "/api/presets.json", map[string]any{"preset_name": "crash",
		"algorithms": map[string]any{"loudnesstarget": -16}, "output_files": []any{map[string]any{"format": "wav"}}})
	wav := serveWAV(t, 90)
	const n = 3
	var uuids []string
	for i := range n {
		uuid := createProduction(c, pr["uuid"].(string), fmt.Sprintf("episode %d", i), hookSrv.URL, wav)
		uuids = append(uuids, uuid)
	}

	st, err := sqlstore.Open(context.Background(), filepath.Join(data, sqlstore.DataDirDB))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	admin, err := st.GetUserByUsername(context.Background(), "admin")
	if err != nil {
		t.Fatal(err)
	}
	job := func(uuid string) storage.Job {
		jobs, err := st.ListJobs(context.Background(), admin.ID, uuid)
		if err != nil || len(jobs) != 1 {
			t.Fatalf("jobs of %s: %v, %v", uuid, jobs, err)
		}
		return jobs[0]
	}
	// An upload, half sent.
	up := createProduction(c, pr["uuid"].(string), "half upload", "", wav)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("input_file", "big.wav")
	fw.Write(wav)
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req, _ := http.NewRequest("POST", base+"/api/production/"+up+"/upload.json", nil)
	req.SetBasicAuth("admin", password)
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n",
		req.URL.Path, req.Header.Get("Authorization"), mw.FormDataContentType(), body.Len()+(10<<20))
	conn.Write(body.Bytes())
	inputDir := filepath.Join(data, sqlstore.DataDirBlobs, production.InputPrefix(up))
	poll(t, 30*time.Second, "the upload's temporary file", func() bool {
		ents, _ := os.ReadDir(inputDir)
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), storage.TempPrefix) {
				return true
			}
		}
		return false
	})

	for _, uuid := range uuids {
		c.call("POST", "/api/production/"+uuid+"/start.json", nil)
	}
	// Wait until productions are being processed.
	poll(t, 60*time.Second, "a production processing", func() bool {
		for _, u := range uuids {
			if j := job(u); j.State == storage.JobRunning {
				return true
			}
		}
		return false
	})

	var inFlight []string
	for _, u := range uuids {
		if job(u).State != storage.JobDone {
			inFlight = append(inFlight, u)
		}
	}
	p1.cmd.Process.Signal(syscall.SIGKILL)
	<-p1.done
	left := leftovers(t, filepath.Join(data, sqlstore.DataDirBlobs))
	t.Logf("killed with %d production(s) in flight; left behind: %v", len(inFlight), left)
	if len(inFlight) == 0 || len(left) == 0 {
		t.Fatal("nothing was in flight at the kill: the test proves nothing")
	}

	os.Remove(addrFile)
	restarted := time.Now()
	p2 := startProc(t, "serve 2", nil, args...)
	c.base = waitAddrFile(t, p2, addrFile)
	// Every interrupted production is claimed again long before its lease
	// could have run out.
	poll(t, lease/2-time.Since(restarted), "interrupted productions resumed", func() bool {
		for _, u := range inFlight {
			if j := job(u); j.Attempts < 2 && j.State != storage.JobDone {
				return false
			}
		}
		return true
	})
	t.Logf("restarted: %d interrupted production(s) resumed %v after the start", len(inFlight), time.Since(restarted).Round(time.Millisecond))
	if l := leftovers(t, filepath.Join(data, sqlstore.DataDirBlobs)); len(l) > 0 {
		t.Errorf("left after the start-up clean-up: %v", l)
	}

	// Every production ends Done exactly once.
	poll(t, 120*time.Second, "all productions done", func() bool {
		for _, u := range uuids {
			if job(u).State != storage.JobDone {
				return false
			}
		}
		return true
	})
	poll(t, 30*time.Second, "webhooks", func() bool {
		hooks.mu.Lock()
		defer hooks.mu.Unlock()
		for _, u := range uuids {
			if hooks.calls[u] == 0 {
				return false
			}
		}
		return true
	})
	for _, u := range uuids {
		p := c.call("GET", "/api/production/"+u+".json", nil)
		if s, _ := p["status"].(float64); s != float64(production.StatusDone) {
			t.Errorf("%s: status %v %v", u, p["status_string"], p["error_message"])
		}
		ds, err := st.ListDeliveries(context.Background(), admin.ID, u)
		if err != nil || len(ds) != 1 {
			t.Errorf("%s: %d webhook deliveries, want 1 (%v)", u, len(ds), err)
		}
	}
	hooks.mu.Lock()
	for _, u := range uuids {
		if hooks.calls[u] != 1 {
			t.Errorf("%s: webhook called %d times", u, hooks.calls[u])
		}
	}
	hooks.mu.Unlock()
	if l := leftovers(t, filepath.Join(data, sqlstore.DataDirBlobs)); len(l) > 0 {
		t.Errorf("left at the end: %v", l)
	}
	p2.stop(t, 30*time.Second)
}
