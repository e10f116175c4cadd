package production

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/audiopost/audiopost/storage"
)

// storedProduction is the document kept in storage.Resource.Doc: the
// Production fields as they are, without the values MarshalJSON computes for
// responses (a resolved output filename stored back would freeze it, so a
// later change of output_basename would no longer rename the file).
type storedProduction Production

// EncodeDocument returns the document to store for p. Use it, never
// json.Marshal, when writing a production to storage.
func EncodeDocument(p *Production) ([]byte, error) {
	return json.Marshal((*storedProduction)(p))
}

// DecodeDocument reads a stored production. The status comes from the
// resource row, not the document: the pipeline reports progress with
// Resources.SetStatus, which changes only that column.
func DecodeDocument(r storage.Resource) (*Production, error) {
	var sp storedProduction
	if err := json.Unmarshal(r.Doc, &sp); err != nil {
		return nil, fmt.Errorf("production %s: stored document: %w", r.UUID, err)
	}
	p := (*Production)(&sp)
	p.UUID = r.UUID
	p.Status = Status(r.Status)
	if p.CreationTime.IsZero() {
		p.CreationTime = Time{Time: r.Created.UTC().Truncate(time.Millisecond)}
	}
	return p, nil
}
