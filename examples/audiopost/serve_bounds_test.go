package main

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/production"
)

// Issue 31 (bounded by design): what the server and its external
// programs may use, whatever a request asks for.

// programNames are the external programs the server runs.
var programNames = map[string]bool{"ffmpeg": true, "ffprobe": true, "pocketsphinx_co": true} // comm is cut at 15 bytes

// procWatch samples, every 10 ms, a server process and every process
// under it (from /proc): how many of its children are external programs,
// and, every 50 ms, the memory of all of them together. Memory is the
// proportional set size (Pss of smaps_rollup): each ffmpeg maps about
// 45 MB of shared libraries, which its resident size counts in full for
// every process and its proportional size shares out among them.
type procWatch struct {
	pid     int
	stop    chan struct{}
	done    chan struct{}
	stopped sync.Once

	mu          sync.Mutex
	maxPrograms int
	maxMemory   int64
	serverMem   int64          // the server's own share of maxMemory
	seen        map[int]string // every descendant seen, by pid: its command
	samples     int
}

func watchProcs(pid int) *procWatch {
	w := &procWatch{pid: pid, stop: make(chan struct{}), done: make(chan struct{}), seen: map[int]string{}}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			w.sample(i%5 == 0)
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// procEntry is one process of /proc.
type procEntry struct {
	pid, ppid int
	comm      string
}

// processes reads every live process's parent and command.
func processes() map[int]procEntry {
	out := map[int]procEntry{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := procOf(pid); ok {
			out[pid] = p
		}
	}
	return out
}

// procOf reads one process's parent and command; ok is false when it is
// gone or a zombie.
func procOf(pid int) (p procEntry, ok bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return p, false
	}
	// "pid (comm) state ppid ...": the command may hold spaces.
	open, close := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if open < 0 || close < open {
		return p, false
	}
	f := strings.Fields(string(stat[close+1:]))
	if len(f) < 2 || f[0] == "Z" {
		return p, false
	}
	ppid, _ := strconv.Atoi(f[1])
	return procEntry{pid: pid, ppid: ppid, comm: string(stat[open+1 : close])}, true
}

// descendants reads the live processes under pid from the children files
// of its threads (/proc/PID/task/TID/children), and theirs: a few files
// where processes reads every process's on a machine shared with other
// work, which at a sample every 10 ms took seconds of CPU a test. ok is
// false when the kernel has no children files (CONFIG_PROC_CHILDREN):
// then processes is the way.
func descendants(pid int) (out []procEntry, ok bool) {
	for next := []int{pid}; len(next) > 0; {
		p := next[len(next)-1]
		next = next[:len(next)-1]
		tasks, err := os.ReadDir("/proc/" + strconv.Itoa(p) + "/task")
		if err != nil {
			if p == pid {
				return nil, true // gone
			}
			continue
		}
		for _, task := range tasks {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/task/" + task.Name() + "/children")
			if errors.Is(err, fs.ErrNotExist) && p == pid && task.Name() == strconv.Itoa(pid) {
				return nil, false
			}
			for _, f := range strings.Fields(string(b)) {
				c, _ := strconv.Atoi(f)
				if e, ok := procOf(c); ok && e.ppid == p {
					out = append(out, e)
					next = append(next, c)
				}
			}
		}
	}
	return out, true
}

// under is every live process under pid, read from its children files
// when the kernel has them, else from every process's.
func under(pid int) []procEntry {
	if d, ok := descendants(pid); ok {
		return d
	}
	all := processes()
	children := map[int][]int{}
	for _, p := range all {
		children[p.ppid] = append(children[p.ppid], p.pid)
	}
	var out []procEntry
	for next := []int{pid}; len(next) > 0; {
		p := next[len(next)-1]
		next = next[:len(next)-1]
		for _, c := range children[p] {
			out = append(out, all[c])
			next = append(next, c)
		}
	}
	return out
}

