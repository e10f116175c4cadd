// Package goaudio connects audiopost to the go-audio packages
// (github.com/go-audio/audio and github.com/go-audio/wav), so that code
// written against go-audio can feed audiopost's nodes and take their output.
// The core of audiopost imports none of this; only programs that import
// this package depend on go-audio.
//
// # Adapters
//
//   - NewSource: an audio.Source over a go-audio Buffer in memory
//     (*audio.IntBuffer, *audio.FloatBuffer, *audio.Float32Buffer).
//   - NewWAVSource: an audio.Source over a WAV file read with go-audio's
//     wav.Decoder, after CheckWAV has vetted the file (see below).
//   - NewSink: an audio.Sink that hands go-audio IntBuffers to anything with
//     go-audio's Write(*audio.IntBuffer) method (wav.Encoder, aiff.Encoder).
//   - NewWAVSink: a Sink into a go-audio wav.Encoder.
//
// Every adapter converts in blocks through buffers it allocates once, so a
// Read or Write allocates nothing (go-audio's own Encoder.Write does
// allocate, per sample; see NewSink).
//
// # Channels and samples
//
// Channels map one to one: go-audio's interleaved Data[i*channels+c] is
// frame i of channel c of audiopost's planar Buffer, in the same order.
// Integer samples scale by 2^(bits-1) both ways (audio.IntToFloat and
// audio.FloatToInt: round to nearest, saturate), so integer PCM goes
// through audiopost and back to the same bit depth unchanged. 8-bit samples
// are unsigned (0-255, silence at 128) as go-audio's WAV decoder and encoder
// hold them. Float buffers are taken as nominal [-1, 1] samples as they are;
// note that go-audio's IntBuffer.AsFloatBuffer does not scale, so give
// NewSource the IntBuffer itself.
//
// # Hostile files
//
// go-audio's wav and riff readers size allocations from header fields:
// a fmt chunk, a LIST, smpl or cue chunk, or one entry of a LIST/INFO
// chunk that claims 4 GiB makes go-audio allocate 4 GiB (8 GiB for the fmt
// chunk) from a file of a few hundred bytes. CheckWAV walks the chunks the
// way go-audio will and refuses such a file before go-audio reads it;
// NewWAVSource always calls it. Call CheckWAV yourself before
// wav.NewDecoder if you use go-audio's decoder directly on untrusted files.
package goaudio
