package sqlstore

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/audiopost/audiopost/storage"
)

func newKey(t *testing.T) *storage.SecretKey {
	t.Helper()
	k, err := storage.ParseSecretKey(storage.NewSecretKeyText())
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// rawService reads a service's row as the database has it.
func rawService(t *testing.T, st *Store, uuid string) (config string, sealed []byte, keyID string) {
	t.Helper()
	err := st.wdb.QueryRowContext(t.Context(), st.d.rebind(`SELECT config, credentials, credentials_key FROM services WHERE uuid = ?`), uuid).
		Scan(&config, &sealed, &keyID)
	if err != nil {
		t.Fatal(err)
	}
	return config, sealed, keyID
}

func configOf(t *testing.T, s storage.Service) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(s.Config, &m); err != nil {
		t.Fatalf("config %q: %v", s.Config, err)
	}
	return m
}

func TestServiceCredentials(t *testing.T) { eachEngineSerial(t, testServiceCredentials) }

// Credentials never reach the database in clear text: they are sealed
// with the store's key, open only with it and only in their own row, and
// without a key the store refuses them.
func testServiceCredentials(t *testing.T, e engine) {
	ctx := t.Context()
	st, dsn := e.open(t)
	a := mkUser(t, st, "a")
	const password = "correct horse battery staple"
	cfg := []byte(`{"host":"example.org","port":22,"username":"alice","password":"` + password + `"}`)

	svc := storage.Service{Owner: a.ID, Type: "sftp", DisplayName: "s", Outgoing: true, Config: cfg}
	wantErr(t, st.CreateService(ctx, &svc), storage.ErrNoSecretKey)
	plain := storage.Service{Owner: a.ID, Type: "webdav", Config: []byte(`{"url":"https://dav.example.org/"}`)}
	if err := st.CreateService(ctx, &plain); err != nil {
		t.Fatalf("a service without credentials needs no key: %v", err)
	}
	if ids, err := st.SecretKeyIDs(ctx); err != nil || len(ids) != 0 {
		t.Errorf("SecretKeyIDs with nothing sealed: %v, %v", ids, err)
	}

	key := newKey(t)
	st.SetSecretKey(key)
	svc.UUID = ""
	if err := st.CreateService(ctx, &svc); err != nil {
		t.Fatal(err)
	}
	config, sealed, keyID := rawService(t, st, svc.UUID)
	if bytes.Contains([]byte(config), []byte(password)) || bytes.Contains(sealed, []byte(password)) ||
		bytes.Contains([]byte(config), []byte("alice")) || bytes.Contains(sealed, []byte("alice")) {
		t.Fatalf("credentials in clear text: config %s, sealed %q", config, sealed)
	}
	if config != `{"host":"example.org","port":22}` || keyID != key.ID() || len(sealed) == 0 {
		t.Errorf("stored config %s, key %q (want %q), %d sealed bytes", config, keyID, key.ID(), len(sealed))
	}
	got, err := st.GetService(ctx, a.ID, svc.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if m := configOf(t, got); m["password"] != password || m["username"] != "alice" || m["host"] != "example.org" || m["port"] != 22.0 {
		t.Errorf("read back: %s", got.Config)
	}
	l, err := st.ListServices(ctx, a.ID)
	if err != nil || len(l) != 2 || configOf(t, l[1])["password"] != password {
		t.Errorf("ListServices: %+v, %v", l, err)
	}
	// Inside a transaction too.
	err = st.WithTx(ctx, func(tx storage.Tx) error {
		s, err := tx.GetService(ctx, a.ID, svc.UUID)
		if err != nil {
			return err
		}
		s.Config = []byte(`{"host":"example.org","password":"new one"}`)
		return tx.UpdateService(ctx, s)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := st.GetService(ctx, a.ID, svc.UUID); configOf(t, got)["password"] != "new one" || configOf(t, got)["username"] != nil {
		t.Errorf("after update: %s", got.Config)
	}
	if ids, err := st.SecretKeyIDs(ctx); err != nil || len(ids) != 1 || ids[key.ID()] != 1 {
		t.Errorf("SecretKeyIDs: %v, %v", ids, err)
	}

	// Another process: without the key, or with another one, sealed
	// credentials do not open.
	other, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, err = other.GetService(ctx, a.ID, svc.UUID)
	wantErr(t, err, storage.ErrNoSecretKey)
	other.SetSecretKey(newKey(t))
	_, err = other.ListServices(ctx, a.ID)
	wantErr(t, err, storage.ErrSecretKey)
	other.SetSecretKey(key)
	if _, err := other.GetService(ctx, a.ID, svc.UUID); err != nil {
		t.Errorf("the same key in another process: %v", err)
	}

	// Sealed credentials copied to another row do not open there.
	_, sealed, _ = rawService(t, st, svc.UUID)
	if _, err := st.wdb.ExecContext(ctx, st.d.rebind(`UPDATE services SET credentials = ?, credentials_key = ? WHERE uuid = ?`), sealed, key.ID(), plain.UUID); err != nil {
		t.Fatal(err)
	}
	_, err = st.GetService(ctx, a.ID, plain.UUID)
	wantErr(t, err, storage.ErrSecretKey)
}

func TestSealPlainCredentials(t *testing.T) { eachEngineSerial(t, testSealPlainCredentials) }

// Services written with credentials in clear text (before the column
// existed) are sealed when a key is there.
func testSealPlainCredentials(t *testing.T, e engine) {
	ctx := t.Context()
	st, _ := e.open(t)
	a := mkUser(t, st, "a")
	add := func(uuid, config string) {
		t.Helper()
		if _, err := st.wdb.ExecContext(ctx, st.d.rebind(`INSERT INTO services (uuid, owner_id, type, display_name, config, created_at)
			VALUES (?, ?, 'ftp', 'old', ?, 1)`), uuid, a.ID, config); err != nil {
			t.Fatal(err)
		}
	}
	add("old-1", `{"host":"h","password":"pw1"}`)
	add("old-2", `{"host":"h"}`)
	add("old-3", `not json`)
	if n, err := st.SealPlainCredentials(ctx); err != nil || n != 1 {
		t.Fatalf("without a key: %d, %v; want 1 found", n, err)
	}
	if c, sealed, _ := rawService(t, st, "old-1"); len(sealed) != 0 || c != `{"host":"h","password":"pw1"}` {
		t.Fatalf("without a key the row changed: %s %q", c, sealed)
	}
	st.SetSecretKey(newKey(t))
	if n, err := st.SealPlainCredentials(ctx); err != nil || n != 1 {
		t.Fatalf("with a key: %d, %v; want 1 sealed", n, err)
	}
	if c, sealed, _ := rawService(t, st, "old-1"); len(sealed) == 0 || c != `{"host":"h"}` {
		t.Errorf("after sealing: %s %q", c, sealed)
	}
	if got, err := st.GetService(ctx, a.ID, "old-1"); err != nil || configOf(t, got)["password"] != "pw1" {
		t.Errorf("read back: %s, %v", got.Config, err)
	}
	if n, err := st.SealPlainCredentials(ctx); err != nil || n != 0 {
		t.Errorf("again: %d, %v", n, err)
	}
	if c, _, _ := rawService(t, st, "old-3"); c != "not json" {
		t.Errorf("settings that are not an object changed: %s", c)
	}
}
