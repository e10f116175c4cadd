package sqlstore

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/audiopost/audiopost/storage"
)

func TestOAuthClients(t *testing.T) { eachEngineSerial(t, testOAuthClients) }

func testOAuthClients(t *testing.T, e engine) {
	ctx := t.Context()
	st, _ := e.open(t)
	a, b := mkUser(t, st, "a"), mkUser(t, st, "b")
	c := storage.OAuthClient{Name: "app", SecretHash: storage.HashToken("s"), RedirectURIs: []string{"https://app/cb", "http://localhost/cb"}, Owner: a.ID}
	if err := st.CreateOAuthClient(ctx, &c); err != nil {
		t.Fatal(err)
	}
	op := storage.OAuthClient{Name: "cli", Public: true}
	if err := st.CreateOAuthClient(ctx, &op); err != nil {
		t.Fatal(err)
	}
	wantErr(t, st.CreateOAuthClient(ctx, &storage.OAuthClient{Name: "nosecret"}), storage.ErrInvalid)
	got, err := st.GetOAuthClient(ctx, c.ID)
	if err != nil || got.Name != "app" || len(got.RedirectURIs) != 2 || got.RedirectURIs[1] != "http://localhost/cb" ||
		!storage.EqualHash(got.SecretHash, c.SecretHash) || got.Owner != a.ID {
		t.Fatalf("GetOAuthClient: %+v, %v", got, err)
	}
	if l, _ := st.ListOAuthClients(ctx, a.ID); len(l) != 1 || l[0].ID != c.ID {
		t.Errorf("a's clients: %+v", l)
	}
	if l, _ := st.ListOAuthClients(ctx, ""); len(l) != 1 || l[0].ID != op.ID || l[0].RedirectURIs == nil {
		t.Errorf("operator clients: %+v", l)
	}
	c.Name, c.RedirectURIs = "app2", nil
	if err := st.UpdateOAuthClient(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.GetOAuthClient(ctx, c.ID); got.Name != "app2" || len(got.RedirectURIs) != 0 {
		t.Errorf("after update: %+v", got)
	}
	wantErr(t, st.DeleteOAuthClient(ctx, b.ID, c.ID), storage.ErrNotFound)
	foreign := c
	foreign.Owner = b.ID
	wantErr(t, st.UpdateOAuthClient(ctx, foreign), storage.ErrNotFound)
	if err := st.DeleteOAuthClient(ctx, a.ID, c.ID); err != nil {
		t.Fatal(err)
	}
	_, err = st.GetOAuthClient(ctx, c.ID)
	wantErr(t, err, storage.ErrNotFound)
}

// s256 is the PKCE S256 transform, as the token endpoint would check it.
func s256(verifier string) string {
	h := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

func TestOAuthCodeRedeemOnceUnderConcurrency(t *testing.T) {
	eachEngine(t, testOAuthCodeRedeemOnceUnderConcurrency)
}

func testOAuthCodeRedeemOnceUnderConcurrency(t *testing.T, e engine) {
	ctx := t.Context()
	st, _ := e.open(t)
	u := mkUser(t, st, "u")
	cl := storage.OAuthClient{Name: "app", SecretHash: storage.HashToken("s")}
	if err := st.CreateOAuthClient(ctx, &cl); err != nil {
		t.Fatal(err)
	}
	code, verifier := storage.NewToken(), storage.NewToken()
	at := time.Now()
	c := storage.OAuthCode{Hash: storage.HashToken(code), ClientID: cl.ID, User: u.ID, RedirectURI: "https://app/cb",
		Challenge: s256(verifier), ChallengeMethod: "S256", Expires: at.Add(time.Minute)}
	if err := st.CreateOAuthCode(ctx, &c); err != nil {
		t.Fatal(err)
	}

	const n = 10
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []string
		used    int
	)
	for range n {
		wg.Go(func() {
			access := storage.NewToken()
			_, err := st.RedeemOAuthCode(ctx, storage.HashToken(code), at, func(g storage.OAuthCode) (*storage.OAuthToken, error) {
				if g.ClientID != cl.ID || s256(verifier) != g.Challenge {
					return nil, errors.New("bad grant")
				}
				return &storage.OAuthToken{Hash: storage.HashToken(access), ClientID: g.ClientID, User: g.User, Expires: at.Add(time.Hour)}, nil
			})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				winners = append(winners, access)
			case errors.Is(err, storage.ErrAlreadyUsed):
				used++
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if len(winners) != 1 || used != n-1 {
		t.Fatalf("%d redeems won, %d saw the code used; want 1 and %d", len(winners), used, n-1)
	}
	// The losers were replays: the token the winner got is revoked.
	_, err := st.LookupOAuthToken(ctx, storage.HashToken(winners[0]), at)
	wantErr(t, err, storage.ErrRevoked)
}

func TestOAuthCodeLifecycle(t *testing.T) { eachEngineSerial(t, testOAuthCodeLifecycle) }

func testOAuthCodeLifecycle(t *testing.T, e engine) {
	ctx := t.Context()
	st, _ := e.open(t)
	u := mkUser(t, st, "u")
	cl := storage.OAuthClient{Name: "app", Public: true}
	if err := st.CreateOAuthClient(ctx, &cl); err != nil {
		t.Fatal(err)
	}
	at := time.Now()
	newCode := func() []byte {
		h := storage.HashToken(storage.NewToken())
		c := storage.OAuthCode{Hash: h, ClientID: cl.ID, User: u.ID, Expires: at.Add(time.Minute)}
		if err := st.CreateOAuthCode(ctx, &c); err != nil {
			t.Fatal(err)
		}
		return h
	}
	issue := func(tok []byte) func(storage.OAuthCode) (*storage.OAuthToken, error) {
		return func(g storage.OAuthCode) (*storage.OAuthToken, error) {
			return &storage.OAuthToken{Hash: tok, ClientID: g.ClientID, User: g.User, Expires: at.Add(time.Hour)}, nil
		}
	}

	// Single redeem: token stored and valid until expiry.
	h, tok := newCode(), storage.HashToken("t1")
	g, err := st.RedeemOAuthCode(ctx, h, at, issue(tok))
	if err != nil || g.User != u.ID || !g.Used {
		t.Fatalf("redeem: %+v, %v", g, err)
	}
	got, err := st.LookupOAuthToken(ctx, tok, at)
	if err != nil || got.User != u.ID || !storage.EqualHash(got.CodeHash, h) {
		t.Fatalf("token: %+v, %v", got, err)
	}
	_, err = st.LookupOAuthToken(ctx, tok, at.Add(time.Hour))
	wantErr(t, err, storage.ErrExpired)

	// Expired and unknown codes.
	_, err = st.RedeemOAuthCode(ctx, newCode(), at.Add(time.Minute), issue(storage.HashToken("t2")))
	wantErr(t, err, storage.ErrExpired)
	_, err = st.RedeemOAuthCode(ctx, storage.HashToken("nope"), at, issue(storage.HashToken("t3")))
	wantErr(t, err, storage.ErrNotFound)

	// A failed validation burns the code and stores no token.
	h = newCode()
	bad := errors.New("PKCE verifier mismatch")
	_, err = st.RedeemOAuthCode(ctx, h, at, func(storage.OAuthCode) (*storage.OAuthToken, error) { return nil, bad })
	wantErr(t, err, bad)
	_, err = st.RedeemOAuthCode(ctx, h, at, issue(storage.HashToken("t4")))
	wantErr(t, err, storage.ErrAlreadyUsed)
	_, err = st.LookupOAuthToken(ctx, storage.HashToken("t4"), at)
	wantErr(t, err, storage.ErrNotFound)

	// Password-grant tokens, revocation one by one and per client.
	for _, s := range []string{"p1", "p2"} {
		pt := storage.OAuthToken{Hash: storage.HashToken(s), ClientID: cl.ID, User: u.ID, Expires: at.Add(time.Hour)}
		if err := st.CreateOAuthToken(ctx, &pt); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.RevokeOAuthToken(ctx, storage.HashToken("p1")); err != nil {
		t.Fatal(err)
	}
	_, err = st.LookupOAuthToken(ctx, storage.HashToken("p1"), at)
	wantErr(t, err, storage.ErrRevoked)
	if n, err := st.RevokeOAuthTokens(ctx, u.ID, cl.ID); err != nil || n != 2 {
		t.Errorf("RevokeOAuthTokens: %d, %v; want 2 (t1 and p2; p1 was revoked already)", n, err)
	}
	wantErr(t, st.RevokeOAuthToken(ctx, storage.HashToken("none")), storage.ErrNotFound)
}
