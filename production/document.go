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
	sp := storedProduction(*p)
	// Not the document's: the row holds the progress, the outbox the
	// deliveries.
	sp.Progress, sp.WebhookDeliveries = 0, nil
	return json.Marshal(&sp)
}

// DecodeDocument reads a stored production. The status and the progress
// come from the resource row, not the document: the pipeline reports them
// with Resources.SetStatus and SetProgress, which change only the row.
func DecodeDocument(r storage.Resource) (*Production, error) {
	var sp storedProduction
	if err := json.Unmarshal(r.Doc, &sp); err != nil {
		return nil, fmt.Errorf("production %s: stored document: %w", r.UUID, err)
	}
	p := (*Production)(&sp)
	p.UUID = r.UUID
	p.Status = Status(r.Status)
	p.Progress = r.Progress
	if p.CreationTime.IsZero() {
		p.CreationTime = Time{Time: r.Created.UTC().Truncate(time.Millisecond)}
	}
	return p, nil
}
