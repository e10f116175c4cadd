// Package httpapi is the HTTP interface of audiopost: the JSON API, the
// simple API, downloads and the info calls of the post-production service
// interface (described route by route below, and as OpenAPI 3.1 at
// /api/openapi.json), mounted together with the OAuth 2.0 and account
// routes of package transport/auth by NewHandler.
//
// All paths are under the path of Config.BaseURL. Every /api/ request is
// authenticated (API key or OAuth token as "Authorization: Bearer" or
// ?bearer_token=, or HTTP Basic) and, when Config.RateLimit is set, rate
// limited per user. Every resource is owner-scoped: another user's
// production, preset, service or file answers 404, exactly like a missing
// one.
//
// # Routes
//
//	POST   /api/productions.json                       create a production (optionally from a preset)
//	GET    /api/productions.json                       list, newest first (limit, offset, uuids_only, minimal_data)
//	POST   /api/presets.json, GET /api/presets.json    the same for presets
//	GET    /api/{kind}/{uuid}.json                     one production or preset
//	POST   /api/{kind}/{uuid}.json                     update (lists sent are appended; reset_data, ...)
//	DELETE /api/{kind}/{uuid}.json                     delete; the production path deletes presets too
//	POST   /api/{kind}/{uuid}/{cmd}.json               cmd: metadata, output_files, outgoing_services, algorithms,
//	                                                   chapters (productions), multi_input_files, speech_recognition,
//	                                                   webhook (body: the URL string or {"webhook": url}), upload
//	DELETE /api/{kind}/{uuid}/{list}.json              list: output_files, chapters, multi_input_files,
//	                                                   speech_recognition, webhook
//	POST   /api/production/{uuid}/start.json           start (409 start_not_allowed unless start_allowed)
//	POST   /api/production/{uuid}/stop.json            stop
//	GET    /api/production/{uuid}/status.json          {uuid, status, status_string, progress (0-100)}
//	POST   /api/simple/productions.json                simple API (multipart)
//	GET    /api/services.json                          the user's external services (no secrets)
//	POST   /api/services.json                          register one: {type, display_name, incoming, outgoing,
//	                                                   the type's settings (info/service_types), test}; tested
//	                                                   (connect, log in, list) unless test is false
//	GET    /api/service/{uuid}.json                    one service
//	POST   /api/service/{uuid}.json                    change it: keys sent replace theirs, null or "" removes,
//	                                                   the rest (credentials too) stays; tested again
//	DELETE /api/service/{uuid}.json                    delete it
//	POST   /api/service/{uuid}/test.json               connect, log in and list: {uuid, files}
//	GET    /api/service/{uuid}/ls.json                 audio/video file names on an incoming ftp, sftp, webdav or
//	                                                   s3 service; 501 service_type_not_supported for other types
//	GET    /api/info.json, /api/info/{service_types,algorithms,output_files,production_status}.json
//	                                                   public: no credentials needed, as on the hosted service
//	GET    /api/user.json                              the account; credits in hours
//	GET    /api/download/{audio-result|audio-upload|preset}/{uuid}/{filename}   file, with Range support
//	GET    /api/openapi.json                           this API as OpenAPI 3.1 (public; servers is BaseURL)
//
// Operations, outside /api/ and without the API's credentials:
//
//	GET    /healthz                                    200 "ok" while the process serves
//	GET    /readyz                                     200, or 503 naming the check that failed: the store
//	                                                   answers a cheap query and the blob store a stat,
//	                                                   each within DefaultReadyTimeout
//	GET    /metrics                                    Prometheus text format 0.0.4 (see metrics.go): jobs by
//	                                                   state, processing counters, request latency by route
//	                                                   pattern, Go runtime; open unless Config.MetricsToken
//	                                                   is set, then "Authorization: Bearer <token>"
//
// Web pages (package transport/webpages, which NewHandler mounts):
// server-rendered HTML for browsers, logged in through the account pages
// of package auth or opened with ?bearer_token= (which links and forms
// then carry on); without either a page redirects to the login form.
// Forms carry a CSRF token bound to the session (or token), and go
// through the API's code paths.
//
//	GET       /upload/, POST /upload/                  upload form; creates like the simple API
//	GET       /production/{uuid}/status/               status page, polling status.json
//	GET       /production/{uuid}/status.json           the status call for the page's script
//	GET, POST /production/{uuid}/edit/                 metadata and algorithm form; action=start starts
//	GET       /files/{kind}/{uuid}/{filename}          the downloads, for page links
//	GET, POST /services/                               external services: list, add (the API's checks and
//	                                                   connection test), test, remove
//
// External services (services*.go): the types are the catalogue of
// storage/transfer (ftp, sftp, webdav, s3); any other type is refused at
// registration with a form error on type. A create or update names each
// bad setting in form_errors, and a failed connection test the field it
// concerns (password for a refused login, host, url or endpoint for an
// unreachable server, host_key for a mismatched key). Credentials
// (username, password, private_key, access_key, secret_key) are stored
// sealed with the store's secret key (storage.SecretKey, AES-256-GCM) and
// never shown; GET shows the other settings.
//
// Downloads: audio-result serves output files, audio-upload the input
// file, the cover image and its thumbnail, chapter images (named
// chapter-{hash}.png or .jpg by their content) and intros or tracks as
// {id}/{filename}; preset serves a preset's cover and thumbnail.
//
// # Responses
//
// Every JSON response is the envelope {status_code, form_errors,
// error_code, error_message, data}; form_errors maps field paths such as
// "output_files.0.bitrate" to a message (rules that concern no single
// field use "non_field"). Create, update, sub-commands, upload, start and
// stop answer with the complete resource in data, so clients need no
// second request; delete answers {"uuid": ...}. Response URLs
// (download_url, image, thumbnail, waveform_image, chapter images,
// status_page {base}/production/{uuid}/status/, edit_page
// {base}/production/{uuid}/edit/) are built from Config.BaseURL.
//
// Additions to the original interface in production responses: progress
// (0-100, the job runner's estimate while processing, 100 when Done),
// error_kind (what can fix an Error: input, settings, credits, internal,
// processing) and, in GET /api/production/{uuid}.json only,
// webhook_deliveries (the webhook calls with their state, attempts, HTTP
// status and error; a call that fails for good also adds a warning to
// warning_message). openapi.json describes them.
//
// # Errors
//
//	HTTP  error_code                  when
//	400   validation_failed           a field is invalid; form_errors says which and why (also
//	                                  preset with reset_data, an unknown preset or service,
//	                                  an upload that is not audio, an input URL that cannot be fetched)
//	400   malformed_json              the body is not a JSON object
//	400   bad_request                 malformed multipart body, bad query parameter, empty upload
//	401   unauthorized                no or bad credentials (WWW-Authenticate is set)
//	404   not_found                   unknown path, or a resource or file that is missing or another user's
//	405   method_not_allowed          wrong method for the path (Allow is set)
//	409   change_not_allowed          change or delete while processing (change_allowed false)
//	409   start_not_allowed           start while start_allowed is false (no input, processing)
//	409   not_running                 stop of a production that is neither waiting nor processing
//	409   conflict                    a concurrent change won twice (optimistic versioning)
//	413   too_large                   body over MaxBodyBytes, upload or fetched URL over MaxUploadBytes
//	415   unsupported_media_type      JSON endpoint without JSON, upload without multipart/form-data
//	429   rate_limited                over Config.RateLimit (Retry-After is set)
//	429   too_many_requests           too many failed password logins (HTTP Basic; Retry-After is set)
//	500   internal_error              anything else; logged with slog, the message stays generic
//	501   service_type_not_supported  service ls or input: the service type has no file transfer here
//	400   service_misconfigured       the service's settings lack a value its type needs
//	502   service_failed              the service refused the login or could not be reached
//	503   credentials_unavailable     service credentials cannot be sealed or opened: the operator
//	                                  configured no secret key
//
// # Processing
//
// The handlers decode requests, call the operations of package
// production/app and encode their results; the application layer owns
// every store write, transaction and stored file. The handler only
// stores productions and queues work: start re-reads
// the production, cancels its live jobs, sets status 1 (Waiting) and
// enqueues a "process" job, all in one Store.WithTx transaction; the
// simple API with action=start creates the production and its job in one
// transaction. Stop cancels the jobs; a Waiting production returns to Not
// Started (or Incomplete), a processing one goes to Stopping (13) and the
// runner sets its final status; one whose worker is gone (its job's lease
// ran out) returns to Not Started at once, and one whose worker died
// after the stop is ended by the next worker to take its job over.
// Input files, intros, outros and tracks
// given as http(s) URLs or as file names on an incoming service, and
// cover and chapter images given as URLs, are fetched synchronously
// during the request through the outbound client (private and loopback
// addresses refused unless the operator allows them) and checked: audio
// is probed, images must be PNG or JPEG (chapter images at most 8 MB).
// A new file replaces a stored one of the same name only once it passed
// that check, so a failed upload or fetch loses nothing. Chapter images
// are embedded in MP3 outputs (CHAP frames with APIC), next to chapter
// URLs (WXXX).
package httpapi
