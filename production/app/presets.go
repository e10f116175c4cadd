package app

import (
	"context"
	"errors"

	"github.com/audiopost/audiopost/preset"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
)

// CreatePreset creates a preset of u from a creation request; the
// services it names are checked and a cover given by URL is fetched and
// stored with it.
func (a *App) CreatePreset(ctx context.Context, u storage.User, in *preset.Input) (*preset.Preset, error) {
	opts, err := a.applyOptsFor(ctx, u.ID, &in.Input)
	if err != nil {
		return nil, err
	}
	pr, err := preset.New(in, opts)
	if err != nil {
		return nil, err
	}
	pr.UUID = storage.NewUUID()
	if err := a.resolvePresetServices(ctx, u.ID, pr); err != nil {
		return nil, err
	}
	ik := presetImages(pr.UUID)
	if _, err := a.syncCover(ctx, u.ID, ik, nil, nil, pr.Image, &pr.Image, &pr.Thumbnail); err != nil {
		return nil, err
	}
	doc, err := preset.EncodeDocument(pr)
	if err != nil {
		return nil, err
	}
	if err := a.store.CreateResource(ctx, &storage.Resource{UUID: pr.UUID, Owner: u.ID, Kind: storage.KindPreset, Doc: doc}); err != nil {
		a.prune(ctx, production.PresetPrefix(pr.UUID))
		return nil, err
	}
	return pr, nil
}

// GetPreset returns u's preset id.
func (a *App) GetPreset(ctx context.Context, u storage.User, id string) (*preset.Preset, error) {
	pr, _, err := a.loadPreset(ctx, u.ID, id)
	return pr, err
}

// ListPresets returns u's presets, newest first.
func (a *App) ListPresets(ctx context.Context, u storage.User, limit, offset int) ([]*preset.Preset, error) {
	rs, err := a.store.ListResources(ctx, u.ID, storage.KindPreset, limit, offset)
	if err != nil {
		return nil, err
	}
	out := make([]*preset.Preset, 0, len(rs))
	for _, r := range rs {
		pr, err := preset.DecodeDocument(r)
		if err != nil {
			return nil, err
		}
		out = append(out, pr)
	}
	return out, nil
}

// UpdatePreset applies an update request to u's preset id; a new cover
// replaces the old one once the change is stored.
func (a *App) UpdatePreset(ctx context.Context, u storage.User, id string, in *preset.Input) (*preset.Preset, error) {
	imgChanged := false
	pr, err := a.changePreset(ctx, u.ID, id, func(pr *preset.Preset) error {
		before, beforeThumb := pr.Image, pr.Thumbnail
		opts, err := a.applyOptsFor(ctx, u.ID, &in.Input)
		if err != nil {
			return err
		}
		if err := pr.Apply(in, opts); err != nil {
			return err
		}
		if err := a.resolvePresetServices(ctx, u.ID, pr); err != nil {
			return err
		}
		imgChanged, err = a.syncCover(ctx, u.ID, presetImages(pr.UUID), before, beforeThumb, pr.Image, &pr.Image, &pr.Thumbnail)
		return err
	})
	if err != nil {
		return nil, err
	}
	if imgChanged {
		a.pruneImages(ctx, presetImages(pr.UUID), pr.Image)
	}
	return pr, nil
}

// ClearPresetList empties a list of u's preset id: output_files,
// multi_input_files, speech_recognition or webhook (presets have no
// chapters: a form error).
func (a *App) ClearPresetList(ctx context.Context, u storage.User, id string, list production.List) (*preset.Preset, error) {
	if list == production.ListChapters {
		return nil, fieldError("chapters", "presets have no chapters")
	}
	return a.changePreset(ctx, u.ID, id, func(pr *preset.Preset) error {
		switch list {
		case production.ListOutputFiles:
			pr.OutputFiles = nil
		case production.ListMultiInputFiles:
			pr.MultiInputFiles = nil
		case production.ListSpeechRecognition:
			pr.SpeechRecognition = nil
		case ListWebhook:
			pr.Webhook = nil
		}
		return nil
	})
}

// DeletePreset deletes u's preset id with its cover.
func (a *App) DeletePreset(ctx context.Context, u storage.User, id string) error {
	if err := a.store.DeleteResource(ctx, u.ID, storage.KindPreset, id); err != nil {
		return err
	}
	a.prune(ctx, production.PresetPrefix(id))
	return nil
}

// changePreset is changeProduction for presets.
func (a *App) changePreset(ctx context.Context, owner, id string, fn func(pr *preset.Preset) error) (*preset.Preset, error) {
	for attempt := 0; ; attempt++ {
		pr, r, err := a.loadPreset(ctx, owner, id)
		if err != nil {
			return nil, err
		}
		if err := fn(pr); err != nil {
			return nil, err
		}
		if r.Doc, err = preset.EncodeDocument(pr); err != nil {
			return nil, err
		}
		err = a.store.UpdateResource(ctx, &r)
		if errors.Is(err, storage.ErrConflict) && attempt == 0 {
			continue
		}
		if err != nil {
			return nil, err
		}
		return pr, nil
	}
}
