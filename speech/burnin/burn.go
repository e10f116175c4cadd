package burnin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/procpool"
	"github.com/audiopost/audiopost/speech"
)

// Options tune Burn. The zero value is the default.
type Options struct {
	// Cues shapes the subtitle cues (speech.CueOptions defaults).
	Cues speech.CueOptions
	// CRF is the constant rate factor of the video encoder (20 for H.264,
	// 32 for VP9 when 0).
	CRF int
	// Preset is the x264 preset ("veryfast" when empty).
	Preset string
	// TempDir is where the subtitle file is written while the video
	// encodes; "" means the system's (os.TempDir).
	TempDir string
	// MaxBytes, when positive, bounds the rendered video in bytes: a
	// render that reaches it fails with audio.ErrTempLimit and leaves no
	// file (see procpool.Cmd.FileSizeLimit).
	MaxBytes int64
}

// Result says what Burn did.
type Result struct {
	// Font is the font the subtitles were set in (Fallback set when the
	// mapped family is not installed).
	Font Font
	// Cues is the number of subtitle cues.
	Cues int
	// Width and Height are the video's size.
	Width, Height int
}

// ErrNoVideo means the input has no video stream to burn subtitles into.
var ErrNoVideo = errors.New("burnin: input has no video stream")

// Burn writes to dst the video src with words burned in as subtitles in
// style s. The video is re-encoded (H.264 in MP4, MOV and Matroska, VP9 in
// WebM: the container follows dst's extension) and every audio stream is
// copied unchanged, as are the metadata and chapters. Word times are
// positions in src. Burn renders even when s.Enabled is false: whether to
// burn in is the caller's decision. ffmpeg and ffprobe are looked up on
// PATH; without them the error wraps audio.ErrCodecUnavailable.
func Burn(ctx context.Context, dst, src string, words []speech.Word, s Style, opts Options) (Result, error) {
	var res Result
	if errs := s.Validate(); errs != nil {
		return res, fmt.Errorf("burnin: invalid style: %v", errs)
	}
	ffmpeg, err := lookTool("ffmpeg")
	if err != nil {
		return res, err
	}
	absSrc, err := filepath.Abs(src)
	if err != nil {
		return res, err
	}
	absDst, err := filepath.Abs(dst)
	if err != nil {
		return res, err
	}
	if absDst == absSrc {
		return res, fmt.Errorf("burnin: the output %s would overwrite the input", dst)
	}
	res.Width, res.Height, err = videoSize(ctx, absSrc)
	if err != nil {
		return res, err
	}
	dir, err := os.MkdirTemp(opts.TempDir, "audiopost-burnin-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	cues := speech.Cues(words, opts.Cues)
	res.Cues = len(cues)
	f, err := os.Create(filepath.Join(dir, "subtitles.ass"))
	if err != nil {
		return res, err
	}
	res.Font, err = WriteASS(f, cues, s, res.Width, res.Height)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return res, err
	}
	args := []string{"-nostdin", "-hide_banner", "-v", "error", "-y", "-protocol_whitelist", "file,pipe",
		"-i", "file:" + absSrc, "-map", "0:v:0", "-map", "0:a?", "-map_metadata", "0", "-map_chapters", "0",
		// The script is named relative to the working directory, so the
		// filter argument needs no escaping whatever the temp path is.
		"-vf", "ass=subtitles.ass", "-c:a", "copy"}
	args = append(args, videoCodec(filepath.Ext(absDst), opts)...)
	args = append(args, "file:"+absDst)
	cmd := procpool.Command(ctx, ffmpeg, args...)
	cmd.Dir = dir
	var stderr tailBuffer
	cmd.Stderr = &stderr
	cmd.FileSizeLimit = opts.MaxBytes
	err = cmd.Run()
	if fi, serr := os.Stat(absDst); opts.MaxBytes > 0 && serr == nil && fi.Size() >= opts.MaxBytes {
		os.Remove(absDst)
		return res, fmt.Errorf("burnin: %w: the video reached the %d bytes allowed", audio.ErrTempLimit, opts.MaxBytes)
	}
	if err != nil {
		os.Remove(absDst)
		if cerr := ctx.Err(); cerr != nil {
			return res, fmt.Errorf("burnin: rendering stopped: %w", cerr)
		}
		if errors.Is(err, procpool.ErrClosed) {
			return res, err
		}
		return res, failed(ctx, audio.ErrUnsupported, "ffmpeg", "burning in subtitles", err, &stderr)
	}
	return res, nil
}

