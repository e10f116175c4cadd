package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/audiopost/audiopost/storage"
)

// Services keep their settings in two columns: config, the JSON settings
// without credentials, and credentials, the credential keys
// (storage.CredentialKeys) as a JSON object sealed with the store's
// secret key, authenticated with owner and uuid. credentials_key is the
// id of the key that sealed them.

// SetSecretKey gives the store the key that seals service credentials;
// nil removes it. Without a key the store refuses to write credentials
// and to read sealed ones (storage.ErrNoSecretKey). Call it before the
// store is used; it is safe for concurrent use anyway.
func (s *Store) SetSecretKey(k *storage.SecretKey) { s.keys.Store(k) }

// SecretKeyIDs counts the services whose credentials are sealed, by the
// id of the key that sealed them. A process checks at start that its key
// is the one in use (an empty map: no sealed credentials yet).
func (s *Store) SecretKeyIDs(ctx context.Context) (map[string]int, error) {
	rows, err := s.query(ctx, `SELECT credentials_key, COUNT(*) FROM services WHERE credentials IS NOT NULL GROUP BY credentials_key`)
	if err != nil {
		return nil, s.wrap("count sealed credentials", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, s.wrap("count sealed credentials", err)
		}
		out[id] = n
	}
	return out, s.wrap("count sealed credentials", rows.Err())
}

