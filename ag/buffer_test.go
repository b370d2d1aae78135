package ag_test

import (
	"strings"
	"testing"

	"github.com/gml-dev/gml/ag"
)

func TestDeviceBuffer(t *testing.T) {
	cpuTape(t)
	b, err := ag.Buffer(3, 10)
	if err != nil {
		t.Fatal(err)
	}
	b.Write(2, ag.FromFloat32s([]int{2, 3}, []float32{1, 2, 3, 4, 5, 6}))
	b.Write(9, ag.Scale(ag.Ones(1, 3), 7))
	got := b.GetRows(ag.FromInts([]int{3}, []int{9, 2, 3})).Float32s()
	want := []float32{7, 7, 7, 1, 2, 3, 4, 5, 6}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("GetRows = %v, want %v", got, want)
		}
	}
	if r := b.Read(1, 3); r.Shape()[0] != 2 || r.Float(0) != 0 || r.Float(3) != 1 {
		t.Errorf("Read(1, 3) = %v", r)
	}
	for _, c := range []struct {
		do   func()
		want string
	}{
		{func() { b.Write(9, ag.Ones(2, 3)) }, "do not fit"},
		{func() { b.Write(0, ag.Ones(2, 4)) }, "f32[n 3]"},
		{func() { b.Free(); b.Read(0, 1) }, "freed"},
	} {
		if err := ag.Catch(c.do); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one mentioning %q", err, c.want)
		}
	}
	if _, err := ag.Buffer(1<<20, 1<<30); err == nil || !strings.Contains(err.Error(), "85%") {
		t.Errorf("a buffer larger than the device: %v", err)
	}
}