// pss is the proportional set size of process pid in bytes (0 when it is
// gone).
func pss(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Pss:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// sample counts the programs, and with memory sums the memory of the
// server and everything under it.
func (w *procWatch) sample(memory bool) {
	if _, ok := procOf(w.pid); !ok {
		return
	}
	tree := under(w.pid)
	programs := 0
	for _, c := range tree {
		if c.ppid == w.pid && programNames[c.comm] {
			programs++
		}
	}
	var mem, server int64
	if memory {
		server = pss(w.pid)
		mem = server
		for _, c := range tree {
			mem += pss(c.pid)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range tree {
		w.seen[c.pid] = c.comm
	}
	w.maxPrograms = max(w.maxPrograms, programs)
	if mem > w.maxMemory {
		w.maxMemory, w.serverMem = mem, server
	}
	w.samples++
}

// programs is the number of external programs running now.
func (w *procWatch) programs() int {
	n := 0
	for _, p := range under(w.pid) {
		if p.ppid == w.pid && programNames[p.comm] {
			n++
		}
	}
	return n
}

// end stops the sampling (once; later calls do nothing).
func (w *procWatch) end() {
	w.stopped.Do(func() { close(w.stop) })
	<-w.done
}

// alive lists the descendants seen that still run (zombies excluded).
func (w *procWatch) alive() []string {
	all := processes()
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for pid, comm := range w.seen {
		if p, ok := all[pid]; ok && p.comm == comm {
			out = append(out, fmt.Sprintf("%d %s", pid, comm))
		}
	}
	return out
}

// poolSize reads the pool's size from serve's start message.
func poolSize(t *testing.T, p *proc) int {
	t.Helper()
	// serve prints the line before it writes -addr-file, but its output
	// reaches p.out through a pipe a goroutine copies: the address can be
	// read first.
	p.waitOutput(t, " external programs (", time.Minute)
	m := regexp.MustCompile(`at most (\d+) external programs`).FindStringSubmatch(p.out.String())
	if m == nil {
		t.Fatalf("serve did not say its pool size:\n%s", p.out.String())
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// chapters is n chapters every step seconds from 0.
func chapters(n int, step float64) []any {
	out := make([]any, n)
	for i := range out {
		s := float64(i) * step
		out[i] = map[string]any{"start": fmt.Sprintf("%02d:%02d:%06.3f", int(s)/3600, int(s)/60%60, s-float64(int(s)/60*60)), "title": fmt.Sprint("part ", i+1)}
	}
	return out
}

// upload sends files (field -> name and bytes) to a production and
// returns the HTTP status and body.
func (c *apiClient) upload(uuid string, files map[string][2]any) (int, []byte) {
	c.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for field, f := range files {
		fw, _ := mw.CreateFormFile(field, f[0].(string))
		fw.Write(f[1].([]byte))
	}
	mw.Close()
	return c.do("POST", "/api/production/"+uuid+"/upload.json", mw.FormDataContentType(), &body)
}

// submit creates a production from request, uploads its files and starts
// it, and returns its uuid.
func (c *apiClient) submit(request map[string]any, files map[string][2]any) string {
	c.t.Helper()
	uuid, _ := c.call("POST", "/api/productions.json", request)["uuid"].(string)
	if uuid == "" {
		c.t.Fatalf("no production made of %.300v", request)
	}
	if code, b := c.upload(uuid, files); code/100 != 2 {
		c.t.Fatalf("upload: HTTP %d: %s", code, b)
	}
	c.call("POST", "/api/production/"+uuid+"/start.json", nil)
	return uuid
}

// status reads a production's status.
func (c *apiClient) status(uuid string) production.Status {
	c.t.Helper()
	s, _ := c.call("GET", "/api/production/"+uuid+"/status.json", nil)["status"].(float64)
	return production.Status(s)
}

// TestServeBounded is the acceptance test of issue 31's bounds: on a
// server with the default process pool, the requests and a load
// that asks for more programs at once than the pool has. The 10,000
// chapters 0.5 s apart on a 10 s input (2,353 ffmpeg at once and an
// out-of-memory host in the issue) and the track offsets of 10^12 s (an
// overflow) and 10^6 s (1.5 hours of work) are form errors of the work
// budget when they are saved; a chapter at 999999 s is dropped with a
// warning; 10 MB of random bytes uploaded as MP3 are refused in one
// sentence. The rest runs side by side: three productions of five lossy
// outputs each (an encoder and a verifying decoder per output: 10
// programs at once) queue for the pool, and 10 chapters a second apart on
// 10 s, which the budget allows (a part a second), split into 10 parts
// one after the other (20 on 20 s cost 3.5 s of CPU more and checked the
// same).
// Sampling /proc every 10 ms, no more external programs than the pool's
// size ever run, and the server's and its programs' memory stays under
// 1 GB.
func TestServeBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a server under load")
	}
	need.Program(t, "ffmpeg")
	const memoryBound = 1 << 30
	dir := t.TempDir()
	addrFile := filepath.Join(dir, "addr")
	const password = "bounded test password"
	p := startProc(t, "serve", nil, "serve", "-data", filepath.Join(dir, "data"), "-addr", "127.0.0.1:0", "-addr-file", addrFile,
		"-admin-user", "admin", "-admin-password", password, "-workers", "4", "-rate-limit", "0", "-log-level", "warn")
	base := waitAddrFile(t, p, addrFile)
	size := poolSize(t, p)
	watch := watchProcs(p.cmd.Process.Pid)
	defer watch.end()
	c := &apiClient{t: t, base: base, hc: &http.Client{Timeout: 2 * time.Minute}, basic: [2]string{"admin", password}}
	started := time.Now()

	// 10 MB of random bytes behind an MP3 frame header, as an .mp3.
	random := make([]byte, 10<<20)
	rand.Read(random)
	copy(random, []byte{0xff, 0xfb, 0x90, 0x64})
	junk := c.call("POST", "/api/productions.json", map[string]any{"output_files": []any{map[string]any{"format": "mp3"}}})["uuid"].(string)
	code, body := c.upload(junk, map[string][2]any{"input_file": {"junk.mp3", random}})
	var refused struct {
		FormErrors map[string]string `json:"form_errors"`
	}
	json.Unmarshal(body, &refused)
	msg := refused.FormErrors["input_file"]
	t.Logf("random bytes as MP3: HTTP %d: %s", code, msg)
	if code != http.StatusBadRequest || msg == "" || len(msg) > 200 || strings.Contains(msg, "0x") || strings.Contains(msg, "|") {
		t.Errorf("random bytes as MP3: HTTP %d, input_file error of %d bytes: %.300s", code, len(msg), body)
	}

	opusSplit := []any{map[string]any{"format": "opus", "split_on_chapters": true}}
	track := func(id string, offset float64) map[string]any {
		return map[string]any{"type": "multitrack", "id": id, "offset": offset}
	}
	for _, r := range []struct {
		what    string
		request map[string]any
		field   string // the form error's field starts so
	}{
		{"10,000 chapters 0.5 s apart", map[string]any{"chapters": chapters(10000, 0.5), "output_files": opusSplit}, "chapters"},
		{"track offset 1e12 s", map[string]any{"is_multitrack": true, "multi_input_files": []any{track("a", 0), track("b", 1e12)},
			"output_files": []any{map[string]any{"format": "opus"}}}, "multi_input_files"},
		{"track offset 1e6 s", map[string]any{"is_multitrack": true, "multi_input_files": []any{track("a", 0), track("b", 1e6)},
			"output_files": []any{map[string]any{"format": "opus"}}}, "multi_input_files"},
	} {
		b, _ := json.Marshal(r.request)
		code, body := c.do("POST", "/api/productions.json", "application/json", bytes.NewReader(b))
		var env struct {
			FormErrors map[string]string `json:"form_errors"`
		}
		json.Unmarshal(body, &env)
		var fields []string
		for f := range env.FormErrors {
			if strings.HasPrefix(f, r.field) {
				fields = append(fields, f+": "+env.FormErrors[f])
			}
		}
		t.Logf("%s: HTTP %d: %v", r.what, code, fields)
		if code != http.StatusBadRequest || len(fields) == 0 {
			t.Errorf("%s: HTTP %d, want a form error of %s: %.300s", r.what, code, r.field, body)
		}
	}

	// 5 s for the loads: one production's ten programs run at once
	// whatever the length, which only adds to the CPU time.
	wav5, wav10 := serveWAV(t, 5), serveWAV(t, 10)
	what := map[string]string{} // uuid -> what it is
	submit := func(name string, request map[string]any, files map[string][2]any) string {
		uuid := c.submit(request, files)
		what[uuid] = name
		return uuid
	}
	allowed := submit("10 chapters on 10 s", map[string]any{"chapters": chapters(10, 1), "output_files": opusSplit},
		map[string][2]any{"input_file": {"ten.wav", wav10}})
	lossy := []any{map[string]any{"format": "mp3"}, map[string]any{"format": "mp3-vbr", "suffix": "-vbr"}, map[string]any{"format": "aac"},
		map[string]any{"format": "opus"}, map[string]any{"format": "vorbis"}}
	for i := range 3 {
		submit(fmt.Sprint("five lossy outputs ", i), map[string]any{"output_files": lossy},
			map[string][2]any{"input_file": {fmt.Sprintf("load%d.wav", i), wav5}})
	}
	// The chapter at 999999 s is dropped with a warning once the input's
	// length is known (the warning goes when the production is processed,
	// which starts it with a fresh one).
	far := c.call("POST", "/api/productions.json", map[string]any{
		"chapters":     []any{map[string]any{"start": "00:00:00", "title": "One"}, map[string]any{"start": "277:46:39", "title": "Far"}},
		"output_files": []any{map[string]any{"format": "aac", "split_on_chapters": true}}})["uuid"].(string)
	if code, b := c.upload(far, map[string][2]any{"input_file": {"far.wav", wav5}}); code/100 != 2 {
		t.Fatalf("upload: HTTP %d: %s", code, b)
	}
	if w, _ := c.call("GET", "/api/production/"+far+".json", nil)["warning_message"].(string); !strings.Contains(w, "Far") {
		t.Errorf("the chapter at 999999 s: warning %q, want it named as dropped", w)
	}
	c.call("POST", "/api/production/"+far+"/start.json", nil)
	what[far] = "a chapter at 999999 s, split AAC"

	deadline := time.Now().Add(10 * time.Minute)
	for pending := len(what); pending > 0; {
		pending = 0
		for uuid := range what {
			if !c.status(uuid).Finished() {
				pending++
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d productions still running after 10 minutes", pending)
		}
		time.Sleep(200 * time.Millisecond)
	}
	watch.end()
	t.Logf("the productions ended after %v", time.Since(started).Round(time.Second))
	for uuid, name := range what {
		pr := c.call("GET", "/api/production/"+uuid+".json", nil)
		if s := production.Status(pr["status"].(float64)); s != production.StatusDone {
			t.Errorf("%s: %v (%v), want Done", name, s, pr["error_message"])
		}
	}
	if parts := c.call("GET", "/api/production/"+allowed+".json", nil)["output_files"].([]any); len(parts) != 10 {
		t.Errorf("10 chapters: %d output files listed, want 10 parts", len(parts))
	}
	if parts := c.call("GET", "/api/production/"+far+".json", nil)["output_files"].([]any); len(parts) != 1 {
		t.Errorf("the chapter at 999999 s: %d output files, want the one part before it", len(parts))
	}
	t.Logf("pool of %d: at most %d external programs at once, %d MB of memory at most (server and programs, proportional set size; the server %d MB), %d samples over %v",
		size, watch.maxPrograms, watch.maxMemory>>20, watch.serverMem>>20, watch.samples, time.Since(started).Round(time.Second))
	if watch.maxPrograms > size {
		t.Errorf("%d external programs ran at once, the pool has %d", watch.maxPrograms, size)
	}
	if watch.maxPrograms < min(size, 10) {
		t.Errorf("at most %d programs at once: the load did not reach the pool (%d)", watch.maxPrograms, size)
	}
	if watch.maxMemory > memoryBound {
		t.Errorf("the server and its programs held %d MB, more than %d MB", watch.maxMemory>>20, memoryBound>>20)
	}
	p.stop(t, 15*time.Second)
}

// TestServeSIGTERMUnderLoad: SIGTERM while every slot of the process pool
// is busy ends serve within the default shutdown bound (10 s), leaves no
// program it started running, and hands its productions back: after a
// restart each ends Done exactly once (one completed job, one webhook).
func TestServeSIGTERMUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("runs and restarts a server under load")
	}
	need.Program(t, "ffmpeg")
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	addrFile := filepath.Join(dir, "addr")
	hooks := &hookCounter{calls: map[string]int{}}
	hookSrv := httptest.NewServer(hooks)
	defer hookSrv.Close()
	const password = "sigterm test password"
	args := []string{"serve", "-data", data, "-addr", "127.0.0.1:0", "-addr-file", addrFile, "-admin-user", "admin",
		"-admin-password", password, "-allow-private-fetch", "-workers", "3", "-max-programs", "6", "-log-level", "warn"}
	p1 := startProc(t, "serve 1", nil, args...)
	base := waitAddrFile(t, p1, addrFile)
	c := &apiClient{t: t, base: base, hc: &http.Client{Timeout: time.Minute}, basic: [2]string{"admin", password}}
	// Three lossy outputs, an encoder and a verifying decoder each: one
	// production's encoding fills the pool of 6.
	preset := c.call("POST", "/api/presets.json", map[string]any{"preset_name": "three lossy",
		"algorithms":   map[string]any{"loudnesstarget": -16},
		"output_files": []any{map[string]any{"format": "mp3"}, map[string]any{"format": "opus"}, map[string]any{"format": "aac"}}})["uuid"].(string)
	// 15 s each: the three keep the pool full for a second or more, and
	// the restart processes them whole (3 x 90 s took 30 s of CPU here).
	wav := serveWAV(t, 15)
	var uuids []string
	for i := range 3 {
		uuids = append(uuids, createProduction(c, preset, fmt.Sprintf("episode %d", i), hookSrv.URL, wav))
	}
	watch := watchProcs(p1.cmd.Process.Pid)
	for _, u := range uuids {
		c.call("POST", "/api/production/"+u+"/start.json", nil)
	}
	full := time.Now().Add(2 * time.Minute)
	for watch.programs() < 6 {
		if time.Now().After(full) {
			t.Fatalf("the pool of 6 never filled (at most %d programs)", watch.maxPrograms)
		}
		time.Sleep(5 * time.Millisecond)
	}
	signaled := time.Now()
	p1.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p1.done:
	case <-time.After(15 * time.Second):
		t.Fatal("serve still runs 15 s after SIGTERM")
	}
	took := time.Since(signaled)
	watch.end()
	left := watch.alive()
	t.Logf("SIGTERM with all 6 slots busy: exited after %v (%v); %d processes seen under it, %v still running",
		took.Round(time.Millisecond), p1.cmd.ProcessState, len(watch.seen), left)
	if took > 10*time.Second {
		t.Errorf("serve took %v to exit, more than the default bound of 10 s", took)
	}
	if !p1.cmd.ProcessState.Success() {
		t.Errorf("serve exited with %v", p1.cmd.ProcessState)
	}
	if len(left) > 0 {
		t.Errorf("processes serve started outlive it: %v", left)
	}

	os.Remove(addrFile)
	p2 := startProc(t, "serve 2", nil, args...)
	c.base = waitAddrFile(t, p2, addrFile)
	deadline := time.Now().Add(5 * time.Minute)
	for _, u := range uuids {
		for !c.status(u).Finished() {
			if time.Now().After(deadline) {
				t.Fatalf("%s not finished 5 minutes after the restart: %v", u, c.status(u))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
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
		if s := c.status(u); s != production.StatusDone {
			t.Errorf("%s: %v after the restart", u, s)
		}
	}
	p2.stop(t, 15*time.Second)
	hooks.mu.Lock()
	defer hooks.mu.Unlock()
	for _, u := range uuids {
		if hooks.calls[u] != 1 {
			t.Errorf("%s: webhook called %d times, want once", u, hooks.calls[u])
		}
	}
}
