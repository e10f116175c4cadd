package webpages

import (
	"html/template"
	"image/color"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/artwork"
	"github.com/audiopost/audiopost/production/engine"
)

// statusView is the status page of one production.
type statusView struct {
	UUID         string
	Status       int
	StatusString string
	Finished     bool
	Processing   bool
	// Progress is the percentage done (see production.ShownProgress).
	Progress     int
	ErrorMessage string
	// ErrorHint says what to do about the error: why starting again
	// would fail, or that it may succeed.
	ErrorHint  string
	WarningMsg string
	// Levels are the single-track measurements, input beside output;
	// Tracks and Master those of a multitrack production.
	Levels        []levelRow
	Tracks        []trackRow
	Master        []labelValue
	LoudnessChart string
	Chart         *chartLegend
	Deliveries    []deliveryRow
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

// levelRow is one measurement of the input and the output, with what it
// means in a few words.
type levelRow struct{ Label, Hint, Input, Output string }

// trackRow is the measurements of one multitrack track.
type trackRow struct{ Name, Loudness, LRA, Noise, SNR, Gain string }

// chartLegend explains the loudness chart: its colors and its scale.
type chartLegend struct {
	Input, Output, Target   template.CSS
	TargetLUFS, Bottom, Top string
	Grid                    int
}

func chartLegendOf(p *production.Production) *chartLegend {
	// The engine drew the chart with the target of its settings.
	settings, err := engine.SettingsOf(p)
	if err != nil {
		return nil
	}
	target := int(math.Round(settings.Chain.TargetLUFS))
	bg := func(c color.NRGBA) template.CSS { return template.CSS("background:" + artwork.CSSColor(c)) }
	return &chartLegend{Input: bg(artwork.ChartInputColor), Output: bg(artwork.ChartOutputColor), Target: bg(artwork.ChartTargetColor),
		TargetLUFS: strconv.Itoa(target), Bottom: strconv.Itoa(target - artwork.ChartBelowLU), Top: strconv.Itoa(target + artwork.ChartAboveLU),
		Grid: artwork.ChartGridLU}
}

// deliveryRow is one webhook call as the page lists it.
type deliveryRow struct{ Status, State, Attempts, LastAttempt, Answer string }

type chapterRow struct{ Start, Title, URL, Image string }

type outputRow struct {
	Name, URL, Format, FormatName, Size, Bitrate, MIME string
}

// statusPage serves GET {base}/production/{uuid}/status/.
func (pg *pages) statusPage(w http.ResponseWriter, r *http.Request, pr *pageReq) {
	id := r.PathValue("uuid")
	p, err := pg.app.GetProduction(r.Context(), pr.user, id)
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
	if p.Webhook != nil && *p.Webhook != "" {
		ds, err := pg.app.WebhookDeliveries(r.Context(), pr.user, p.UUID)
		if err != nil {
			pg.renderFailure(w, r, pr, err)
			return
		}
		for _, dl := range ds {
			d.Status.Deliveries = append(d.Status.Deliveries, deliveryRowOf(dl))
		}
	}
	pg.render(w, r, pr, http.StatusOK, "status", d)
}

func deliveryRowOf(w production.WebhookDelivery) deliveryRow {
	row := deliveryRow{Status: w.Status.String(), State: w.State, Attempts: strconv.Itoa(w.Attempts)}
	if w.LastAttempt != nil {
		row.LastAttempt = w.LastAttempt.UTC().Format("2006-01-02 15:04:05")
	}
	switch {
	case w.HTTPStatus != 0 && w.Error == "":
		row.Answer = "HTTP " + strconv.Itoa(w.HTTPStatus)
	case w.Error != "":
		row.Answer = w.Error
	}
	if w.State == "pending" && w.NextAttempt != nil && w.Attempts > 0 {
		row.State = "retrying at " + w.NextAttempt.UTC().Format("15:04:05")
	}
	return row
}

func (pg *pages) statusOf(pr *pageReq, p *production.Production) *statusView {
	v := pg.cfg.ProductionView(p)
	blocked := v.RestartBlocked(pr.user.Credits())
	sv := &statusView{
		UUID: v.UUID, Status: int(v.Status), StatusString: v.Status.String(),
		Finished: v.Status.Finished(), Processing: v.Status.Processing() || v.Status == production.StatusWaiting,
		Progress:     production.ShownProgress(v.Status, v.Progress),
		ErrorMessage: production.PlainMessage(v.ErrorMessage), WarningMsg: v.WarningMessage,
		Tags:      production.JoinTags(v.Metadata.Tags),
		InputFile: v.InputFile,
		PollURL:   pg.link(pr, pg.prefix+"/production/"+v.UUID+"/status.json"),
		EditURL:   pg.editURL(pr, v.UUID), StartURL: pg.editURL(pr, v.UUID),
		// No start button where starting again would fail the same way.
		StartAllowed: v.CanStart() && blocked == "", ChangeAllowed: v.CanChange(),
	}
	switch {
	case v.Status != production.StatusError:
	case blocked != "":
		sv.ErrorHint = blocked
	case v.ErrorKind == production.ErrorInternal:
		sv.ErrorHint = "The server failed, not the recording: start it again. If it fails again, tell the server's operator."
	case v.CanStart():
		sv.ErrorHint = "Starting it again may succeed."
	}
	sv.Levels, sv.Tracks, sv.Master = levelsOf(v.Statistics)
	if v.LoudnessImage != "" {
		sv.LoudnessChart = pg.fileLink(pr, v.LoudnessImage)
		sv.Chart = chartLegendOf(v)
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
		if c.Image != nil && strings.HasPrefix(*c.Image, pg.base+"/api/download/") {
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
		f, _ := production.LookupFormat(o.Format)
		if o.Bitrate > 0 && f.Lossy() {
			row.Bitrate = strconv.Itoa(o.Bitrate) + " kbit/s"
		}
		row.MIME = f.MIME
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

// levelsOf lays out the statistics for the page: single-track levels as
// input and output side by side; multitrack ones per track and for the
// mixdown.
func levelsOf(st production.Statistics) (rows []levelRow, tracks []trackRow, master []labelValue) {
	if lv := st.Levels; lv != nil {
		in, out := lv.Input, lv.Output
		ptr := func(l *production.Level) string {
			if l == nil {
				return ""
			}
			return shownLevel(*l)
		}
		rows = []levelRow{
			{"Loudness", "integrated over the whole file", shownLevel(in.Loudness), shownLevel(out.Loudness)},
			{"Loudness range (LRA)", "how much the loudness varies", shownLevel(in.LRA), shownLevel(out.LRA)},
			{"True peak", "the highest peak, between samples too", "", shownLevel(out.Peak)},
			{"Max. short-term loudness", "loudest 3 s", shownLevel(in.MaxShortterm), shownLevel(out.MaxShortterm)},
			{"Max. momentary loudness", "loudest 0.4 s", shownLevel(in.MaxMomentary), shownLevel(out.MaxMomentary)},
			{"Noise level", "the background between words", shownLevel(in.NoiseLevel), ptr(out.NoiseLevel)},
			{"Signal-to-noise ratio", "higher is cleaner", shownLevel(in.SNR), ptr(out.SNR)},
			{"Leveler gain", "least, mean and most gain applied", "", gainRange(out.GainMin, out.GainMean, out.GainMax)},
		}
		rows = slices.DeleteFunc(rows, func(r levelRow) bool { return r.Input == "" && r.Output == "" })
	}
	for _, t := range st.Tracks {
		l := t.Levels
		tracks = append(tracks, trackRow{Name: t.Identifier, Loudness: shownLevel(l.Loudness), LRA: shownLevel(l.LRA),
			Noise: shownLevel(l.NoiseLevel), SNR: shownLevel(l.SNR), Gain: gainRange(l.GainMin, l.GainMean, l.GainMax)})
	}
	if m := st.Master; m != nil {
		for _, lv := range []labelValue{
			{"Loudness", shownLevel(m.Levels.Loudness)}, {"Loudness range (LRA)", shownLevel(m.Levels.LRA)},
			{"True peak", shownLevel(m.Levels.Peak)}, {"Max. short-term loudness", shownLevel(m.Levels.MaxShortterm)},
			{"Max. momentary loudness", shownLevel(m.Levels.MaxMomentary)},
		} {
			if lv.Value != "" {
				master = append(master, lv)
			}
		}
	}
	return rows, tracks, master
}

// shownLevel is levelText, with a level of silence (minus infinity)
// said in words.
func shownLevel(l production.Level) string {
	if l.Unit != "" && math.IsInf(l.Value, -1) {
		return "silent"
	}
	return levelText(l)
}

// gainRange shows the leveler's gains as "min / mean / max dB".
func gainRange(lo, mean, hi production.Level) string {
	if lo.Unit == "" && mean.Unit == "" && hi.Unit == "" {
		return ""
	}
	f := func(l production.Level) string {
		if l.Unit == "" || math.IsInf(l.Value, 0) || math.IsNaN(l.Value) {
			return "?"
		}
		return strconv.FormatFloat(l.Value, 'f', 1, 64)
	}
	return f(lo) + " / " + f(mean) + " / " + f(hi) + " dB"
}
