package auth_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"golang.org/x/oauth2"

	"github.com/audiopost/audiopost/production/app"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/sqlstore"
	"github.com/audiopost/audiopost/transport/auth"
)

// An API behind the middleware, called with an API key.
func ExampleServer_Middleware() {
	ctx := context.Background()
	st, err := sqlstore.Open(ctx, ":memory:")
	if err != nil {
		panic(err)
	}
	defer st.Close()
	alice := storage.User{Username: "alice"}
	st.CreateUser(ctx, &alice)
	accounts, _ := app.New(app.Config{Store: st})
	_, key, err := accounts.CreateAPIKey(ctx, alice, "scripts", time.Time{})
	if err != nil {
		panic(err)
	}

	svc := auth.New(st, auth.Config{BaseURL: "http://127.0.0.1:8080"})
	api := svc.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, _ := auth.UserFrom(r.Context())
		fmt.Fprintf(w, "hello %s", u.Username)
	}))

	for _, target := range []string{"/api/user.json", "/api/user.json?bearer_token=" + key} {
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
		fmt.Println(rec.Code, rec.Header().Get("Content-Type"))
	}
	req := httptest.NewRequest("GET", "/api/user.json", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, req)
	fmt.Println(rec.Code, rec.Body.String())
	// Output:
	// 401 application/json; charset=utf-8
	// 200 text/plain; charset=utf-8
	// 200 hello alice
}

// A desktop app gets a token with the password grant and calls the API.
func ExampleServer_Routes() {
	ctx := context.Background()
	st, err := sqlstore.Open(ctx, ":memory:")
	if err != nil {
		panic(err)
	}
	defer st.Close()
	accounts, _ := app.New(app.Config{Store: st})
	if _, err := accounts.CreateUser(ctx, "alice", "alice@example.org", "correct horse"); err != nil {
		panic(err)
	}
	desktop, _, err := accounts.RegisterClient(ctx, storage.User{}, "desktop app", nil, true)
	if err != nil {
		panic(err)
	}

	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	svc := auth.New(st, auth.Config{BaseURL: srv.URL})
	svc.Routes(mux, "")
	mux.Handle("/api/user.json", svc.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, _ := auth.UserFrom(r.Context())
		fmt.Fprintf(w, `{"username":%q}`, u.Username)
	})))

	conf := oauth2.Config{ClientID: desktop.ID, Endpoint: oauth2.Endpoint{
		AuthURL: srv.URL + "/oauth2/authorize/", TokenURL: srv.URL + "/oauth2/token/"}}
	tok, err := conf.PasswordCredentialsToken(ctx, "alice", "correct horse")
	if err != nil {
		panic(err)
	}
	fmt.Println(tok.Type(), tok.Extra("user_name"))
	resp, err := conf.Client(ctx, tok).Get(srv.URL + "/api/user.json")
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(string(body))
	// Output:
	// Bearer alice
	// {"username":"alice"}
}
