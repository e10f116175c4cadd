// Package icecast starts a real Icecast server (Debian's icecast2) for
// tests: on a loopback port, with a configuration the test writes, as an
// unprivileged process (icecast refuses to run as root; as root it is
// started as nobody). Tests push programmes into mounts with ffmpeg, run
// live streams between mounts and read mounts back.
package icecast

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/audiopost/audiopost/internal/need"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Password is the source and admin password of test servers.
const Password = "hackme"

// Server is a running icecast2.
type Server struct {
	t    testing.TB
	bin  string
	dir  string
	conf string
	Port int
	cmd  *exec.Cmd
	done chan struct{}
	// pushers holds the last Pusher started for each mount, whose end
	// WaitMount reports at once instead of waiting out its context.
	mu      sync.Mutex
	pushers map[string]*Pusher
}

// Start starts icecast2 on a free loopback port; it is stopped when the
// test ends. Without icecast2 the test is skipped (it fails under CI).
func Start(t testing.TB) *Server {
	t.Helper()
	bin := need.Program(t, "icecast2")
	dir, err := os.MkdirTemp("", "icecast-test-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// The server drops to nobody when started as root: it must be able to
	// write its logs.
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	s := &Server{t: t, bin: bin, dir: dir}
	s.conf = filepath.Join(dir, "icecast.xml")
	// The free port may be taken by another program before the server
	// binds it (tests of other packages start servers too): the server
	// then exits at once, and another port is tried.
	for try := 1; ; try++ {
		s.Port = freePort(t)
		if err := os.WriteFile(s.conf, []byte(s.config()), 0o644); err != nil {
			t.Fatal(err)
		}
		err := s.start()
		if err == nil {
			break
		}
		if !errors.Is(err, errExited) || try == 3 {
			t.Fatal(err)
		}
	}
	t.Cleanup(s.Stop)
	return s
}

// errExited means the server exited before it answered.
var errExited = errors.New("icecast2 exited")

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func (s *Server) config() string {
	owner := ""
	if os.Geteuid() == 0 {
		owner = "<changeowner><user>nobody</user><group>nogroup</group></changeowner>"
	}
	return fmt.Sprintf(`<icecast>
  <location>test</location><admin>test@localhost</admin>
  <limits><clients>100</clients><sources>20</sources><queue-size>524288</queue-size>
    <client-timeout>30</client-timeout><header-timeout>15</header-timeout><source-timeout>10</source-timeout>
    <burst-on-connect>0</burst-on-connect><burst-size>0</burst-size></limits>
  <authentication><source-password>%[1]s</source-password><relay-password>%[1]s</relay-password>
    <admin-user>admin</admin-user><admin-password>%[1]s</admin-password></authentication>
  <hostname>127.0.0.1</hostname>
  <listen-socket><port>%[2]d</port><bind-address>127.0.0.1</bind-address></listen-socket>
  <fileserve>1</fileserve>
  <paths><basedir>/usr/share/icecast2</basedir><logdir>%[3]s</logdir><webroot>/usr/share/icecast2/web</webroot>
    <adminroot>/usr/share/icecast2/admin</adminroot></paths>
  <logging><accesslog>access.log</accesslog><errorlog>error.log</errorlog><loglevel>2</loglevel></logging>
  <security><chroot>0</chroot>%[4]s</security>
</icecast>
`, Password, s.Port, s.dir, owner)
}

func (s *Server) start() error {
	var out bytes.Buffer
	s.cmd = exec.Command(s.bin, "-c", s.conf)
	s.cmd.Stdout, s.cmd.Stderr = &out, &out
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("starting icecast2: %v", err)
	}
	s.done = make(chan struct{})
	go func() { s.cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(s.HTTP("/status-json.xsl"))
		if err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-s.done:
			log, _ := os.ReadFile(filepath.Join(s.dir, "error.log"))
			return fmt.Errorf("%w on port %d: %s %s", errExited, s.Port, out.String(), log)
		default:
		}
		if time.Now().After(deadline) {
			s.Stop()
			return fmt.Errorf("icecast2 did not answer on port %d: %v", s.Port, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop stops the server (killing its sources' and listeners' connections).
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.done:
		return
	default:
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.done
}

// Restart stops the server and starts it again on the same port, as an
// operator's restart does.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	if err := s.start(); err != nil {
		s.t.Fatal(err)
	}
}

// HTTP returns the server's http URL of path.
func (s *Server) HTTP(path string) string {
	return "http://127.0.0.1:" + strconv.Itoa(s.Port) + path
}

// Source returns the icecast:// URL a source pushes mount to.
func (s *Server) Source(mount string) string {
	return fmt.Sprintf("icecast://source:%s@127.0.0.1:%d%s", Password, s.Port, mount)
}

// WaitMount waits until mount has a source, or fails the test: when ctx
// ends, or at once when the Pusher last started for mount has ended
// (with what ffmpeg said), since no source will come then.
func (s *Server) WaitMount(ctx context.Context, mount string) {
	s.t.Helper()
	s.mu.Lock()
	p := s.pushers[mount]
	s.mu.Unlock()
	var ended <-chan struct{}
	if p != nil {
		ended = p.done
	}
	for {
		req, _ := http.NewRequestWithContext(ctx, "GET", s.HTTP(mount), nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			ok := resp.StatusCode == 200
			if ok {
				// A byte of audio: the source is sending.
				_, err = io.ReadFull(resp.Body, make([]byte, 1))
			}
			resp.Body.Close()
			if ok && err == nil {
				return
			}
		}
		select {
		case <-ctx.Done():
			s.t.Fatalf("mount %s never came up: %v", mount, ctx.Err())
		case <-ended:
			s.t.Fatalf("mount %s never came up: its source ended (%v): %s", mount, p.cmd.ProcessState, p.out.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Pusher is an ffmpeg process sending a file to a mount at its own pace,
// as a live source does.
type Pusher struct {
	cmd  *exec.Cmd
	done chan struct{}
	out  bytes.Buffer
}

// Push starts ffmpeg sending file (looped when loop is set) to mount as
// MP3 at kbps, in real time. The pusher is killed when the test ends.
func (s *Server) Push(t testing.TB, mount, file string, kbps int, loop bool) *Pusher {
	t.Helper()
	ff := need.Program(t, "ffmpeg")
	args := []string{"-nostdin", "-hide_banner", "-v", "error", "-re"}
	if loop {
		args = append(args, "-stream_loop", "-1")
	}
	args = append(args, "-i", file, "-c:a", "libmp3lame", "-b:a", strconv.Itoa(kbps)+"k",
		"-content_type", "audio/mpeg", "-flush_packets", "1", "-f", "mp3", s.Source(mount))
	p := &Pusher{cmd: exec.Command(ff, args...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(p.Kill)
	s.mu.Lock()
	if s.pushers == nil {
		s.pushers = make(map[string]*Pusher)
	}
	s.pushers[mount] = p
	s.mu.Unlock()
	return p
}

// Kill stops the pusher at once, as a source that drops.
func (p *Pusher) Kill() {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// Done is closed when the pusher has ended (the file was sent, or Kill).
func (p *Pusher) Done() <-chan struct{} { return p.done }
