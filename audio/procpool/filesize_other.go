//go:build !linux

package procpool

// limitFileSize does nothing here (see Cmd.FileSizeLimit).
func limitFileSize(pid int, limit int64) {}
