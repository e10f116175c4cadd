// Package runner is the durable job runner of the service: workers claim
// JobProcess jobs from a storage.Store with a lease and a heartbeat, fetch
// the production's files from the blob store, run the engine, store the
// outputs and statistics, charge credits, transfer the files to outgoing
// services and queue the webhook, each exactly once even across crashes.
package runner
