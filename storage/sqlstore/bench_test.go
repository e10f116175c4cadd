package sqlstore

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/audiopost/audiopost/storage"
)

// BenchmarkEnqueueClaimComplete measures one job's whole round trip
// through the queue on SQLite (three write transactions).
func BenchmarkEnqueueClaimComplete(b *testing.B) {
	ctx := b.Context()
	st, err := Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	u := storage.User{Username: "u"}
	st.CreateUser(ctx, &u)
	b.ReportAllocs()
	for b.Loop() {
		if err := st.Enqueue(ctx, &storage.Job{Owner: u.ID, Type: "x"}); err != nil {
			b.Fatal(err)
		}
		j, err := st.Claim(ctx, "w", time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		if err := st.Complete(ctx, j.Lease()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLookupAPIKey measures authenticating one request by API key
// (a read; the last-used write happens at most once a minute).
func BenchmarkLookupAPIKey(b *testing.B) {
	ctx := b.Context()
	st, err := Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	u := storage.User{Username: "u"}
	st.CreateUser(ctx, &u)
	k := storage.APIKey{User: u.ID, Name: "k", Hash: storage.HashToken("secret")}
	st.CreateAPIKey(ctx, &k)
	at := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := st.LookupAPIKey(ctx, k.Hash, at); err != nil {
			b.Fatal(err)
		}
	}
}