// videoCodec returns the encoder arguments for the container of ext.
func videoCodec(ext string, opts Options) []string {
	if strings.EqualFold(ext, ".webm") {
		crf := opts.CRF
		if crf == 0 {
			crf = 32
		}
		return []string{"-c:v", "libvpx-vp9", "-b:v", "0", "-crf", strconv.Itoa(crf), "-deadline", "realtime", "-cpu-used", "8", "-row-mt", "1"}
	}
	crf, preset := opts.CRF, opts.Preset
	if crf == 0 {
		crf = 20
	}
	if preset == "" {
		preset = "veryfast"
	}
	args := []string{"-c:v", "libx264", "-preset", preset, "-crf", strconv.Itoa(crf), "-pix_fmt", "yuv420p"}
	switch strings.ToLower(ext) {
	case ".mp4", ".m4v", ".mov":
		args = append(args, "-movflags", "+faststart")
	}
	return args
}

func lookTool(tool string) (string, error) {
	p, err := exec.LookPath(tool)
	if err != nil {
		return "", fmt.Errorf("%w: burning in subtitles needs the %s executable, which is not on PATH", audio.ErrCodecUnavailable, tool)
	}
	return p, nil
}

// videoSize returns the size of the first video stream of path.
func videoSize(ctx context.Context, path string) (int, int, error) {
	ffprobe, err := lookTool("ffprobe")
	if err != nil {
		return 0, 0, err
	}
	cmd := procpool.Command(ctx, ffprobe, "-v", "error", "-protocol_whitelist", "file,pipe", "-select_streams", "v",
		"-show_entries", "stream=width,height,disposition", "-of", "json", "file:"+path)
	var stderr tailBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return 0, 0, cerr
		}
		if errors.Is(err, procpool.ErrClosed) {
			return 0, 0, err
		}
		return 0, 0, failed(ctx, audio.ErrMalformed, "ffprobe", "reading the video's size", err, &stderr)
	}
	var probe struct {
		Streams []struct {
			Width       int            `json:"width"`
			Height      int            `json:"height"`
			Disposition map[string]int `json:"disposition"`
		} `json:"streams"`
	}
	if err := json.Unmarshal(out, &probe); err != nil {
		return 0, 0, fmt.Errorf("%w: ffprobe output: %v", audio.ErrMalformed, err)
	}
	for _, s := range probe.Streams {
		if s.Disposition["attached_pic"] == 0 && s.Width > 0 && s.Height > 0 {
			return s.Width, s.Height, nil
		}
	}
	return 0, 0, fmt.Errorf("%w: %s", ErrNoVideo, filepath.Base(path))
}

// tailBuffer keeps the last 4 kB of a tool's diagnostics, on one line.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 8<<10 {
		t.b = append(t.b[:0], t.b[len(t.b)-4<<10:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	b := t.b
	if len(b) > 4<<10 {
		b = b[len(b)-4<<10:]
	}
	return strings.TrimSpace(string(b))
}

// failed is the error of a tool that failed, in one sentence: its last
// line without ffmpeg's "[component @ 0x...]" prefix and with file paths
// cut to their names. All it said goes to the process pool's log.
func failed(ctx context.Context, sentinel error, tool, what string, err error, stderr *tailBuffer) error {
	all := stderr.String()
	procpool.Logger(ctx).Info("external program failed", "program", tool, "while", what, "err", err, "stderr", all)
	last := err.Error()
	lines := strings.Split(all, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(addressPrefix.ReplaceAllString(lines[i], "")); l != "" {
			last = filePath.ReplaceAllStringFunc(l, func(p string) string { return filepath.Base(strings.TrimPrefix(p, "file:")) })
			break
		}
	}
	if len(last) > 160 {
		last = last[:157] + "..."
	}
	return fmt.Errorf("%w: %s failed while %s (%s)", sentinel, tool, what, last)
}

var (
	addressPrefix = regexp.MustCompile(`\[[^\]@]*@ 0x[0-9a-fA-F]+\] *`)
	filePath      = regexp.MustCompile(`(file:)?/[^\s:'"]+`)
)
