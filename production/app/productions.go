package app

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"time"

	"github.com/audiopost/audiopost/preset"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
)

// CreateProduction creates a production of u from a creation request:
// the preset it names applied first, the services it names checked, and
// an input or cover given by URL or as a file on an incoming service
// fetched, checked and stored with it.
func (a *App) CreateProduction(ctx context.Context, u storage.User, in *production.Input) (*production.Production, error) {
	opts, err := a.applyOptsFor(ctx, u.ID, in)
	if err != nil {
		return nil, err
	}
	p, err := production.New(in, opts)
	if err != nil {
		return nil, err
	}
	p.UUID = storage.NewUUID()
	if err := a.storeNew(ctx, u.ID, p, &production.Production{}, false); err != nil {
		return nil, err
	}
	return p, nil
}

// storeNew resolves services, fetches URL inputs and stores a new
// production p whose files stored so far are those of before; with start
// it is stored Waiting with its job in one transaction. Blobs written for
// it are removed when storing fails.
func (a *App) storeNew(ctx context.Context, owner string, p, before *production.Production, start bool) (err error) {
	defer func() {
		if err != nil {
			a.prune(ctx, production.ProductionPrefix(p.UUID))
		}
	}()
	if err := a.resolveServices(ctx, owner, p); err != nil {
		return err
	}
	cleanup, err := a.syncMedia(ctx, owner, before, p)
	if err != nil {
		return err
	}
	defer cleanup()
	// Chapters past the input's end are dropped with a warning, work
	// beyond the budget is a form error.
	if err := p.FitBudget(a.limits); err != nil {
		return err
	}
	if start {
		if err := p.Startable(a.limits); err != nil {
			return err
		}
		p.Status = production.StatusWaiting
	}
	doc, err := production.EncodeDocument(p)
	if err != nil {
		return err
	}
	res := &storage.Resource{UUID: p.UUID, Owner: owner, Kind: storage.KindProduction, Doc: doc, Status: int(p.Status)}
	if !start {
		return a.store.CreateResource(ctx, res)
	}
	return a.store.WithTx(ctx, func(tx storage.Tx) error {
		if err := tx.CreateResource(ctx, res); err != nil {
			return err
		}
		return tx.Enqueue(ctx, &storage.Job{Owner: owner, Production: p.UUID, Type: production.JobProcess})
	})
}

// GetProduction returns u's production id.
func (a *App) GetProduction(ctx context.Context, u storage.User, id string) (*production.Production, error) {
	p, _, err := production.Load(ctx, a.store, u.ID, id)
	return p, err
}

