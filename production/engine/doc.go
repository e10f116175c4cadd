// Package engine runs the production pipeline of one production: probe and
// decode the input, process it (a Processor; by default the dsp/chain
// pipeline, configured from the production's algorithms by ChainConfig),
// add intros and outros, encode every output in one pass, verify lossy
// outputs, write the side files, and publish everything atomically through
// an OutputWriter. It knows nothing of stores or queues: the runner and the
// command line both call Engine.Run. The external programs of a run
// (ffmpeg, PocketSphinx) take their slots of a process pool together
// (Engine.Processes, package procpool; see programs.go), so any number of
// runs share a server's pool without waiting on each other for good.
package engine
