package livestream_test

import (
	"encoding/json"
	"fmt"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/livestream"
)

// ExampleConfig maps a live stream's algorithms onto the live graph: the
// production keys apply where they make sense live, and a setting that
// needs the whole recording is an error under its own field.
func ExampleConfig() {
	parse := func(js string) production.AlgorithmValues {
		var raw production.RawAlgorithms
		_ = json.Unmarshal([]byte(js), &raw)
		return production.ParseAlgorithms(raw, "algorithms", production.FieldErrors{})
	}
	c, _, err := livestream.Config(parse(`{"loudnesstarget": -23, "maxpeak": -1, "levelerstrength": 80}`))
	fmt.Println(c.TargetLUFS, c.MaxTruePeak, c.LevelerStrength, c.HighPass, err)
	_, _, err = livestream.Config(parse(`{"cutter": true}`))
	fmt.Println(err)
	// Output:
	// -23 -1 0.8 80 <nil>
	// invalid fields: algorithms.cutter: not available on a live stream: cutting needs the whole recording
}
