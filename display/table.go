package display

import (
	"fmt"
	"html"
	"strings"
	"unicode/utf8"
)

// Table is an HTML table builder with a plain-text fallback. Cells are formatted with
// fmt's %v. A Table is a Renderer: show it with Show or make it a cell's last value.
type Table struct {
	headers []string
	rows    [][]string
	caption string
}

// NewTable starts a table with the given column headers.
func NewTable(headers ...string) *Table {
	return &Table{headers: headers}
}

// Row appends one row and returns t, so rows can be chained.
func (t *Table) Row(cells ...any) *Table {
	row := make([]string, len(cells))
	for i, c := range cells {
		row[i] = fmt.Sprint(c)
	}
	t.rows = append(t.rows, row)
	return t
}

// Caption sets the table's caption and returns t.
func (t *Table) Caption(s string) *Table {
	t.caption = s
	return t
}

// MIMEBundle renders t as text/html and aligned text/plain.
func (t *Table) MIMEBundle() map[string]any {
	return Bundle{"text/html": t.HTML(), "text/plain": t.String()}
}

// HTML returns the table as an HTML fragment.
func (t *Table) HTML() string {
	var sb strings.Builder
	sb.WriteString("<table>")
	if t.caption != "" {
		fmt.Fprintf(&sb, "<caption>%s</caption>", html.EscapeString(t.caption))
	}
	if len(t.headers) > 0 {
		sb.WriteString("<thead><tr>")
		for _, h := range t.headers {
			fmt.Fprintf(&sb, "<th>%s</th>", html.EscapeString(h))
		}
		sb.WriteString("</tr></thead>")
	}
	sb.WriteString("<tbody>")
	for _, r := range t.rows {
		sb.WriteString("<tr>")
		for _, c := range r {
			fmt.Fprintf(&sb, "<td>%s</td>", html.EscapeString(c))
		}
		sb.WriteString("</tr>")
	}
	sb.WriteString("</tbody></table>")
	return sb.String()
}

// String returns the table as aligned text columns, headers underlined.
func (t *Table) String() string {
	ncol := len(t.headers)
	for _, r := range t.rows {
		ncol = max(ncol, len(r))
	}
	width := make([]int, ncol)
	measure := func(r []string) {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	measure(t.headers)
	for _, r := range t.rows {
		measure(r)
	}
	var sb strings.Builder
	if t.caption != "" {
		sb.WriteString(t.caption + "\n")
	}
	line := func(r []string) {
		for i := 0; i < ncol; i++ {
			c := ""
			if i < len(r) {
				c = r[i]
			}
			if i > 0 {
				sb.WriteString("  ")
			}
			sb.WriteString(c)
			if i < ncol-1 {
				sb.WriteString(strings.Repeat(" ", width[i]-utf8.RuneCountInString(c)))
			}
		}
		sb.WriteString("\n")
	}
	if len(t.headers) > 0 {
		line(t.headers)
		rule := make([]string, ncol)
		for i := range rule {
			rule[i] = strings.Repeat("-", width[i])
		}
		line(rule)
	}
	for _, r := range t.rows {
		line(r)
	}
	return strings.TrimSuffix(sb.String(), "\n")
}
