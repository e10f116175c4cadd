package main

import (
	"flag"
	"time"

	"github.com/audiopost/audiopost/production"
)

// limitsFlags registers serve's flags of the work budget a production may
// ask for (production.Limits) on fs and returns what they say once
// parsed. The API checks productions against it when they are saved and
// started, the worker's engine once more when it has probed the inputs.
func limitsFlags(fs *flag.FlagSet) func() production.Limits {
	d := production.DefaultLimits()
	parts := fs.Int("max-split-parts", d.Parts, "most files one output split on chapters may write")
	partSeconds := fs.Float64("split-part-seconds", d.PartSeconds, "seconds of input each split part needs: an output splits into at most 1 + length/this parts")
	files := fs.Int("max-files", d.Files, "most files one production may write, split parts included")
	procs := fs.Int("max-processes", d.Processes, "most external processes (ffmpeg encoders and decoders) one production may start; below that, 200 plus -processes-per-second per second of input")
	perSecond := fs.Float64("processes-per-second", d.ProcessesPerSecond, "external processes a production may start per second of its input")
	memory := fs.Int64("max-memory-mb", d.Memory>>20, "planned peak memory of one production in MB, its external processes included")
	disk := fs.Int64("max-temp-disk-mb", d.Disk>>20, "planned peak of temporary disk of one production in MB: inputs only ffmpeg decodes, kept as 32-bit floats (1.4 GB per hour of 48 kHz stereo), and the encoders' temporary files")
	silence := fs.Duration("max-silence", time.Duration(d.Silence*float64(time.Second)), "how much longer than all its inputs together a multitrack programme may be (track offsets)")
	return func() production.Limits {
		return production.Limits{Parts: *parts, PartSeconds: *partSeconds, Files: *files, Processes: *procs,
			ProcessesPerSecond: *perSecond, Memory: *memory << 20, Silence: silence.Seconds(), Disk: *disk << 20}.WithDefaults()
	}
}
