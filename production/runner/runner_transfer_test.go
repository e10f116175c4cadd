package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/production/runner"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/transfer"
	"github.com/audiopost/audiopost/storage/transfer/transfertest"
)

// After processing, outputs are copied to the outgoing services: every
// file to file-storage services by default, only the routed ones where an
// output names services; a failing service leaves the production Done
// with a warning and its own error.
func TestRunnerOutgoingTransfers(t *testing.T) {
	sftpSrv := transfertest.Start(t, "sftp")
	davSrv := transfertest.Start(t, "webdav")
	e := newRunnerEnv(t, time.Hour)
	ctx := context.Background()
	sftpSvc := sftpSrv.Service(e.user.ID, map[string]any{"base_url": "https://cdn.example.org/pod/"})
	davSvc := davSrv.Service(e.user.ID, nil)
	badSvc := davSrv.Service(e.user.ID, map[string]any{"password": "wrong"})
	for _, s := range []*storage.Service{&sftpSvc, &davSvc, &badSvc} {
		if err := e.store.CreateService(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	req := fmt.Sprintf(`{"input_file": "https://example.org/in.wav", "output_basename": "out", "webhook": "http://example.invalid/hook",
		"outgoing_services": [{"uuid": %q}, {"uuid": %q, "sharing": "private", "track_type": "episode"}, {"uuid": %q}],
		"output_files": [{"format": "wav"}, {"format": "flac", "outgoing_services": [%q]}]}`,
		sftpSvc.UUID, davSvc.UUID, badSvc.UUID, sftpSvc.UUID)
	const rate = 44100
	uuid, _ := e.addProduction(req, testaudio.EncodeWAV(t, testaudio.SpeechLike(rate, 2, 0.05), rate, 16))
	r := e.runner(runner.Config{Transfer: transfer.Options{}})
	if ran, err := r.RunOnce(ctx, "w1"); err != nil || !ran {
		t.Fatalf("RunOnce = %v, %v", ran, err)
	}
	p := e.production(uuid)
	if p.Status != production.StatusDone {
		t.Fatalf("status %v, error %q", p.Status, p.ErrorMessage)
	}
	blobBytes := func(name string) []byte {
		rc, _, err := e.blobs.Open(ctx, production.OutputKey(uuid, name))
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		b, _ := io.ReadAll(rc)
		return b
	}
	files := func(dir string) []string {
		ents, _ := os.ReadDir(dir)
		var out []string
		for _, e := range ents {
			out = append(out, e.Name())
		}
		return out
	}
	if got := files(sftpSrv.Dir); !slices.Equal(got, []string{"out.flac", "out.wav"}) {
		t.Errorf("sftp server has %q, want out.flac and out.wav", got)
	}
	if got := files(davSrv.Dir); !slices.Equal(got, []string{"out.wav"}) {
		t.Errorf("webdav server has %q, want only out.wav (flac is routed to sftp only)", got)
	}
	for _, name := range []string{"out.wav", "out.flac"} {
		got, _ := os.ReadFile(filepath.Join(sftpSrv.Dir, name))
		if !bytes.Equal(got, blobBytes(name)) || len(got) == 0 {
			t.Errorf("%s on the sftp server differs from the output (%d bytes)", name, len(got))
		}
	}
	good, dav, bad := p.OutgoingServices[0], p.OutgoingServices[1], p.OutgoingServices[2]
	if good.TransferSuccess == nil || !*good.TransferSuccess || good.ErrorMessage != "" ||
		!slices.Equal(good.ResultURLs, []string{"https://cdn.example.org/pod/out.wav", "https://cdn.example.org/pod/out.flac"}) {
		t.Errorf("sftp transfer: %+v", good)
	}
	if dav.TransferSuccess == nil || !*dav.TransferSuccess || !slices.Equal(dav.ResultURLs, []string{"http://" + davSrv.Addr + "/out.wav"}) {
		t.Errorf("webdav transfer (no base_url: the WebDAV URL): %+v", dav)
	}
	if bad.TransferSuccess == nil || *bad.TransferSuccess || !strings.Contains(bad.ErrorMessage, "refused") {
		t.Errorf("failing transfer: %+v", bad)
	}
	if p.WarningStatus == nil || *p.WarningStatus != production.StatusOutgoingTransfer || !strings.Contains(p.WarningMessage, "outgoing file transfer failed") {
		t.Errorf("warning %v %q", p.WarningStatus, p.WarningMessage)
	}
	// WebDAV has no permissions: sharing is named as ignored, like the
	// hosting platforms' track_type.
	if !strings.Contains(p.WarningMessage, "track_type, sharing of webdav test server (webdav)") {
		t.Errorf("warning %q does not name the ignored parameters", p.WarningMessage)
	}
	if n := e.deliveries(uuid); n != 1 {
		t.Errorf("%d webhook deliveries, want 1", n)
	}
}
