package wire

// Typed contents of the messages the kernel receives and sends. Field names follow the
// Jupyter messaging specification, version 5.3.

// MIMEBundle maps MIME types to data.
type MIMEBundle = map[string]any

// HelpLink is one entry of kernel_info_reply's help_links.
type HelpLink struct {
	Text string `json:"text"`
	URL  string `json:"url"`
}

// LanguageInfo describes the kernel's language in kernel_info_reply.
type LanguageInfo struct {
	Name              string `json:"name"`
	Version           string `json:"version"`
	MIMEType          string `json:"mimetype"`
	FileExtension     string `json:"file_extension"`
	PygmentsLexer     string `json:"pygments_lexer"`
	CodeMirrorMode    string `json:"codemirror_mode"`
	NBConvertExporter string `json:"nbconvert_exporter"`
}

// KernelInfoReply is the content of kernel_info_reply.
type KernelInfoReply struct {
	Status                string       `json:"status"`
	ProtocolVersion       string       `json:"protocol_version"`
	Implementation        string       `json:"implementation"`
	ImplementationVersion string       `json:"implementation_version"`
	LanguageInfo          LanguageInfo `json:"language_info"`
	Banner                string       `json:"banner"`
	Debugger              bool         `json:"debugger"`
	HelpLinks             []HelpLink   `json:"help_links"`
}

// ExecuteRequest is the content of execute_request.
type ExecuteRequest struct {
	Code            string         `json:"code"`
	Silent          bool           `json:"silent"`
	StoreHistory    bool           `json:"store_history"`
	UserExpressions map[string]any `json:"user_expressions"`
	AllowStdin      bool           `json:"allow_stdin"`
	StopOnError     bool           `json:"stop_on_error"`
}

// DefaultExecuteRequest has the protocol's defaults for fields a front end leaves out.
func DefaultExecuteRequest() ExecuteRequest {
	return ExecuteRequest{StoreHistory: true, AllowStdin: true, StopOnError: true}
}

// ExecuteReply is the content of execute_reply. Status is "ok", "error" or "aborted";
// the error fields are set with "error".
type ExecuteReply struct {
	Status          string         `json:"status"`
	ExecutionCount  int            `json:"execution_count"`
	Payload         []any          `json:"payload,omitempty"`
	UserExpressions map[string]any `json:"user_expressions"`
	*Error                         // nil unless Status is "error"
}

// Error is the content of the IOPub error message and the error fields of a reply whose
// status is "error".
type Error struct {
	EName     string   `json:"ename"`
	EValue    string   `json:"evalue"`
	Traceback []string `json:"traceback"`
}

// ExecuteInput is the content of execute_input (IOPub).
type ExecuteInput struct {
	Code           string `json:"code"`
	ExecutionCount int    `json:"execution_count"`
}

// ExecuteResult is the content of execute_result (IOPub).
type ExecuteResult struct {
	ExecutionCount int            `json:"execution_count"`
	Data           MIMEBundle     `json:"data"`
	Metadata       map[string]any `json:"metadata"`
}

// DisplayData is the content of display_data and update_display_data (IOPub).
type DisplayData struct {
	Data      MIMEBundle     `json:"data"`
	Metadata  map[string]any `json:"metadata"`
	Transient map[string]any `json:"transient"`
}

// Stream is the content of stream (IOPub).
type Stream struct {
	Name string `json:"name"` // "stdout" or "stderr"
	Text string `json:"text"`
}

// Status is the content of status (IOPub).
type Status struct {
	ExecutionState string `json:"execution_state"` // "busy", "idle" or "starting"
}

// ClearOutput is the content of clear_output (IOPub).
type ClearOutput struct {
	Wait bool `json:"wait"`
}

// CompleteRequest is the content of complete_request.
type CompleteRequest struct {
	Code      string `json:"code"`
	CursorPos int    `json:"cursor_pos"`
}

// CompleteReply is the content of complete_reply.
type CompleteReply struct {
	Status      string         `json:"status"`
	Matches     []string       `json:"matches"`
	CursorStart int            `json:"cursor_start"`
	CursorEnd   int            `json:"cursor_end"`
	Metadata    map[string]any `json:"metadata"`
}

// InspectRequest is the content of inspect_request.
type InspectRequest struct {
	Code        string `json:"code"`
	CursorPos   int    `json:"cursor_pos"`
	DetailLevel int    `json:"detail_level"`
}

// InspectReply is the content of inspect_reply.
type InspectReply struct {
	Status   string         `json:"status"`
	Found    bool           `json:"found"`
	Data     MIMEBundle     `json:"data"`
	Metadata map[string]any `json:"metadata"`
}

// IsCompleteRequest is the content of is_complete_request.
type IsCompleteRequest struct {
	Code string `json:"code"`
}

// IsCompleteReply is the content of is_complete_reply.
type IsCompleteReply struct {
	Status string `json:"status"` // "complete", "incomplete", "invalid" or "unknown"
	Indent string `json:"indent,omitempty"`
}

// HistoryRequest is the content of history_request.
type HistoryRequest struct {
	Output         bool   `json:"output"`
	Raw            bool   `json:"raw"`
	HistAccessType string `json:"hist_access_type"` // "range", "tail" or "search"
	Session        int    `json:"session"`
	Start          int    `json:"start"`
	Stop           int    `json:"stop"`
	N              int    `json:"n"`
	Pattern        string `json:"pattern"`
	Unique         bool   `json:"unique"`
}

// HistoryReply is the content of history_reply. Each entry is [session, line, input],
// or [session, line, [input, output]] when output was requested.
type HistoryReply struct {
	Status  string  `json:"status"`
	History [][]any `json:"history"`
}

// ShutdownRequest is the content of shutdown_request.
type ShutdownRequest struct {
	Restart bool `json:"restart"`
}

// ShutdownReply is the content of shutdown_reply.
type ShutdownReply struct {
	Status  string `json:"status"`
	Restart bool   `json:"restart"`
}

// StatusReply is the content of replies that carry only a status (interrupt_reply).
type StatusReply struct {
	Status string `json:"status"`
}

// CommInfoReply is the content of comm_info_reply.
type CommInfoReply struct {
	Status string         `json:"status"`
	Comms  map[string]any `json:"comms"`
}

// CommOpen is the content of comm_open.
type CommOpen struct {
	CommID     string         `json:"comm_id"`
	TargetName string         `json:"target_name"`
	Data       map[string]any `json:"data"`
}

// CommClose is the content of comm_close.
type CommClose struct {
	CommID string         `json:"comm_id"`
	Data   map[string]any `json:"data"`
}

// InputRequest is the content of input_request (stdin).
type InputRequest struct {
	Prompt   string `json:"prompt"`
	Password bool   `json:"password"`
}

// InputReply is the content of input_reply (stdin).
type InputReply struct {
	Value string `json:"value"`
}
