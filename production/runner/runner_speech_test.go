package runner_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/internal/testsize"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/runner"
	"github.com/audiopost/audiopost/storage"
)

// The runner builds the recognizer of the production's speech
// recognition service: with PocketSphinx registered, the transcript is
// written; with the service gone, the audio is made and the warning says
// why the transcript is not.
func TestRunnerSpeechRecognition(t *testing.T) {
	// The recognizer's choice and the transcript (3.9 s of the race
	// run's CPU, most of it the recognizer): the job runs beside its
	// lease's heartbeat as in every other RunOnce of the race run.
	testsize.SkipRace(t, "the service's transcript, checked by the plain run")
	need.Program(t, "pocketsphinx_continuous")
	need.Path(t, "/usr/share/pocketsphinx/model/en-us")
	need.Program(t, "espeak-ng")
	e := newRunnerEnv(t, time.Hour)
	ctx := context.Background()
	svc := storage.Service{Owner: e.user.ID, Type: "pocketsphinx", DisplayName: "PocketSphinx"}
	if err := e.store.CreateService(ctx, &svc); err != nil {
		t.Fatal(err)
	}
	const rate = 16000
	x, _ := testaudio.Phrases(t, rate, testaudio.Sentences[:1], 0.5)
	input := testaudio.EncodeWAV(t, [][]float64{x}, rate, 16)
	request := func(uuid string) string {
		return `{"input_file": "https://example.org/in.wav", "output_basename": "out", "speech_recognition": {"uuid": "` + uuid + `"},
			"output_files": [{"format": "wav"}, {"format": "transcript", "ending": "txt"}]}`
	}
	ok, _ := e.addProduction(request(svc.UUID), input)
	gone, _ := e.addProduction(request("0a4e8a4c-0000-4000-8000-000000000000"), input)
	r := e.runner(runner.Config{})
	for range 2 {
		if ran, err := r.RunOnce(ctx, "w1"); err != nil || !ran {
			t.Fatalf("RunOnce = %v, %v", ran, err)
		}
	}
	p := e.production(ok)
	if p.Status != production.StatusDone || p.WarningMessage != "" || len(p.OutputFiles) < 2 || p.OutputFiles[1].Size == nil || *p.OutputFiles[1].Size == 0 {
		t.Errorf("with PocketSphinx: status %v, warning %q, outputs %+v", p.Status, p.WarningMessage, p.OutputFiles)
	}
	q := e.production(gone)
	if q.Status != production.StatusDone || !strings.Contains(q.WarningMessage, "no longer exists") || q.OutputFiles[0].Size == nil {
		t.Errorf("with the service gone: status %v, warning %q", q.Status, q.WarningMessage)
	}
}
