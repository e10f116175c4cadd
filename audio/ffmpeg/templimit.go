package ffmpeg

import (
	"fmt"
	"os"

	"github.com/audiopost/audiopost/audio"
)

// An encoder's temporary files are written by ffmpeg, not by this
// package, so EncodeOptions.TempLimit is set on the program
// (procpool.Cmd.FileSizeLimit: on Linux the kernel cuts the file at what
// the limit leaves and ends ffmpeg, which writes its file only from the
// audio it is given or, in the copy pass, after opening its inputs).
// Wherever that is not available, and in any case when ffmpeg has
// exited, the file's size is checked: one that reached what was left
// counts as over it, as that is the length of a file the kernel cut.

// tempLeft is what the encoder's TempLimit leaves for a new temporary
// file beside those ffmpeg wrote before (0: no bound, -1: nothing).
func (e *Encoder) tempLeft() int64 {
	if e.opts.TempLimit <= 0 {
		return 0
	}
	if left := e.opts.TempLimit - e.tempWritten; left > 0 {
		return left
	}
	return -1
}

// overLimit returns the error of the temporary file at path, written by
// ffmpeg with left bytes to take (see tempLeft), when it reached them;
// nil otherwise.
func (e *Encoder) overLimit(path string, left int64) error {
	if left == 0 || path == "" {
		return nil
	}
	fi, err := os.Stat(path)
	if left > 0 && (err != nil || fi.Size() < left) {
		return nil
	}
	return fmt.Errorf("ffmpeg: encoding %s: %w: its temporary files reached the %d bytes allowed", e.name, audio.ErrTempLimit, e.opts.TempLimit)
}
