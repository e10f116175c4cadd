// Package production holds the domain of an audiopost production: the
// types the HTTP API exchanges (Production, Metadata, Chapter, OutputFile,
// OutgoingService, MultiInputFile, SpeechRecognition, Statistics, Status),
// the one table of algorithms and the one table of output formats that
// validation and the info endpoints are generated from, the decoding of
// client requests (Input), their validation into per-field messages
// (FieldErrors, the API's form_errors), output file and blob naming, the
// chapter text format, and the rules of a production's lifecycle
// (Startable, Stoppable, StopStatus, the work budget). The operations on stored
// productions are those of package production/app.
//
// Requests and responses are separate types on purpose: a client sends an
// Input (every field optional, lenient about numbers sent as strings,
// read-only fields absent so they are ignored), the server keeps and returns
// a Production. Apply merges an Input into a Production and validates the
// result, so cross-field rules always see the complete, merged state.
//
// The sub-packages build on it: app holds every operation a user can do
// (creating, changing, starting and stopping productions, uploads and
// the rest), engine processes one production into its
// files, runner runs the engine for queued jobs against a store, sidefile
// renders description, statistics and chapter files, artwork handles cover
// images, thumbnails and waveform pictures.
package production
