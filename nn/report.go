package nn

import (
	"fmt"
	"math"

	"github.com/gml-dev/gml/display"
	"github.com/gml-dev/gml/tensor"
)

// Confusion is a confusion matrix: Counts[i][j] is the number of samples of true class
// i predicted as class j. As a cell's value it renders as a table, true classes down,
// predicted classes across.
type Confusion struct {
	Classes []string
	Counts  [][]int
}

// ConfusionMatrix counts how the samples of each class were predicted. labels holds one
// class id per sample (shape (samples) or (samples, 1)) or one-hot rows; predictions
// holds class ids shaped like the labels, or scores as Predict returns them: one row per
// sample whose largest entry is the predicted class, or one probability per sample for
// a sigmoid head (above 0.5 is class 1). classNames, when given, name the classes in id
// order; otherwise the classes are named by their ids.
func ConfusionMatrix(labels, predictions *tensor.Tensor, classNames ...string) (*Confusion, error) {
	if labels == nil || predictions == nil {
		return nil, fmt.Errorf("nn: ConfusionMatrix: nil labels or predictions")
	}
	truth, err := classIDs("labels", labels, false)
	if err != nil {
		return nil, err
	}
	pred, err := classIDs("predictions", predictions, true)
	if err != nil {
		return nil, err
	}
	if len(truth) != len(pred) {
		return nil, fmt.Errorf("nn: ConfusionMatrix: %d labels and %d predictions (shapes %v and %v)", len(truth), len(pred), labels.Shape(), predictions.Shape())
	}
	classes := len(classNames)
	if classes == 0 {
		classes = max(classesOf(labels), classesOf(predictions))
		for i := range truth {
			classes = max(classes, truth[i]+1, pred[i]+1)
		}
	}
	names := classNames
	if len(names) == 0 {
		for c := range classes {
			names = append(names, fmt.Sprint(c))
		}
	}
	c := &Confusion{Classes: names, Counts: make([][]int, classes)}
	for i := range c.Counts {
		c.Counts[i] = make([]int, classes)
	}
	for i := range truth {
		if id := max(truth[i], pred[i]); id >= classes {
			return nil, fmt.Errorf("nn: ConfusionMatrix: sample %d has label %d and prediction %d, but there are %d class names", i, truth[i], pred[i], classes)
		}
		c.Counts[truth[i]][pred[i]]++
	}
	return c, nil
}

// classesOf is the number of classes a score or one-hot tensor implies (0 for ids).
func classesOf(t *tensor.Tensor) int {
	if s := t.Shape(); s.Rank() == 2 {
		return max(s[1], 2) // a sigmoid head's one column is two classes
	}
	return 0
}

// classIDs reads one class id per sample from t: ids, one-hot or score rows (the
// largest entry), or, when scores is set, one probability per sample (above 0.5 is 1).
func classIDs(what string, t *tensor.Tensor, scores bool) ([]int, error) {
	s := t.Shape()
	switch {
	case s.Rank() == 2 && s[1] > 1:
		ids := t.ArgMax(-1).Int64s()
		out := make([]int, len(ids))
		for i, v := range ids {
			out[i] = int(v)
		}
		return out, nil
	case s.Rank() == 1 || (s.Rank() == 2 && s[1] == 1):
	default:
		return nil, fmt.Errorf("nn: ConfusionMatrix: %s of shape %v: want one class id per sample, or one row of scores per sample", what, s)
	}
	out := make([]int, t.Len())
	for i := range out {
		v := t.Float(i)
		if scores && t.DType().IsFloat() && s.Rank() == 2 {
			if v > 0.5 {
				out[i] = 1
			}
			continue
		}
		if v < 0 || v != math.Trunc(v) {
			return nil, fmt.Errorf("nn: ConfusionMatrix: %s: %v at index %d is not a class id", what, v, i)
		}
		out[i] = int(v)
	}
	return out, nil
}

// Total is the number of samples counted.
func (c *Confusion) Total() int {
	n := 0
	for _, row := range c.Counts {
		for _, v := range row {
			n += v
		}
	}
	return n
}

