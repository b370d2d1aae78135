package onnx

import (
	"fmt"
	"image"
	"image/color"
	"math"

	"github.com/gml-dev/gml/tensor"
)

// Images from Go's image package as model inputs: resized, cropped, scaled to [0, 1],
// normalised per channel and laid out channels-first (N, C, H, W), as vision models
// exported from PyTorch expect.

// ImageOptions says how ImageTensor prepares a picture. The zero value keeps the
// picture's size and gives RGB values in [0, 1], channels first.
type ImageOptions struct {
	// Resize scales the picture so that its shorter side is Resize pixels (0 keeps it).
	Resize int
	// Width and Height, when set, resize to exactly that size instead (after Resize).
	Width, Height int
	// Crop cuts the central Crop×Crop square (0 keeps everything).
	Crop int
	// Mean and Std normalise each channel: (v - Mean[c]) / Std[c], v in [0, 1]. Nil
	// means no normalisation.
	Mean, Std []float32
	// Gray gives one luminance channel instead of three.
	Gray bool
	// BGR orders the channels blue, green, red (models converted from Caffe or OpenCV).
	BGR bool
	// ChannelsLast lays the tensor out (N, H, W, C) instead of (N, C, H, W).
	ChannelsLast bool
}

// ImageNet is the preprocessing of torchvision's ImageNet classifiers: shorter side to
// 256, central 224×224 crop, normalised with the ImageNet mean and deviation.
var ImageNet = ImageOptions{Resize: 256, Crop: 224,
	Mean: []float32{0.485, 0.456, 0.406}, Std: []float32{0.229, 0.224, 0.225}}

// ImageTensor converts pictures to one float32 batch, (N, C, H, W) unless
// ChannelsLast. Every picture must come out at the same size.
func ImageTensor(o ImageOptions, imgs ...image.Image) (*tensor.Tensor, error) {
	if len(imgs) == 0 {
		return nil, fmt.Errorf("onnx: ImageTensor: no image")
	}
	ch := 3
	if o.Gray {
		ch = 1
	}
	if (o.Mean != nil && len(o.Mean) != ch) || (o.Std != nil && len(o.Std) != ch) {
		return nil, fmt.Errorf("onnx: ImageTensor: Mean %v and Std %v need %d values", o.Mean, o.Std, ch)
	}
	var out *tensor.Tensor
	var h, w int
	for n, img := range imgs {
		if img == nil || img.Bounds().Empty() {
			return nil, fmt.Errorf("onnx: ImageTensor: image %d is empty", n)
		}
		img = prepareImage(img, o)
		b := img.Bounds()
		if out == nil {
			h, w = b.Dy(), b.Dx()
			if o.ChannelsLast {
				out = tensor.New(tensor.F32, len(imgs), h, w, ch)
			} else {
				out = tensor.New(tensor.F32, len(imgs), ch, h, w)
			}
		} else if b.Dy() != h || b.Dx() != w {
			return nil, fmt.Errorf("onnx: ImageTensor: image %d comes out %dx%d, image 0 %dx%d", n, b.Dx(), b.Dy(), w, h)
		}
		data := out.Float32s()[n*ch*h*w : (n+1)*ch*h*w]
		for y := range h {
			for x := range w {
				vals := pixel(img.At(b.Min.X+x, b.Min.Y+y), o)
				for c, v := range vals[:ch] {
					if o.Mean != nil {
						v -= o.Mean[c]
					}
					if o.Std != nil {
						v /= o.Std[c]
					}
					if o.ChannelsLast {
						data[(y*w+x)*ch+c] = v
					} else {
						data[(c*h+y)*w+x] = v
					}
				}
			}
		}
	}
	return out, nil
}

// pixel returns a colour's channels in [0, 1] in the order the options ask for.
func pixel(c color.Color, o ImageOptions) [3]float32 {
	r, g, b, _ := c.RGBA()
	fr, fg, fb := float32(r)/0xffff, float32(g)/0xffff, float32(b)/0xffff
	switch {
	case o.Gray:
		return [3]float32{0.299*fr + 0.587*fg + 0.114*fb}
	case o.BGR:
		return [3]float32{fb, fg, fr}
	}
	return [3]float32{fr, fg, fb}
}

