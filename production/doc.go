// Package production holds the domain types of an audiopost production as
// the HTTP API exchanges them (Production, Metadata, Chapter, OutputFile,
// OutgoingService, MultiInputFile, SpeechRecognition, Statistics, Status),
// the one table of algorithms and the one table of output formats that both
// validation and the info endpoints are generated from, the decoding of
// client requests (Input), their validation into per-field messages
// (FieldErrors, the API's form_errors), output file naming and the chapter
// text format.
//
// The processing Engine and the job Runner build on these types and live in
// this package too; they are added separately.
//
// Requests and responses are separate types on purpose: a client sends an
// Input (every field optional, lenient about numbers sent as strings,
// read-only fields absent so they are ignored), the server keeps and returns
// a Production. Apply merges an Input into a Production and validates the
// result, so cross-field rules always see the complete, merged state.
package production
