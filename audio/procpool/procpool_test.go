package procpool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/audiopost/audiopost/internal/need"
)

// The tests run this test binary as their external program: with
// programEnv set, TestMain acts as the program it names instead of
// running the tests.
const programEnv = "PROCPOOL_TEST_PROGRAM"

func TestMain(m *testing.M) {
	switch os.Getenv(programEnv) {
	case "":
		os.Exit(m.Run())
	case "spawn":
		// A child that outlives this program unless its group is killed;
		// its pid goes to the file named by the argument.
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), programEnv+"=sleep")
		if err := child.Start(); err != nil {
			os.Exit(2)
		}
		os.WriteFile(os.Args[1], []byte(strconv.Itoa(child.Process.Pid)), 0o644)
		child.Wait()
	case "sleep":
		time.Sleep(time.Hour)
	case "out":
		fmt.Println("out")
		fmt.Fprintln(os.Stderr, "err")
	case "fail":
		fmt.Fprintln(os.Stderr, "why")
		os.Exit(3)
	case "stderr":
		fmt.Fprintln(os.Stderr, "both")
	case "write":
		// Once its input ends, 100 KB into the file named by the
		// argument.
		io.Copy(io.Discard, os.Stdin)
		if err := os.WriteFile(os.Args[1], make([]byte, 100<<10), 0o644); err != nil {
			os.Exit(4)
		}
	}
	os.Exit(0)
}

// program is the test program acting as name, under ctx.
func program(ctx context.Context, name string, args ...string) *Cmd {
	c := Command(ctx, os.Args[0], args...)
	c.Env = append(os.Environ(), programEnv+"="+name)
	return c
}

// catPath is cat's path, which needCat finds: the tests that start held
// programs call it first, on the test's goroutine.
var catPath string

func needCat(t *testing.T) {
	t.Helper()
	catPath = need.Program(t, "cat")
}

// held is a program that runs until release: cat with its input on a
// pipe the test holds. (The test binary acting as cat would do too, but
// under the race detector it takes a second to start.)
type held struct {
	cmd *Cmd
	w   io.WriteCloser
}

// startHeld starts a held program under ctx; it blocks while the pool has
// no slot for it.
func startHeld(t *testing.T, ctx context.Context) (*held, error) {
	t.Helper()
	c := Command(ctx, catPath)
	w, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		w.Close()
		return nil, err
	}
	return &held{cmd: c, w: w}, nil
}

func (h *held) release() error {
	h.w.Close()
	return h.cmd.Wait()
}

// waitQueued waits until n starts or reservations wait in line.
func waitQueued(p *Pool, n int) {
	for {
		p.mu.Lock()
		q := p.waiters.Len()
		p.mu.Unlock()
		if q == n {
			return
		}
		runtime.Gosched()
	}
}

// blocked starts a held program that must wait in line behind the ones
// already waiting, and returns what checks that it has not started, then
// gives up its wait.
func blocked(t *testing.T, p *Pool, ctx context.Context) func() {
	t.Helper()
	p.mu.Lock()
	before := p.waiters.Len()
	p.mu.Unlock()
	running := p.Running()
	ctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		h, err := startHeld(t, ctx)
		if err == nil {
			h.release()
		}
		errc <- err
	}()
	waitQueued(p, before+1)
	return func() {
		t.Helper()
		if n := p.Running(); n != running {
			t.Errorf("%d programs running, want %d: one passed the line", n, running)
		}
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("a program waiting for a slot: %v", err)
		}
	}
}

// TestBound starts four times as many programs as the pool has slots, all
// at once: no more than the pool's size ever run together, and all run.
func TestBound(t *testing.T) {
	needCat(t)
	p := New(Config{Size: 3})
	ctx := With(t.Context(), p)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ran := 0
	for range 12 {
		wg.Go(func() {
			h, err := startHeld(t, ctx)
			if err != nil {
				t.Error(err)
				return
			}
			if n := p.Running(); n > 3 {
				t.Errorf("%d programs running in a pool of 3", n)
			}
			if err := h.release(); err != nil {
				t.Error(err)
			}
			mu.Lock()
			ran++
			mu.Unlock()
		})
	}
	wg.Wait()
	if ran != 12 || p.Peak() > 3 || p.Running() != 0 {
		t.Errorf("ran %d of 12, peak %d, still running %d", ran, p.Peak(), p.Running())
	}
	if n := p.Starts("cat"); n != 12 {
		t.Errorf("Starts(cat) = %d after 12 programs", n)
	}
}