// prepareImage resizes and crops as the options say.
func prepareImage(img image.Image, o ImageOptions) image.Image {
	b := img.Bounds()
	if o.Resize > 0 {
		w, h := b.Dx(), b.Dy()
		if w < h {
			img = ResizeImage(img, o.Resize, int(math.Round(float64(h)*float64(o.Resize)/float64(w))))
		} else {
			img = ResizeImage(img, int(math.Round(float64(w)*float64(o.Resize)/float64(h))), o.Resize)
		}
	}
	if o.Width > 0 && o.Height > 0 {
		img = ResizeImage(img, o.Width, o.Height)
	}
	if o.Crop > 0 {
		b = img.Bounds()
		x0 := b.Min.X + max((b.Dx()-o.Crop)/2, 0)
		y0 := b.Min.Y + max((b.Dy()-o.Crop)/2, 0)
		img = cropped{img, image.Rect(x0, y0, min(x0+o.Crop, b.Max.X), min(y0+o.Crop, b.Max.Y))}
	}
	return img
}

// cropped is a view of part of an image.
type cropped struct {
	image.Image
	r image.Rectangle
}

func (c cropped) Bounds() image.Rectangle { return c.r }

// ResizeImage resamples img to w×h pixels with a triangle (bilinear) filter widened
// when shrinking, so a reduced picture averages every source pixel instead of skipping
// most of them.
func ResizeImage(img image.Image, w, h int) *image.NRGBA64 {
	b := img.Bounds()
	sw, sh := b.Dx(), b.Dy()
	src := make([][4]float64, sw*sh)
	for y := range sh {
		for x := range sw {
			r, g, bl, a := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
			src[y*sw+x] = [4]float64{float64(r), float64(g), float64(bl), float64(a)}
		}
	}
	// Horizontal pass, then vertical.
	tmp := make([][4]float64, w*sh)
	for x, tp := range filterTaps(sw, w) {
		for y := range sh {
			var acc [4]float64
			for _, t := range tp {
				p := src[y*sw+t.i]
				for c := range acc {
					acc[c] += t.w * p[c]
				}
			}
			tmp[y*w+x] = acc
		}
	}
	out := image.NewNRGBA64(image.Rect(0, 0, w, h))
	for y, tp := range filterTaps(sh, h) {
		for x := range w {
			var acc [4]float64
			for _, t := range tp {
				p := tmp[t.i*w+x]
				for c := range acc {
					acc[c] += t.w * p[c]
				}
			}
			// The sums are premultiplied by alpha; NRGBA64 is not.
			a := math.Round(math.Min(math.Max(acc[3], 0), 0xffff))
			px := color.NRGBA64{A: uint16(a)}
			if a > 0 {
				un := func(v float64) uint16 { return uint16(math.Round(math.Min(math.Max(v*0xffff/a, 0), 0xffff))) }
				px.R, px.G, px.B = un(acc[0]), un(acc[1]), un(acc[2])
			}
			out.SetNRGBA64(x, y, px)
		}
	}
	return out
}

// tap is one source pixel's weight.
type tap struct {
	i int
	w float64
}

// filterTaps returns, per output position of a resize from n to m pixels, the source
// pixels and weights of a triangle filter of width max(1, n/m).
func filterTaps(n, m int) [][]tap {
	scale := float64(n) / float64(m)
	support := math.Max(scale, 1)
	out := make([][]tap, m)
	for j := range m {
		center := (float64(j)+0.5)*scale - 0.5
		lo, hi := int(math.Floor(center-support)), int(math.Ceil(center+support))
		var taps []tap
		total := 0.0
		for i := lo; i <= hi; i++ {
			wt := 1 - math.Abs(float64(i)-center)/support
			if wt <= 0 {
				continue
			}
			taps = append(taps, tap{min(max(i, 0), n-1), wt})
			total += wt
		}
		for k := range taps {
			taps[k].w /= total
		}
		out[j] = taps
	}
	return out
}
