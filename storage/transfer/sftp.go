package transfer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

type sftpConn struct {
	ssh  *ssh.Client
	c    *sftp.Client
	cfg  config
	base string
}

// openSFTP logs in with the password and/or private key. An empty
// host_key accepts any server key; setting it to the server's
// "SHA256:..." fingerprint pins it.
func openSFTP(ctx context.Context, cfg config, opt Options) (Conn, error) {
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	var auth []ssh.AuthMethod
	if cfg.PrivateKey != "" {
		signer, err := sshSigner(cfg.PrivateKey)
		if err != nil {
			return nil, settingsError("private_key", "is not a private key in PEM or OpenSSH format: %v", err)
		}
		auth = append(auth, ssh.PublicKeys(signer))
	}
	if cfg.Password != "" {
		auth = append(auth, ssh.Password(cfg.Password))
	}
	hostKey := func(_ string, _ net.Addr, key ssh.PublicKey) error {
		if cfg.HostKey != "" && ssh.FingerprintSHA256(key) != cfg.HostKey {
			return fmt.Errorf("%w: server has %s, host_key is %s", ErrHostKey, ssh.FingerprintSHA256(key), cfg.HostKey)
		}
		return nil
	}
	dctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	conn, err := opt.Dial(dctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("transfer: sftp %s: %w", addr, err)
	}
	stop := watch(dctx, conn)
	sc, chans, reqs, err := ssh.NewClientConn(conn, addr, &ssh.ClientConfig{
		User: cfg.Username, Auth: auth, HostKeyCallback: hostKey, Timeout: opt.Timeout,
	})
	stop()
	if err != nil {
		conn.Close()
		switch {
		case errors.Is(err, ErrHostKey):
			return nil, err
		case isAuthError(err):
			return nil, fmt.Errorf("%w: sftp %s: %v", ErrAuth, addr, err)
		case dctx.Err() != nil:
			return nil, fmt.Errorf("transfer: sftp %s: %w", addr, dctx.Err())
		}
		return nil, fmt.Errorf("transfer: sftp %s: %w", addr, err)
	}
	client := ssh.NewClient(sc, chans, reqs)
	c, err := sftp.NewClient(client)
	if err != nil {
		client.Close()
		return nil, fmt.Errorf("transfer: sftp %s: %w", addr, err)
	}
	return &sftpConn{ssh: client, c: c, cfg: cfg, base: cfg.Path}, nil
}

// sshSigner parses a private key in PEM or OpenSSH format.
func sshSigner(key string) (ssh.Signer, error) { return ssh.ParsePrivateKey([]byte(key)) }

// isAuthError recognises x/crypto/ssh's refusal of every auth method,
// which has no exported type.
func isAuthError(err error) bool {
	s := err.Error()
	return strings.Contains(s, "unable to authenticate") || strings.Contains(s, "no supported methods remain")
}

func (s *sftpConn) path(name string) string { return path.Join(s.base, name) }

func (s *sftpConn) List(ctx context.Context) ([]Entry, error) {
	fis, err := s.c.ReadDirContext(ctx, s.base)
	if err != nil {
		return nil, fmt.Errorf("transfer: sftp list %s: %w", s.base, err)
	}
	var out []Entry
	for _, fi := range fis {
		if !fi.Mode().IsRegular() || checkName(fi.Name()) != nil {
			continue
		}
		out = append(out, Entry{Name: fi.Name(), Size: fi.Size(), Modified: fi.ModTime()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (s *sftpConn) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	f, err := s.c.Open(s.path(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	if err != nil {
		return nil, fmt.Errorf("transfer: sftp get %s: %w", name, err)
	}
	return &ctxReader{ctx: ctx, rc: f}, nil
}

func (s *sftpConn) Put(ctx context.Context, name string, r io.Reader) error {
	if err := checkName(name); err != nil {
		return err
	}
	tmp := s.path(tempName(name))
	f, err := s.c.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return fmt.Errorf("transfer: sftp put %s: %w", name, err)
	}
	_, err = io.Copy(f, &ctxReader{ctx: ctx, rc: io.NopCloser(r)})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = s.c.Chmod(tmp, os.FileMode(s.cfg.Perm))
	}
	if err == nil {
		if _, ok := s.c.HasExtension("posix-rename@openssh.com"); ok {
			err = s.c.PosixRename(tmp, s.path(name))
		} else {
			s.c.Remove(s.path(name)) // plain SFTP rename refuses to overwrite
			err = s.c.Rename(tmp, s.path(name))
		}
	}
	if err != nil {
		s.c.Remove(tmp)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("transfer: sftp put %s: %w", name, err)
	}
	return nil
}

func (s *sftpConn) URL(name string) string { return publicURL(s.cfg.BaseURL, name) }

func (s *sftpConn) Close() error {
	s.c.Close()
	return s.ssh.Close()
}
