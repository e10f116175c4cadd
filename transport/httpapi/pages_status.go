package httpapi

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/audiopost/audiopost/production"
)

// statusView is the status page of one production.
type statusView struct {
	UUID          string
	Status        int
	StatusString  string
	Finished      bool
	Processing    bool
	ErrorMessage  string
	WarningMsg    string
	Metadata      []labelValue
	Tags          string
	Chapters      []chapterRow
	Outputs       []outputRow
	Player        *outputRow
	Waveform      string
	Thumbnail     string
	Cover         string
	InputFile     string
	Length        string
	PollURL       string
	EditURL       string
	StartURL      string
	StartAllowed  bool
	ChangeAllowed bool
}

type labelValue struct{ Label, Value string }

type chapterRow struct{ Start, Title, URL, Image string }

type outputRow struct {
	Name, URL, Format, FormatName, Size, Bitrate, MIME string
}

// playable maps output formats a browser's audio element plays to their
// media types.
var playable = map[string]string{
	"mp3": "audio/mpeg", "mp3-vbr": "audio/mpeg", "aac": "audio/mp4", "vorbis": "audio/ogg",
	"opus": "audio/ogg", "flac": "audio/flac", "wav": "audio/wav", "wav-24bit": "audio/wav",
}

// statusPage serves GET {base}/production/{uuid}/status/.
func (pg *pages) statusPage(w http.ResponseWriter, r *http.Request, pr *pageReq) {
	id := r.PathValue("uuid")
	p, _, err := pg.s.loadProduction(r.Context(), pg.s.store, pr.user.ID, id)
	if err != nil {
		pg.renderFailure(w, r, pr, err)
		return
	}
	title := p.Metadata.Title
	if title == "" {
		title = "Untitled production"
	}
	d := pg.data(pr, title)
	d.Status = pg.statusOf(pr, p)
	pg.render(w, r, pr, http.StatusOK, "status", d)
}

func (pg *pages) statusOf(pr *pageReq, p *production.Production) *statusView {
	v := pg.s.productionView(p)
	sv := &statusView{
		UUID: v.UUID, Status: int(v.Status), StatusString: v.Status.String(),
		Finished: v.Status.Finished(), Processing: v.Status.Processing() || v.Status == production.StatusWaiting,
		ErrorMessage: v.ErrorMessage, WarningMsg: v.WarningMessage,
		Tags:      production.JoinTags(v.Metadata.Tags),
		InputFile: v.InputFile,
		PollURL:   pg.link(pr, pg.s.prefix+"/production/"+v.UUID+"/status.json"),
		EditURL:   pg.editURL(pr, v.UUID), StartURL: pg.editURL(pr, v.UUID),
		StartAllowed: v.CanStart(), ChangeAllowed: v.CanChange(),
	}
	if v.Length > 0 {
		sv.Length = production.FormatTimestamp(time.Duration(math.Round(v.Length * float64(time.Second))))
	}
	m := v.Metadata
	for _, lv := range []labelValue{
		{"Title", m.Title}, {"Artist", m.Artist}, {"Album", m.Album}, {"Subtitle", m.Subtitle},
		{"Summary", m.Summary}, {"Genre", m.Genre}, {"Publisher", m.Publisher}, {"Track", m.Track},
		{"Year", m.Year}, {"URL", m.URL}, {"License", m.License}, {"License URL", m.LicenseURL},
	} {
		if strings.TrimSpace(lv.Value) != "" {
			sv.Metadata = append(sv.Metadata, lv)
		}
	}
	for _, c := range v.ChapterPositions() {
		row := chapterRow{Start: production.FormatTimestamp(c.OutputStart), Title: c.Title, URL: c.URL}
		// Stored chapter images only: the page loads nothing from elsewhere.
		if c.Image != nil && strings.HasPrefix(*c.Image, pg.s.base+"/api/download/") {
			row.Image = pg.fileLink(pr, *c.Image)
		}
		sv.Chapters = append(sv.Chapters, row)
	}
	formats := production.OutputFormatInfo()
	player := -1
	for i, o := range v.OutputFiles {
		row := outputRow{Name: v.OutputFilename(i), Format: o.Format, FormatName: formats[o.Format].DisplayName}
		if o.Size != nil {
			row.Size = production.FormatSize(*o.Size)
		}
		if o.DownloadURL != "" {
			row.URL = pg.fileLink(pr, o.DownloadURL)
		}
		if o.Bitrate > 0 {
			if f, ok := production.LookupFormat(o.Format); ok && f.Lossy() {
				row.Bitrate = strconv.Itoa(o.Bitrate) + " kbit/s"
			}
		}
		row.MIME = playable[o.Format]
		if player < 0 && row.MIME != "" && row.URL != "" {
			player = len(sv.Outputs)
		}
		sv.Outputs = append(sv.Outputs, row)
	}
	if player >= 0 {
		sv.Player = &sv.Outputs[player]
	}
	if v.WaveformImage != "" {
		sv.Waveform = pg.fileLink(pr, v.WaveformImage)
	}
	if v.Thumbnail != nil && *v.Thumbnail != "" {
		sv.Thumbnail = pg.fileLink(pr, *v.Thumbnail)
	}
	if v.Image != nil && *v.Image != "" {
		sv.Cover = pg.fileLink(pr, *v.Image)
	}
	return sv
}
