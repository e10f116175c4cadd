package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/audiopost/audiopost/storage"
)

const jobColumns = `id, COALESCE(owner_id, ''), production, type, payload, state, attempts, max_attempts,
	run_at, worker, lease_until, last_error, created_at, updated_at, crashes`

func scanJob(row interface{ Scan(...any) error }) (storage.Job, error) {
	var (
		j                              storage.Job
		state                          string
		runAt, lease, created, updated sql.NullInt64
	)
	if err := row.Scan(&j.ID, &j.Owner, &j.Production, &j.Type, &j.Payload, &state, &j.Attempts, &j.MaxAttempts,
		&runAt, &j.Worker, &lease, &j.LastError, &created, &updated, &j.Crashes); err != nil {
		return storage.Job{}, err
	}
	j.State = storage.JobState(state)
	j.RunAt, j.LeaseUntil, j.Created, j.Updated = goTime(runAt), goTime(lease), goTime(created), goTime(updated)
	return j, nil
}

// Enqueue implements storage.Jobs.
func (r *repo) Enqueue(ctx context.Context, j *storage.Job) error {
	if j.Type == "" {
		return fmt.Errorf("sqlstore: job without type: %w", storage.ErrInvalid)
	}
	if j.MaxAttempts < 0 {
		return fmt.Errorf("sqlstore: job with %d max attempts: %w", j.MaxAttempts, storage.ErrInvalid)
	}
	if j.MaxAttempts == 0 {
		j.MaxAttempts = storage.DefaultMaxAttempts
	}
	t := r.now()
	if j.RunAt.IsZero() {
		j.RunAt = t
	}
	j.RunAt = j.RunAt.UTC().Truncate(time.Microsecond)
	j.State, j.Attempts, j.Worker, j.LeaseUntil, j.LastError, j.Crashes = storage.JobQueued, 0, "", time.Time{}, "", 0
	j.Created, j.Updated = t, t
	return r.begin(ctx, func(tx *repo) error {
		// RETURNING id works on SQLite and PostgreSQL alike, where
		// LastInsertId does not.
		err := tx.w.QueryRowContext(ctx, tx.d.rebind(`INSERT INTO jobs (owner_id, production, type, payload, state, attempts,
			max_attempts, run_at, worker, last_error, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, 0, ?, ?, '', '', ?, ?) RETURNING id`),
			dbText(j.Owner), j.Production, j.Type, dbBytes(j.Payload), string(j.State), j.MaxAttempts,
			j.RunAt.UnixMicro(), t.UnixMicro(), t.UnixMicro()).Scan(&j.ID)
		if err != nil {
			return tx.wrap("enqueue job", err)
		}
		return tx.ready(ctx, TopicJobs)
	})
}

// Claim implements storage.Jobs. The transaction first retires jobs whose
// lease ran out on their last attempt (a job that kills its worker every
// time must not be retried forever), then claims in one statement.
func (r *repo) Claim(ctx context.Context, worker string, lease time.Duration) (storage.Job, error) {
	return r.claim(ctx, worker, "", lease)
}

// ClaimType implements storage.Jobs.
func (r *repo) ClaimType(ctx context.Context, worker, jobType string, lease time.Duration) (storage.Job, error) {
	if jobType == "" {
		return storage.Job{}, fmt.Errorf("sqlstore: claim of no job type: %w", storage.ErrInvalid)
	}
	return r.claim(ctx, worker, jobType, lease)
}

