// Package realaudio is the real-recording corpus that audiopost's quality
// is measured on: speech, music and noises recorded by people, taken from
// Debian packages that apt-get installs (never downloaded from elsewhere,
// never committed as audio), mixed here into scenarios whose references
// are known.
//
// # Two halves
//
// The corpus is split by source into a Tuning half and a HeldOut half: a
// speaker, a recording, or a sample a piece plays is in one half only
// (TestSplitIsDisjointBySource). Choose and tune algorithms on Tuning;
// report figures on HeldOut only. Every accessor takes the half, so
// reading the held-out half takes writing HeldOut: only the quality report
// (benchmarks, QualityReport) and acceptance tests do.
//
//	c := realaudio.Load(t, realaudio.Tuning) // skips without the packages
//	for _, m := range c.NoisySpeech() {
//		out := denoise(m.Input)
//		gain := testaudio.SISDR(m.Clean, out) - testaudio.SISDR(m.Clean, m.Input)
//	}
//
// The split, written out in catalog.go and sources.go: the only English
// speaker with transcripts (Allison Smith, asterisk-core-sounds-en) is
// held out, since the report's word error rates need transcripts, and so
// is the only speaker who breathes audibly (ve9qrp); the French and
// Italian prompt voices are for tuning; the
// speakers of codec2-examples are split by hand (each file names a
// speaker or is a recording of its own); klettres's voices (one per
// language folder) alternate in sorted order; noises, music and the
// samples sequenced pieces play are assigned one by one.
//
// # Where everything comes from
//
// Every Utterance, Noise and Music carries its Origins: package, file and
// licence (as /usr/share/doc/PKG/copyright gives it, checked by
// TestOriginsAndLicences). The packages (Packages, with their sizes):
//
//   - asterisk-core-sounds-en-g722 and asterisk-core-sounds-en: the first
//     120 prompts of five words or more read by Allison Smith, 16 kHz G.722
//     (wider than the -wav package's 8 kHz), with core-sounds-en.txt's
//     transcripts. CC-BY-SA-3.0. The same for French (June, -fr) and
//     Italian (Carlo, -it, CC-BY-3.0), in the tuning half. The Mexican
//     Spanish prompts are Allison's voice again and are not used.
//   - codec2-examples: 14 recordings of read and conversational English
//     (wav/ and raw/), 8 and 16 kHz; the radio amateurs' recordings carry
//     their radio's noise, so only recordings whose floor lies 35 dB under
//     the speech become clean clips (clean). david4.wav and vk2tpm_004.wav
//     are modem signals, not speech. LGPL-2.1.
//   - klettres-data: letters and syllables spoken by one voice per
//     language, the first 12 of each folder. GPL-2+.
//   - openttd-opensfx: field recordings cut for OpenTTD (wind, helicopter,
//     chainsaw, jet, jackhammer, sawmill, mining machinery, applause,
//     birds, a sheep field, ...), sounds of opensfx.cat, whose entries
//     name their originals. CC-BY-SA-3.0 as the package grants it.
//   - lmms-common: recorded drum, instrument and choir samples, sequenced
//     here into pieces; a raving crowd and applause as noises. GPL-2+.
//   - asterisk-moh-opsound-g722: five pieces of music (Reno Project and
//     Macroform, electronic; Manolo Camp, acoustic guitar), 16 kHz, the
//     first 120 s. CC BY-SA 3.0.
//   - timgm6mb-soundfont rendered by fluidsynth: General MIDI pieces
//     composed here (compose) played by the font's recorded instruments
//     (orchestra, choir, piano, guitars, drum kit). GPL-2.
//
// What the packages lack: no rain, and one wind recording (in the tuning
// half). Music of the five kinds (MusicKinds) is in both halves; where no
// package ships a recording of a kind (orchestral, sung vocals) the piece
// is sequenced from recorded samples, and Music.Recorded says which.
//
// # Scenarios
//
// All at 48 kHz mono, clean speech at an active level of -26 dBFS
// (ActiveLevel):
//
//   - NoisySpeech: speech plus a real noise (stationary or not), babble
//     of six real talkers, or music, at 5, 10 and 15 dB SNR.
//   - Clips: the clean speech itself.
//   - Reverberant: speech in shoebox rooms whose impulse responses an
//     image-source simulation computes (Room.Impulse), RT60 0.3 to 1.2 s
//     checked by Schroeder integration (SchroederRT60).
//   - Hummed: speech with 50 or 60 Hz hum whose frequency wanders 0.5 Hz
//     over the file, harmonics to 1 kHz.
//   - SoxReverberant: speech plus sox reverb's wet output, the
//     reverberance found by bisection for RT60 0.5, 0.7 and 1.0 s.
//   - Programmes: real speech alternating with music of the five kinds,
//     some speech over a music bed 15 dB below, labelled per second.
//   - Breathy: a radio amateur's conversation (codec2-examples ve9qrp)
//     with its inhalations before phrases labelled by findBreaths's
//     numbers (unvoiced, 200-800 ms, 8-35 dB under the speech, under 7000
//     zero crossings a second, the phrase's voicing 80-500 ms after), and
//     the word onsets after them. Held-out only: no other recording of
//     the packages breathes (ErrNoMaterial for Tuning).
//   - Paused: phrases joined by pauses of 0.5 to 3.2 s filled with the
//     recordings' own room tone, for the silence cutter: Allison's prompts
//     with their transcripts (held out); the tuning half's English has no
//     transcripts, so there the recognizer's words on the uncut input are
//     the reference. PausedUnder lays a real steady noise of the half (a
//     machine, a crowd) under the whole of each file, 30, 40 or 50 dB
//     under the speech (NoiseUnderDBs), as a room or a home recording has;
//     NoiseUnder lays any of its noises, fluctuating ones too.
//     PausedOtherLanguages makes more paused files of the tuning half's
//     French and Italian prompts, to tune pause decisions on.
//
// # The fit-only pool
//
// FitSpeech is more real voices for fitting networks only (speech
// isolation's learns the speakers it is fitted on better than others,
// and the tuning half has few): Fish Fillets' acted dialogue in Czech and
// Dutch (fillets-ng-data-cs, -nl, 22 kHz), Russian prompts at 16 kHz,
// Italian telephone prompts at 8 kHz, and
// ktuberling's words in ten languages (FitVoices says which file comes
// from where under which licence). The pool is in neither half: no
// Corpus, scenario or figure reads it, so no figure moves because of it
// and the held-out half stays unheard; its speakers and packages are
// none of the halves' (TestFitVoicesAreInNoHalf). CI does not install
// its packages (FitPackages): only the fitting commands read it, and
// they fail naming the package missing. It is decoded and cached as the
// corpus is.
//
// # Cache
//
// Decoded and rendered signals are kept as 32-bit floats under
// testaudio.CacheDir()/realaudio: the first run on a machine decodes
// (ffmpeg, 64 files per run) and renders (fluidsynth, the image-source
// rooms) in about 75 s of CPU (the package's tests took 4 minutes of wall
// clock on a loaded two-core machine), later runs read the 760 MB it
// writes (the tests then take 7 s of CPU). Load skips the test
// when a package is missing, naming it, and fails under CI (CI=1), which
// installs them (.ci/run).
package realaudio
