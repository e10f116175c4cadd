package production

import (
	"encoding/json"
	"strconv"
)

// Status is the processing state of a production. The codes and names are
// the original service's (see GET info/production_status); only 2 (Error)
// and 3 (Done) are fixed by the API spec, the rest follow DESIGN.md.
//
// Who sets each code: 9, 10 and 11 are set when a production is saved
// (Apply); 1 by Service.Start, 13 by Service.Stop; 14 (while the
// production's speech is recognised, before the audio processing), 4, 5, 7
// and 8 by the engine as it works (Engine.Run), which ends in 3, 2 or,
// stopped, 10; 6 by
// the job runner during outgoing transfers. Two codes are never set by
// this implementation, because what they report never outlasts the
// request that causes it: 0 (File Upload: an upload is stored within its
// request, before the production is saved with it) and 12 (Incoming File
// Transfer: inputs given by URL or on an incoming service are fetched and
// checked when the production is saved, before it can be started).
type Status int

// Status codes.
const (
	StatusFileUpload        Status = 0  // input is being uploaded (not used, see Status)
	StatusWaiting           Status = 1  // queued for a worker
	StatusError             Status = 2  // processing failed
	StatusDone              Status = 3  // processing finished
	StatusAudioProcessing   Status = 4  // analysis and the processing chain
	StatusAudioEncoding     Status = 5  // writing the output files
	StatusOutgoingTransfer  Status = 6  // copying outputs to external services
	StatusMonoMixdown       Status = 7  // finishing mono_mixdown outputs
	StatusSplitChapters     Status = 8  // finishing the parts of split_on_chapters outputs
	StatusIncomplete        Status = 9  // created but something needed is missing
	StatusNotStarted        Status = 10 // complete, not started yet (or stopped)
	StatusOutdated          Status = 11 // changed after processing; results are stale
	StatusIncomingTransfer  Status = 12 // fetching the input (not used, see Status)
	StatusStopping          Status = 13 // a stop was requested
	StatusSpeechRecognition Status = 14 // speech recognition running
)

var statusNames = [...]string{
	StatusFileUpload:        "File Upload",
	StatusWaiting:           "Waiting",
	StatusError:             "Error",
	StatusDone:              "Done",
	StatusAudioProcessing:   "Audio Processing",
	StatusAudioEncoding:     "Audio Encoding",
	StatusOutgoingTransfer:  "Outgoing File Transfer",
	StatusMonoMixdown:       "Audio Mono Mixdown",
	StatusSplitChapters:     "Split Audio On Chapter Marks",
	StatusIncomplete:        "Incomplete",
	StatusNotStarted:        "Production Not Started Yet",
	StatusOutdated:          "Production Outdated",
	StatusIncomingTransfer:  "Incoming File Transfer",
	StatusStopping:          "Stopping the Production",
	StatusSpeechRecognition: "Speech Recognition",
}

// Valid reports whether s is one of the codes 0-14.
func (s Status) Valid() bool { return s >= 0 && int(s) < len(statusNames) }

// String returns the status_string of s, or "Status <n>" for an unknown code.
func (s Status) String() string {
	if !s.Valid() {
		return "Status " + strconv.Itoa(int(s))
	}
	return statusNames[s]
}

// Processing reports whether a worker owns the production in this state
// (4-8 and 12-14): it must not be changed or started again.
func (s Status) Processing() bool {
	switch s {
	case StatusAudioProcessing, StatusAudioEncoding, StatusOutgoingTransfer,
		StatusMonoMixdown, StatusSplitChapters, StatusIncomingTransfer,
		StatusStopping, StatusSpeechRecognition:
		return true
	}
	return false
}

// ChangeAllowed reports whether a production in this state may be changed.
func (s Status) ChangeAllowed() bool { return !s.Processing() }

// Finished reports whether processing has ended (Done or Error): the
// statuses that call the webhook.
func (s Status) Finished() bool { return s == StatusDone || s == StatusError }

// StatusInfo returns the data of GET info/production_status: a dictionary
// from every code (as a JSON object key, so a decimal string) to its name.
func StatusInfo() map[string]string {
	m := make(map[string]string, len(statusNames))
	for i, n := range statusNames {
		m[strconv.Itoa(i)] = n
	}
	return m
}

// MarshalJSON writes the code as an integer.
func (s Status) MarshalJSON() ([]byte, error) { return json.Marshal(int(s)) }