// Accuracy is the share of samples predicted as their true class.
func (c *Confusion) Accuracy() float64 {
	hit := 0
	for i := range c.Counts {
		hit += c.Counts[i][i]
	}
	return ratio(hit, c.Total())
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func (c *Confusion) table() *display.Table {
	t := display.NewTable(append([]string{"true \\ predicted"}, c.Classes...)...)
	for i, row := range c.Counts {
		cells := []any{c.Classes[i]}
		for _, v := range row {
			cells = append(cells, v)
		}
		t.Row(cells...)
	}
	return t.Caption(fmt.Sprintf("Confusion matrix: %d samples, accuracy %.4f", c.Total(), c.Accuracy()))
}

// String renders the matrix as a text table.
func (c *Confusion) String() string { return c.table().String() }

// MIMEBundle renders the matrix as an HTML table with a text fallback.
func (c *Confusion) MIMEBundle() map[string]any { return c.table().MIMEBundle() }

// ClassScores are the precision, recall and F1 score of one class, or their average
// over classes, and the number of samples of the class (its support).
type ClassScores struct {
	Class                 string
	Precision, Recall, F1 float64
	Support               int
}

// ClassReport is a classification report: the scores of each class, the accuracy, and
// the scores' plain (macro) and support-weighted averages over the classes, as
// scikit-learn's classification_report gives them. A class never predicted has
// precision 0, one never present recall 0. It renders as a table.
type ClassReport struct {
	Classes         []ClassScores
	Accuracy        float64
	Macro, Weighted ClassScores
	Samples         int
}

// ClassificationReport scores each class of the predictions against the labels; the
// arguments are those of ConfusionMatrix.
func ClassificationReport(labels, predictions *tensor.Tensor, classNames ...string) (*ClassReport, error) {
	c, err := ConfusionMatrix(labels, predictions, classNames...)
	if err != nil {
		return nil, fmt.Errorf("%w (ClassificationReport)", err)
	}
	return c.Report(), nil
}

// Report returns the classification report of the matrix.
func (c *Confusion) Report() *ClassReport {
	r := &ClassReport{Accuracy: c.Accuracy(), Samples: c.Total()}
	r.Macro.Class, r.Weighted.Class = "macro avg", "weighted avg"
	for i, name := range c.Classes {
		predicted, present := 0, 0
		for j := range c.Counts {
			predicted += c.Counts[j][i]
			present += c.Counts[i][j]
		}
		s := ClassScores{Class: name, Precision: ratio(c.Counts[i][i], predicted), Recall: ratio(c.Counts[i][i], present), Support: present}
		if s.Precision+s.Recall > 0 {
			s.F1 = 2 * s.Precision * s.Recall / (s.Precision + s.Recall)
		}
		r.Classes = append(r.Classes, s)
		n, w := float64(len(c.Classes)), ratio(present, r.Samples)
		r.Macro.Precision += s.Precision / n
		r.Macro.Recall += s.Recall / n
		r.Macro.F1 += s.F1 / n
		r.Weighted.Precision += s.Precision * w
		r.Weighted.Recall += s.Recall * w
		r.Weighted.F1 += s.F1 * w
	}
	r.Macro.Support, r.Weighted.Support = r.Samples, r.Samples
	return r
}

func (r *ClassReport) table() *display.Table {
	t := display.NewTable("class", "precision", "recall", "f1-score", "support")
	row := func(s ClassScores) {
		t.Row(s.Class, fmt.Sprintf("%.4f", s.Precision), fmt.Sprintf("%.4f", s.Recall), fmt.Sprintf("%.4f", s.F1), s.Support)
	}
	for _, s := range r.Classes {
		row(s)
	}
	t.Row("accuracy", "", "", fmt.Sprintf("%.4f", r.Accuracy), r.Samples)
	row(r.Macro)
	row(r.Weighted)
	return t.Caption("Classification report")
}

// String renders the report as a text table.
func (r *ClassReport) String() string { return r.table().String() }

// MIMEBundle renders the report as an HTML table with a text fallback.
func (r *ClassReport) MIMEBundle() map[string]any { return r.table().MIMEBundle() }
