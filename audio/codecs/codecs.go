// Package codecs registers every codec audiopost has with one import:
//
//	import _ "github.com/audiopost/audiopost/audio/codecs"
//
// The pure-Go WAV, FLAC and MP3 codecs recognise their formats by content;
// the ffmpeg adapter is the fallback for everything else (AAC, Opus,
// Vorbis, ALAC, video containers) and provides the lossy encoders. Go
// initialises these packages in import-path order, so ffmpeg registers
// first and a pure-Go encoder of the same output format replaces it.
package codecs

import (
	_ "github.com/audiopost/audiopost/audio/ffmpeg" // fallback decoder; mp3, mp3-vbr, aac, alac, opus, vorbis encoders
	_ "github.com/audiopost/audiopost/audio/flac"   // FLAC decode and encode
	_ "github.com/audiopost/audiopost/audio/mp3"    // MP3 decode
	_ "github.com/audiopost/audiopost/audio/wav"    // WAV decode, wav and wav-24bit encode
)
