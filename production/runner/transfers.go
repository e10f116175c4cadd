package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/audiopost/audiopost/production/engine"

	"github.com/audiopost/audiopost/production"

	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/transfer"
)

// fileStorageTypes are the service kinds every output file goes to when
// the output names no services (the spec's default routing, rule 1).
var fileStorageTypes = []string{"ftp", "sftp", "webdav", "s3", "dropbox", "archiveorg", "podtrac"}

// routed reports whether output file o goes to outgoing service svc.
func routed(o production.OutputFile, svc storage.Service) bool {
	if len(o.OutgoingServices) > 0 {
		return slices.Contains(o.OutgoingServices, svc.UUID)
	}
	return slices.Contains(fileStorageTypes, svc.Type)
}

// transferOutputs copies the finished outputs to the production's
// outgoing services, recording transfer_success, error_message and
// result_urls on each. A failed transfer leaves the outputs and the
// production Done, with a warning naming the services that failed: the
// user can download the files and restart the transfer by restarting.
func (j *jobRun) transferOutputs(ctx context.Context, p *production.Production, res *engine.Result) error {
	if len(p.OutgoingServices) == 0 || res == nil {
		return nil
	}
	if err := j.setStatus(ctx, production.StatusOutgoingTransfer); err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	var failed []string
	for i := range p.OutgoingServices {
		o := &p.OutgoingServices[i]
		urls, err := j.transferTo(ctx, p, res, o.UUID)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var ie *infraError
		if errors.As(err, &ie) {
			return err // the blob store failed, not the service: retry the job
		}
		ok := err == nil
		o.TransferSuccess, o.ResultURLs, o.ErrorMessage = &ok, urls, ""
		if err != nil {
			o.ErrorMessage = err.Error()
			name := o.DisplayName
			if name == "" {
				name = o.UUID
			}
			failed = append(failed, name+": "+err.Error())
			j.log.Warn("outgoing transfer failed", "service", o.UUID, "err", err)
		}
	}
	if len(failed) > 0 {
		p.AddWarning(production.StatusOutgoingTransfer, "outgoing file transfer failed: "+strings.Join(failed, ", "))
	}
	return nil
}

// transferTo copies the outputs routed to one service and returns the
// public URLs of the copies (when the service has a base URL).
func (j *jobRun) transferTo(ctx context.Context, p *production.Production, res *engine.Result, uuid string) ([]string, error) {
	svc, err := j.r.cfg.Store.GetService(ctx, j.job.Owner, uuid)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errors.New("the service no longer exists")
	}
	if err != nil {
		return nil, infra(err)
	}
	if !svc.Outgoing {
		return nil, errors.New("not an outgoing service")
	}
	var files []engine.WrittenFile
	for _, f := range res.Files {
		if f.Output >= 0 && f.Output < len(p.OutputFiles) && routed(p.OutputFiles[f.Output], svc) {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return nil, nil
	}
	if !transfer.Supported(svc.Type) {
		return nil, fmt.Errorf("service type %q: this server has no file transfer for it", svc.Type)
	}
	c, err := transfer.Open(ctx, svc, j.r.cfg.Transfer)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var urls []string
	for _, f := range files {
		rc, _, err := j.r.cfg.Blobs.Open(ctx, production.OutputKey(p.UUID, f.Name))
		if err != nil {
			return nil, infra(err)
		}
		err = c.Put(ctx, f.Name, rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		if u := c.URL(f.Name); u != "" {
			urls = append(urls, u)
		}
	}
	return urls, nil
}
