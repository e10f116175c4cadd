package app

import (
	"context"
	"io"
	"slices"

	"github.com/audiopost/audiopost/preset"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
)

// Upload is the files of one request, each stored as it arrives, beside
// what it may replace, until the operation that takes them has checked
// them (audio probed and decoded whole, images decoded) and put them in
// place. A transport reads the request's parts and hands every file to
// Add, then calls the operation (SaveUpload, SavePresetUpload,
// CreateProductionWithFiles), or Discard when it gives up.
type Upload struct {
	a      *App
	user   storage.User
	target uploadTarget
	id     string
	p      *production.Production // the production uploaded to, for its tracks' ids
	files  []uploaded
}

type uploadTarget int

const (
	toProduction uploadTarget = iota // a stored production
	toPreset                         // a stored preset: its cover only
	toNew                            // a production being created
)

// uploaded is one file of an upload, stored under staged until checked,
// then under key.
type uploaded struct {
	field, key, name string
	staged           string
}

// UploadTo starts an upload to u's production id: its image, input_file,
// intro_file, outro_file and the file of any multi_input_files entry
// (the entry's id is the field). A production being processed takes
// none (production.ErrProcessing).
func (a *App) UploadTo(ctx context.Context, u storage.User, id string) (*Upload, error) {
	p, _, err := production.Load(ctx, a.store, u.ID, id)
	if err != nil {
		return nil, err
	}
	if !p.CanChange() {
		return nil, production.ErrProcessing
	}
	return &Upload{a: a, user: u, target: toProduction, id: id, p: p}, nil
}

// UploadToPreset starts an upload to u's preset id, which takes only its
// image: a preset's intros and outros come from external services or
// URLs.
func (a *App) UploadToPreset(ctx context.Context, u storage.User, id string) (*Upload, error) {
	if _, _, err := a.loadPreset(ctx, u.ID, id); err != nil {
		return nil, err
	}
	return &Upload{a: a, user: u, target: toPreset, id: id}, nil
}

// NewUpload starts the upload of a production's input_file and image
// before the production exists (the simple API's form):
// CreateProductionWithFiles takes it.
func (a *App) NewUpload(u storage.User) *Upload {
	return &Upload{a: a, user: u, target: toNew, id: storage.NewUUID()}
}

// CopyError is a failure to read an uploaded file from the request or to
// store it.
type CopyError struct{ Err error }

func (e *CopyError) Error() string { return e.Err.Error() }
func (e *CopyError) Unwrap() error { return e.Err }

// Add stores the file of form field field, named filename by the
// client, reading r to its end. A field the upload does not take is a
// form error, before anything is read; a failure to read or store is a
// *CopyError.
func (up *Upload) Add(ctx context.Context, field, filename string, r io.Reader) error {
	name := production.SanitizeName(filename)
	fallback := func(s string) {
		if name == "" {
			name = s
		}
	}
	var key string
	switch up.target {
	case toPreset:
		if field != "image" {
			return fieldError(field, "presets take only an image upload; their intros and outros must come from an external service or URL")
		}
		fallback("cover")
		key = production.PresetImageKey(up.id, name)
	case toNew:
		switch field {
		case "input_file":
			fallback("input")
			key = production.InputKey(up.id, name)
		case "image":
			fallback("cover")
			key = production.ImageKey(up.id, name)
		default:
			return fieldError(field, "must be a text field, not a file")
		}
	default:
		fallback(field)
		switch field {
		case "image":
			key = production.ImageKey(up.id, name)
		case "input_file":
			key = production.InputKey(up.id, name)
		case "intro_file":
			key = production.IntroKey(up.id, production.InputIntro, name)
		case "outro_file":
			key = production.IntroKey(up.id, production.InputOutro, name)
		default:
			if !slices.ContainsFunc(up.p.MultiInputFiles, func(m production.MultiInputFile) bool { return m.ID == field }) {
				return fieldError(field, "is not an upload field: use image, input_file, intro_file, outro_file or the id of a multi_input_files entry")
			}
			key = production.IntroKey(up.id, field, name)
		}
	}
	staged := key
	if up.target != toNew {
		var err error
		if staged, err = up.a.stagingKey(ctx, key); err != nil {
			return err
		}
	}
	if _, err := up.a.storeBlob(ctx, staged, r); err != nil {
		return &CopyError{Err: err}
	}
	up.files = append(up.files, uploaded{field: field, key: key, name: name, staged: staged})
	return nil
}

