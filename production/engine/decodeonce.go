package engine

import (
	"context"
	"fmt"
	"os"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/wav"
)

// Inputs that only ffmpeg decodes (Opus, AAC, Vorbis, ALAC, video) are
// read several times in one run: the probe, the analysis and render
// passes, the lossy verification's renders, speech recognition, an
// intro's level. Each read used to start ffprobe and ffmpeg again (an
// Opus input cost 11 ffprobe and 10 ffmpeg runs, each 0.1-0.15 s of CPU
// before any audio, and the decoding itself every time). The first open
// now decodes the whole input once into a temporary WAV file of 32-bit
// floats, and every later open of the same path in the run reads that
// file with the pure-Go decoder, under the Info ffprobe gave (the
// production's input properties, and everything the chain decides from
// them, are what they were). ffmpeg's decoders of lossy codecs produce
// 32-bit floats and integer PCM of up to 24 bits fits one exactly, so
// the file holds the very samples ffmpeg gives; deeper lossless inputs
// (32-bit PCM or ALAC), which 32-bit floats would round, are decoded by
// ffmpeg on every pass as before. The file takes 4 bytes per sample
// (1.4 GB per hour of 48 kHz stereo) in Engine.TempDir until the run
// ends, failed or not.

// decodedInput is an input ffmpeg decoded once in this run.
type decodedInput struct {
	// info is what the probe of the original file said.
	info audio.Info
	// path is the temporary WAV file holding its samples.
	path string
}

// decodeOnce reports whether an input ffmpeg decodes with this Info is
// kept as 32-bit floats: lossy codecs (no bit depth) and PCM of up to 24
// bits, whose samples 32-bit floats hold exactly.
func decodeOnce(info audio.Info) bool { return info.BitDepth <= 24 }

// decodeToFile reads d to its end into a new temporary WAV file and
// returns the decoded input; it leaves no file behind on failure.
func (r *run) decodeToFile(ctx context.Context, d audio.Decoder) (*decodedInput, error) {
	f, err := os.CreateTemp(r.e.TempDir, "audiopost-input-*.wav")
	if err != nil {
		return nil, fmt.Errorf("decoding the input once: %w", err)
	}
	err = func() error {
		enc, err := wav.NewEncoder(ctx, f, d.Format(), audio.EncodeOptions{BitDepth: 32})
		if err != nil {
			return err
		}
		if _, err := audio.Copy(ctx, enc, d); err != nil {
			return err
		}
		if err := enc.Close(); err != nil {
			return err
		}
		return f.Close()
	}()
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &decodedInput{info: d.Info(), path: f.Name()}, nil
}

// openDecoded opens the samples of a decoded input.
func (r *run) openDecoded(ctx context.Context, di *decodedInput, opts []audio.DecodeOption) (audio.Decoder, error) {
	f, err := os.Open(di.path)
	if err != nil {
		return nil, err
	}
	d, err := audio.Decode(ctx, f, opts...)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &closingDecoder{Decoder: decodedDecoder{Decoder: d, info: di.info}, f: f}, nil
}

// removeDecoded deletes the run's decoded inputs.
func (r *run) removeDecoded() {
	for path, di := range r.decoded {
		os.Remove(di.path)
		delete(r.decoded, path)
	}
}

// decodedDecoder reads a decoded input's samples and describes the
// original file. It does not seek: the chain plans its passes as for the
// original, which ffmpeg could only stream.
type decodedDecoder struct {
	audio.Decoder
	info audio.Info
}

func (d decodedDecoder) Info() audio.Info { return d.info }
