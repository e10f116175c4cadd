package httpapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/webhook"
)

// TestProgressAndDeliveries: status.json and the production carry the
// runner's progress while processing and 100 once Done; the production
// lists its webhook calls as the outbox has them, and only its owner's.
func TestProgressAndDeliveries(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	id := e.create(e.keyA, map[string]any{"metadata": map[string]any{"title": "P"}, "webhook": "https://hook.example.org/p?token=s"})
	status := func() map[string]any {
		return e.must(e.req("GET", "/api/production/"+id+"/status.json", e.keyA, nil)).obj(t)
	}
	if st := status(); st["progress"] != 0.0 {
		t.Errorf("a new production: %v", st)
	}
	if err := e.store.SetStatus(ctx, e.userA.ID, storage.KindProduction, id, int(production.StatusAudioEncoding)); err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetProgress(ctx, e.userA.ID, id, 57); err != nil {
		t.Fatal(err)
	}
	if st := status(); st["progress"] != 57.0 || st["status_string"] != "Audio Encoding" {
		t.Errorf("while encoding: %v", st)
	}
	if p := e.must(e.req("GET", "/api/production/"+id+".json", e.keyA, nil)).obj(t); p["progress"] != 57.0 {
		t.Errorf("production progress %v", p["progress"])
	}

	// Done, with a webhook call that failed once and one pending.
	err := e.store.WithTx(ctx, func(tx storage.Tx) error {
		if err := tx.SetStatus(ctx, e.userA.ID, storage.KindProduction, id, int(production.StatusDone)); err != nil {
			return err
		}
		return webhook.Enqueue(ctx, tx, e.userA.ID, id, "https://hook.example.org/p?token=s", 3, "Done")
	})
	if err != nil {
		t.Fatal(err)
	}
	d, err := e.store.ClaimDelivery(ctx, "sender", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	d.HTTPStatus = 503
	if err := e.store.DeliveryFailed(ctx, d, "form request: HTTP 503; multipart request: HTTP 503", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if st := status(); st["progress"] != 100.0 {
		t.Errorf("Done: %v", st)
	}
	p := e.must(e.req("GET", "/api/production/"+id+".json", e.keyA, nil)).obj(t)
	ds, _ := p["webhook_deliveries"].([]any)
	if len(ds) != 1 {
		t.Fatalf("webhook_deliveries %v", p["webhook_deliveries"])
	}
	got := ds[0].(map[string]any)
	if got["status"] != 3.0 || got["state"] != "pending" || got["attempts"] != 1.0 || got["http_status"] != 503.0 ||
		got["error"] != "form request: HTTP 503; multipart request: HTTP 503" || got["last_attempt"] == nil || got["next_attempt"] == nil {
		t.Errorf("delivery %v", got)
	}
	if _, leaked := got["url"]; leaked {
		t.Errorf("the delivery shows its URL: %v", got)
	}
	// Another user sees neither the production nor its calls.
	e.wantErr(e.req("GET", "/api/production/"+id+".json", e.keyB, nil), 404, "not_found")
}
