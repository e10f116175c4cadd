package goaudio

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"testing"

	gaudio "github.com/go-audio/audio"
	gwav "github.com/go-audio/wav"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/wav"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// The benchmarks below back the figures of the README's Dependencies
// section:
//
//	go test -run '^$' -bench . -benchmem ./audio/goaudio
//
// Every decode benchmark reads the same 10 s, 48 kHz stereo file from
// memory in blocks of 4096 frames; SetBytes is the file size, so MB/s
// compare directly.

const benchBlock = 4096

func benchFile(b *testing.B, bits int) []byte {
	return testaudio.EncodeWAV(b, quantized(2, 10*48000, bits), 48000, bits)
}

// BenchmarkDecode compares audiopost's WAV decoder, go-audio's decoder as
// go-audio users call it (PCMBuffer into an IntBuffer, integers out), and
// the WAVSource adapter (go-audio header, audiopost sample path).
func BenchmarkDecode(b *testing.B) {
	for _, bits := range []int{16, 24} {
		file := benchFile(b, bits)
		b.Run(fmt.Sprintf("audiopost-wav/%dbit", bits), func(b *testing.B) {
			b.SetBytes(int64(len(file)))
			b.ReportAllocs()
			buf := audio.NewBuffer(2, benchBlock)
			for b.Loop() {
				d, err := wav.NewDecoder(context.Background(), bytes.NewReader(file))
				if err != nil {
					b.Fatal(err)
				}
				for {
					if _, err := d.Read(buf); err != nil {
						break
					}
				}
			}
		})
		b.Run(fmt.Sprintf("go-audio-PCMBuffer/%dbit", bits), func(b *testing.B) {
			b.SetBytes(int64(len(file)))
			b.ReportAllocs()
			ib := &gaudio.IntBuffer{Data: make([]int, 2*benchBlock)}
			for b.Loop() {
				d := gwav.NewDecoder(bytes.NewReader(file))
				for {
					n, err := d.PCMBuffer(ib)
					if err != nil {
						b.Fatal(err)
					}
					if n == 0 {
						break
					}
				}
			}
		})
		b.Run(fmt.Sprintf("goaudio.WAVSource/%dbit", bits), func(b *testing.B) {
			b.SetBytes(int64(len(file)))
			b.ReportAllocs()
			buf := audio.NewBuffer(2, benchBlock)
			for b.Loop() {
				s, err := NewWAVSource(bytes.NewReader(file))
				if err != nil {
					b.Fatal(err)
				}
				for {
					if _, err := s.Read(buf); err != nil {
						break
					}
				}
			}
		})
	}
}

// BenchmarkEncode compares audiopost's WAV encoder with go-audio's behind
// the WAVSink adapter, 10 s of 48 kHz stereo in blocks of 4096 frames.
func BenchmarkEncode(b *testing.B) {
	for _, bits := range []int{16, 24} {
		in := quantized(2, 10*48000, bits)
		size := int64(in.Frames() * 2 * bits / 8)
		out := &testaudio.MemFile{B: make([]byte, 0, size+1024)}
		b.Run(fmt.Sprintf("audiopost-wav/%dbit", bits), func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				out.Reset()
				e, err := wav.NewEncoder(context.Background(), out, audio.Format{SampleRate: 48000, Channels: 2}, audio.EncodeOptions{BitDepth: bits})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := audio.Copy(context.Background(), e, audio.NewBufferSource(in, 48000)); err != nil {
					b.Fatal(err)
				}
				e.Close()
			}
		})
		b.Run(fmt.Sprintf("goaudio.WAVSink/%dbit", bits), func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				out.Reset()
				s, err := NewWAVSink(out, audio.Format{SampleRate: 48000, Channels: 2}, bits)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := audio.Copy(context.Background(), s, audio.NewBufferSource(in, 48000)); err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
		})
	}
}

// BenchmarkAdapters measures the conversions alone, per 4096-frame stereo
// block: they must report 0 allocs/op.
func BenchmarkAdapters(b *testing.B) {
	in := quantized(2, benchBlock, 24)
	buf := audio.NewBuffer(2, benchBlock)
	ib := &gaudio.IntBuffer{Format: &gaudio.Format{NumChannels: 2, SampleRate: 48000}, Data: interleave(in, 24), SourceBitDepth: 24}
	b.Run("Source.Read", func(b *testing.B) {
		b.SetBytes(benchBlock * 2 * 3)
		b.ReportAllocs()
		s, _ := NewSource(ib)
		for b.Loop() {
			s.pos = 0
			s.Read(buf)
		}
	})
	b.Run("Sink.Write", func(b *testing.B) {
		b.SetBytes(benchBlock * 2 * 3)
		b.ReportAllocs()
		s, _ := NewSink(discard{}, audio.Format{SampleRate: 48000, Channels: 2}, 24)
		for b.Loop() {
			s.Write(in)
		}
	})
	b.Run("WAVSource.Read", func(b *testing.B) {
		file := benchFile(b, 24)
		r := bytes.NewReader(file)
		s, err := NewWAVSource(r)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(benchBlock * 2 * 3)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Read(buf); err == io.EOF {
				b.StopTimer()
				r.Seek(0, io.SeekStart)
				s, _ = NewWAVSource(r)
				b.StartTimer()
			}
		}
	})
}

// BenchmarkHostileHeader opens a 300-byte file whose LIST/INFO entry claims
// 4 GiB, and one whose fmt chunk does: B/op is what each reader allocates.
// go-audio really gets the memory, and may touch it (here the fmt case
// took 11 s and 4.2 GB resident), so its runs need AUDIOPOST_HOSTILE=1:
//
//	AUDIOPOST_HOSTILE=1 go test -run '^$' -bench HostileHeader -benchtime 1x -benchmem ./audio/goaudio
func BenchmarkHostileHeader(b *testing.B) {
	goAudio := os.Getenv("AUDIOPOST_HOSTILE") == "1"
	for _, tc := range []struct {
		name string
		file []byte
	}{
		{"LIST-entry-4GiB", listEntryClaims(0xFFFFFFF0)},
		{"fmt-4GiB", pad300(riff(chunkSized("fmt ", 0xFFFFFFF0, fmtBody(formatPCM, 2, 48000, 16)), chunk("data", make([]byte, 16))))},
	} {
		b.Run(tc.name+"/go-audio", func(b *testing.B) {
			if !goAudio {
				b.Skip("allocates 4-8 GiB: set AUDIOPOST_HOSTILE=1")
			}
			b.ReportAllocs()
			for b.Loop() {
				gwav.NewDecoder(bytes.NewReader(tc.file)).FwdToPCM()
			}
		})
		b.Run(tc.name+"/goaudio.NewWAVSource", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := NewWAVSource(bytes.NewReader(tc.file)); err == nil {
					b.Fatal("accepted")
				}
			}
		})
	}
}