// ListProductions returns u's productions, newest first.
func (a *App) ListProductions(ctx context.Context, u storage.User, limit, offset int) ([]*production.Production, error) {
	rs, err := a.store.ListResources(ctx, u.ID, storage.KindProduction, limit, offset)
	if err != nil {
		return nil, err
	}
	out := make([]*production.Production, 0, len(rs))
	for _, r := range rs {
		p, err := production.DecodeDocument(r)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// Progress is where a production is: its status and how much of its
// processing is done.
type Progress struct {
	UUID   string
	Status production.Status
	// Percent is the shown progress (production.ShownProgress).
	Percent int
}

// ProductionProgress returns the progress of u's production id, without
// reading the whole production.
func (a *App) ProductionProgress(ctx context.Context, u storage.User, id string) (Progress, error) {
	r, err := a.store.GetResource(ctx, u.ID, storage.KindProduction, id)
	if err != nil {
		return Progress{}, err
	}
	st := production.Status(r.Status)
	return Progress{UUID: r.UUID, Status: st, Percent: production.ShownProgress(st, r.Progress)}, nil
}

// WebhookDeliveries lists the webhook calls of u's production id from
// the outbox, newest first, as the production's owner sees them: no URL
// (the production has it) and no payload but its status.
func (a *App) WebhookDeliveries(ctx context.Context, u storage.User, id string) ([]production.WebhookDelivery, error) {
	ds, err := a.store.ListDeliveries(ctx, u.ID, id)
	if err != nil {
		return nil, err
	}
	out := make([]production.WebhookDelivery, 0, len(ds))
	for _, d := range ds {
		out = append(out, deliveryOf(d))
	}
	return out, nil
}

func deliveryOf(d storage.Delivery) production.WebhookDelivery {
	at := func(t time.Time) *production.Time {
		pt := APITime(t)
		return &pt
	}
	w := production.WebhookDelivery{State: string(d.State), Attempts: d.Attempts, Created: *at(d.Created),
		HTTPStatus: d.HTTPStatus, Error: d.LastError}
	if vals, err := url.ParseQuery(string(d.Payload)); err == nil {
		if n, err := strconv.Atoi(vals.Get("status")); err == nil {
			w.Status = production.Status(n)
		}
	}
	if d.Attempts > 0 {
		w.LastAttempt = at(d.Updated)
	}
	// A claimed delivery's next_attempt_at is its lease, not a schedule.
	if d.State == storage.DeliveryPending && d.Worker == "" {
		w.NextAttempt = at(d.NextAttempt)
	}
	return w
}

// UpdateProduction applies an update request to u's production id (see
// production.Production.Apply): the preset it names laid on first,
// services checked, inputs and covers by URL or on a service fetched and
// checked, the work fitted to the budget. Files it replaces go once the
// change is stored.
func (a *App) UpdateProduction(ctx context.Context, u storage.User, id string, in *production.Input) (*production.Production, error) {
	var cleanup func()
	p, err := a.changeProduction(ctx, u.ID, id, func(p *production.Production) error {
		before := p.Clone()
		opts, err := a.applyOptsFor(ctx, u.ID, in)
		if err != nil {
			return err
		}
		if err := p.Apply(in, opts); err != nil {
			return err
		}
		if in.ResetData || in.Service.Set || in.OutgoingServices != nil || in.SpeechRecognition.Set || in.Preset != "" {
			if err := a.resolveServices(ctx, u.ID, p); err != nil {
				return err
			}
		}
		cleanup, err = a.syncMedia(ctx, u.ID, before, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	cleanup()
	return p, nil
}

// ClearProductionList empties a list of u's production id (the DELETE
// sub-commands): output_files, chapters, multi_input_files,
// speech_recognition or webhook.
func (a *App) ClearProductionList(ctx context.Context, u storage.User, id string, list production.List) (*production.Production, error) {
	return a.changeProduction(ctx, u.ID, id, func(p *production.Production) error {
		if list == ListWebhook {
			return p.Apply(&production.Input{Webhook: production.Null[string]()}, a.applyOpts())
		}
		return p.ClearList(list)
	})
}

// ListWebhook is the webhook as a list the DELETE sub-commands clear.
const ListWebhook production.List = "webhook"

// changeProduction loads a production, lets fn change it, fits it to the
// work budget (production.FitBudget) and stores it with optimistic
// concurrency; a concurrent change makes it reload and call fn once more,
// a second one is storage.ErrConflict.
func (a *App) changeProduction(ctx context.Context, owner, id string, fn func(p *production.Production) error) (*production.Production, error) {
	for attempt := 0; ; attempt++ {
		p, r, err := production.Load(ctx, a.store, owner, id)
		if err != nil {
			return nil, err
		}
		if err := fn(p); err != nil {
			return nil, err
		}
		if err := p.FitBudget(a.limits); err != nil {
			return nil, err
		}
		if r.Doc, err = production.EncodeDocument(p); err != nil {
			return nil, err
		}
		r.Status = int(p.Status)
		err = a.store.UpdateResource(ctx, &r)
		if errors.Is(err, storage.ErrConflict) && attempt == 0 {
			continue
		}
		if err != nil {
			return nil, err
		}
		return p, nil
	}
}

// DeleteProduction deletes u's production id with its files, and cancels
// its waiting job in the same transaction; a production being processed
// is production.ErrProcessing (stop it first).
func (a *App) DeleteProduction(ctx context.Context, u storage.User, id string) error {
	err := a.store.WithTx(ctx, func(tx storage.Tx) error {
		res, err := tx.GetResource(ctx, u.ID, storage.KindProduction, id)
		if err != nil {
			return err
		}
		if production.Status(res.Status).Processing() {
			return production.ErrProcessing
		}
		if _, err := tx.CancelJobs(ctx, u.ID, id); err != nil {
			return err
		}
		return tx.DeleteResource(ctx, u.ID, storage.KindProduction, id)
	})
	if err != nil {
		return err
	}
	a.prune(ctx, production.ProductionPrefix(id))
	return nil
}

// StartProduction queues u's production id for processing: it is
// re-read, its start_allowed and work budget checked
// (production.Startable), live jobs of it canceled (restarting a waiting
// production must not queue it twice), its status set to Waiting and a
// production.JobProcess job enqueued, in one transaction.
func (a *App) StartProduction(ctx context.Context, u storage.User, id string) (*production.Production, error) {
	err := a.store.WithTx(ctx, func(tx storage.Tx) error {
		p, _, err := production.Load(ctx, tx, u.ID, id)
		if err != nil {
			return err
		}
		if err := p.Startable(a.limits); err != nil {
			return err
		}
		if _, err := tx.CancelJobs(ctx, u.ID, id); err != nil {
			return err
		}
		if err := tx.SetStatus(ctx, u.ID, storage.KindProduction, id, int(production.StatusWaiting)); err != nil {
			return err
		}
		return tx.Enqueue(ctx, &storage.Job{Owner: u.ID, Production: id, Type: production.JobProcess})
	})
	if err != nil {
		return nil, err
	}
	return a.GetProduction(ctx, u, id)
}

// StopProduction stops u's production id: its live jobs are stopped
// (storage.Jobs.StopJobs) and it moves to the status
// production.StopStatus says, in one transaction. A production that is
// neither waiting nor processing is production.ErrNotRunning.
func (a *App) StopProduction(ctx context.Context, u storage.User, id string) (*production.Production, error) {
	err := a.store.WithTx(ctx, func(tx storage.Tx) error {
		p, _, err := production.Load(ctx, tx, u.ID, id)
		if err != nil {
			return err
		}
		if err := p.Stoppable(); err != nil {
			return err
		}
		held, err := tx.StopJobs(ctx, u.ID, id)
		if err != nil {
			return err
		}
		return tx.SetStatus(ctx, u.ID, storage.KindProduction, id, int(p.StopStatus(held > 0)))
	})
	if err != nil {
		return nil, err
	}
	return a.GetProduction(ctx, u, id)
}

// WarnProduction adds msg to the warning of production id of owner (see
// production.Production.AddWarning), at its current status, for what
// happened after processing (a webhook that could not be delivered). A
// production being processed again is left alone: its run starts with a
// fresh warning and ends with its own webhook.
func (a *App) WarnProduction(ctx context.Context, owner, id, msg string) error {
	return a.store.WithTx(ctx, func(tx storage.Tx) error {
		p, r, err := production.Load(ctx, tx, owner, id)
		if err != nil {
			return err
		}
		if p.Status.Processing() || p.Status == production.StatusWaiting {
			return nil
		}
		p.AddWarning(p.Status, msg)
		if r.Doc, err = production.EncodeDocument(p); err != nil {
			return err
		}
		return tx.UpdateResource(ctx, &r)
	})
}

// presets looks up the presets of owner a request names (preset,
// preset_cover_image), for production.ApplyOptions.Presets.
func (a *App) presets(ctx context.Context, owner string, uuids ...string) (production.Presets, error) {
	out := production.Presets{}
	for _, id := range uuids {
		if id == "" {
			continue
		}
		pr, _, err := a.loadPreset(ctx, owner, id)
		switch {
		case errors.Is(err, storage.ErrNotFound):
		case err != nil:
			return nil, err
		default:
			out[id] = pr.Template()
		}
	}
	return out, nil
}

// applyOptsFor are the options of a change made now by owner with the
// presets the request names.
func (a *App) applyOptsFor(ctx context.Context, owner string, in *production.Input) (production.ApplyOptions, error) {
	opts := a.applyOpts()
	var err error
	opts.Presets, err = a.presets(ctx, owner, in.Preset, in.PresetCoverImage)
	return opts, err
}

func (a *App) loadPreset(ctx context.Context, owner, id string) (*preset.Preset, storage.Resource, error) {
	r, err := a.store.GetResource(ctx, owner, storage.KindPreset, id)
	if err != nil {
		return nil, r, err
	}
	pr, err := preset.DecodeDocument(r)
	return pr, r, err
}
