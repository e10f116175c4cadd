package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/audiopost/audiopost/storage"
)

const resourceColumns = `uuid, owner_id, kind, doc, status, created_at, changed_at, version`

// resourceRead is what reads select: the columns CreateResource writes and
// the progress, which only SetStatus and SetProgress write.
const resourceRead = resourceColumns + `, progress`

func scanResource(row interface{ Scan(...any) error }) (storage.Resource, error) {
	var (
		res              storage.Resource
		kind             string
		created, changed sql.NullInt64
	)
	if err := row.Scan(&res.UUID, &res.Owner, &kind, &res.Doc, &res.Status, &created, &changed, &res.Version, &res.Progress); err != nil {
		return storage.Resource{}, err
	}
	res.Kind = storage.Kind(kind)
	res.Created, res.Changed = goTime(created), goTime(changed)
	return res, nil
}

func validKind(k storage.Kind) error {
	if k != storage.KindProduction && k != storage.KindPreset && k != storage.KindLiveStream {
		return fmt.Errorf("sqlstore: resource kind %q: %w", k, storage.ErrInvalid)
	}
	return nil
}

// CreateResource implements storage.Resources.
func (r *repo) CreateResource(ctx context.Context, res *storage.Resource) error {
	if err := validKind(res.Kind); err != nil {
		return err
	}
	if res.Owner == "" {
		return fmt.Errorf("sqlstore: %s without owner: %w", res.Kind, storage.ErrInvalid)
	}
	if res.UUID == "" {
		res.UUID = storage.NewUUID()
	}
	if res.Doc == nil {
		res.Doc = []byte("{}")
	}
	t := r.now()
	res.Created, res.Changed, res.Version = t, t, 1
	_, err := r.exec(ctx, `INSERT INTO resources (`+resourceColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		res.UUID, res.Owner, string(res.Kind), string(res.Doc), res.Status, t.UnixMicro(), t.UnixMicro(), res.Version)
	if err != nil {
		// A foreign-key failure (unknown owner) is also a driver error;
		// report it as what it means to the caller.
		return r.wrap("create "+string(res.Kind), err)
	}
	return nil
}

// GetResource implements storage.Resources.
func (r *repo) GetResource(ctx context.Context, owner string, kind storage.Kind, uuid string) (storage.Resource, error) {
	res, err := scanResource(r.queryRow(ctx, `SELECT `+resourceRead+` FROM resources
		WHERE uuid = ? AND owner_id = ? AND kind = ?`+r.lockRow(), uuid, owner, string(kind)))
	return res, r.wrap("get "+string(kind)+" "+uuid, err)
}

// ListResources implements storage.Resources. seq breaks ties between
// resources created in the same microsecond.
func (r *repo) ListResources(ctx context.Context, owner string, kind storage.Kind, limit, offset int) ([]storage.Resource, error) {
	limit, offset, err := page(limit, offset)
	if err != nil {
		return nil, err
	}
	rows, err := r.query(ctx, `SELECT `+resourceRead+` FROM resources WHERE owner_id = ? AND kind = ?
		ORDER BY created_at DESC, seq DESC LIMIT ? OFFSET ?`, owner, string(kind), limit, offset)
	if err != nil {
		return nil, r.wrap("list "+string(kind)+"s", err)
	}
	return collect(rows, "list "+string(kind)+"s", scanResource)
}

// UpdateResource implements storage.Resources.
func (r *repo) UpdateResource(ctx context.Context, res *storage.Resource) error {
	if res.Doc == nil {
		return fmt.Errorf("sqlstore: update %s %s without document: %w", res.Kind, res.UUID, storage.ErrInvalid)
	}
	t := r.now()
	result, err := r.exec(ctx, `UPDATE resources SET doc = ?, status = ?, changed_at = ?, version = version + 1
		WHERE uuid = ? AND owner_id = ? AND kind = ? AND version = ?`,
		string(res.Doc), res.Status, t.UnixMicro(), res.UUID, res.Owner, string(res.Kind), res.Version)
	if err != nil {
		return r.wrap("update "+string(res.Kind), err)
	}
	n, err := result.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlstore: update %s: %w", res.Kind, err)
	}
	if n == 0 {
		// Tell a stale version from a missing (or foreign) resource.
		if _, err := r.GetResource(ctx, res.Owner, res.Kind, res.UUID); err != nil {
			return err
		}
		return fmt.Errorf("sqlstore: update %s %s: version %d is stale: %w", res.Kind, res.UUID, res.Version, storage.ErrConflict)
	}
	res.Version++
	res.Changed = t
	return nil
}

// SetStatus implements storage.Resources.
func (r *repo) SetStatus(ctx context.Context, owner string, kind storage.Kind, uuid string, status int) error {
	return r.execOne(ctx, "set status of "+string(kind)+" "+uuid, `UPDATE resources SET status = ?, progress = 0, changed_at = ?, version = version + 1
		WHERE uuid = ? AND owner_id = ? AND kind = ?`, status, r.now().UnixMicro(), uuid, owner, string(kind))
}

// SetProgress implements storage.Resources.
func (r *repo) SetProgress(ctx context.Context, owner string, uuid string, percent int) error {
	if percent < 0 || percent > 100 {
		return fmt.Errorf("sqlstore: progress %d%% of production %s: %w", percent, uuid, storage.ErrInvalid)
	}
	return r.execOne(ctx, "set progress of production "+uuid, `UPDATE resources SET progress = ?
		WHERE uuid = ? AND owner_id = ? AND kind = ?`, percent, uuid, owner, string(storage.KindProduction))
}

// DeleteResource implements storage.Resources.
func (r *repo) DeleteResource(ctx context.Context, owner string, kind storage.Kind, uuid string) error {
	return r.execOne(ctx, "delete "+string(kind)+" "+uuid, `DELETE FROM resources WHERE uuid = ? AND owner_id = ? AND kind = ?`,
		uuid, owner, string(kind))
}
