package production

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Blob keys. Every package that reads or writes a production's files uses
// these functions, so the layout lives in one place:
//
//	productions/{uuid}/input/{filename}         main input file
//	productions/{uuid}/intro/{id}/{filename}    intro, outro or multitrack input by multi_input_files id
//	productions/{uuid}/output/{filename}        output files
//	productions/{uuid}/image/{filename}         cover image
//	productions/{uuid}/image/thumb-{filename}.png  its thumbnail
//	productions/{uuid}/chapter/{filename}       chapter images, named by ChapterImageName
//	presets/{uuid}/image/{filename}             preset cover image (thumbnail alike)
//
// Every segment is passed through SanitizeName, so a hostile file name or
// id can never climb out of its production's folder; a segment that
// sanitizes to nothing becomes "_".

// ProductionPrefix is the key prefix of everything stored for a production
// (with the trailing slash, so "productions/ab/" never matches
// "productions/abc/...").
func ProductionPrefix(uuid string) string { return "productions/" + keySegment(uuid) + "/" }

// PresetPrefix is the key prefix of everything stored for a preset.
func PresetPrefix(uuid string) string { return "presets/" + keySegment(uuid) + "/" }

// InputKey is the blob key of a production's main input file.
func InputKey(uuid, filename string) string {
	return ProductionPrefix(uuid) + "input/" + keySegment(filename)
}

// InputPrefix is the folder of a production's main input.
func InputPrefix(uuid string) string { return ProductionPrefix(uuid) + "input/" }

// IntroKey is the blob key of a multi input file (intro, outro or track)
// by its multi_input_files id.
func IntroKey(uuid, id, filename string) string {
	return IntroPrefix(uuid, id) + keySegment(filename)
}

// IntroPrefix is the folder of one multi input file id.
func IntroPrefix(uuid, id string) string {
	return ProductionPrefix(uuid) + "intro/" + keySegment(id) + "/"
}

// OutputKey is the blob key of an output file.
func OutputKey(uuid, filename string) string {
	return ProductionPrefix(uuid) + "output/" + keySegment(filename)
}

// ImageKey is the blob key of a production's cover image.
func ImageKey(uuid, filename string) string {
	return ImagePrefix(uuid) + keySegment(filename)
}

// ImagePrefix is the folder of a production's cover image and thumbnail.
func ImagePrefix(uuid string) string { return ProductionPrefix(uuid) + "image/" }

// ThumbnailName is the file name of the thumbnail of a cover image.
func ThumbnailName(filename string) string { return "thumb-" + keySegment(filename) + ".png" }

// ThumbnailKey is the blob key of the thumbnail of a production's cover.
func ThumbnailKey(uuid, filename string) string { return ImageKey(uuid, ThumbnailName(filename)) }

// ChapterImageKey is the blob key of a production's chapter image.
func ChapterImageKey(uuid, filename string) string {
	return ChapterImagePrefix(uuid) + keySegment(filename)
}

// ChapterImagePrefix is the folder of a production's chapter images.
func ChapterImagePrefix(uuid string) string { return ProductionPrefix(uuid) + "chapter/" }

// ChapterImageName names a chapter image (of MIME type mime) by its
// content: a picture used by several chapters is stored once, and a
// changed picture gets a new name, so its download URL never serves stale
// bytes.
func ChapterImageName(data []byte, mime string) string {
	sum := sha256.Sum256(data)
	return chapterImagePrefix + hex.EncodeToString(sum[:8]) + "." + strings.TrimPrefix(ImageExt(mime), ".")
}

const chapterImagePrefix = "chapter-"

// IsChapterImageName reports whether name is one ChapterImageName gives.
// Download URLs share one flat name space for a production's uploads;
// this is how a chapter image is told apart from an input or a cover.
func IsChapterImageName(name string) bool {
	rest, ok := strings.CutPrefix(name, chapterImagePrefix)
	if !ok {
		return false
	}
	hash, ext, ok := strings.Cut(rest, ".")
	if !ok || len(hash) != 16 || (ext != "png" && ext != "jpg") {
		return false
	}
	_, err := hex.DecodeString(hash)
	return err == nil && strings.ToLower(hash) == hash
}

// PresetImageKey is the blob key of a preset's cover image.
func PresetImageKey(uuid, filename string) string {
	return PresetImagePrefix(uuid) + keySegment(filename)
}

// PresetImagePrefix is the folder of a preset's cover image and thumbnail.
func PresetImagePrefix(uuid string) string { return PresetPrefix(uuid) + "image/" }

// PresetThumbnailKey is the blob key of the thumbnail of a preset's cover.
func PresetThumbnailKey(uuid, filename string) string {
	return PresetImageKey(uuid, ThumbnailName(filename))
}

// keySegment makes s one safe key segment.
func keySegment(s string) string {
	s = SanitizeName(s)
	// A leading ".tmp-" is reserved by blob stores for partial writes.
	if s == "" || strings.HasPrefix(s, ".") {
		return "_" + s
	}
	return s
}

// ImageExt is the file ending, with its dot, of a stored image of MIME type
// mime (PNG or JPEG).
func ImageExt(mime string) string {
	if mime == "image/jpeg" {
		return ".jpg"
	}
	return ".png"
}