// claim claims a job of jobType, or of any type but live streams' when it
// is empty.
func (r *repo) claim(ctx context.Context, worker, jobType string, lease time.Duration) (storage.Job, error) {
	if worker == "" || lease <= 0 {
		return storage.Job{}, fmt.Errorf("sqlstore: claim by %q for %v: %w", worker, lease, storage.ErrInvalid)
	}
	var (
		j     storage.Job
		noJob bool // reported after commit, so that retired jobs stay retired
	)
	err := r.begin(ctx, func(t *repo) error {
		at := r.now()
		ts := at.UnixMicro()
		if _, err := t.exec(ctx, `UPDATE jobs SET state = 'failed', lease_until = NULL, updated_at = ?,
			last_error = CASE WHEN last_error = '' THEN 'lease expired on the last attempt' ELSE last_error END
			WHERE state = 'running' AND lease_until <= ? AND attempts >= max_attempts`, ts, ts); err != nil {
			return t.wrap("retire jobs", err)
		}
		q, args := t.d.claimJob, []any{worker, at.Add(lease).UnixMicro(), ts, ts, ts}
		if jobType != "" {
			q, args = t.d.claimJobType, append(args, jobType)
		}
		var err error
		j, err = scanJob(t.w.QueryRowContext(ctx, t.d.rebind(q), args...))
		if errors.Is(err, sql.ErrNoRows) {
			noJob = true
			return nil
		}
		return t.wrap("claim job", err)
	})
	if err == nil && noJob {
		err = fmt.Errorf("sqlstore: claim: %w", storage.ErrNoJob)
	}
	return j, err
}

// leaseCond matches the row of a lease that is still held.
const leaseCond = ` WHERE id = ? AND worker = ? AND attempts = ? AND state = 'running'`

