package production

import (
	"errors"
	"strings"
	"testing"
)

func create(t *testing.T, body string) (*Production, error) {
	t.Helper()
	in, err := DecodeInput([]byte(body))
	if err != nil {
		return nil, err
	}
	return New(in, ApplyOptions{})
}

// fieldErr returns the form errors of err (nil when err is nil).
func fieldErr(t *testing.T, err error) FieldErrors {
	t.Helper()
	if err == nil {
		return nil
	}
	var fe FieldErrors
	if !errors.As(err, &fe) {
		t.Fatalf("error %v is not FieldErrors", err)
	}
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("error %v does not wrap ErrInvalid", err)
	}
	return fe
}

// TestValidationRules covers every validation rule with a valid and an
// invalid request each. want is the field path that must be reported, ""
// when the request is valid; msg, when set, must appear in its message.
func TestValidationRules(t *testing.T) {
	const url = `"input_file":"https://example.org/ep1.wav"`
	cases := []struct {
		name, body, want, msg string
	}{
		// Top level.
		{"empty", `{}`, "", ""},
		{"unknown top-level fields ignored", `{"foo":1,"status":3,"uuid":"x","length":5}`, "", ""},
		{"input url", `{` + url + `}`, "", ""},
		{"input file without service must be url", `{"input_file":"ep1.wav"}`, "input_file", "http"},
		{"input file on service", `{"input_file":"ep1.wav","service":"svc1"}`, "", ""},
		{"webhook ok", `{"webhook":"https://hook.example/x"}`, "", ""},
		{"webhook bad", `{"webhook":"ftp://hook"}`, "webhook", "http"},
		{"webhook empty removes", `{"webhook":""}`, "", ""},
		{"image bad", `{"image":"not a url"}`, "image", ""},
		{"image type", `{"image":5}`, "image", "must be a string"},
		{"is_multitrack type", `{"is_multitrack":"yes"}`, "is_multitrack", "boolean"},
		{"output_basename ok", `{"output_basename":"my show 01"}`, "", ""},
		{"output_basename separator", `{"output_basename":"a/b"}`, "output_basename", "separator"},
		{"output_basename dotdot", `{"output_basename":"..x"}`, "output_basename", ".."},

		// Metadata.
		{"metadata ok", `{"metadata":{"title":"T","track":3,"year":"2024","tags":["a","b"],"location":{"latitude":"48.2","longitude":16.37}}}`, "", ""},
		{"metadata track string digits", `{"metadata":{"track":"12"}}`, "", ""},
		{"metadata track not number", `{"metadata":{"track":"twelve"}}`, "metadata.track", "whole number"},
		{"metadata year fraction", `{"metadata":{"year":2024.5}}`, "metadata.year", "whole number"},
		{"metadata year range", `{"metadata":{"year":12345}}`, "metadata.year", "year"},
		{"metadata tags comma string", `{"metadata":{"tags":"a, b,,c"}}`, "", ""},
		{"metadata tags type", `{"metadata":{"tags":5}}`, "metadata.tags", "array of strings"},
		{"metadata url", `{"metadata":{"url":"example.org"}}`, "metadata.url", "http"},
		{"metadata license_url", `{"metadata":{"license_url":"https://creativecommons.org/licenses/by/4.0/"}}`, "", ""},
		{"metadata control chars", `{"metadata":{"title":"a\u0000b"}}`, "metadata.title", "control"},
		{"metadata latitude range", `{"metadata":{"location":{"latitude":"91","longitude":"0"}}}`, "metadata.location.latitude", "between"},
		{"metadata longitude text", `{"metadata":{"location":{"latitude":"1","longitude":"east"}}}`, "metadata.location.longitude", ""},
		{"metadata append_chapters type", `{"metadata":{"append_chapters":"x"}}`, "metadata.append_chapters", "boolean"},

		// Chapters.
		{"chapters ok", `{"chapters":[{"start":"00:00:00","title":"Intro"},{"start":"00:01:02.500","title":"Talk","url":"https://x.org"},{"start":75.25,"title":"Num"}]}`, "", ""},
		{"chapter start bad", `{"chapters":[{"start":"1:2:3:4","title":"x"}]}`, "chapters.0.start", "HH:MM:SS"},
		{"chapter title missing", `{"chapters":[{"start":"00:00:01","title":" "}]}`, "chapters.0.title", "required"},
		{"chapter url bad", `{"chapters":[{"start":"00:00:01","title":"x","url":"javascript:alert(1)"}]}`, "chapters.0.url", "http"},
		{"chapter image bad", `{"chapters":[{"start":"00:00:01","title":"x","image":"file:///etc/passwd"}]}`, "chapters.0.image", "http"},
		{"chapter duplicate start", `{"chapters":[{"start":"00:00:01","title":"a"},{"start":1,"title":"b"}]}`, "chapters.1.start", "same start"},
		{"chapter negative", `{"chapters":[{"start":-1,"title":"a"}]}`, "chapters.0.start", ""},
		{"chapter start overflows a duration", `{"chapters":[{"start":1e12,"title":"a"}]}`, "chapters.0.start", "at most 1000 hours"},
		{"chapter start 1000 hours", `{"chapters":[{"start":3600000,"title":"a"}]}`, "", ""},
		{"chapter start past 1000 hours", `{"chapters":[{"start":"1000:00:01","title":"a"}]}`, "chapters.0.start", "at most 1000 hours"},
		{"chapters type", `{"chapters":{"start":"1"}}`, "chapters", "array"},

		// Output files.
		{"output mp3 default bitrate", `{"output_files":[{"format":"mp3"}]}`, "", ""},
		{"output bitrate string", `{"output_files":[{"format":"mp3","bitrate":"128"}]}`, "", ""},
		{"output bitrate not allowed", `{"output_files":[{"format":"mp3","bitrate":100}]}`, "output_files.0.bitrate", "not allowed"},
		{"output bitrate not numeric", `{"output_files":[{"format":"mp3","bitrate":"fast"}]}`, "output_files.0.bitrate", "numeric"},
		{"output opus 48", `{"output_files":[{"format":"opus","bitrate":48}]}`, "", ""},
		{"output lossless bitrate 0 ignored", `{"output_files":[{"format":"flac","bitrate":0}]}`, "", ""},
		{"output lossless bitrate rejected", `{"output_files":[{"format":"wav","bitrate":128}]}`, "output_files.0.bitrate", "lossy formats only"},
		{"output format missing", `{"output_files":[{"bitrate":64}]}`, "output_files.0.format", "required"},
		{"output format unknown", `{"output_files":[{"format":"wma"}]}`, "output_files.0.format", "unknown format"},
		{"output ending ok", `{"output_files":[{"format":"aac","ending":"m4b"}]}`, "", ""},
		{"output ending with dot", `{"output_files":[{"format":"aac","ending":".M4A"}]}`, "", ""},
		{"output ending wrong", `{"output_files":[{"format":"aac","ending":"mp3"}]}`, "output_files.0.ending", "not an ending"},
		{"output filename ok", `{"output_files":[{"format":"vorbis","filename":"show.oga"}]}`, "", ""},
		{"output filename ending wrong", `{"output_files":[{"format":"vorbis","filename":"show.mp3"}]}`, "output_files.0.filename", "must end in .ogg or .oga"},
		{"output filename path", `{"output_files":[{"format":"mp3","filename":"../x.mp3"}]}`, "output_files.0.filename", ""},
		{"output filename multi-part ending", `{"output_files":[{"format":"chaps","filename":"ep.chapters.txt"}]}`, "", ""},
		{"output suffix separator", `{"output_files":[{"format":"mp3","suffix":"/x"}]}`, "output_files.0.suffix", "separator"},
		{"output same names", `{` + url + `,"output_files":[{"format":"mp3"},{"format":"mp3-vbr"}]}`, "output_files.1.filename", "also the file name"},
		{"output same format different suffix", `{` + url + `,"output_files":[{"format":"mp3"},{"format":"mp3","bitrate":64,"suffix":"-low"}]}`, "", ""},
		{"output tracks needs multitrack", `{"output_files":[{"format":"tracks"}]}`, "output_files.0.format", "multitrack"},
		{"output tracks on multitrack", `{"is_multitrack":true,"output_files":[{"format":"tracks","ending":"wav.zip"}]}`, "", ""},
		{"output subtitle needs speech", `{"output_files":[{"format":"subtitle"}]}`, "output_files.0.format", "speech_recognition"},
		{"output subtitle with speech", `{"speech_recognition":{"uuid":"sr1"},"output_files":[{"format":"subtitle","ending":"webvtt"}]}`, "", ""},
		{"output split on description", `{"output_files":[{"format":"stats","split_on_chapters":true}]}`, "output_files.0.split_on_chapters", ""},
		{"output video with intro", `{"output_files":[{"format":"video"}],"multi_input_files":[{"type":"intro","input_file":"https://x.org/i.wav"}]}`, "output_files.0.format", "intro or outro"},
		{"output outgoing service empty", `{"output_files":[{"format":"mp3","outgoing_services":[""]}]}`, "output_files.0.outgoing_services.0", ""},
		{"output list element type", `{"output_files":[{"format":"mp3"},{"format":"mp3","mono_mixdown":"yes"}]}`, "output_files.1.mono_mixdown", "boolean"},

		// Subtitles on video outputs.
		{"subtitles ok", `{"speech_recognition":{"uuid":"s"},"output_files":[{"format":"video","subtitle_font":"inter","subtitle_font_size":40,"subtitle_color":"#ffffff","subtitle_style_mode":"white_outline","subtitle_word_highlight":"glow","subtitle_h_align":"left","subtitle_v_align":"top"}]}`, "", ""},
		{"subtitles need speech", `{"output_files":[{"format":"video","subtitle_font":"inter"}]}`, "output_files.0.subtitles", "speech_recognition"},
		{"subtitles false overrides", `{"output_files":[{"format":"video","subtitles":false,"subtitle_font":"inter"}]}`, "", ""},
		{"subtitles on audio output", `{"speech_recognition":{"uuid":"s"},"output_files":[{"format":"mp3","subtitles":true}]}`, "output_files.0.subtitles", "video outputs only"},
		{"subtitle font", `{"speech_recognition":{"uuid":"s"},"output_files":[{"format":"video","subtitle_font":"comic"}]}`, "output_files.0.subtitle_font", "not allowed"},
		{"subtitle size low", `{"speech_recognition":{"uuid":"s"},"output_files":[{"format":"video","subtitle_font_size":7}]}`, "output_files.0.subtitle_font_size", "8 and 200"},
		{"subtitle size high", `{"speech_recognition":{"uuid":"s"},"output_files":[{"format":"video","subtitle_font_size":201}]}`, "output_files.0.subtitle_font_size", ""},
		{"subtitle size bounds", `{"speech_recognition":{"uuid":"s"},"output_files":[{"format":"video","subtitle_font_size":8},{"format":"video","suffix":"b","subtitle_font_size":200}]}`, "", ""},
		{"subtitle color", `{"speech_recognition":{"uuid":"s"},"output_files":[{"format":"video","subtitle_color":"red"}]}`, "output_files.0.subtitle_color", "#rrggbb"},
		{"subtitle highlight color", `{"speech_recognition":{"uuid":"s"},"output_files":[{"format":"video","subtitle_highlight_color":"#12345"}]}`, "output_files.0.subtitle_highlight_color", ""},
		{"subtitle style mode", `{"speech_recognition":{"uuid":"s"},"output_files":[{"format":"video","subtitle_style_mode":"neon"}]}`, "output_files.0.subtitle_style_mode", ""},
		{"subtitle h align", `{"speech_recognition":{"uuid":"s"},"output_files":[{"format":"video","subtitle_h_align":"middle"}]}`, "output_files.0.subtitle_h_align", ""},
		{"subtitle v align", `{"speech_recognition":{"uuid":"s"},"output_files":[{"format":"video","subtitle_v_align":"center"}]}`, "output_files.0.subtitle_v_align", ""},
		{"subtitle word highlight value", `{"speech_recognition":{"uuid":"s"},"output_files":[{"format":"video","subtitle_word_highlight":"blink"}]}`, "output_files.0.subtitle_word_highlight", "not allowed"},
		{"word highlight border with default bg", `{"speech_recognition":{"uuid":"s"},"output_files":[{"format":"video","subtitle_word_highlight":"border"}]}`, "output_files.0.subtitle_word_highlight", "cannot be combined"},
		{"word highlight reveal with white_bg", `{"speech_recognition":{"uuid":"s"},"output_files":[{"format":"video","subtitle_word_highlight":"reveal","subtitle_style_mode":"white_bg"}]}`, "output_files.0.subtitle_word_highlight", "cannot be combined"},
		{"word highlight karaoke with bg", `{"speech_recognition":{"uuid":"s"},"output_files":[{"format":"video","subtitle_word_highlight":"karaoke","subtitle_style_mode":"color_bg"}]}`, "", ""},
		{"word highlight border plain", `{"speech_recognition":{"uuid":"s"},"output_files":[{"format":"audiogram","subtitle_word_highlight":"border","subtitle_style_mode":"plain"}]}`, "", ""},

		// Outgoing services.
		{"outgoing ok", `{"outgoing_services":[{"uuid":"a","sharing":"public","downloadable":true},{"uuid":"b","privacy":"private","category":"22"}]}`, "", ""},
		{"outgoing uuid required", `{"outgoing_services":[{"sharing":"public"}]}`, "outgoing_services.0.uuid", "required"},
		{"outgoing duplicate", `{"outgoing_services":[{"uuid":"a"},{"uuid":"a"}]}`, "outgoing_services.1.uuid", "same service"},
		{"outgoing sharing", `{"outgoing_services":[{"uuid":"a","sharing":"friends"}]}`, "outgoing_services.0.sharing", "public or private"},
		{"outgoing privacy", `{"outgoing_services":[{"uuid":"a","privacy":"unlisted"}]}`, "outgoing_services.0.privacy", ""},

		// Single-track algorithms.
		{"algorithms defaults sent back", `{"algorithms":{"hipfilter":true,"filtermethod":"autoeq","leveler":true,"levelerstrength":100,"compressor":"auto","normloudness":true,"loudnesstarget":-16,"maxpeak":0,"dualmono":false,"loudnessmethod":"program","maxlra":0,"maxs":0,"maxm":0,"denoise":false,"denoisemethod":"classic","denoiseamount":0,"deverbamount":0,"debreathamount":-1,"dehum":0,"dehumamount":0}}`, "", ""},
		{"filtering alias", `{"algorithms":{"filtering":false}}`, "", ""},
		{"bool as string", `{"algorithms":{"leveler":"false","denoise":"on"}}`, "", ""},
		{"bool bad", `{"algorithms":{"leveler":"maybe"}}`, "algorithms.leveler", "boolean"},
		{"unknown algorithm", `{"algorithms":{"loudness":-16}}`, "algorithms.loudness", "unknown"},
		{"loudnesstarget string", `{"algorithms":{"loudnesstarget":"-23"}}`, "", ""},
		{"loudnesstarget not allowed", `{"algorithms":{"loudnesstarget":-17}}`, "algorithms.loudnesstarget", "choose one of -13"},
		{"loudnesstarget fraction", `{"algorithms":{"loudnesstarget":-16.5}}`, "algorithms.loudnesstarget", "integer"},
		{"maxpeak ok", `{"algorithms":{"maxpeak":-1.5}}`, "", ""},
		{"maxpeak bad", `{"algorithms":{"maxpeak":-0.7}}`, "algorithms.maxpeak", "not allowed"},
		{"levelerstrength 120", `{"algorithms":{"levelerstrength":120}}`, "", ""},
		{"levelerstrength 15", `{"algorithms":{"levelerstrength":15}}`, "algorithms.levelerstrength", ""},
		{"speech music split", `{"algorithms":{"levelerstrength_speech":80,"levelerstrength_music":120,"compressor_speech":"hard","compressor_music":"off","musicgain":-3}}`, "", ""},
		{"compressor bad", `{"algorithms":{"compressor":"extreme"}}`, "algorithms.compressor", ""},
		{"compressor_music bad", `{"algorithms":{"compressor_music":"loud"}}`, "algorithms.compressor_music", ""},
		{"musicgain bad", `{"algorithms":{"musicgain":10}}`, "algorithms.musicgain", ""},
		{"filtermethod bad", `{"algorithms":{"filtermethod":"lowpass"}}`, "algorithms.filtermethod", ""},
		{"loudnessmethod bad", `{"algorithms":{"loudnessmethod":"peak"}}`, "algorithms.loudnessmethod", ""},
		{"maxlra bad", `{"algorithms":{"maxlra":7}}`, "algorithms.maxlra", ""},
		{"maxs bad", `{"algorithms":{"maxs":20}}`, "algorithms.maxs", ""},
		{"maxm ok", `{"algorithms":{"maxm":11}}`, "", ""},
		{"maxm bad", `{"algorithms":{"maxm":3}}`, "algorithms.maxm", ""},
		{"denoiseamount bad", `{"algorithms":{"denoiseamount":5}}`, "algorithms.denoiseamount", ""},
		{"denoisemethod bad", `{"algorithms":{"denoisemethod":"ai"}}`, "algorithms.denoisemethod", ""},
		{"dehum bad", `{"algorithms":{"dehum":55}}`, "algorithms.dehum", ""},
		{"dehumamount bad", `{"algorithms":{"dehumamount":36}}`, "algorithms.dehumamount", ""},
		{"cutters", `{"algorithms":{"silence_cutter":true,"filler_cutter":true,"cough_cutter":true,"music_cutter":false}}`, "", ""},
		{"deverb with static", `{"algorithms":{"denoise":true,"denoisemethod":"static","deverbamount":12}}`, "", ""},
		{"deverb needs method", `{"algorithms":{"denoise":true,"deverbamount":12}}`, "algorithms.deverbamount", "static, dynamic or speech_isolation"},
		{"deverb off with classic", `{"algorithms":{"denoisemethod":"classic","deverbamount":-1}}`, "", ""},
		{"debreath with dynamic", `{"algorithms":{"denoisemethod":"dynamic","debreathamount":6}}`, "", ""},
		{"debreath with speech isolation", `{"algorithms":{"denoisemethod":"speech_isolation","debreathamount":100}}`, "", ""},
		{"debreath needs method", `{"algorithms":{"denoisemethod":"static","debreathamount":6}}`, "algorithms.debreathamount", "dynamic or speech_isolation"},
		{"debreath zero not allowed", `{"algorithms":{"denoisemethod":"dynamic","debreathamount":0}}`, "algorithms.debreathamount", "not allowed"},
		{"master key on single track", `{"algorithms":{"gate":true}}`, "algorithms.gate", "multitrack algorithm"},
		{"track key on single track", `{"algorithms":{"backforeground":"ducking"}}`, "algorithms.backforeground", "multitrack algorithm"},

		// Segments.
		{"segments ok", `{"algorithms":{"denoise":true,"denoisemethod":"dynamic","segments":[{"start":0,"stop":10,"denoisemethod":"speech","debreathamount":6},{"start":10,"stop":20.5,"denoisemethod":"music","denoiseamount":12,"filtermethod":"hipfilter"},{"start":20.5,"stop":30,"denoisemethod":"off"}]}}`, "", ""},
		{"segments gap", `{"algorithms":{"segments":[{"start":0,"stop":10},{"start":11,"stop":20}]}}`, "algorithms.segments.1.start", "contiguous"},
		{"segments overlap", `{"algorithms":{"segments":[{"start":0,"stop":10},{"start":9,"stop":20}]}}`, "algorithms.segments.1.start", "contiguous"},
		{"segment start after stop", `{"algorithms":{"segments":[{"start":5,"stop":5}]}}`, "algorithms.segments.0.stop", "greater than start"},
		{"segment negative", `{"algorithms":{"segments":[{"start":-1,"stop":5}]}}`, "algorithms.segments.0.start", "from 0"},
		{"segment stop huge", `{"algorithms":{"segments":[{"start":0,"stop":1e300}]}}`, "algorithms.segments.0.stop", "at most 3600000"},
		{"segment start huge", `{"algorithms":{"segments":[{"start":1e19,"stop":1e20}]}}`, "algorithms.segments.0.start", "from 0 to 3600000"},
		{"segment start required", `{"algorithms":{"segments":[{"stop":5}]}}`, "algorithms.segments.0.start", "required"},
		{"segment stop required", `{"algorithms":{"segments":[{"start":0}]}}`, "algorithms.segments.0.stop", "required"},
		{"segment method", `{"algorithms":{"segments":[{"start":0,"stop":5,"denoisemethod":"dynamic"}]}}`, "algorithms.segments.0.denoisemethod", "speech, music, classic, off"},
		{"segment amount", `{"algorithms":{"segments":[{"start":0,"stop":5,"denoiseamount":7}]}}`, "algorithms.segments.0.denoiseamount", ""},
		{"segment deverb", `{"algorithms":{"segments":[{"start":0,"stop":5,"deverbamount":7}]}}`, "algorithms.segments.0.deverbamount", ""},
		{"segment debreath speech only", `{"algorithms":{"segments":[{"start":0,"stop":5,"denoisemethod":"music","debreathamount":6}]}}`, "algorithms.segments.0.debreathamount", "speech"},
		{"segment debreath needs the production's method", `{"algorithms":{"denoise":true,"denoisemethod":"static","segments":[{"start":0,"stop":5,"denoisemethod":"speech","debreathamount":6}]}}`, "algorithms.segments.0.debreathamount", "dynamic or speech_isolation"},
		{"segment deverb on music", `{"algorithms":{"denoise":true,"denoisemethod":"static","segments":[{"start":0,"stop":5,"denoisemethod":"music","deverbamount":6}]}}`, "algorithms.segments.0.deverbamount", "speech"},
		{"segment deverb under classic", `{"algorithms":{"denoise":true,"segments":[{"start":0,"stop":5,"deverbamount":6}]}}`, "algorithms.segments.0.deverbamount", "speech"},
		{"segment deverb speech under classic", `{"algorithms":{"denoise":true,"segments":[{"start":0,"stop":5,"denoisemethod":"speech","deverbamount":6}]}}`, "", ""},
		{"segment deverb off on music", `{"algorithms":{"denoise":true,"segments":[{"start":0,"stop":5,"denoisemethod":"music","deverbamount":-1}]}}`, "", ""},
		{"segment filtermethod", `{"algorithms":{"segments":[{"start":0,"stop":5,"filtermethod":"x"}]}}`, "algorithms.segments.0.filtermethod", ""},
		{"segment type", `{"algorithms":{"segments":[{"start":"a","stop":5}]}}`, "algorithms.segments.0.start", "number"},
		{"segments not array", `{"algorithms":{"segments":{}}}`, "algorithms.segments", "array"},

		// Multitrack.
		{"multitrack ok", `{"is_multitrack":true,"algorithms":{"leveler":true,"loudnesstarget":-16,"gate":true,"crossgate":false,"maxpeak":-1,"dualmono":false,"loudnessmethod":"dialog","maxlra":0,"maxs":0,"maxm":0},"multi_input_files":[{"type":"multitrack","id":"host","input_file":"https://x.org/host.wav","algorithms":{"hipfilter":true,"filtermethod":"hipfilter","denoise":true,"denoisemethod":"dynamic","debreathamount":6,"backforeground":"foreground","gain":3,"levelerstrength":50,"compressor":"soft","pan":"L25","msclassifier":"speech"}},{"type":"multitrack","id":"music","offset":2.5,"service":"svc","input_file":"bed.wav","algorithms":{"backforeground":"ducking","backgroundgain":-12,"ducking_fadetime":750,"loop_trim":true,"pan":""}},{"type":"intro","input_file":"https://x.org/intro.wav","offset":1}]}`, "", ""},
		{"singletrack key on multitrack", `{"is_multitrack":true,"algorithms":{"denoise":true}}`, "algorithms.denoise", "not allowed on a multitrack production"},
		{"normloudness on multitrack", `{"is_multitrack":true,"algorithms":{"normloudness":true}}`, "algorithms.normloudness", "singletrack"},
		{"track key on master", `{"is_multitrack":true,"algorithms":{"gain":3}}`, "algorithms.gain", "per-track"},
		{"master loudness bad", `{"is_multitrack":true,"algorithms":{"loudnesstarget":-17}}`, "algorithms.loudnesstarget", ""},
		{"track levelerstrength 120", `{"is_multitrack":true,"multi_input_files":[{"type":"multitrack","id":"a","algorithms":{"levelerstrength":120}}]}`, "multi_input_files.0.algorithms.levelerstrength", "choose one of 0"},
		{"track master key", `{"is_multitrack":true,"multi_input_files":[{"type":"multitrack","id":"a","algorithms":{"gate":true}}]}`, "multi_input_files.0.algorithms.gate", "not allowed on a multitrack track"},
		{"track singletrack key", `{"is_multitrack":true,"multi_input_files":[{"type":"multitrack","id":"a","algorithms":{"loudnesstarget":-16}}]}`, "multi_input_files.0.algorithms.loudnesstarget", ""},
		{"track pan bad", `{"is_multitrack":true,"multi_input_files":[{"type":"multitrack","id":"a","algorithms":{"pan":"L30"}}]}`, "multi_input_files.0.algorithms.pan", ""},
		{"track gain bad", `{"is_multitrack":true,"multi_input_files":[{"type":"multitrack","id":"a","algorithms":{"gain":1}}]}`, "multi_input_files.0.algorithms.gain", ""},
		{"track backgroundgain bad", `{"is_multitrack":true,"multi_input_files":[{"type":"multitrack","id":"a","algorithms":{"backgroundgain":-5}}]}`, "multi_input_files.0.algorithms.backgroundgain", ""},
		{"track ducking bad", `{"is_multitrack":true,"multi_input_files":[{"type":"multitrack","id":"a","algorithms":{"ducking_fadetime":100}}]}`, "multi_input_files.0.algorithms.ducking_fadetime", ""},
		{"track backforeground bad", `{"is_multitrack":true,"multi_input_files":[{"type":"multitrack","id":"a","algorithms":{"backforeground":"side"}}]}`, "multi_input_files.0.algorithms.backforeground", ""},
		{"track msclassifier bad", `{"is_multitrack":true,"multi_input_files":[{"type":"multitrack","id":"a","algorithms":{"msclassifier":"off"}}]}`, "multi_input_files.0.algorithms.msclassifier", ""},
		{"track deverb needs method", `{"is_multitrack":true,"multi_input_files":[{"type":"multitrack","id":"a","algorithms":{"deverbamount":6}}]}`, "multi_input_files.0.algorithms.deverbamount", "static"},
		{"track unknown key", `{"is_multitrack":true,"multi_input_files":[{"type":"multitrack","id":"a","algorithms":{"volume":1}}]}`, "multi_input_files.0.algorithms.volume", "unknown"},
		{"multi type required", `{"multi_input_files":[{"id":"a"}]}`, "multi_input_files.0.type", "required"},
		{"multi type bad", `{"multi_input_files":[{"type":"insert","id":"a"}]}`, "multi_input_files.0.type", "multitrack, intro, outro"},
		{"multitrack type on single track", `{"multi_input_files":[{"type":"multitrack","id":"a"}]}`, "multi_input_files.0.type", "is_multitrack"},
		{"multitrack id required", `{"is_multitrack":true,"multi_input_files":[{"type":"multitrack"}]}`, "multi_input_files.0.id", "required"},
		{"multi ids unique", `{"is_multitrack":true,"multi_input_files":[{"type":"multitrack","id":"a"},{"type":"multitrack","id":"a"}]}`, "multi_input_files.1.id", "same id"},
		{"multi id reserved", `{"is_multitrack":true,"multi_input_files":[{"type":"multitrack","id":"image"}]}`, "multi_input_files.0.id", "reserved"},
		{"multi id path", `{"is_multitrack":true,"multi_input_files":[{"type":"multitrack","id":"a/b"}]}`, "multi_input_files.0.id", ""},
		{"multi offset negative", `{"multi_input_files":[{"type":"outro","offset":-0.5,"input_file":"https://x.org/o.wav"}]}`, "multi_input_files.0.offset", "from 0"},
		{"multi offset overflows a duration", `{"is_multitrack":true,"multi_input_files":[{"type":"multitrack","id":"a","offset":1e12}]}`, "multi_input_files.0.offset", "from 0 to 86400"},
		{"multi offset a day", `{"is_multitrack":true,"multi_input_files":[{"type":"multitrack","id":"a","offset":86400}]}`, "", ""},
		{"multi offset past a day", `{"is_multitrack":true,"multi_input_files":[{"type":"multitrack","id":"a","offset":86400.001}]}`, "multi_input_files.0.offset", "86400"},
		{"multi offset zero", `{"multi_input_files":[{"type":"outro","offset":0,"input_file":"https://x.org/o.wav"}]}`, "", ""},
		{"intro with algorithms", `{"multi_input_files":[{"type":"intro","algorithms":{"gain":3}}]}`, "multi_input_files.0.algorithms", "only multitrack"},
		{"multi input file must be url", `{"multi_input_files":[{"type":"intro","input_file":"intro.wav"}]}`, "multi_input_files.0.input_file", "http"},

		// Speech recognition.
		{"speech ok", `{"speech_recognition":{"uuid":"sr","language":"en-US","keywords":["audiopost","Go"]}}`, "", ""},
		{"speech null", `{"speech_recognition":null}`, "", ""},
		{"speech uuid required", `{"speech_recognition":{"language":"en"}}`, "speech_recognition.uuid", "required"},
		{"speech language", `{"speech_recognition":{"uuid":"sr","language":"english (US)"}}`, "speech_recognition.language", "language code"},
		{"speech keyword empty", `{"speech_recognition":{"uuid":"sr","keywords":[""]}}`, "speech_recognition.keywords.0", ""},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.name] {
			t.Fatalf("duplicate case name %q", c.name)
		}
		seen[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			_, err := create(t, c.body)
			fe := fieldErr(t, err)
			if c.want == "" {
				if fe != nil {
					t.Fatalf("valid request rejected: %v", fe)
				}
				return
			}
			msg, ok := fe[c.want]
			if !ok {
				t.Fatalf("want error at %q, got %v", c.want, fe)
			}
			if !strings.Contains(msg, c.msg) {
				t.Fatalf("message %q at %q does not mention %q", msg, c.want, c.msg)
			}
		})
	}
}

