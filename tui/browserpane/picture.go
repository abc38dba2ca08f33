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
	"strconv"
	"strings"

	"golang.org/x/image/draw"
	_ "golang.org/x/image/webp" // and WebP
)

// MaxScreenshotBytes bounds the encoded screenshot DecodePreview accepts.
const MaxScreenshotBytes = 64 << 20

// maxPixels bounds the decoded size: a huge or hostile image must not take
// the memory of the whole process just to be shrunk to a preview.
const maxPixels = 50_000_000

// previewMax bounds the decoded preview kept in memory: a terminal pane
// never shows more pixels than this, and scaling from a small preview on
// every resize is cheap enough to do on the Update goroutine.
const previewMax = 320

// DecodePreview decodes a screenshot (PNG, JPEG, GIF or WebP bytes) and
// shrinks it to a preview. It is heavy work, so call it from a tea.Cmd.
func DecodePreview(data []byte) (*image.RGBA, error) {
	if len(data) == 0 {
		return nil, errors.New("the screenshot is empty")
	}
	if len(data) > MaxScreenshotBytes {
		return nil, fmt.Errorf("the screenshot is %d bytes, more than the %d the pane shows", len(data), MaxScreenshotBytes)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decoding the screenshot: %w", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return nil, errors.New("the screenshot is empty")
	}
	if cfg.Width*cfg.Height > maxPixels {
		return nil, fmt.Errorf("the screenshot is %d×%d pixels, too large to preview", cfg.Width, cfg.Height)
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decoding the screenshot: %w", err)
	}
	b := img.Bounds()
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
