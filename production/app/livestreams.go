package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/audiopost/audiopost/production/livestream"
	"github.com/audiopost/audiopost/storage"
)

// CreateLiveStream validates in (livestream.New: every address vetted
// by the server's outbound policy, the preset it names looked up among
// u's) and stores the new live stream of u, stopped.
func (a *App) CreateLiveStream(ctx context.Context, u storage.User, in livestream.Input) (*livestream.LiveStream, error) {
	presets, err := a.presets(ctx, u.ID, in.Preset)
	if err != nil {
		return nil, err
	}
	ls, err := livestream.New(ctx, in, presets, a.liveURL)
	if err != nil {
		return nil, err
	}
	doc, err := json.Marshal(ls)
	if err != nil {
		return nil, err
	}
	res := &storage.Resource{Owner: u.ID, Kind: storage.KindLiveStream, Doc: doc, Status: int(livestream.Stopped)}
	if err := a.store.CreateResource(ctx, res); err != nil {
		return nil, err
	}
	ls.UUID, ls.Created = res.UUID, res.Created
	return ls, nil
}

// GetLiveStream returns u's live stream id.
func (a *App) GetLiveStream(ctx context.Context, u storage.User, id string) (*livestream.LiveStream, error) {
	r, err := a.store.GetResource(ctx, u.ID, storage.KindLiveStream, id)
	if err != nil {
		return nil, err
	}
	return livestream.Decode(r)
}

// ListLiveStreams returns u's live streams, newest first.
func (a *App) ListLiveStreams(ctx context.Context, u storage.User, limit, offset int) ([]*livestream.LiveStream, error) {
	rs, err := a.store.ListResources(ctx, u.ID, storage.KindLiveStream, limit, offset)
	if err != nil {
		return nil, err
	}
	out := make([]*livestream.LiveStream, 0, len(rs))
	for _, r := range rs {
		ls, err := livestream.Decode(r)
		if err != nil {
			return nil, err
		}
		out = append(out, ls)
	}
	return out, nil
}

// StartLiveStream starts u's stopped (or failed) live stream id: it
// becomes Starting with its job queued, in one transaction; a worker then
// runs it. Starting a stream that is starting or running is
// livestream.ErrState.
func (a *App) StartLiveStream(ctx context.Context, u storage.User, id string) (*livestream.LiveStream, error) {
	var ls *livestream.LiveStream
	err := a.store.WithTx(ctx, func(tx storage.Tx) error {
		r, err := tx.GetResource(ctx, u.ID, storage.KindLiveStream, id)
		if err != nil {
			return err
		}
		if err := livestream.State(r.Status).Startable(); err != nil {
			return err
		}
		if ls, err = livestream.Decode(r); err != nil {
			return err
		}
		// A new start forgets why the last run failed.
		ls.Error = ""
		if r.Doc, err = json.Marshal(ls); err != nil {
			return err
		}
		r.Status = int(livestream.Starting)
		if err := tx.UpdateResource(ctx, &r); err != nil {
			return err
		}
		ls.State = livestream.Starting
		return tx.Enqueue(ctx, &storage.Job{Owner: u.ID, Production: id, Type: storage.JobLive, MaxAttempts: livestream.MaxAttempts})
	})
	return ls, err
}

// StopLiveStream stops u's live stream id, whatever its state: its job
// is canceled (the worker running it notices at its next heartbeat) and
// it becomes Stopped, in one transaction.
func (a *App) StopLiveStream(ctx context.Context, u storage.User, id string) (*livestream.LiveStream, error) {
	var ls *livestream.LiveStream
	err := a.store.WithTx(ctx, func(tx storage.Tx) error {
		r, err := tx.GetResource(ctx, u.ID, storage.KindLiveStream, id)
		if err != nil {
			return err
		}
		if _, err := tx.CancelJobs(ctx, u.ID, id); err != nil {
			return err
		}
		if err := tx.SetStatus(ctx, u.ID, storage.KindLiveStream, id, int(livestream.Stopped)); err != nil {
			return err
		}
		r.Status = int(livestream.Stopped)
		ls, err = livestream.Decode(r)
		return err
	})
	return ls, err
}

// DeleteLiveStream stops and deletes u's live stream id and its figures.
func (a *App) DeleteLiveStream(ctx context.Context, u storage.User, id string) error {
	return a.store.WithTx(ctx, func(tx storage.Tx) error {
		if _, err := tx.CancelJobs(ctx, u.ID, id); err != nil {
			return err
		}
		if err := tx.DeleteLiveFigures(ctx, u.ID, id); err != nil {
			return err
		}
		return tx.DeleteResource(ctx, u.ID, storage.KindLiveStream, id)
	})
}

// LiveStreamReport returns u's live stream id with its latest figures.
func (a *App) LiveStreamReport(ctx context.Context, u storage.User, id string) (*livestream.Report, error) {
	ls, err := a.GetLiveStream(ctx, u, id)
	if err != nil {
		return nil, err
	}
	rep := &livestream.Report{LiveStream: ls}
	doc, _, err := a.store.GetLiveFigures(ctx, u.ID, id)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return rep, nil
	case err != nil:
		return nil, err
	}
	rep.Figures = &livestream.Figures{}
	if err := json.Unmarshal(doc, rep.Figures); err != nil {
		return nil, fmt.Errorf("live stream %s: stored figures: %w", id, err)
	}
	return rep, nil
}