func TestDecodeInputRejectsNonObjects(t *testing.T) {
	for _, body := range []string{``, `[]`, `"x"`, `{"a":`, `null`, `{"a":1}x`} {
		if _, err := DecodeInput([]byte(body)); !errors.Is(err, ErrInvalid) {
			t.Errorf("DecodeInput(%q) = %v, want ErrInvalid", body, err)
		}
	}
	big := `{"metadata":{"summary":"` + strings.Repeat("x", MaxRequestBytes) + `"}}`
	if _, err := DecodeInput([]byte(big)); !errors.Is(err, ErrInvalid) {
		t.Errorf("oversized body accepted: %v", err)
	}
}

func update(t *testing.T, p *Production, body string) error {
	t.Helper()
	in, err := DecodeInput([]byte(body))
	if err != nil {
		return err
	}
	return p.Apply(in, ApplyOptions{})
}

func mustCreate(t *testing.T, body string) *Production {
	t.Helper()
	p, err := create(t, body)
	if err != nil {
		t.Fatalf("create %s: %v", body, err)
	}
	return p
}

func TestUpdateRules(t *testing.T) {
	t.Run("preset with reset_data", func(t *testing.T) {
		p := mustCreate(t, `{}`)
		fe := fieldErr(t, update(t, p, `{"preset":"abc","reset_data":true}`))
		if _, ok := fe["preset"]; !ok {
			t.Fatalf("got %v, want error at preset", fe)
		}
	})
	t.Run("lists are appended", func(t *testing.T) {
		p := mustCreate(t, `{"input_file":"https://x.org/a.wav","output_files":[{"format":"mp3"}],"chapters":[{"start":"0","title":"A"}]}`)
		if err := update(t, p, `{"output_files":[{"format":"flac"}],"chapters":[{"start":"00:01:00","title":"B"}],"multi_input_files":[{"type":"intro","input_file":"https://x.org/i.wav"}]}`); err != nil {
			t.Fatal(err)
		}
		if len(p.OutputFiles) != 2 || p.OutputFiles[1].Format != "flac" || len(p.Chapters) != 2 || len(p.MultiInputFiles) != 1 {
			t.Fatalf("lists not appended: %+v %+v", p.OutputFiles, p.Chapters)
		}
		if err := update(t, p, `{"multi_input_files":[{"type":"outro","input_file":"https://x.org/o.wav"}]}`); err != nil {
			t.Fatal(err)
		}
		if len(p.MultiInputFiles) != 2 || p.MultiInputFiles[1].Type != "outro" {
			t.Fatalf("intro/outro not appended in series: %+v", p.MultiInputFiles)
		}
	})
	t.Run("appended index in paths", func(t *testing.T) {
		p := mustCreate(t, `{"output_files":[{"format":"mp3"},{"format":"flac"}]}`)
		fe := fieldErr(t, update(t, p, `{"output_files":[{"format":"mp3","bitrate":7}]}`))
		if _, ok := fe["output_files.2.bitrate"]; !ok {
			t.Fatalf("got %v, want output_files.2.bitrate", fe)
		}
		if len(p.OutputFiles) != 2 {
			t.Fatal("failed update changed the production")
		}
	})
	t.Run("outgoing services replace", func(t *testing.T) {
		p := mustCreate(t, `{"outgoing_services":[{"uuid":"a"},{"uuid":"b"}]}`)
		if err := update(t, p, `{"outgoing_services":[{"uuid":"c"}]}`); err != nil {
			t.Fatal(err)
		}
		if len(p.OutgoingServices) != 1 || p.OutgoingServices[0].UUID != "c" {
			t.Fatalf("got %+v", p.OutgoingServices)
		}
	})
	t.Run("metadata and algorithms merge", func(t *testing.T) {
		p := mustCreate(t, `{"metadata":{"title":"T","artist":"A"},"algorithms":{"loudnesstarget":-23,"denoise":true}}`)
		if err := update(t, p, `{"metadata":{"title":"T2"},"algorithms":{"denoise":null,"maxpeak":-1}}`); err != nil {
			t.Fatal(err)
		}
		if p.Metadata.Title != "T2" || p.Metadata.Artist != "A" {
			t.Fatalf("metadata %+v", p.Metadata)
		}
		a := p.Algorithms.In(ScopeSingletrack)
		if a.Int("loudnesstarget") != -23 || a.Bool("denoise") || a.Float("maxpeak") != -1 {
			t.Fatalf("algorithms %+v", p.Algorithms)
		}
	})
	t.Run("cross-field rule sees merged state", func(t *testing.T) {
		p := mustCreate(t, `{"algorithms":{"denoisemethod":"static","deverbamount":12}}`)
		fe := fieldErr(t, update(t, p, `{"algorithms":{"denoisemethod":"classic"}}`))
		if _, ok := fe["algorithms.deverbamount"]; !ok {
			t.Fatalf("got %v", fe)
		}
	})
	t.Run("switch to multitrack with single-track keys", func(t *testing.T) {
		p := mustCreate(t, `{"algorithms":{"denoise":true}}`)
		fe := fieldErr(t, update(t, p, `{"is_multitrack":true}`))
		if _, ok := fe["algorithms.denoise"]; !ok {
			t.Fatalf("got %v", fe)
		}
	})
	t.Run("reset_data keeps input only", func(t *testing.T) {
		p := mustCreate(t, `{"input_file":"https://x.org/a.wav","metadata":{"title":"T"},"output_files":[{"format":"mp3"}],"chapters":[{"start":"0","title":"A"}],"webhook":"https://h.org","algorithms":{"denoise":true},"image":"https://x.org/c.jpg"}`)
		uuid := p.UUID
		if err := update(t, p, `{"reset_data":true,"metadata":{"artist":"B"}}`); err != nil {
			t.Fatal(err)
		}
		if p.InputFile != "https://x.org/a.wav" || p.UUID != uuid {
			t.Fatal("input lost")
		}
		if p.Metadata.Title != "" || p.Metadata.Artist != "B" || len(p.OutputFiles) != 0 || len(p.Chapters) != 0 ||
			p.Webhook != nil || len(p.Algorithms) != 0 || p.Image != nil {
			t.Fatalf("not reset: %+v", p)
		}
	})
	t.Run("reset_cover_image", func(t *testing.T) {
		p := mustCreate(t, `{"image":"https://x.org/c.jpg"}`)
		th := "https://x.org/thumb.jpg"
		p.Thumbnail = &th
		if err := update(t, p, `{"reset_cover_image":true}`); err != nil {
			t.Fatal(err)
		}
		if p.Image != nil || p.Thumbnail != nil {
			t.Fatal("cover image kept")
		}
	})
	t.Run("webhook empty string deletes", func(t *testing.T) {
		p := mustCreate(t, `{"webhook":"https://h.org/x"}`)
		if err := update(t, p, `{"webhook":""}`); err != nil || p.Webhook != nil {
			t.Fatalf("webhook %v err %v", p.Webhook, err)
		}
	})
	t.Run("not while processing", func(t *testing.T) {
		p := mustCreate(t, `{}`)
		p.Status = StatusAudioEncoding
		if err := update(t, p, `{"metadata":{"title":"x"}}`); !errors.Is(err, ErrProcessing) {
			t.Fatalf("got %v", err)
		}
		if err := p.ClearList(ListChapters); !errors.Is(err, ErrProcessing) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("clear lists", func(t *testing.T) {
		p := mustCreate(t, `{"speech_recognition":{"uuid":"s"},"output_files":[{"format":"mp3"}],"chapters":[{"start":"0","title":"A"}],"multi_input_files":[{"type":"intro","input_file":"https://x.org/i.wav"}]}`)
		for _, l := range []List{ListOutputFiles, ListChapters, ListMultiInputFiles, ListSpeechRecognition} {
			if err := p.ClearList(l); err != nil {
				t.Fatal(err)
			}
		}
		if len(p.OutputFiles)+len(p.Chapters)+len(p.MultiInputFiles) != 0 || p.SpeechRecognition != nil {
			t.Fatalf("not cleared: %+v", p)
		}
		if err := p.ClearList("cuts"); !errors.Is(err, ErrInvalid) {
			t.Fatalf("unknown list: %v", err)
		}
	})
	t.Run("speech recognition adds outputs", func(t *testing.T) {
		p := mustCreate(t, `{"output_files":[{"format":"subtitle","ending":"webvtt"}],"speech_recognition":{"uuid":"s"}}`)
		var got []string
		for _, o := range p.OutputFiles {
			got = append(got, o.Format+"/"+o.Ending)
		}
		if strings.Join(got, ",") != "subtitle/webvtt,speech/,transcript/" {
			t.Fatalf("outputs %v", got)
		}
	})
	t.Run("status follows input", func(t *testing.T) {
		p := mustCreate(t, `{}`)
		if p.Status != StatusIncomplete || p.CanStart() {
			t.Fatalf("new without input: %v start %v", p.Status, p.CanStart())
		}
		if err := update(t, p, `{"input_file":"https://x.org/a.wav"}`); err != nil {
			t.Fatal(err)
		}
		if p.Status != StatusNotStarted || !p.CanStart() {
			t.Fatalf("with input: %v", p.Status)
		}
		p.Status = StatusDone
		if err := update(t, p, `{"metadata":{"title":"x"}}`); err != nil || p.Status != StatusOutdated {
			t.Fatalf("changed after done: %v %v", p.Status, err)
		}
	})
}