// SealPlainCredentials seals the credentials of services that hold them
// in clear text in config: rows written before the credentials column
// existed, or by a program without this store's sealing. It returns how
// many services it sealed. Without a secret key it only counts them.
func (s *Store) SealPlainCredentials(ctx context.Context) (int, error) {
	type row struct{ uuid, owner, config string }
	rows, err := s.query(ctx, `SELECT uuid, owner_id, config FROM services WHERE credentials IS NULL`)
	if err != nil {
		return 0, s.wrap("find clear-text credentials", err)
	}
	var plain []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.uuid, &r.owner, &r.config); err != nil {
			rows.Close()
			return 0, s.wrap("find clear-text credentials", err)
		}
		if pub, creds, err := splitCredentials([]byte(r.config)); err == nil && len(creds) > 0 && pub != nil {
			plain = append(plain, r)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, s.wrap("find clear-text credentials", err)
	}
	if s.keys.Load() == nil {
		return len(plain), nil
	}
	n := 0
	for _, p := range plain {
		err := s.inTx(ctx, func(r *repo) error {
			svc, err := r.GetService(ctx, p.owner, p.uuid)
			if err != nil {
				return err
			}
			return r.UpdateService(ctx, svc)
		})
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// splitCredentials takes the credential keys out of a service's JSON
// settings. It returns the settings without them and the credentials as
// a JSON object (nil when there are none). Settings that are not a JSON
// object are kept as they are (pub nil).
func splitCredentials(config []byte) (pub []byte, creds []byte, err error) {
	var m map[string]json.RawMessage
	if len(config) == 0 || json.Unmarshal(config, &m) != nil || m == nil {
		return nil, nil, nil
	}
	c := map[string]json.RawMessage{}
	for k, v := range m {
		if storage.IsCredentialKey(k) {
			c[k] = v
			delete(m, k)
		}
	}
	if len(c) == 0 {
		return config, nil, nil
	}
	if pub, err = json.Marshal(m); err != nil {
		return nil, nil, err
	}
	creds, err = json.Marshal(c)
	return pub, creds, err
}

// credentialsContext is what a service's sealed credentials are
// authenticated with: they open only in their own row.
func credentialsContext(owner, uuid string) []byte {
	return []byte("audiopost service credentials\x00" + owner + "\x00" + uuid)
}

// sealService returns the config and credentials columns of s.
func (r *repo) sealService(s storage.Service) (config string, creds any, keyID string, err error) {
	cfg := s.Config
	if cfg == nil {
		cfg = []byte("{}")
	}
	pub, plain, err := splitCredentials(cfg)
	if err != nil {
		return "", nil, "", fmt.Errorf("sqlstore: service %s: %w", s.UUID, err)
	}
	if plain == nil {
		return string(cfg), nil, "", nil
	}
	k := r.keys.Load()
	if k == nil {
		return "", nil, "", fmt.Errorf("sqlstore: service %s has credentials: %w", s.UUID, storage.ErrNoSecretKey)
	}
	return string(pub), k.Seal(plain, credentialsContext(s.Owner, s.UUID)), k.ID(), nil
}

const serviceColumns = `uuid, owner_id, type, display_name, incoming, outgoing, config, created_at, credentials`

func (r *repo) scanService(row interface{ Scan(...any) error }) (storage.Service, error) {
	var (
		s       storage.Service
		created sql.NullInt64
		sealed  []byte
	)
	if err := row.Scan(&s.UUID, &s.Owner, &s.Type, &s.DisplayName, &s.Incoming, &s.Outgoing, &s.Config, &created, &sealed); err != nil {
		return storage.Service{}, err
	}
	s.Created = goTime(created)
	if len(sealed) == 0 {
		return s, nil
	}
	k := r.keys.Load()
	if k == nil {
		return storage.Service{}, fmt.Errorf("service %s has sealed credentials: %w", s.UUID, storage.ErrNoSecretKey)
	}
	plain, err := k.Open(sealed, credentialsContext(s.Owner, s.UUID))
	if err != nil {
		return storage.Service{}, fmt.Errorf("credentials of service %s: %w", s.UUID, err)
	}
	var cfg, creds map[string]json.RawMessage
	if err := json.Unmarshal(s.Config, &cfg); err != nil || cfg == nil {
		cfg = map[string]json.RawMessage{}
	}
	if err := json.Unmarshal(plain, &creds); err != nil {
		return storage.Service{}, fmt.Errorf("credentials of service %s: %w", s.UUID, err)
	}
	maps.Copy(cfg, creds)
	if s.Config, err = json.Marshal(cfg); err != nil {
		return storage.Service{}, err
	}
	return s, nil
}

// CreateService implements storage.Services.
func (r *repo) CreateService(ctx context.Context, s *storage.Service) error {
	if s.Owner == "" || s.Type == "" {
		return fmt.Errorf("sqlstore: service without owner or type: %w", storage.ErrInvalid)
	}
	if s.UUID == "" {
		s.UUID = storage.NewUUID()
	}
	if s.Config == nil {
		s.Config = []byte("{}")
	}
	if s.Created.IsZero() {
		s.Created = r.now()
	}
	config, creds, keyID, err := r.sealService(*s)
	if err != nil {
		return err
	}
	_, err = r.exec(ctx, `INSERT INTO services (`+serviceColumns+`, credentials_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.UUID, s.Owner, s.Type, s.DisplayName, s.Incoming, s.Outgoing, config, dbTime(s.Created), creds, keyID)
	return r.wrap("create service", err)
}

// GetService implements storage.Services.
func (r *repo) GetService(ctx context.Context, owner, uuid string) (storage.Service, error) {
	s, err := r.scanService(r.queryRow(ctx, `SELECT `+serviceColumns+` FROM services WHERE uuid = ? AND owner_id = ?`+r.lockRow(), uuid, owner))
	return s, r.wrap("get service "+uuid, err)
}

// ListServices implements storage.Services.
func (r *repo) ListServices(ctx context.Context, owner string) ([]storage.Service, error) {
	rows, err := r.query(ctx, `SELECT `+serviceColumns+` FROM services WHERE owner_id = ? ORDER BY seq`, owner)
	if err != nil {
		return nil, r.wrap("list services", err)
	}
	return collect(rows, "list services", r.scanService)
}

// UpdateService implements storage.Services.
func (r *repo) UpdateService(ctx context.Context, s storage.Service) error {
	config, creds, keyID, err := r.sealService(s)
	if err != nil {
		return err
	}
	return r.execOne(ctx, "update service "+s.UUID, `UPDATE services SET type = ?, display_name = ?, incoming = ?, outgoing = ?, config = ?,
		credentials = ?, credentials_key = ? WHERE uuid = ? AND owner_id = ?`,
		s.Type, s.DisplayName, s.Incoming, s.Outgoing, config, creds, keyID, s.UUID, s.Owner)
}

// DeleteService implements storage.Services.
func (r *repo) DeleteService(ctx context.Context, owner, uuid string) error {
	return r.execOne(ctx, "delete service "+uuid, `DELETE FROM services WHERE uuid = ? AND owner_id = ?`, uuid, owner)
}
