package procpool

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"sync"
)

// Cmd is an external program that runs in a slot of a pool. Set up its
// exec.Cmd (Stdin, Stdout, Stderr, ExtraFiles, Dir, Env) as for
// os/exec; Start, Run, Output and CombinedOutput take the slot, Wait
// gives it back. SysProcAttr, Cancel and WaitDelay are the pool's: leave
// them.
type Cmd struct {
	*exec.Cmd
	// FileSizeLimit, when positive, is the most bytes any file the
	// program writes may take (pipes are not files): on Linux its
	// RLIMIT_FSIZE is set to it as soon as it has started, and the
	// kernel cuts a file there and ends the program with SIGXFSZ; a
	// program that writes its file only from its input, or after
	// opening its own, has not written any of it by then. Elsewhere it
	// is not applied: callers check the size of what was written when
	// the program has exited, as they should on Linux too, where a file
	// cut at the limit is exactly this long.
	FileSizeLimit int64
	ctx           context.Context
	pool          *Pool
	release       func()
	once          sync.Once
}

// Command returns the program name with args, to be run under ctx (see
// exec.CommandContext): when ctx is done, its whole process group is
// killed, and Wait returns at most WaitDelay later.
func Command(ctx context.Context, name string, args ...string) *Cmd {
	c := exec.CommandContext(ctx, name, args...)
	c.WaitDelay = WaitDelay
	setGroup(c)
	return &Cmd{Cmd: c, ctx: ctx, pool: From(ctx)}
}

// Start waits for a slot (one of the context's reservation first, see
// Reserve) and starts the program. An error leaves no slot taken.
func (c *Cmd) Start() error {
	release, err := c.pool.slot(c.ctx)
	if err != nil {
		return err
	}
	if err := c.Cmd.Start(); err != nil {
		release()
		return err
	}
	if c.FileSizeLimit > 0 {
		limitFileSize(c.Process.Pid, c.FileSizeLimit)
	}
	c.release = release
	c.pool.started(c)
	return nil
}

// Wait waits for the program to exit (see exec.Cmd.Wait) and gives its
// slot back.
func (c *Cmd) Wait() error {
	err := c.Cmd.Wait()
	c.done()
	return err
}

func (c *Cmd) done() {
	c.once.Do(func() {
		if c.release != nil {
			c.pool.exited(c)
			c.release()
		}
	})
}

// Run starts the program and waits for it.
func (c *Cmd) Run() error {
	if err := c.Start(); err != nil {
		return err
	}
	return c.Wait()
}

// Output runs the program and returns its standard output, as
// exec.Cmd.Output does (an *exec.ExitError carries the start of its
// standard error when Stderr was not set).
func (c *Cmd) Output() ([]byte, error) {
	if c.Stdout != nil {
		return nil, errors.New("procpool: Stdout already set")
	}
	var out bytes.Buffer
	c.Stdout = &out
	var stderr *headBuffer
	if c.Stderr == nil {
		stderr = &headBuffer{}
		c.Stderr = stderr
	}
	err := c.Run()
	var ee *exec.ExitError
	if stderr != nil && errors.As(err, &ee) {
		ee.Stderr = stderr.b
	}
	return out.Bytes(), err
}

// CombinedOutput runs the program and returns its standard output and
// standard error together.
func (c *Cmd) CombinedOutput() ([]byte, error) {
	if c.Stdout != nil || c.Stderr != nil {
		return nil, errors.New("procpool: Stdout or Stderr already set")
	}
	var b syncBuffer
	c.Stdout, c.Stderr = &b, &b
	err := c.Run()
	return b.Bytes(), err
}

// Kill kills the program's process group now, the normal way to stop a
// program that is no longer wanted; Wait still has to be called.
func (c *Cmd) Kill() error {
	if c.Process == nil {
		return nil
	}
	return c.Cancel()
}

// headBuffer keeps the first 32 KB written to it.
type headBuffer struct{ b []byte }

func (h *headBuffer) Write(p []byte) (int, error) {
	if room := 32<<10 - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(len(p), room)]...)
	}
	return len(p), nil
}

// syncBuffer is a bytes.Buffer two copying goroutines may write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Bytes()
}
