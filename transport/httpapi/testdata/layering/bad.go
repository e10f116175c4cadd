// Package bad is what TestNoStoreWritesInTransport must find: a handler
// that writes to the store and handles blobs itself, and imports a store
// adapter. Reads and methods of plain records are fine.
package bad

import (
	"context"

	"github.com/audiopost/audiopost/storage"
	_ "github.com/audiopost/audiopost/storage/blob"
)

func handler(ctx context.Context, st storage.Store, b storage.Blobs, tx storage.Tx) {
	st.GetUser(ctx, "u")
	st.CreateResource(ctx, nil)
	_ = tx.Enqueue
	b.Stat(ctx, "k")
	var u storage.User
	_ = u.Credits()
}
