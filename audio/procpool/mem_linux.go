package procpool

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// totalMemory is the memory the server may use in bytes: the machine's,
// or its control group's limit when lower (a container). 0 when unknown.
func totalMemory() uint64 {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0
	}
	total := uint64(si.Totalram) * uint64(si.Unit)
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if limit, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && limit > 0 {
			total = min(total, limit)
		}
	}
	return total
}
