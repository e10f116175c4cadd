package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/sqlstore"
	"github.com/audiopost/audiopost/transport/httpapi"
)

// The handler mounted under /audiopost/ of an application's own mux, next
// to the application's routes.
func ExampleNewHandler() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "audiopost-example")
	defer os.RemoveAll(dir)
	data, err := sqlstore.OpenDataDir(ctx, dir)
	if err != nil {
		panic(err)
	}
	defer data.Close()

	// An account with an API key, as `audiopost user` and `audiopost key` make them.
	u := storage.User{Username: "demo"}
	data.Store.CreateUser(ctx, &u)
	key := storage.NewToken()
	data.Store.CreateAPIKey(ctx, &storage.APIKey{User: u.ID, Name: "example", Hash: storage.HashToken(key)})

	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	api, err := httpapi.NewHandler(httpapi.Config{Store: data.Store, Blobs: data.Blobs, BaseURL: srv.URL + "/audiopost"})
	if err != nil {
		panic(err)
	}
	mux.Handle("/audiopost/", api)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })

	req, _ := http.NewRequest("POST", srv.URL+"/audiopost/api/productions.json",
		strings.NewReader(`{"metadata": {"title": "Episode 1"}, "output_files": [{"format": "mp3"}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer res.Body.Close()
	var env struct {
		StatusCode int `json:"status_code"`
		Data       struct {
			StatusString string `json:"status_string"`
			Metadata     struct{ Title string }
			OutputFiles  []struct{ Filename string } `json:"output_files"`
			StatusPage   string                      `json:"status_page"`
		}
	}
	json.NewDecoder(res.Body).Decode(&env)
	fmt.Println(env.StatusCode, env.Data.StatusString, env.Data.Metadata.Title, env.Data.OutputFiles[0].Filename)
	fmt.Println(strings.HasPrefix(env.Data.StatusPage, srv.URL+"/audiopost/production/"))
	// Output:
	// 200 Incomplete Episode 1 output.mp3
	// true
}

// The web pages answer a browser without a session with a redirect to the
// login form, which returns to the page afterwards.
func ExampleNewHandler_pages() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "audiopost-example")
	defer os.RemoveAll(dir)
	data, err := sqlstore.OpenDataDir(ctx, dir)
	if err != nil {
		panic(err)
	}
	defer data.Close()
	h, err := httpapi.NewHandler(httpapi.Config{Store: data.Store, Blobs: data.Blobs, BaseURL: "http://127.0.0.1:8080/ap"})
	if err != nil {
		panic(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/ap/upload/", nil))
	fmt.Println(rec.Code, rec.Header().Get("Location"))
	// Output:
	// 303 http://127.0.0.1:8080/ap/account/login/?next=%2Fap%2Fupload%2F
}
