package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/audiopost/audiopost/audio/ffmpeg"
	"github.com/audiopost/audiopost/audio/procpool"
	"github.com/audiopost/audiopost/production"
)

// External programs (package procpool). A run takes, once its inputs are
// probed, the slots of everything it may run at once in one reservation
// of the pool in its context (Engine.Processes, else the one the caller's
// context names, else procpool.Default): the decoders of the inputs
// ffmpeg decodes, which stay open while the programme streams, and the
// encoders of one encoding pass with their verifying decoders. Every
// program of the run (probes of intros, speech recognition, burned-in
// subtitles, chapter parts one after the other, the lossy verification's
// decoders) fits in it, so a run that holds slots never waits for more:
// runs sharing a pool, and the API's probes, wait for each other in line
// but can never block each other for good.
//
// When the outputs need more programs at once than the pool has, they are
// encoded in batches, one render of the programme per batch, as the lossy
// verification renders again; a lossy output that does not fit even alone
// with its verifying decoder is verified by decoding its finished file
// instead. A production whose decoders alone fill the pool fails with
// ErrTooManyPrograms.

// ErrTooManyPrograms means a production needs more external programs at
// once than the server's process pool runs (serve -max-programs).
var ErrTooManyPrograms = errors.New("production: needs more external programs at once than the server runs")

// programs is a run's plan of external programs.
type programs struct {
	// decoders are the inputs' ffmpeg decoders a render keeps open (the
	// main input or the tracks, the intros and outros); measure is 1 when
	// measuring an intro's level opens one more beside them.
	decoders, measure int
	// need is, per audio output, the programs its encoding runs at once;
	// monitor says whether a lossy output is decoded while it is encoded
	// (else, when verified, its finished file is).
	need    map[int]int
	monitor map[int]bool
	// batches are the audio outputs by encoding pass.
	batches [][]int
	// room is the slots of a pass's encoders: the reservation less the
	// decoders.
	room int
}

// external reports whether the input at path is decoded by ffmpeg (as r.open
// found when probing it).
func (r *run) external(path string) int {
	if r.ffmpegInputs[path] {
		return 1
	}
	return 0
}

// planPrograms plans the run's programs for a pool of size slots.
func (r *run) planPrograms(size int) (*programs, error) {
	p := r.p
	pr := &programs{need: map[int]int{}, monitor: map[int]bool{}}
	if r.mt != nil {
		for _, path := range r.mt.paths {
			pr.decoders += r.external(path)
		}
	} else {
		pr.decoders = r.external(r.in.Main)
	}
	for _, m := range p.MultiInputFiles {
		if m.Type == production.InputIntro || m.Type == production.InputOutro {
			if e := r.external(r.in.Multi[m.ID]); e > 0 {
				pr.decoders++
				if r.normalize {
					pr.measure = 1
				}
			}
		}
	}
	var outputs []int
	for i, o := range p.OutputFiles {
		of, ok := production.LookupFormat(o.Format)
		if !ok || !isAudioOutput(of) {
			continue
		}
		verify := of.Lossy() && r.normalize
		n := 1 // video: the remux (after its probe) or the render
		if of.Name != "video" && of.Name != "audiogram" {
			n = ffmpeg.Programs(of.Name, verify)
		}
		monitor := verify && n == 2
		if monitor && pr.decoders+n > size {
			// Verified from its file instead: one program fewer.
			monitor, n = false, 1
		}
		pr.need[i], pr.monitor[i] = n, monitor
		outputs = append(outputs, i)
	}
	least := pr.decoders + max(pr.measure, 1)
	if least > size {
		return nil, fmt.Errorf("%w: %d (ffmpeg decoding %d of its inputs together, and one more to encode or measure), where this server runs at most %d (serve -max-programs)",
			ErrTooManyPrograms, least, pr.decoders, size)
	}
	pr.room = size - pr.decoders
	pr.batches = pr.split(outputs)
	widest := 0
	for _, b := range pr.batches {
		widest = max(widest, pr.sum(b))
	}
	pr.room = max(widest, pr.measure, 1)
	return pr, nil
}

// sum is the programs a pass over outputs runs at once.
func (pr *programs) sum(outputs []int) int {
	n := 0
	for _, i := range outputs {
		n += pr.need[i]
	}
	return n
}

// split groups outputs, in order, into passes that fit the room.
func (pr *programs) split(outputs []int) [][]int {
	var out [][]int
	var cur []int
	used := 0
	for _, i := range outputs {
		if len(cur) > 0 && used+pr.need[i] > pr.room {
			out = append(out, cur)
			cur, used = nil, 0
		}
		cur = append(cur, i)
		used += pr.need[i]
	}
	if len(cur) > 0 || len(out) == 0 {
		out = append(out, cur)
	}
	return out
}

// reservation is the slots the run takes.
func (pr *programs) reservation() int { return pr.decoders + pr.room }

// reservePrograms plans the run's programs for the pool of ctx and
// reserves their slots; the returned context carries the reservation.
func (r *run) reservePrograms(ctx context.Context) (context.Context, func(), error) {
	pr, err := r.planPrograms(procpool.From(ctx).Size())
	if err != nil {
		return nil, nil, err
	}
	r.progs = pr
	if len(pr.batches) > 1 {
		r.e.logger().Info("encoding the outputs in batches: they need more external programs at once than the server runs",
			"uuid", r.p.UUID, "batches", len(pr.batches), "pool", procpool.From(ctx).Size(), "reserved", pr.reservation())
	}
	return procpool.Reserve(ctx, pr.reservation())
}

// passes splits the outputs of only (all audio outputs when nil) into
// the output sets of the passes that encode them.
func (r *run) passes(only map[int]bool) []map[int]bool {
	var outputs []int
	for _, b := range r.progs.batches {
		for _, i := range b {
			if only == nil || only[i] {
				outputs = append(outputs, i)
			}
		}
	}
	var out []map[int]bool
	for _, b := range r.progs.split(outputs) {
		out = append(out, setOf(b))
	}
	return out
}

func setOf(outputs []int) map[int]bool {
	m := make(map[int]bool, len(outputs))
	for _, i := range outputs {
		m[i] = true
	}
	return m
}

// sortedKeys lists a set's outputs in order, for logs.
func sortedKeys(m map[int]bool) []int { return slices.Sorted(maps.Keys(m)) }
