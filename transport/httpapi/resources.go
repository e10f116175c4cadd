package httpapi

import (
	"net/url"

	"github.com/audiopost/audiopost/preset"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/app"
)

// downloadURL is the absolute URL of a stored file.
func (s *server) downloadURL(kind, uuid string, name ...string) string {
	return s.app.Links().Download(kind, uuid, name...)
}

// productionView is the response form of p: a copy with the URLs of its
// files and pages filled in from BaseURL, and its output files as
// responses list them (every part of an output split on chapters an
// entry of its own, see Production.ListedOutputFiles), so that every
// file written has an entry with its download_url and checksum.
func (s *server) productionView(p *production.Production) *production.Production {
	q := p.Clone()
	q.StatusPage = s.base + "/production/" + url.PathEscape(q.UUID) + "/status/"
	q.EditPage = s.base + "/production/" + url.PathEscape(q.UUID) + "/edit/"
	q.OutputFiles = q.ListedOutputFiles()
	for i := range q.OutputFiles {
		o := &q.OutputFiles[i]
		// Size is set by the engine once the file exists.
		if o.Size != nil && o.DownloadURL == "" {
			o.DownloadURL = s.downloadURL(app.DownloadResult, q.UUID, q.OutputFilename(i))
		}
	}
	if q.WaveformImage != "" && !app.IsAbsURL(q.WaveformImage) {
		q.WaveformImage = s.downloadURL(app.DownloadResult, q.UUID, q.WaveformImage)
	}
	if q.LoudnessImage != "" && !app.IsAbsURL(q.LoudnessImage) {
		q.LoudnessImage = s.downloadURL(app.DownloadResult, q.UUID, q.LoudnessImage)
	}
	if q.WaveformImage == "" {
		for i, o := range q.OutputFiles {
			if o.Format == "waveform" && o.Size != nil {
				q.WaveformImage = s.downloadURL(app.DownloadResult, q.UUID, q.OutputFilename(i))
			}
		}
	}
	for i := range q.Chapters {
		if img := q.Chapters[i].Image; img != nil && *img != "" && !app.IsAbsURL(*img) {
			u := s.downloadURL(app.DownloadUpload, q.UUID, *img)
			q.Chapters[i].Image = &u
		}
	}
	return q
}

// minimalProduction is a production in a minimal_data list.
type minimalProduction struct {
	Status       production.Status `json:"status"`
	UUID         string            `json:"uuid"`
	IsMultitrack bool              `json:"is_multitrack"`
	CreationTime production.Time   `json:"creation_time"`
	Metadata     minimalMetadata   `json:"metadata"`
	OutputFiles  []minimalOutput   `json:"output_files"`
}

type minimalMetadata struct {
	Title string `json:"title"`
}

type minimalOutput struct {
	Format      string `json:"format"`
	Bitrate     int    `json:"bitrate"`
	DownloadURL string `json:"download_url"`
	Filename    string `json:"filename"`
}

// minimalPreset is a preset in a minimal_data list.
type minimalPreset struct {
	PresetName   string          `json:"preset_name"`
	CreationTime production.Time `json:"creation_time"`
	UUID         string          `json:"uuid"`
	IsMultitrack bool            `json:"is_multitrack"`
	Metadata     minimalMetadata `json:"metadata"`
}

func (s *server) minimalProduction(p *production.Production) minimalProduction {
	v := s.productionView(p)
	m := minimalProduction{Status: v.Status, UUID: v.UUID, IsMultitrack: v.IsMultitrack, CreationTime: v.CreationTime,
		Metadata: minimalMetadata{Title: v.Metadata.Title}, OutputFiles: []minimalOutput{}}
	for i, o := range v.OutputFiles {
		m.OutputFiles = append(m.OutputFiles, minimalOutput{Format: o.Format, Bitrate: o.Bitrate, DownloadURL: o.DownloadURL, Filename: v.OutputFilename(i)})
	}
	return m
}

func minimalPresetOf(pr *preset.Preset) minimalPreset {
	return minimalPreset{PresetName: pr.PresetName, CreationTime: pr.CreationTime, UUID: pr.UUID,
		IsMultitrack: pr.IsMultitrack, Metadata: minimalMetadata{Title: pr.Metadata.Title}}
}
