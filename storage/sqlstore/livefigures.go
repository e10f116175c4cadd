package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/audiopost/audiopost/storage"
)

// PutLiveFigures implements storage.LiveFigures.
func (r *repo) PutLiveFigures(ctx context.Context, owner, uuid string, doc []byte) error {
	if owner == "" || uuid == "" {
		return fmt.Errorf("sqlstore: live figures of %q/%q: %w", owner, uuid, storage.ErrInvalid)
	}
	_, err := r.exec(ctx, `INSERT INTO live_figures (uuid, owner_id, doc, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (uuid) DO UPDATE SET doc = excluded.doc, updated_at = excluded.updated_at
		WHERE live_figures.owner_id = excluded.owner_id`, uuid, owner, string(doc), r.now().UnixMicro())
	return r.wrap("put live figures "+uuid, err)
}

// GetLiveFigures implements storage.LiveFigures.
func (r *repo) GetLiveFigures(ctx context.Context, owner, uuid string) ([]byte, time.Time, error) {
	var (
		doc string
		at  sql.NullInt64
	)
	err := r.queryRow(ctx, `SELECT doc, updated_at FROM live_figures WHERE uuid = ? AND owner_id = ?`, uuid, owner).Scan(&doc, &at)
	if err != nil {
		return nil, time.Time{}, r.wrap("get live figures "+uuid, err)
	}
	return []byte(doc), goTime(at), nil
}

// DeleteLiveFigures implements storage.LiveFigures.
func (r *repo) DeleteLiveFigures(ctx context.Context, owner, uuid string) error {
	_, err := r.exec(ctx, `DELETE FROM live_figures WHERE uuid = ? AND owner_id = ?`, uuid, owner)
	return r.wrap("delete live figures "+uuid, err)
}
