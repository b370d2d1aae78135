package exec

import (
	"context"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gml-dev/gml/runtime"
)

// work stands for a compiled library loop: steps of 5 ms, checking for interrupts
// between them as Fit does. done is set when it returns.
type work struct{ steps, done atomic.Int64 }

func (w *work) symbols() map[string]map[string]reflect.Value {
	return map[string]map[string]reflect.Value{"worktest/worktest": {
		"Loop": reflect.ValueOf(func(n int) error {
			defer w.done.Add(1)
			for k := 0; k < n; k++ {
				time.Sleep(5 * time.Millisecond)
				w.steps.Add(1)
				if err := runtime.Interrupted(); err != nil {
					return err
				}
			}
			return nil
		}),
		// Ignore blocks for d and never checks for interrupts.
		"Ignore": reflect.ValueOf(func(d time.Duration) { time.Sleep(d) }),
	}}
}

func TestInterruptWaitsForCompiledWork(t *testing.T) {
	w := &work{}
	i, err := New(WithSymbols(w.symbols()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	r := i.Execute(ctx, "import \"worktest\"\nworktest.Loop(100000)", &fakePub{})
	if r.Err == nil || r.Err.Name != nameInterrupt {
		t.Fatalf("got %v, want Interrupted", r.Err)
	}
	if w.done.Load() != 1 {
		t.Fatal("Execute returned while the compiled loop was still running")
	}
	steps := w.steps.Load()
	time.Sleep(50 * time.Millisecond)
	if w.steps.Load() != steps {
		t.Error("the loop went on after the cell's reply")
	}
}

func TestInterruptKeepsClosures(t *testing.T) {
	i := newInterp(t)
	if i.rc == nil {
		t.Fatal("yaegi's run id and done channel are not where runControl looks")
	}
	if r, _ := run(t, i, "func counter() func() int {\n\tn := 0\n\treturn func() int {\n\t\tn++\n\t\treturn n\n\t}\n}\nnext := counter()\nnext()"); text(r) != "1" {
		t.Fatalf("%v %q", r.Err, text(r))
	}
	for _, code := range []string{"for {\n}", "ch := make(chan int)\n<-ch", "import \"time\"\ntime.Sleep(time.Hour)"} {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		start := time.Now()
		r := i.Execute(ctx, code, &fakePub{})
		cancel()
		if r.Err == nil || r.Err.Name != nameInterrupt || time.Since(start) > 5*time.Second {
			t.Errorf("%q: %v after %v, want Interrupted at once", code, r.Err, time.Since(start))
		}
	}
	if r, _ := run(t, i, "next()"); text(r) != "2" {
		t.Errorf("the closure made before the interrupts returned %v %q, want 2", r.Err, text(r))
	}
}

func TestInterruptThatDoesNotStop(t *testing.T) {
	w := &work{}
	var notes []string
	i, err := New(WithSymbols(w.symbols()), WithStop(3*time.Second, func(n string) { notes = append(notes, n) }))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	r := i.Execute(ctx, "import (\"time\"; \"worktest\")\nworktest.Ignore(6 * time.Second)", &fakePub{})
	if took := time.Since(start); took < 3*time.Second || took > 5*time.Second {
		t.Errorf("Execute returned after %v, want the 3s limit", took)
	}
	if r.Err == nil || !strings.Contains(r.Err.Value, "did not stop within 3s") {
		t.Errorf("got %v, want an interrupt that says the work goes on", r.Err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "does not check for interrupts") {
		t.Errorf("notes %q, want one that says where the cell is", notes)
	}
}

// TestSleepEndsOnlyOnInterrupt checks that time.Sleep in a goroutine a cell left
// running is not cut short when the cell ends normally.
func TestSleepEndsOnlyOnInterrupt(t *testing.T) {
	i := newInterp(t)
	if r, _ := run(t, i, "import \"time\"\nvar slept time.Duration\ngo func() {\n\tt := time.Now()\n\ttime.Sleep(300 * time.Millisecond)\n\tslept = time.Since(t)\n}()"); r.Err != nil {
		t.Fatal(r.Err)
	}
	time.Sleep(time.Second)
	if r, _ := run(t, i, "slept >= 300*time.Millisecond"); text(r) != "true" {
		t.Errorf("the goroutine's sleep ended early: %v %q", r.Err, text(r))
	}
}
