package hugepage

import "golang.org/x/sys/unix"

// advise asks Linux for transparent huge pages on b (MADV_HUGEPAGE), which matters where
// they are enabled in `madvise` mode, as on the H200 host. An error (a kernel without
// transparent huge pages) is ignored: b stays on ordinary pages.
func advise(b []byte) { _ = unix.Madvise(b, unix.MADV_HUGEPAGE) }