// Files reports how many files the upload holds.
func (up *Upload) Files() int { return len(up.files) }

// Discard removes what the upload stored and no operation took.
func (up *Upload) Discard(ctx context.Context) {
	if up.target == toNew {
		up.a.prune(ctx, production.ProductionPrefix(up.id))
		up.files = nil
		return
	}
	for _, f := range up.files {
		up.a.discard(ctx, f.staged)
	}
	up.files = nil
}

// done discards the staged copies of files that now live under their
// key, or all of them after a failure.
func (up *Upload) done(ctx context.Context, failed bool) {
	if failed {
		up.Discard(ctx)
		return
	}
	for _, f := range up.files {
		if f.staged != f.key {
			up.a.discard(ctx, f.staged)
		}
	}
	up.files = nil
}

var errNoFile = &Error{Kind: ErrBadRequest, Msg: "the upload contains no file"}

// SaveUpload checks the files of an upload to a production (UploadTo)
// and puts them in place: inputs are probed (format, channels,
// samplerate, bitrate, length, has_video; tags imported into empty
// metadata), a cover gets a thumbnail. Every bad file is reported, and
// none replaces a stored one unless all are good.
func (a *App) SaveUpload(ctx context.Context, up *Upload) (_ *production.Production, err error) {
	defer func() { up.done(ctx, err != nil) }()
	if len(up.files) == 0 {
		return nil, errNoFile
	}
	infos := map[string]probed{}
	var th []byte
	bad := production.FieldErrors{}
	for _, f := range up.files {
		if f.field == "image" {
			th, err = a.coverThumbnail(ctx, "image", f.staged)
		} else {
			infos[f.field], err = a.probeBlob(ctx, f.field, f.staged)
		}
		if fe := formErrors(err); fe != nil {
			bad.Merge("", fe)
		} else if err != nil {
			return nil, err
		}
	}
	if len(bad) > 0 {
		return nil, bad
	}
	id := up.id
	var img, thumb string
	for _, f := range up.files {
		if f.field == "image" {
			if img, thumb, err = a.putCover(ctx, productionImages(id), f.staged, f.name, th); err != nil {
				return nil, err
			}
			continue
		}
		if err := a.copyBlob(ctx, f.staged, f.key); err != nil {
			return nil, err
		}
	}
	p, err := a.changeProduction(ctx, up.user.ID, id, func(p *production.Production) error {
		if !p.CanChange() {
			return production.ErrProcessing
		}
		for _, f := range up.files {
			info := infos[f.field]
			switch f.field {
			case "image":
				p.Image, p.Thumbnail = &img, &thumb
			case "input_file":
				p.InputFile, p.Service = f.name, nil
				setInputInfo(p, info)
			case "intro_file", "outro_file":
				typ := production.InputIntro
				if f.field == "outro_file" {
					typ = production.InputOutro
				}
				// One single intro (outro): the upload replaces them all.
				p.MultiInputFiles = slices.DeleteFunc(p.MultiInputFiles, func(m production.MultiInputFile) bool { return m.Type == typ || m.ID == typ })
				m := production.MultiInputFile{Type: typ, ID: typ, InputFile: f.name}
				setTrackInfo(&m, info)
				p.MultiInputFiles = append(p.MultiInputFiles, m)
			default:
				i := slices.IndexFunc(p.MultiInputFiles, func(m production.MultiInputFile) bool { return m.ID == f.field })
				if i < 0 {
					return fieldError(f.field, "the multi_input_files entry was removed meanwhile")
				}
				m := &p.MultiInputFiles[i]
				m.InputFile, m.Service = f.name, ""
				setTrackInfo(m, info)
			}
		}
		// Validates the result and moves the status from Incomplete to
		// Not Started now that there is an input.
		return p.Apply(&production.Input{}, a.applyOpts())
	})
	if err != nil {
		return nil, err
	}
	for _, f := range up.files {
		switch f.field {
		case "image":
			a.pruneImages(ctx, productionImages(id), p.Image)
		case "input_file":
			a.prune(ctx, production.InputPrefix(id), f.key)
		case "intro_file":
			a.prune(ctx, production.IntroPrefix(id, production.InputIntro), f.key)
		case "outro_file":
			a.prune(ctx, production.IntroPrefix(id, production.InputOutro), f.key)
		default:
			a.prune(ctx, production.IntroPrefix(id, f.field), f.key)
		}
	}
	return p, nil
}

