// Package artwork handles the pictures of a production: it recognises
// uploaded cover and chapter images (PNG, JPEG), converts them, makes the
// square thumbnails the API lists, and draws the waveform image of the
// output audio.
package artwork
