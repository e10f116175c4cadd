package preset

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
)

// storedPreset is the document kept in storage.Resource.Doc, without the
// values MarshalJSON computes for responses.
type storedPreset Preset

// EncodeDocument returns the document to store for pr.
func EncodeDocument(pr *Preset) ([]byte, error) { return json.Marshal((*storedPreset)(pr)) }

// DecodeDocument reads a stored preset.
func DecodeDocument(r storage.Resource) (*Preset, error) {
	var sp storedPreset
	if err := json.Unmarshal(r.Doc, &sp); err != nil {
		return nil, fmt.Errorf("preset %s: stored document: %w", r.UUID, err)
	}
	pr := (*Preset)(&sp)
	pr.UUID = r.UUID
	if pr.CreationTime.IsZero() {
		pr.CreationTime = production.Time{Time: r.Created.UTC().Truncate(time.Millisecond)}
	}
	return pr, nil
}
