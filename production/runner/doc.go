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
package runner