// onLease runs a write that must find the lease held; ErrLeaseLost otherwise.
func (r *repo) onLease(ctx context.Context, what string, l storage.Lease, set string, args ...any) error {
	args = append(args, l.JobID, l.Worker, l.Attempt)
	res, err := r.exec(ctx, `UPDATE jobs SET `+set+leaseCond, args...)
	if err != nil {
		return r.wrap(what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlstore: %s: %w", what, err)
	}
	if n == 0 {
		return fmt.Errorf("sqlstore: %s of job %d by %s (attempt %d): %w", what, l.JobID, l.Worker, l.Attempt, storage.ErrLeaseLost)
	}
	return nil
}

// Heartbeat implements storage.Jobs. A lease that ran out but was not
// claimed by anyone else yet is still the caller's, and is extended.
func (r *repo) Heartbeat(ctx context.Context, l storage.Lease, lease time.Duration) error {
	if lease <= 0 {
		return fmt.Errorf("sqlstore: heartbeat for %v: %w", lease, storage.ErrInvalid)
	}
	at := r.now()
	return r.onLease(ctx, "heartbeat", l, `lease_until = ?, updated_at = ?`, at.Add(lease).UnixMicro(), at.UnixMicro())
}

// Complete implements storage.Jobs.
func (r *repo) Complete(ctx context.Context, l storage.Lease) error {
	return r.onLease(ctx, "complete", l, `state = 'done', lease_until = NULL, updated_at = ?`, r.now().UnixMicro())
}

// Fail implements storage.Jobs.
func (r *repo) Fail(ctx context.Context, l storage.Lease, reason string, retryAfter time.Duration) (bool, error) {
	if retryAfter < 0 {
		retryAfter = 0
	}
	var retry bool
	err := r.begin(ctx, func(t *repo) error {
		at := r.now()
		err := t.onLease(ctx, "fail", l, `state = CASE WHEN attempts < max_attempts THEN 'queued' ELSE 'failed' END,
			run_at = ?, lease_until = NULL, last_error = ?, updated_at = ?`,
			at.Add(retryAfter).UnixMicro(), reason, at.UnixMicro())
		if err != nil {
			return err
		}
		// Read the decision in the same transaction, before another worker
		// can claim the requeued job.
		j, err := t.getJob(ctx, t.w, l.JobID)
		if err != nil {
			return err
		}
		retry = j.State == storage.JobQueued
		if retry {
			return t.ready(ctx, TopicJobs)
		}
		return nil
	})
	return retry, err
}

// Release implements storage.Jobs.
func (r *repo) Release(ctx context.Context, l storage.Lease) error {
	return r.begin(ctx, func(t *repo) error {
		if err := t.onLease(ctx, "release", l, `state = 'queued', attempts = attempts - 1, worker = '', lease_until = NULL,
			updated_at = ?`, r.now().UnixMicro()); err != nil {
			return err
		}
		return t.ready(ctx, TopicJobs)
	})
}

// CancelJobs implements storage.Jobs.
func (r *repo) CancelJobs(ctx context.Context, owner, production string) (int, error) {
	res, err := r.exec(ctx, `UPDATE jobs SET state = 'canceled', lease_until = NULL, updated_at = ?
		WHERE owner_id = ? AND production = ? AND state IN ('queued', 'running')`, r.now().UnixMicro(), owner, production)
	if err != nil {
		return 0, r.wrap("cancel jobs", err)
	}
	n, err := res.RowsAffected()
	if err != nil || n == 0 {
		return int(n), err
	}
	// The worker of a running job learns of it from the lease; the
	// signal saves it waiting for its next heartbeat.
	return int(n), r.ready(ctx, TopicCanceled)
}

// StopJobs implements storage.Jobs.
func (r *repo) StopJobs(ctx context.Context, owner, production string) (int, error) {
	var stopping int
	err := r.begin(ctx, func(t *repo) error {
		ts := t.now().UnixMicro()
		res, err := t.exec(ctx, `UPDATE jobs SET
			state = CASE WHEN state IN ('running', 'stopping') AND lease_until > ? THEN 'stopping' ELSE 'canceled' END,
			lease_until = CASE WHEN state IN ('running', 'stopping') AND lease_until > ? THEN lease_until ELSE NULL END,
			updated_at = ?
			WHERE owner_id = ? AND production = ? AND state IN ('queued', 'running', 'stopping')`, ts, ts, ts, owner, production)
		if err != nil {
			return t.wrap("stop jobs", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("sqlstore: stop jobs: %w", err)
		}
		if n == 0 {
			return nil
		}
		if err := t.w.QueryRowContext(ctx, t.d.rebind(`SELECT COUNT(*) FROM jobs WHERE owner_id = ? AND production = ? AND state = 'stopping'`),
			owner, production).Scan(&stopping); err != nil {
			return t.wrap("stop jobs", err)
		}
		// A holder of a stopping job learns of it from its lease; the
		// signal saves it waiting for its next heartbeat.
		return t.ready(ctx, TopicCanceled)
	})
	return stopping, err
}

// Stopped implements storage.Jobs.
func (r *repo) Stopped(ctx context.Context, l storage.Lease) error {
	res, err := r.exec(ctx, `UPDATE jobs SET state = 'canceled', lease_until = NULL, updated_at = ?
		WHERE id = ? AND worker = ? AND attempts = ? AND state = 'stopping'`, r.now().UnixMicro(), l.JobID, l.Worker, l.Attempt)
	if err != nil {
		return r.wrap("end stopped job", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlstore: end stopped job: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("sqlstore: end stopped job %d by %s (attempt %d): %w", l.JobID, l.Worker, l.Attempt, storage.ErrLeaseLost)
	}
	return nil
}

// GetJob implements storage.Jobs.
func (r *repo) GetJob(ctx context.Context, id int64) (storage.Job, error) {
	return r.getJob(ctx, r.r, id)
}

func (r *repo) getJob(ctx context.Context, c conn, id int64) (storage.Job, error) {
	j, err := scanJob(c.QueryRowContext(ctx, r.d.rebind(`SELECT `+jobColumns+` FROM jobs WHERE id = ?`+r.lockRow()), id))
	return j, r.wrap(fmt.Sprintf("get job %d", id), err)
}

// ListJobs implements storage.Jobs.
func (r *repo) ListJobs(ctx context.Context, owner, production string) ([]storage.Job, error) {
	rows, err := r.query(ctx, `SELECT `+jobColumns+` FROM jobs WHERE owner_id = ? AND production = ? ORDER BY id DESC`,
		owner, production)
	if err != nil {
		return nil, r.wrap("list jobs", err)
	}
	return collect(rows, "list jobs", scanJob)
}

const deliveryColumns = `id, COALESCE(owner_id, ''), production, url, payload, state, attempts, next_attempt_at,
	last_error, created_at, updated_at, worker, http_status`

func scanDelivery(row interface{ Scan(...any) error }) (storage.Delivery, error) {
	var (
		d                      storage.Delivery
		state                  string
		next, created, updated sql.NullInt64
	)
	if err := row.Scan(&d.ID, &d.Owner, &d.Production, &d.URL, &d.Payload, &state, &d.Attempts, &next,
		&d.LastError, &created, &updated, &d.Worker, &d.HTTPStatus); err != nil {
		return storage.Delivery{}, err
	}
	d.State = storage.DeliveryState(state)
	d.NextAttempt, d.Created, d.Updated = goTime(next), goTime(created), goTime(updated)
	return d, nil
}

// EnqueueDelivery implements storage.Deliveries.
func (r *repo) EnqueueDelivery(ctx context.Context, d *storage.Delivery) error {
	if d.URL == "" {
		return fmt.Errorf("sqlstore: webhook delivery without URL: %w", storage.ErrInvalid)
	}
	t := r.now()
	if d.NextAttempt.IsZero() {
		d.NextAttempt = t
	}
	d.NextAttempt = d.NextAttempt.UTC().Truncate(time.Microsecond)
	d.State, d.Attempts, d.LastError, d.Created, d.Updated = storage.DeliveryPending, 0, "", t, t
	d.Worker, d.HTTPStatus = "", 0
	return r.begin(ctx, func(tx *repo) error {
		err := tx.w.QueryRowContext(ctx, tx.d.rebind(`INSERT INTO webhook_deliveries (owner_id, production, url, payload,
			state, attempts, next_attempt_at, last_error, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, 0, ?, '', ?, ?) RETURNING id`),
			dbText(d.Owner), d.Production, d.URL, dbBytes(d.Payload), string(d.State),
			d.NextAttempt.UnixMicro(), t.UnixMicro(), t.UnixMicro()).Scan(&d.ID)
		if err != nil {
			return tx.wrap("enqueue webhook delivery", err)
		}
		return tx.ready(ctx, TopicDeliveries)
	})
}

// ClaimDelivery implements storage.Deliveries.
func (r *repo) ClaimDelivery(ctx context.Context, worker string, lease time.Duration) (storage.Delivery, error) {
	if lease <= 0 || worker == "" {
		return storage.Delivery{}, fmt.Errorf("sqlstore: claim delivery for %q, %v: %w", worker, lease, storage.ErrInvalid)
	}
	var d storage.Delivery
	err := r.begin(ctx, func(t *repo) error {
		at := r.now()
		var err error
		d, err = scanDelivery(t.w.QueryRowContext(ctx, t.d.rebind(t.d.claimDelivery),
			worker, at.Add(lease).UnixMicro(), at.UnixMicro(), at.UnixMicro()))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("sqlstore: claim delivery: %w", storage.ErrNoJob)
		}
		return t.wrap("claim delivery", err)
	})
	return d, err
}

// deliveryCond matches the claim that d came from.
const deliveryCond = ` WHERE id = ? AND attempts = ? AND worker = ? AND state = 'pending'`

func (r *repo) onDelivery(ctx context.Context, what string, d storage.Delivery, set string, args ...any) error {
	args = append(args, d.ID, d.Attempts, d.Worker)
	res, err := r.exec(ctx, `UPDATE webhook_deliveries SET `+set+deliveryCond, args...)
	if err != nil {
		return r.wrap(what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlstore: %s: %w", what, err)
	}
	if n == 0 {
		return fmt.Errorf("sqlstore: %s of delivery %d (attempt %d): %w", what, d.ID, d.Attempts, storage.ErrLeaseLost)
	}
	return nil
}

// DeliverySucceeded implements storage.Deliveries.
func (r *repo) DeliverySucceeded(ctx context.Context, d storage.Delivery) error {
	return r.onDelivery(ctx, "mark delivered", d, `state = 'delivered', worker = '', http_status = ?, updated_at = ?`,
		d.HTTPStatus, r.now().UnixMicro())
}

// DeliveryFailed implements storage.Deliveries.
func (r *repo) DeliveryFailed(ctx context.Context, d storage.Delivery, reason string, next time.Time) error {
	t := r.now()
	if next.IsZero() {
		return r.onDelivery(ctx, "mark delivery failed", d, `state = 'failed', worker = '', http_status = ?, last_error = ?, updated_at = ?`,
			d.HTTPStatus, reason, t.UnixMicro())
	}
	return r.onDelivery(ctx, "reschedule delivery", d, `next_attempt_at = ?, worker = '', http_status = ?, last_error = ?, updated_at = ?`,
		next.UnixMicro(), d.HTTPStatus, reason, t.UnixMicro())
}

// DeliveryHolders implements storage.Deliveries.
func (r *repo) DeliveryHolders(ctx context.Context) ([]string, error) {
	rows, err := r.query(ctx, `SELECT DISTINCT worker FROM webhook_deliveries WHERE state = 'pending' AND worker <> '' ORDER BY worker`)
	if err != nil {
		return nil, r.wrap("list delivery holders", err)
	}
	return collect(rows, "list delivery holders", func(row interface{ Scan(...any) error }) (string, error) {
		var w string
		return w, row.Scan(&w)
	})
}

// ExpireDeliveries implements storage.Deliveries. The claim stays
// counted; a late outcome of it finds the delivery claimed again
// (ErrLeaseLost) or no longer claimed and is ignored the same way.
func (r *repo) ExpireDeliveries(ctx context.Context, workers ...string) (int, error) {
	if len(workers) == 0 {
		return 0, nil
	}
	if len(workers) > maxThrottleKeys {
		return 0, fmt.Errorf("sqlstore: expire deliveries of %d senders: %w", len(workers), storage.ErrInvalid)
	}
	var n int64
	err := r.begin(ctx, func(t *repo) error {
		ts := t.now().UnixMicro()
		res, err := t.exec(ctx, `UPDATE webhook_deliveries SET next_attempt_at = ?, worker = '', updated_at = ?
			WHERE state = 'pending' AND worker IN (`+placeholders(len(workers))+`)`,
			append([]any{ts, ts}, anys(workers)...)...)
		if err != nil {
			return t.wrap("expire deliveries", err)
		}
		if n, err = res.RowsAffected(); err != nil {
			return fmt.Errorf("sqlstore: expire deliveries: %w", err)
		}
		if n > 0 {
			return t.ready(ctx, TopicDeliveries)
		}
		return nil
	})
	return int(n), err
}

// GetDelivery implements storage.Deliveries.
func (r *repo) GetDelivery(ctx context.Context, id int64) (storage.Delivery, error) {
	d, err := scanDelivery(r.queryRow(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries WHERE id = ?`, id))
	return d, r.wrap(fmt.Sprintf("get delivery %d", id), err)
}

// ListDeliveries implements storage.Deliveries.
func (r *repo) ListDeliveries(ctx context.Context, owner, production string) ([]storage.Delivery, error) {
	rows, err := r.query(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries WHERE owner_id = ? AND production = ?
		ORDER BY id DESC`, owner, production)
	if err != nil {
		return nil, r.wrap("list deliveries", err)
	}
	return collect(rows, "list deliveries", scanDelivery)
}

// LeaseHolders implements storage.Jobs.
func (r *repo) LeaseHolders(ctx context.Context) ([]string, error) {
	rows, err := r.query(ctx, `SELECT DISTINCT worker FROM jobs WHERE state IN ('running', 'stopping') ORDER BY worker`)
	if err != nil {
		return nil, r.wrap("list lease holders", err)
	}
	return collect(rows, "list lease holders", func(row interface{ Scan(...any) error }) (string, error) {
		var w string
		return w, row.Scan(&w)
	})
}

// ExpireLeases implements storage.Jobs. The jobs stay running with a
// lease that ended now: Claim then retires those on their last attempt
// and takes the others, exactly as after a lease that ran out.
func (r *repo) ExpireLeases(ctx context.Context, workers ...string) (int, error) {
	if len(workers) == 0 {
		return 0, nil
	}
	if len(workers) > maxThrottleKeys {
		return 0, fmt.Errorf("sqlstore: expire leases of %d workers: %w", len(workers), storage.ErrInvalid)
	}
	var n int64
	err := r.begin(ctx, func(t *repo) error {
		ts := t.now().UnixMicro()
		res, err := t.exec(ctx, `UPDATE jobs SET lease_until = ?, updated_at = ?
			WHERE state IN ('running', 'stopping') AND worker IN (`+placeholders(len(workers))+`)`,
			append([]any{ts, ts}, anys(workers)...)...)
		if err != nil {
			return t.wrap("expire leases", err)
		}
		if n, err = res.RowsAffected(); err != nil {
			return fmt.Errorf("sqlstore: expire leases: %w", err)
		}
		if n > 0 {
			return t.ready(ctx, TopicJobs)
		}
		return nil
	})
	return int(n), err
}
