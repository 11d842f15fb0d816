package term

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"image/png"
	"io"

	"github.com/mattn/go-sixel"
)

// DrawImage draws a PNG image at the cursor with the protocol Graphics
// found, and ends the line after it. The image is drawn at the size it
// has: the caller made it fit the window.
func (t *Terminal) DrawImage(image []byte) error {
	return DrawImage(t.out, t.Graphics().Protocol, image)
}

// DrawImage writes a PNG image to w in protocol ("kitty", "iterm2" or
// "sixel"), then a newline.
func DrawImage(w io.Writer, protocol string, image []byte) error {
	out := bufio.NewWriterSize(w, 64<<10)
	var err error
	switch protocol {
	case "kitty":
		err = writeKitty(out, image)
	case "iterm2":
		err = writeITerm2(out, image)
	case "sixel":
		err = writeSixel(out, image)
	default:
		return fmt.Errorf("the terminal draws no images")
	}
	if err != nil {
		return err
	}
	out.WriteString("\n")
	return out.Flush()
}

// kittyChunk is the most base64 one escape sequence of kitty's protocol
// may carry.
const kittyChunk = 4096

// writeKitty sends the PNG as it is (f=100), placed at the cursor (a=T),
// in the chunks the protocol asks for; q=2 keeps the terminal from
// answering, which would reach the next prompt as keys.
func writeKitty(out *bufio.Writer, image []byte) error {
	data := base64.StdEncoding.EncodeToString(image)
	for first := true; first || len(data) > 0; first = false {
		n := min(kittyChunk, len(data))
		more := 0
		if n < len(data) {
			more = 1
		}
		if first {
			fmt.Fprintf(out, "\x1b_Ga=T,f=100,q=2,m=%d;%s\x1b\\", more, data[:n])
		} else {
			fmt.Fprintf(out, "\x1b_Gm=%d;%s\x1b\\", more, data[:n])
		}
		data = data[n:]
	}
	return nil
}

// writeITerm2 sends the PNG as iTerm2's inline image (OSC 1337 File=).
func writeITerm2(out *bufio.Writer, image []byte) error {
	fmt.Fprintf(out, "\x1b]1337;File=inline=1;size=%d;preserveAspectRatio=1:", len(image))
	enc := base64.NewEncoder(base64.StdEncoding, out)
	enc.Write(image)
	enc.Close()
	out.WriteString("\a")
	return nil
}

// writeSixel decodes the PNG and encodes it as sixel (go-sixel
// quantizes it to its palette).
func writeSixel(out *bufio.Writer, image []byte) error {
	img, err := png.Decode(bytes.NewReader(image))
	if err != nil {
		return fmt.Errorf("reading the image: %w", err)
	}
	return sixel.NewEncoder(out).Encode(img)
}