// SavePresetUpload checks the image of an upload to a preset
// (UploadToPreset), makes its thumbnail and makes it the preset's cover.
func (a *App) SavePresetUpload(ctx context.Context, up *Upload) (_ *preset.Preset, err error) {
	defer func() { up.done(ctx, err != nil) }()
	if len(up.files) == 0 {
		return nil, errNoFile
	}
	f := up.files[len(up.files)-1]
	ik := presetImages(up.id)
	img, thumb, err := a.storeCover(ctx, "image", ik, f.staged, f.name)
	if err != nil {
		return nil, err
	}
	pr, err := a.changePreset(ctx, up.user.ID, up.id, func(pr *preset.Preset) error {
		pr.Image, pr.Thumbnail = &img, &thumb
		if errs := preset.Validate(pr); len(errs) > 0 {
			return errs
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	a.pruneImages(ctx, ik, pr.Image)
	return pr, nil
}

// CreateProductionWithFiles creates a production of u from a creation
// request and the files of up (NewUpload): the simple API's one call. An
// uploaded input_file is probed (its tags fill the metadata still
// empty) and replaces the request's, an uploaded image gets its
// thumbnail; with start the production is started in the same
// transaction. Nothing stays stored when it fails.
func (a *App) CreateProductionWithFiles(ctx context.Context, u storage.User, in *production.Input, up *Upload, start bool) (_ *production.Production, err error) {
	defer func() {
		if err != nil {
			up.Discard(ctx)
		}
	}()
	opts, err := a.applyOptsFor(ctx, u.ID, in)
	if err != nil {
		return nil, err
	}
	var input, image *uploaded
	for i := range up.files {
		switch up.files[i].field {
		case "input_file":
			input = &up.files[i]
		case "image":
			image = &up.files[i]
		}
	}
	var info probed
	if input != nil {
		if info, err = a.probeBlob(ctx, "input_file", input.key); err != nil {
			return nil, err
		}
	}
	p, err := production.New(in, opts)
	if err != nil {
		return nil, err
	}
	p.Metadata.ImportTags(info.Tags)
	p.UUID = up.id
	before := &production.Production{}
	if input != nil {
		p.InputFile, p.Service = input.name, nil
		setInputInfo(p, info)
		before.InputFile = p.InputFile
	}
	if image != nil {
		img, thumb, err := a.storeCover(ctx, "image", productionImages(up.id), image.key, image.name)
		if err != nil {
			return nil, err
		}
		p.Image, p.Thumbnail = &img, &thumb
		before.Image, before.Thumbnail = p.Image, p.Thumbnail
	}
	// Validates the uploaded parts too and sets Incomplete / Not Started.
	if err := p.Apply(&production.Input{}, opts); err != nil {
		return nil, err
	}
	if err := a.storeNew(ctx, u.ID, p, before, start); err != nil {
		return nil, err
	}
	up.files = nil
	return p, nil
}
