package loudness

import (
	"fmt"
	"math"

	"github.com/audiopost/audiopost/audio"
)

// Channel is the role of one channel of a stream; it sets the channel's
// weight in the loudness sum (BS.1770-5 Table 3).
type Channel int

// The channel roles. Surround and back channels weigh 1.41 (+1.5 dB); the
// LFE channel is excluded, as BS.1770 and EBU Mode require.
const (
	Left Channel = iota + 1
	Right
	Center
	LFE
	LeftSurround
	RightSurround
	LeftBack
	RightBack
	CenterBack
	// Mono is the single channel of a mono stream, weighted 1 (or 2 with
	// Options.DualMono).
	Mono
)

// Weight returns the channel's BS.1770 weighting coefficient G.
func (c Channel) Weight() float64 {
	switch c {
	case Left, Right, Center, Mono:
		return 1
	case LeftSurround, RightSurround, LeftBack, RightBack, CenterBack:
		return 1.41
	}
	return 0
}

// String returns the usual abbreviation of the channel.
func (c Channel) String() string {
	switch c {
	case Left:
		return "L"
	case Right:
		return "R"
	case Center:
		return "C"
	case LFE:
		return "LFE"
	case LeftSurround:
		return "Ls"
	case RightSurround:
		return "Rs"
	case LeftBack:
		return "Lb"
	case RightBack:
		return "Rb"
	case CenterBack:
		return "Cb"
	case Mono:
		return "M"
	}
	return fmt.Sprintf("Channel(%d)", int(c))
}

// Layout names the role of each channel of a stream, in stream order.
type Layout []Channel

// DefaultLayout returns the layout assumed for a channel count, in the
// WAV/SMPTE channel order: 1 mono; 2 L R; 3 L R C; 4 L R Ls Rs (quad);
// 5 L R C Ls Rs (5.0); 6 L R C LFE Ls Rs (5.1); 7 L R C LFE Cb Ls Rs (6.1);
// 8 L R C LFE Lb Rb Ls Rs (7.1).
func DefaultLayout(channels int) Layout {
	switch channels {
	case 1:
		return Layout{Mono}
	case 2:
		return Layout{Left, Right}
	case 3:
		return Layout{Left, Right, Center}
	case 4:
		return Layout{Left, Right, LeftSurround, RightSurround}
	case 5:
		return Layout{Left, Right, Center, LeftSurround, RightSurround}
	case 6:
		return Layout{Left, Right, Center, LFE, LeftSurround, RightSurround}
	case 7:
		return Layout{Left, Right, Center, LFE, CenterBack, LeftSurround, RightSurround}
	case 8:
		return Layout{Left, Right, Center, LFE, LeftBack, RightBack, LeftSurround, RightSurround}
	}
	return nil
}

// weights returns the per-channel weights for a stream of format f.
func (o Options) weights(f audio.Format) ([]float64, error) {
	layout := o.Layout
	if layout == nil {
		layout = DefaultLayout(f.Channels)
	}
	if len(layout) != f.Channels {
		return nil, fmt.Errorf("%w: layout has %d channels, stream %d", ErrLayout, len(layout), f.Channels)
	}
	w := make([]float64, len(layout))
	any := false
	for i, c := range layout {
		if c < Left || c > Mono {
			return nil, fmt.Errorf("%w: channel %d has unknown role %d", ErrLayout, i, int(c))
		}
		w[i] = c.Weight()
		any = any || w[i] > 0
	}
	if !any {
		return nil, fmt.Errorf("%w: no channel counts towards loudness (LFE only)", ErrLayout)
	}
	if o.DualMono {
		if f.Channels != 1 {
			return nil, fmt.Errorf("%w: dual mono needs a 1-channel stream, got %d", ErrLayout, f.Channels)
		}
		// A mono signal played on both loudspeakers of a stereo pair: two
		// identical channels of weight 1, +3.01 dB.
		w[0] = 2
	}
	return w, nil
}

// energyToLUFS converts a channel-weighted mean square to loudness
// (BS.1770-5 eq. 2); zero energy is -Inf.
func energyToLUFS(e float64) float64 {
	if e <= 0 {
		return math.Inf(-1)
	}
	return -0.691 + 10*math.Log10(e)
}

// lufsToEnergy inverts energyToLUFS.
func lufsToEnergy(l float64) float64 { return math.Pow(10, (l+0.691)/10) }
