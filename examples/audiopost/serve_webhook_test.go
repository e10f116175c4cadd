package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestServeWebhookFailureWarns: a webhook the receiver refuses for good
// shows on the production, not only in the server's log: a warning naming
// the hook and the answer, and the call in webhook_deliveries.
func TestServeWebhookFailureWarns(t *testing.T) {
	var calls atomic.Int32
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "gone", http.StatusGone)
	}))
	defer hook.Close()
	s := startServe(t, "-admin-user", "admin", "-admin-password", "correct horse battery", "-allow-private-fetch")
	c := &apiClient{t: t, base: s.base, hc: http.DefaultClient, basic: [2]string{"admin", "correct horse battery"}}
	preset := c.call("POST", "/api/presets.json", map[string]any{"preset_name": "hooked",
		"output_files": []any{map[string]any{"format": "wav"}}})["uuid"].(string)
	uuid := createProduction(c, preset, "hooked", hook.URL+"/done?token=secret", serveWAV(t, 1))
	c.call("POST", "/api/production/"+uuid+"/start.json", nil)

	deadline := time.Now().Add(60 * time.Second)
	var p map[string]any
	for {
		p = c.call("GET", "/api/production/"+uuid+".json", nil)
		if w, _ := p["warning_message"].(string); strings.Contains(w, "webhook") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no webhook warning after 60 s: status %v, warning %q, deliveries %v", p["status_string"], p["warning_message"], p["webhook_deliveries"])
		}
		time.Sleep(50 * time.Millisecond)
	}
	w := p["warning_message"].(string)
	if p["status_string"] != "Done" || !strings.Contains(w, "webhook to "+hook.URL+"/done not delivered") || !strings.Contains(w, "HTTP 410") ||
		strings.Contains(w, "secret") {
		t.Errorf("status %v, warning %q", p["status_string"], w)
	}
	ds, _ := p["webhook_deliveries"].([]any)
	if len(ds) != 1 {
		t.Fatalf("webhook_deliveries %v", p["webhook_deliveries"])
	}
	d := ds[0].(map[string]any)
	if d["state"] != "failed" || d["http_status"] != 410.0 || d["attempts"] != 1.0 || d["status"] != 3.0 {
		t.Errorf("delivery %v", d)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("the hook was called %d times, want 2 (form, then multipart)", n)
	}
}
