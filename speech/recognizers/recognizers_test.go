package recognizers_test

import (
	"slices"
	"testing"

	"github.com/audiopost/audiopost/speech"
	"github.com/audiopost/audiopost/speech/recognizers"
)

func TestTypes(t *testing.T) {
	if got := speech.Types(); !slices.Equal(got, []string{"openai", "pocketsphinx", "whisper"}) {
		t.Fatalf("types %v", got)
	}
	if _, err := recognizers.New(recognizers.Default); err != nil {
		t.Fatal(err)
	}
	if errs := speech.ValidateConfig(speech.Config{Type: "whisper"}); errs["base_url"] == "" {
		t.Fatalf("whisper without base_url: %v", errs)
	}
}
