package production_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/sqlstore"
)

// TestServiceWarn: a warning after processing (a webhook that failed)
// lands on a finished production, once, and leaves one that is being
// processed again alone.
func TestServiceWarn(t *testing.T) {
	ctx := context.Background()
	st, err := sqlstore.Open(ctx, filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	u := storage.User{Username: "u"}
	if err := st.CreateUser(ctx, &u); err != nil {
		t.Fatal(err)
	}
	p := &production.Production{UUID: storage.NewUUID(), Status: production.StatusDone}
	p.SetWarning(production.StatusAudioProcessing, "input is clipped")
	svc := production.Service{Store: st}
	if err := svc.Create(ctx, u.ID, p, false); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := svc.Warn(ctx, u.ID, p.UUID, "webhook to https://h.example/x not delivered: HTTP 410"); err != nil {
			t.Fatal(err)
		}
	}
	got, _, err := production.Load(ctx, st, u.ID, p.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if got.WarningMessage != "input is clipped; webhook to https://h.example/x not delivered: HTTP 410" ||
		got.WarningStatus == nil || *got.WarningStatus != production.StatusDone || got.Status != production.StatusDone {
		t.Errorf("warning %q at %v, status %v", got.WarningMessage, got.WarningStatus, got.Status)
	}
	if err := st.SetStatus(ctx, u.ID, storage.KindProduction, p.UUID, int(production.StatusAudioEncoding)); err != nil {
		t.Fatal(err)
	}
	if err := svc.Warn(ctx, u.ID, p.UUID, "webhook failed again"); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := production.Load(ctx, st, u.ID, p.UUID); strings.Contains(got.WarningMessage, "again") {
		t.Errorf("a production being processed got the warning: %q", got.WarningMessage)
	}
	if err := svc.Warn(ctx, u.ID, "gone", "x"); err == nil {
		t.Error("a warning on a missing production succeeded")
	}
}
