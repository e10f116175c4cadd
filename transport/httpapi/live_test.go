package httpapi_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/audiopost/audiopost/production/livestream"
)

// TestLiveStreamsAPI walks a live stream through the API: form errors by
// field for bad requests and whole-file settings, create, start (twice is
// a conflict), status, stop, delete, and another user sees none of it.
func TestLiveStreamsAPI(t *testing.T) {
	e := newEnv(t)
	bad := e.req("POST", "/api/livestreams.json", e.keyA, map[string]any{"source": "file:///etc/passwd",
		"destinations": []any{map[string]any{"url": "icecast://source:pw@127.0.0.1:8000/out.mp3", "format": "mp3"}},
		"algorithms":   map[string]any{"cutter": true, "maxlra": 6}})
	if bad.Status != 400 || bad.code() != "validation_failed" {
		t.Fatalf("bad request: %d %s", bad.Status, bad.Raw)
	}
	for _, k := range []string{"source", "destinations.0.url", "algorithms.cutter", "algorithms.maxlra"} {
		if bad.FormErrors[k] == "" {
			t.Errorf("no form error for %s: %v", k, bad.FormErrors)
		}
	}
	created := e.must(e.req("POST", "/api/livestreams.json", e.keyA, map[string]any{"name": "Radio", "source": "http://93.184.216.34/in.mp3",
		"destinations": []any{map[string]any{"url": "icecast://source:secret@93.184.216.34:8000/out.mp3", "format": "opus", "bitrate": 64}},
		"algorithms":   map[string]any{"loudnesstarget": -23, "musicgain": 2}})).obj(t)
	id := created["uuid"].(string)
	if created["state"] != "stopped" || len(created["warnings"].([]any)) != 1 {
		t.Errorf("created: %v", created)
	}
	if r := e.req("GET", "/api/livestream/"+id+".json", e.keyB, nil); r.Status != 404 {
		t.Errorf("bob got alice's stream: %d", r.Status)
	}
	if r := e.req("POST", "/api/livestream/"+id+"/start.json", e.keyB, nil); r.Status != 404 {
		t.Errorf("bob started alice's stream: %d", r.Status)
	}
	if st := e.must(e.req("POST", "/api/livestream/"+id+"/start.json", e.keyA, nil)).obj(t); st["state"] != "starting" {
		t.Errorf("started: %v", st)
	}
	if r := e.req("POST", "/api/livestream/"+id+"/start.json", e.keyA, nil); r.Status != 409 {
		t.Errorf("second start: %d %s", r.Status, r.Raw)
	}
	// The worker's figures come back in the status call.
	doc, _ := json.Marshal(livestream.Figures{Worker: "w1", UptimeSeconds: 12, GainDB: 3.5})
	if err := e.store.PutLiveFigures(context.Background(), e.userA.ID, id, doc); err != nil {
		t.Fatal(err)
	}
	st := e.must(e.req("GET", "/api/livestream/"+id+"/status.json", e.keyA, nil)).obj(t)
	if f, _ := st["figures"].(map[string]any); f["worker"] != "w1" || f["gain_db"] != 3.5 {
		t.Errorf("status: %v", st)
	}
	if list := e.must(e.req("GET", "/api/livestreams.json", e.keyA, nil)).list(t); len(list) != 1 {
		t.Errorf("alice lists %d streams", len(list))
	}
	if list := e.must(e.req("GET", "/api/livestreams.json", e.keyB, nil)).list(t); len(list) != 0 {
		t.Errorf("bob lists %d streams", len(list))
	}
	if st := e.must(e.req("POST", "/api/livestream/"+id+"/stop.json", e.keyA, nil)).obj(t); st["state"] != "stopped" {
		t.Errorf("stopped: %v", st)
	}
	e.must(e.req("DELETE", "/api/livestream/"+id+".json", e.keyA, nil))
	if r := e.req("GET", "/api/livestream/"+id+".json", e.keyA, nil); r.Status != 404 {
		t.Errorf("after delete: %d", r.Status)
	}
}

// TestLiveStreamPageBrowser opens a live stream's page in headless
// Chromium and feeds it figures as a worker would: the meter's readings
// and its chart follow them, and the page never shows the destination's
// password.
func TestLiveStreamPageBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	t.Parallel()
	ctx := newBrowser(t)
	e := newEnv(t)
	id := e.must(e.req("POST", "/api/livestreams.json", e.keyA, map[string]any{"name": "Morning Show", "source": "http://93.184.216.34/in.mp3",
		"destinations": []any{map[string]any{"url": "icecast://source:topsecret@93.184.216.34:8000/out.mp3", "format": "mp3"}}})).obj(t)["uuid"].(string)
	if err := accountsOf(t, e.store).SetPassword(context.Background(), e.userA.Username, testPassword); err != nil {
		t.Fatal(err)
	}
	put := func(s float64, n int) {
		t.Helper()
		f := livestream.Figures{Worker: "w", UptimeSeconds: float64(n), GainDB: 2, Source: livestream.SourceStatus{Connected: true}}
		f.ShortTermLUFS, f.MomentaryLUFS = &s, &s
		for i := 0; i < n; i++ {
			v := s - float64(i%5)
			f.History = append(f.History, livestream.Point{Time: int64(i), ShortTermLUFS: &v, MomentaryLUFS: &v, GainDB: 2})
		}
		doc, _ := json.Marshal(f)
		if err := e.store.PutLiveFigures(context.Background(), e.userA.ID, id, doc); err != nil {
			t.Fatal(err)
		}
	}
	put(-17.25, 30)
	pageURL := e.base + "/livestream/" + id + "/"
	do(t, ctx, "login", chromedp.Navigate(pageURL),
		chromedp.WaitVisible(chromedp.CSS(`input[name=username]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=username]`), e.userA.Username),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), testPassword),
		chromedp.Submit(chromedp.CSS(`input[name=password]`)),
		chromedp.WaitVisible(chromedp.ID("meter")),
	)
	run(t, ctx, "first figures", chromedp.Poll[chromedp.Void](`document.getElementById("s").textContent === "-17.3 LUFS"`,
		chromedp.WithPollingTimeout(10*time.Second)))
	// Something was drawn: the chart has non-transparent pixels.
	drawn := `(function(){var c=document.getElementById("meter"),d=c.getContext("2d").getImageData(0,0,c.width,c.height).data,n=0;for(var i=3;i<d.length;i+=4){if(d[i]>0)n++}return n})()`
	if n := run(t, ctx, "chart", chromedp.Evaluate[float64](drawn)); n < 100 {
		t.Errorf("the chart has %v drawn pixels", n)
	}
	// New figures: the page follows within its polling second.
	put(-15.5, 60)
	run(t, ctx, "updated figures", chromedp.Poll[chromedp.Void](`document.getElementById("s").textContent === "-15.5 LUFS" &&
		document.getElementById("uptime").textContent === "up 60 s"`, chromedp.WithPollingTimeout(10*time.Second)))
	text := run(t, ctx, "page text", chromedp.Text(chromedp.CSS("body")))
	if strings.Contains(text, "topsecret") || !strings.Contains(text, "Morning Show") {
		t.Errorf("page text: %s", text)
	}
	screenshot(t, ctx, "live.png")
}
