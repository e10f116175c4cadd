// Package runner is the durable job runner of the service: workers claim
// JobProcess jobs from a storage.Store with a lease and a heartbeat, fetch
// the production's files from the blob store, run the engine, store the
// outputs and statistics, charge credits, transfer the files to outgoing
// services and queue the webhook, each exactly once even across crashes.
//
// Outgoing transfers follow the spec's default routing (routeFiles: every
// file to file storage, the best lossy file to audio hosting, the video to
// video hosting, the best MP3 to podcast hosting; an output naming
// services goes to those only) and apply the outgoing service's
// parameters where the protocol has them (transfer.ForPublish); the
// others are named in the production's warning.
//
// Parallelism is bounded at two levels. Across productions: a Runner
// processes at most Config.Workers productions at once (default 1), each
// worker claiming one job and finishing it before it claims the next;
// several Runners (worker processes, on one machine or many) share the
// jobs through the store's claims. Within a production, the engine
// renders the processed programme once and tees it into every encoder:
// each ffmpeg encoder is a process of its own and each pure-Go encoder
// (WAV, FLAC) a goroutine of its own, fed through a queue of a few blocks,
// and the chain's stages use up to GOMAXPROCS goroutines; memory is bounded
// by that graph, not by the programme's length. A production with lossy
// outputs keeps about two cores busy while it encodes, so more workers
// than half the cores mostly trade each production's latency for
// throughput (BenchmarkScaleOut in benchmarks measures one and two
// workers). The external programs of every production (each ffmpeg encoder
// and verifying decoder, decoders of inputs ffmpeg reads, PocketSphinx)
// take slots of one process pool (Config.Processes): productions queue for
// them, so the programs running at once never exceed the pool whatever the
// productions ask for.
package runner