// TestReservationsCannotDeadlock runs works that each need several
// programs at once, more than half the pool, from more goroutines than
// the pool has slots. Taking the slots one by one, two works would each
// hold some and wait for the rest forever; with Reserve every work
// finishes.
func TestReservationsCannotDeadlock(t *testing.T) {
	needCat(t)
	p := New(Config{Size: 5})
	ctx, cancel := context.WithTimeout(With(t.Context(), p), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for i := range 8 {
		need := 3 + i%3 // 3 to 5 of 5
		wg.Go(func() {
			rctx, release, err := Reserve(ctx, need)
			if err != nil {
				t.Error(err)
				return
			}
			defer release()
			var hs []*held
			for range need {
				h, err := startHeld(t, rctx)
				if err != nil {
					t.Error(err)
					return
				}
				hs = append(hs, h)
			}
			for _, h := range hs {
				h.release()
			}
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatal("the works did not finish: deadlocked")
	}
	if p.Overdrawn() != 0 || p.Peak() > 5 {
		t.Errorf("overdrawn %d, peak %d", p.Overdrawn(), p.Peak())
	}
}

// TestReservationFirst: a reservation's programs start at once although
// the rest of the pool is busy, a program outside it waits, and slots a
// reservation did not use go back to the pool when it ends.
func TestReservationFirst(t *testing.T) {
	needCat(t)
	p := New(Config{Size: 3})
	ctx := With(t.Context(), p)
	rctx, release, err := Reserve(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	outside, err := startHeld(t, ctx)
	if err != nil {
		t.Fatal(err)
	}
	in, err := startHeld(t, rctx)
	if err != nil {
		t.Fatal(err)
	}
	// The pool is full (2 reserved, 1 outside): another outside waits.
	blocked(t, p, ctx)()
	// The reservation's second slot is still free.
	in2, err := startHeld(t, rctx)
	if err != nil {
		t.Fatal(err)
	}
	in.release()
	in2.release()
	release()
	// Both reserved slots are back: two outside programs run beside the first.
	a, err := startHeld(t, ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := startHeld(t, ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []*held{outside, a, b} {
		h.release()
	}
	if p.Overdrawn() != 0 {
		t.Errorf("overdrawn %d", p.Overdrawn())
	}
}

// TestReservationEndsWhileRunning: a program still running when its
// reservation ends keeps its slot until it exits, and then frees it.
func TestReservationEndsWhileRunning(t *testing.T) {
	needCat(t)
	p := New(Config{Size: 2})
	ctx := With(t.Context(), p)
	rctx, release, err := Reserve(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	h, err := startHeld(t, rctx)
	if err != nil {
		t.Fatal(err)
	}
	release()
	a, err := startHeld(t, ctx) // the unused reserved slot
	if err != nil {
		t.Fatal(err)
	}
	blocked(t, p, ctx)()
	h.release()
	b, err := startHeld(t, ctx) // the slot h had
	if err != nil {
		t.Fatal(err)
	}
	a.release()
	b.release()
}

// TestOverdraw: a program beyond its reservation is counted and waits
// for a slot of the pool like any other.
func TestOverdraw(t *testing.T) {
	needCat(t)
	p := New(Config{Size: 2})
	rctx, release, err := Reserve(With(t.Context(), p), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	a, err := startHeld(t, rctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := startHeld(t, rctx)
	if err != nil {
		t.Fatal(err)
	}
	a.release()
	b.release()
	if p.Overdrawn() != 1 {
		t.Errorf("overdrawn %d, want 1", p.Overdrawn())
	}
}

func TestReserveLimits(t *testing.T) {
	p := New(Config{Size: 4})
	ctx := With(t.Context(), p)
	if _, _, err := Reserve(ctx, 5); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a reservation of 5 in a pool of 4: %v", err)
	}
	rctx, release, err := Reserve(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if inner, rel, err := Reserve(rctx, 2); err != nil || inner != rctx {
		t.Errorf("a reservation of 2 inside one of 3: %v", err)
	} else {
		rel()
	}
	if _, _, err := Reserve(rctx, 4); err == nil {
		t.Error("a reservation of 4 inside one of 3 succeeded")
	}
}

// TestFirstComeFirstServed: a reservation waiting for three slots is not
// passed by single programs that came after it.
func TestFirstComeFirstServed(t *testing.T) {
	needCat(t)
	p := New(Config{Size: 3})
	ctx := With(t.Context(), p)
	first, err := startHeld(t, ctx)
	if err != nil {
		t.Fatal(err)
	}
	reserved := make(chan func())
	go func() {
		_, release, err := Reserve(ctx, 3)
		if err != nil {
			t.Error(err)
			close(reserved)
			return
		}
		reserved <- release
	}()
	waitQueued(p, 1)
	// Two slots are free, but the reservation came first.
	blocked(t, p, ctx)()
	first.release()
	release := <-reserved
	if release == nil {
		t.Fatal("no reservation")
	}
	release()
}

// TestCancelKillsGroup: when the context is done, the program and what it
// started are killed, and Wait returns.
func TestCancelKillsGroup(t *testing.T) {
	ctx, cancel := context.WithCancel(With(t.Context(), New(Config{Size: 2})))
	pidFile := filepath.Join(t.TempDir(), "pid")
	// A program whose child outlives it unless its group is killed.
	c := program(ctx, "spawn", pidFile)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	var child int
	for child == 0 {
		b, _ := os.ReadFile(pidFile)
		child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		runtime.Gosched()
	}
	cancel()
	if err := c.Wait(); err == nil {
		t.Error("a killed program reported success")
	}
	if alive(child) {
		t.Errorf("the program's child %d outlived it", child)
	}
}

// alive reports whether pid runs (a zombie waiting for its parent counts
// as gone).
func alive(pid int) bool {
	for range 100 {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return syscall.Kill(pid, 0) == nil
		}
		// The state follows the command name in parentheses.
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i > 0 && len(s) > i+2 && (s[i+2] == 'Z' || s[i+2] == 'X') {
			return false
		}
		// A SIGKILL is delivered at once, but the state may lag a moment.
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// TestClose kills what runs and fails what waits.
func TestClose(t *testing.T) {
	needCat(t)
	p := New(Config{Size: 1})
	ctx := With(t.Context(), p)
	h, err := startHeld(t, ctx)
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error)
	go func() {
		_, err := startHeld(t, ctx)
		waited <- err
	}()
	waitQueued(p, 1)
	if n := p.Close(); n != 1 {
		t.Errorf("Close killed %d programs, want 1", n)
	}
	if err := <-waited; !errors.Is(err, ErrClosed) {
		t.Errorf("a waiting program: %v", err)
	}
	if err := h.cmd.Wait(); err == nil {
		t.Error("the killed program reported success")
	}
	if _, err := startHeld(t, ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("a program after Close: %v", err)
	}
	if p.Running() != 0 {
		t.Errorf("%d still running", p.Running())
	}
}

func TestOutput(t *testing.T) {
	ctx := With(t.Context(), New(Config{Size: 1}))
	out, err := program(ctx, "out").Output()
	if err != nil || string(out) != "out\n" {
		t.Errorf("Output: %q, %v", out, err)
	}
	_, err = program(ctx, "fail").Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || string(ee.Stderr) != "why\n" || ee.ExitCode() != 3 {
		t.Errorf("Output of a failure: %v (%q)", err, ee)
	}
	out, err = program(ctx, "stderr").CombinedOutput()
	if err != nil || string(out) != "both\n" {
		t.Errorf("CombinedOutput: %q, %v", out, err)
	}
	if n := From(ctx).Running(); n != 0 {
		t.Errorf("%d running after the programs ended", n)
	}
}

func TestDefaultSize(t *testing.T) {
	t.Setenv(EnvSize, "")
	if n := DefaultSize(); n < 2 || n > 64 {
		t.Errorf("DefaultSize %d", n)
	}
	t.Setenv(EnvSize, "5")
	if n := DefaultSize(); n != 5 {
		t.Errorf("DefaultSize with %s=5: %d", EnvSize, n)
	}
}

// TestFileSizeLimit: a program that writes 100 KB into a file under a
// FileSizeLimit of 4 KB is ended by the kernel with the file cut at 4 KB
// (Linux).
func TestFileSizeLimit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("FileSizeLimit is applied on Linux only")
	}
	path := filepath.Join(t.TempDir(), "out")
	c := program(t.Context(), "write", path)
	c.FileSizeLimit = 4 << 10
	w, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close() // the program writes once it has started and been limited
	err = c.Wait()
	fi, serr := os.Stat(path)
	if serr != nil {
		t.Fatal(serr)
	}
	if err == nil || fi.Size() != 4<<10 {
		t.Errorf("a program writing 100 KB under a limit of 4 KB: %v, file of %d bytes", err, fi.Size())
	}
}
