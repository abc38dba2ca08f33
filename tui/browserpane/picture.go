package browserpane

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	_ "image/gif"  // screenshots may be GIF
	_ "image/jpeg" // the extension may capture JPEG
	_ "image/png"
	"os"
	"strconv"
	"strings"

	"golang.org/x/image/draw"
	_ "golang.org/x/image/webp" // and WebP
)

// MaxScreenshotBytes bounds the file LoadScreenshot reads.
const MaxScreenshotBytes = 64 << 20

// previewMax bounds the decoded preview kept in memory: a terminal pane
// never shows more pixels than this, and scaling from a small preview on
// every resize is cheap enough to do on the Update goroutine.
const previewMax = 320

// LoadScreenshot reads and decodes an image file and shrinks it to a
// preview. It does I/O and heavy decoding, so call it from a tea.Cmd.
func LoadScreenshot(path string) (*image.RGBA, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the screenshot: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading the screenshot: %w", err)
	}
	if st.Size() > MaxScreenshotBytes {
		return nil, fmt.Errorf("the screenshot %s is %d bytes, more than the %d the pane shows", path, st.Size(), MaxScreenshotBytes)
	}
	data := make([]byte, st.Size())
	if _, err := f.ReadAt(data, 0); err != nil && st.Size() > 0 {
		return nil, fmt.Errorf("reading the screenshot: %w", err)
	}
	return DecodePreview(data)
}

// DecodePreview decodes image bytes and shrinks them to a preview.
func DecodePreview(data []byte) (*image.RGBA, error) {
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decoding the screenshot: %w", err)
	}
	b := img.Bounds()
	if b.Dx() <= 0 || b.Dy() <= 0 {
		return nil, errors.New("the screenshot is empty")
	}
	w, h := fit(b.Dx(), b.Dy(), previewMax, previewMax)
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.CatmullRom.Scale(dst, dst.Bounds(), img, b, draw.Src, nil)
	return dst, nil
}

// fit scales w×h to fit inside maxW×maxH, keeping the aspect ratio and
// never enlarging.
func fit(w, h, maxW, maxH int) (int, int) {
	if w <= maxW && h <= maxH {
		return w, h
	}
	if w*maxH > h*maxW {
		return maxW, max(h*maxW/w, 1)
	}
	return max(w*maxH/h, 1), maxH
}

// HalfBlocks draws img in at most cols×rows cells. Each cell shows two
// pixels stacked, the top one as the foreground of "▀" and the bottom one
// as its background, so pixels come out about square.
func HalfBlocks(img *image.RGBA, cols, rows int) []string {
	if img == nil || cols <= 0 || rows <= 0 {
		return nil
	}
	b := img.Bounds()
	pw, ph := fitUp(b.Dx(), b.Dy(), cols, rows*2)
	ph += ph % 2
	dst := image.NewRGBA(image.Rect(0, 0, pw, ph))
	draw.CatmullRom.Scale(dst, dst.Bounds(), img, b, draw.Src, nil)
	out := make([]string, 0, ph/2)
	var sb strings.Builder
	for y := 0; y < ph; y += 2 {
		sb.Reset()
		for x := 0; x < pw; x++ {
			top := dst.RGBAAt(x, y)
			bot := dst.RGBAAt(x, y+1)
			sb.WriteString("\x1b[38;2;")
			writeRGB(&sb, top)
			sb.WriteString(";48;2;")
			writeRGB(&sb, bot)
			sb.WriteString("m▀")
		}
		sb.WriteString("\x1b[m")
		out = append(out, sb.String())
	}
	return out
}

// Shades draws img with characters only (for NO_COLOR): each cell's
// brightness picks a denser or lighter glyph.
func Shades(img *image.RGBA, cols, rows int) []string {
	if img == nil || cols <= 0 || rows <= 0 {
		return nil
	}
	const ramp = " .:-=+*#%@"
	b := img.Bounds()
	pw, ph := fitUp(b.Dx(), b.Dy(), cols, rows*2)
	ph += ph % 2
	dst := image.NewRGBA(image.Rect(0, 0, pw, ph))
	draw.CatmullRom.Scale(dst, dst.Bounds(), img, b, draw.Src, nil)
	out := make([]string, 0, ph/2)
	for y := 0; y < ph; y += 2 {
		var sb strings.Builder
		for x := 0; x < pw; x++ {
			l := (luma(dst.RGBAAt(x, y)) + luma(dst.RGBAAt(x, y+1))) / 2
			sb.WriteByte(ramp[l*(len(ramp)-1)/255])
		}
		out = append(out, sb.String())
	}
	return out
}

// fitUp scales w×h to fill as much of maxW×maxH as the aspect ratio
// allows (enlarging small images too).
func fitUp(w, h, maxW, maxH int) (int, int) {
	if w*maxH > h*maxW {
		return maxW, max(h*maxW/w, 1)
	}
	return max(w*maxH/h, 1), maxH
}

func luma(c color.RGBA) int {
	return (299*int(c.R) + 587*int(c.G) + 114*int(c.B)) / 1000
}

func writeRGB(sb *strings.Builder, c color.RGBA) {
	sb.WriteString(strconv.Itoa(int(c.R)))
	sb.WriteByte(';')
	sb.WriteString(strconv.Itoa(int(c.G)))
	sb.WriteByte(';')
	sb.WriteString(strconv.Itoa(int(c.B)))
}
