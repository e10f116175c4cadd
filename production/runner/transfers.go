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

// serviceKind is what the spec's default routing knows a service type
// as.
type serviceKind int

const (
	kindOther          serviceKind = iota // gets nothing by default
	kindFileStorage                       // rule 1: every file
	kindAudioHosting                      // rule 2: the lossy audio file with the highest bitrate
	kindVideoHosting                      // rule 3: the video output
	kindPodcastHosting                    // rule 4: an MP3 output
)

// serviceKinds are the kinds of the service types. This server transfers
// with the file-storage kinds only (storage/transfer: ftp, sftp, webdav,
// s3); the hosting platforms are named so that the routing of a service
// record of such a type (made by an embedder) follows the spec, even
// though its transfer then fails for want of a connector.
var serviceKinds = map[string]serviceKind{
	"ftp": kindFileStorage, "sftp": kindFileStorage, "webdav": kindFileStorage, "s3": kindFileStorage,
	"dropbox": kindFileStorage, "archiveorg": kindFileStorage, "podtrac": kindFileStorage,
	"soundcloud": kindAudioHosting, "youtube": kindVideoHosting, "libsyn": kindPodcastHosting,
}

// routeFiles returns the written files that go to outgoing service svc.
// An output file that names services goes to those only; the others
// follow the spec's default routing by the service's kind:
//
//  1. file storage (FTP, SFTP, WebDAV, S3, ...): every file;
//  2. audio hosting: the files of the lossy output with the highest
//     bitrate (the first of equal ones);
//  3. video hosting: the files of the video outputs;
//  4. podcast hosting: the files of the MP3 output with the highest
//     bitrate. The spec generates an MP3 output for such a service when
//     there is none; this server does not, and the transfer fails with
//     "no MP3 output" instead.
func routeFiles(outputs []production.OutputFile, files []engine.WrittenFile, svc storage.Service) ([]engine.WrittenFile, error) {
	kind := serviceKinds[svc.Type]
	best := -1 // the output rules 2 and 4 choose
	if kind == kindAudioHosting || kind == kindPodcastHosting {
		bestRate := -1
		for i, o := range outputs {
			f, ok := production.LookupFormat(o.Format)
			if len(o.OutgoingServices) > 0 || !ok || !f.Lossy() || (kind == kindPodcastHosting && f.Name != "mp3" && f.Name != "mp3-vbr") {
				continue
			}
			rate := o.Bitrate
			if rate == 0 {
				rate = f.DefaultBitrate
			}
			if rate > bestRate {
				best, bestRate = i, rate
			}
		}
	}
	var out []engine.WrittenFile
	for _, f := range files {
		if f.Output < 0 || f.Output >= len(outputs) {
			continue
		}
		o := outputs[f.Output]
		var take bool
		switch {
		case len(o.OutgoingServices) > 0:
			take = slices.Contains(o.OutgoingServices, svc.UUID)
		case kind == kindFileStorage:
			take = true
		case kind == kindAudioHosting, kind == kindPodcastHosting:
			take = f.Output == best
		case kind == kindVideoHosting:
			fm, _ := production.LookupFormat(o.Format)
			take = fm.Type == production.TypeVideo
		}
		if take {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		switch kind {
		case kindPodcastHosting:
			return nil, errors.New("no MP3 output to publish: add an mp3 output file")
		case kindVideoHosting:
			return nil, errors.New("no video output to publish: add a video output file")
		case kindAudioHosting:
			return nil, errors.New("no lossy audio output to publish: add an mp3, aac, vorbis or opus output file")
		}
	}
	return out, nil
}

// transferOutputs copies the finished outputs to the production's
// outgoing services, recording transfer_success, error_message and
// result_urls on each. A failed transfer leaves the outputs and the
// production Done, with a warning naming the services that failed: the
// user can download the files and restart the transfer by restarting.
// Parameters of an outgoing service that its type has no use for are
// named in a warning too.
func (j *jobRun) transferOutputs(ctx context.Context, p *production.Production, res *engine.Result) error {
	if len(p.OutgoingServices) == 0 || res == nil {
		return nil
	}
	if err := j.setStatus(ctx, production.StatusOutgoingTransfer); err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	var failed, ignored []string
	for i := range p.OutgoingServices {
		o := &p.OutgoingServices[i]
		urls, unused, err := j.transferTo(ctx, p, res, o)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		name := o.DisplayName
		if name == "" {
			name = o.UUID
		}
		var ie *infraError
		if errors.As(err, &ie) {
			return err // the blob store failed, not the service: retry the job
		}
		if len(unused) > 0 {
			ignored = append(ignored, fmt.Sprintf("%s of %s (%s)", strings.Join(unused, ", "), name, o.Type))
		}
		ok := err == nil
		o.TransferSuccess, o.ResultURLs, o.ErrorMessage = &ok, urls, ""
		if err != nil {
			o.ErrorMessage = err.Error()
			failed = append(failed, name+": "+err.Error())
			j.log.Warn("outgoing transfer failed", "service", o.UUID, "err", err)
		}
	}
	if len(ignored) > 0 {
		p.AddWarning(production.StatusOutgoingTransfer, "outgoing service parameters that do not apply to the service type were ignored: "+strings.Join(ignored, "; "))
	}
	if len(failed) > 0 {
		p.AddWarning(production.StatusOutgoingTransfer, "outgoing file transfer failed: "+strings.Join(failed, ", "))
	}
	return nil
}

// transferTo copies the outputs routed to one service and returns the
// public URLs of the copies (when the service has a base URL), and the
// parameters of the outgoing service that its type ignores.
func (j *jobRun) transferTo(ctx context.Context, p *production.Production, res *engine.Result, o *production.OutgoingService) ([]string, []string, error) {
	svc, err := j.r.cfg.Store.GetService(ctx, j.job.Owner, o.UUID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil, errors.New("the service no longer exists")
	}
	if err != nil {
		return nil, nil, infra(err)
	}
	if o.Type == "" {
		o.Type = svc.Type
	}
	if o.DisplayName == "" {
		o.DisplayName = svc.DisplayName
	}
	if !svc.Outgoing {
		return nil, nil, errors.New("not an outgoing service")
	}
	svc, unused, err := transfer.ForPublish(svc, transfer.Publish{Downloadable: o.Downloadable, Sharing: o.Sharing,
		Privacy: o.Privacy, TrackType: o.TrackType, Category: o.Category, Show: o.Show})
	if err != nil {
		return nil, unused, err
	}
	files, err := routeFiles(p.OutputFiles, res.Files, svc)
	if err != nil || len(files) == 0 {
		return nil, unused, err
	}
	if !transfer.Supported(svc.Type) {
		return nil, unused, fmt.Errorf("service type %q: this server has no file transfer for it", svc.Type)
	}
	c, err := transfer.Open(ctx, svc, j.r.cfg.Transfer)
	if err != nil {
		return nil, unused, err
	}
	defer c.Close()
	var urls []string
	for _, f := range files {
		rc, _, err := j.r.cfg.Blobs.Open(ctx, production.OutputKey(p.UUID, f.Name))
		if err != nil {
			return nil, unused, infra(err)
		}
		err = c.Put(ctx, f.Name, rc)
		rc.Close()
		if err != nil {
			return nil, unused, fmt.Errorf("%s: %w", f.Name, err)
		}
		if u := c.URL(f.Name); u != "" {
			urls = append(urls, u)
		}
	}
	return urls, unused, nil
}
