package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestEmbed(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-data", t.TempDir()}, &out, func(a string) { addrc <- a })
	}()
	// No bound of its own: run either listens or returns, and a hang is
	// the test binary's -timeout to report (20 s were too few on a loaded
	// two-core machine).
	var base string
	select {
	case a := <-addrc:
		base = "http://" + a
	case err := <-done:
		t.Fatal(err)
	}
	get := func(path, key string) (int, string) {
		req, _ := http.NewRequest("GET", base+path, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := get("/healthz", ""); code != 200 || body != "ok\n" {
		t.Errorf("own route: %d %q", code, body)
	}
	_, key, _ := strings.Cut(strings.SplitN(out.String(), "\n", 2)[0], "API key: ")
	code, body := get("/audiopost/api/user.json", key)
	var env struct {
		Data struct{ Username string } `json:"data"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &env) != nil || env.Data.Username != "demo" {
		t.Errorf("embedded API: %d %s", code, body)
	}
	if code, _ := get("/audiopost/api/user.json", ""); code != http.StatusUnauthorized {
		t.Errorf("embedded API without a key: %d", code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
}
