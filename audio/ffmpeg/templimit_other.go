//go:build !linux

package ffmpeg

// limitFileSize does nothing here: the file's size is checked when the
// process has exited.
func limitFileSize(pid int, limit int64) {}
