// Package recognizers registers every built-in recognizer type with the
// speech package: "pocketsphinx" (the offline default, see
// speech/pocketsphinx) and "whisper" and "openai" (HTTP servers with the
// /v1/audio/transcriptions API, see speech/whisperhttp). Import it for its
// side effect, then build recognizers from service configurations with
// speech.New, or use New here.
package recognizers

import (
	"github.com/audiopost/audiopost/speech"
	"github.com/audiopost/audiopost/speech/pocketsphinx"
	_ "github.com/audiopost/audiopost/speech/whisperhttp" // registers "whisper" and "openai"
)

// Default is the configuration of the recognizer used when a production
// asks for speech recognition without a configured service: PocketSphinx
// on this machine.
var Default = speech.Config{Type: pocketsphinx.Type}

// New is speech.New with every built-in type registered.
func New(cfg speech.Config) (speech.Recognizer, error) { return speech.New(cfg) }
